/* report-format.c -- the report's helpers: Markdown text, numbers, statuses (typed reads: store/runread.h). */
#include "report/report-int.h"
#include "core/hash.h"
#include "core/jsonutil.h"

#include <ctype.h>
#include <math.h>
#include <string.h>
#include "core/banned.h"

#define CELL_MAX 240            /* characters of free text in a table cell */

/* ==== Markdown text ==== */

/* Cut sb back to a whole UTF-8 character and add "…" (text was cut at max). */
static void md_ellipsis(struct strbuf *md, size_t from)
{
	while (md->len > from && ((unsigned char)md->buf[md->len - 1] & 0xC0) == 0x80)
		strbuf_setlen(md, md->len - 1);
	if (md->len > from && ((unsigned char)md->buf[md->len - 1] & 0xC0) == 0xC0)
		strbuf_setlen(md, md->len - 1);
	strbuf_addstr(md, "…");
}

/* Free text for a table cell or a line: one line, and inert. Text from a
 * record (names, a spec's phase and description, tools' messages) is a
 * user's or a program's, so nothing in it may become markup: a '<' that
 * could open a tag or an autolink is an entity, '&' before a name or '#' too (the text
 * shows as written), and \ ` [ ] | are backslash-escaped (no code span that
 * swallows what follows on the line, no link or remote image). Every other
 * character shows as it is. The one escaping of the report's free text. */
void rpt_md_cell_n(struct strbuf *md, const char *s, size_t max)
{
	size_t n = 0, from = md->len;
	if (!s || !*s) {
		strbuf_addstr(md, DASH);
		return;
	}
	for (; *s && n < max; s++, n++) {
		unsigned char c = (unsigned char)*s;
		if (c == '<' && (isalpha((unsigned char)s[1]) || s[1] == '/' || s[1] == '!' ||
				 s[1] == '?'))
			strbuf_addstr(md, "&lt;");   /* could open an HTML tag or an autolink */
		else if (c == '&' && (isalnum((unsigned char)s[1]) || s[1] == '#'))
			strbuf_addstr(md, "&amp;");
		else if (c == '\\' || c == '`' || c == '[' || c == ']' || c == '|') {
			strbuf_addch(md, '\\');
			strbuf_addch(md, c);
		} else if (c == '\n' || c == '\r' || c == '\t')
			strbuf_addch(md, ' ');
		else if (c < 0x20 || c == 0x7f)
			;
		else
			strbuf_addch(md, c);
	}
	if (*s)   /* do not cut a UTF-8 sequence in half */
		md_ellipsis(md, from);
}

void rpt_md_cell(struct strbuf *md, const char *s)
{
	rpt_md_cell_n(md, s, CELL_MAX);
}

/* A name in a code span, whatever its characters: the fence is one backtick
 * longer than the longest run of backticks in the name, so no backtick in it
 * ends the span; a name that starts or ends with a backtick (or starts and
 * ends with a space) is padded with a space each side, which CommonMark
 * strips. Pipes are escaped (GitHub tables honour \| in code); line breaks
 * are spaces, other control characters dropped; cut at CELL_MAX bytes with
 * "…". The one code span of the report. */
void rpt_md_code(struct strbuf *md, const char *s)
{
	size_t len, i, run = 0, longest = 0, from;
	int pad;
	if (!s || !*s) {
		strbuf_addstr(md, DASH);
		return;
	}
	len = strlen(s);
	if (len > CELL_MAX)
		len = CELL_MAX;
	for (i = 0; i < len; i++) {
		run = s[i] == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	pad = s[0] == '`' || s[len - 1] == '`' || (s[0] == ' ' && s[len - 1] == ' ');
	for (i = 0; i <= longest; i++)
		strbuf_addch(md, '`');
	if (pad)
		strbuf_addch(md, ' ');
	from = md->len;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '|')
			strbuf_addstr(md, "\\|");
		else if (c == '\n' || c == '\r' || c == '\t')
			strbuf_addch(md, ' ');
		else if (c < 0x20 || c == 0x7f)
			;
		else
			strbuf_addch(md, c);
	}
	if (s[len]) {
		/* cut visibly, and keep two names that share their first CELL_MAX
		 * characters apart: "…#" and 8 hex digits of the whole name's sha256 */
		char hex[SHA256_HEX_LEN + 1];
		md_ellipsis(md, from);
		sha256_hex(s, strlen(s), hex);
		strbuf_addf(md, "#%.8s", hex);
	}
	if (pad)
		strbuf_addch(md, ' ');
	for (i = 0; i <= longest; i++)
		strbuf_addch(md, '`');
}

void rpt_md_step_program(struct strbuf *md, const cJSON *s)
{
	rpt_md_code(md, rr_str(s, "program"));
	if (rr_str(s, "variant")) {
		strbuf_addstr(md, " [");
		rpt_md_code(md, rr_str(s, "variant"));
		strbuf_addstr(md, "]");
	}
}

/* ==== numbers ==== */

void rpt_fmt_ratio(struct strbuf *sb, double v)
{
	if (fabs(v) >= 1e6)
		strbuf_addf(sb, "%.3g×", v);
	else if (fabs(v) >= 100)
		strbuf_addf(sb, "%.0f×", v);
	else
		strbuf_addf(sb, "%.2f×", v);
}

void rpt_fmt_secs(struct strbuf *sb, double v)
{
	if (v >= 3600)
		strbuf_addf(sb, "%dh%02dm", (int)(v / 3600), (int)fmod(v / 60, 60));
	else if (v >= 60)
		strbuf_addf(sb, "%dm%02ds", (int)(v / 60), (int)fmod(v, 60));
	else
		strbuf_addf(sb, "%.1f s", v);
}

void rpt_fmt_bytes(struct strbuf *sb, double v)
{
	if (v < 1024)
		strbuf_addf(sb, "%.0f B", v);
	else if (v < 1024.0 * 1024)
		strbuf_addf(sb, "%.1f KiB", v / 1024);
	else if (v < 1024.0 * 1024 * 1024)
		strbuf_addf(sb, "%.1f MiB", v / (1024.0 * 1024));
	else
		strbuf_addf(sb, "%.2f GiB", v / (1024.0 * 1024 * 1024));
}

/* "lo–hi" of the two numbers at lo_path and hi_path of o, in us, or "—". */
void rpt_cell_us_range(struct strbuf *md, const cJSON *o, const char *lo_path, const char *hi_path)
{
	double lo, hi;
	if (rr_num(o, lo_path, &lo) && rr_num(o, hi_path, &hi)) {
		metric_fmt_us(md, lo);
		strbuf_addstr(md, "–");
		metric_fmt_us(md, hi);
	} else {
		strbuf_addstr(md, DASH);
	}
}

/* A number at path formatted by fn, or "—". */
void rpt_cell_num(struct strbuf *md, const cJSON *o, const char *path,
		  void (*fn)(struct strbuf *, double))
{
	double v;
	if (rr_num(o, path, &v))
		fn(md, v);
	else
		strbuf_addstr(md, DASH);
}

void rpt_fmt_int(struct strbuf *sb, double v)
{
	if (fabs(v) < 1e15)
		strbuf_addf(sb, "%.0f", v);
	else
		strbuf_addf(sb, "%.3g", v);
}

/* "2026-11-22T05:10:00Z" -> "2026-11-22 05:10:00 UTC" */
void rpt_fmt_time(struct strbuf *md, const char *iso)
{
	if (iso && strlen(iso) == 20 && iso[10] == 'T' && iso[19] == 'Z')
		strbuf_addf(md, "%.10s %.8s UTC", iso, iso + 11);
	else
		rpt_md_cell(md, iso);
}

/* A spec value (number or string) as text. */
void rpt_fmt_value(struct strbuf *sb, const cJSON *v)
{
	if (cJSON_IsNumber(v))
		strbuf_addf(sb, "%.6g", v->valuedouble);
	else if (cJSON_IsString(v))
		rpt_md_cell(sb, v->valuestring);
	else if (cJSON_IsBool(v))
		strbuf_addstr(sb, cJSON_IsTrue(v) ? "true" : "false");
	else
		strbuf_addstr(sb, DASH);
}

void rpt_add_kv(struct strbuf *md, const cJSON *o, const char *sep)
{
	struct strbuf kv = STRBUF_INIT;
	const cJSON *x;
	int n = 0;
	if (cJSON_IsObject(o)) {
		cJSON_ArrayForEach(x, o) {
			/* "key=value" as one code span (rpt_md_code): its text is the
			 * record's, as it is */
			strbuf_reset(&kv);
			strbuf_addf(&kv, "%.60s%s", x->string ? x->string : "", sep);
			if (cJSON_IsNumber(x))
				strbuf_addf(&kv, "%.6g", x->valuedouble);
			else if (cJSON_IsString(x))
				strbuf_addstr(&kv, x->valuestring);
			else if (cJSON_IsBool(x))
				strbuf_addstr(&kv, cJSON_IsTrue(x) ? "true" : "false");
			else
				strbuf_addstr(&kv, DASH);
			strbuf_addstr(md, n++ ? " " : "");
			rpt_md_code(md, kv.buf);
		}
	}
	strbuf_release(&kv);
	if (!n)
		strbuf_addstr(md, DASH);
}

/* ==== statuses ==== */

static const char *step_icon(const char *st)
{
	static const char *const icon[ITEM_STATUS_COUNT] = {
		[ST_PASS] = "✅", [ST_FAIL] = "❌", [ST_KILLED] = "❌",
		[ST_TIMEOUT] = "⏱️", [ST_SKIPPED] = "⏭️", [ST_INFRA_ERROR] = "⚠️",
	};
	enum item_status s;
	return item_status_parse(st, &s) ? icon[s] : "❔";
}

void rpt_cell_status(struct strbuf *md, const char *st)
{
	strbuf_addf(md, "%s ", step_icon(st));
	rpt_md_cell_n(md, st ? st : "unknown", 20);
}

int rpt_host_finished(const char *st)
{
	return host_status_is(st, HOST_OK) || host_status_is(st, HOST_FAILED) ||
	       host_status_is(st, HOST_UNREACHABLE) || host_status_is(st, HOST_SKIPPED);
}

void rpt_cell_host_status(struct strbuf *md, const cJSON *h)
{
	const char *st = rr_str(h, "status");
	if (host_status_is(st, HOST_OK))
		strbuf_addf(md, "✅ %s", st);
	else if (host_status_is(st, HOST_FAILED) || host_status_is(st, HOST_UNREACHABLE))
		strbuf_addf(md, "❌ %s", st);
	else if (host_status_is(st, HOST_SKIPPED))
		strbuf_addf(md, "⏭️ %s", st);
	else {
		strbuf_addstr(md, "⚠️ did not finish (");
		rpt_md_cell_n(md, st ? st : "no status", 20);
		strbuf_addch(md, ')');
	}
}

/* ==== an impossible timing ==== */

/* What an impossible median beat: "the physical bound of X us (how it was
 * computed)" -- the device's rates, in results from 2026-11-27 on -- or, in a
 * record from before, "the roofline floor of X us" (the measured peaks then
 * judged it; with them when peaks is set). */
void rpt_impossible_bound(struct strbuf *md, const cJSON *res, int peaks)
{
	const cJSON *m = rr_obj(res, "model"), *roof = rr_obj(res, "roofline");
	double v;

	if (rr_num(m, "bound_us", &v)) {
		strbuf_addstr(md, "the physical bound of ");
		metric_fmt_us(md, v);
		strbuf_addstr(md, " us (");
		rpt_md_cell(md, rr_str(m, "bound_source"));
		strbuf_addch(md, ')');
		return;
	}
	if (rr_true(roof, "impossible") && rr_num(roof, "bound_us", &v)) {
		/* the controller's judgement against the GPU's physical peaks (store/peaks.h) */
		strbuf_addstr(md, "the physical bound of ");
		metric_fmt_us(md, v);
		strbuf_addstr(md, " us (");
		rpt_md_cell(md, rr_str(roof, "source"));
		strbuf_addch(md, ')');
		return;
	}
	strbuf_addstr(md, "the roofline floor of ");
	rpt_cell_num(md, m, "floor_us", metric_fmt_us);
	strbuf_addstr(md, " us");
	if (!peaks)
		return;
	strbuf_addstr(md, " (peak ");
	rpt_cell_num(md, m, "peak_tflops", metric_fmt_tflops);
	strbuf_addstr(md, " TFLOPS / ");
	rpt_cell_num(md, m, "peak_gbps", metric_fmt_gbps);
	strbuf_addstr(md, " GB/s, ");
	rpt_md_cell(md, rr_str(m, "peak_source"));
	strbuf_addch(md, ')');
}
