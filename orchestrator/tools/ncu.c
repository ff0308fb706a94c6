/* ncu.c -- Nsight Compute's raw CSV page and log read into the record (ncu.h).
 *
 * The CSV is RFC 4180-ish: every field quoted, "" for a quote inside one.
 * Rows are split into fields by a small state machine that never reads past
 * the buffer; a row with fewer fields than the header (a cut-short file) is
 * an error, never a guess. Values are read with strtod after thousands
 * separators are removed; "n/a", "nan", "inf" and empty cells are not
 * values. */
#include "tools/ncu.h"
#include "core/jsonutil.h"
#include "core/strbuf.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

#define MAX_FIELDS 100000
#define MAX_ROWS 10000

struct row {
	char **f;
	int n;
};

static void row_free(struct row *r)
{
	int i;
	for (i = 0; i < r->n; i++)
		free(r->f[i]);
	free(r->f);
	r->f = NULL;
	r->n = 0;
}

/* One CSV record starting at *pos (it may span lines inside quotes).
 * Returns 0 at the end of the text, -1 on an unterminated quote. */
static int next_row(const char *text, size_t len, size_t *pos, struct row *r)
{
	struct strbuf field = STRBUF_INIT;
	size_t i = *pos;
	int alloc = 0, inq = 0, any = 0;

	r->f = NULL;
	r->n = 0;
	if (i >= len)
		return 0;
	for (; i < len; i++) {
		char ch = text[i];
		any = 1;
		if (inq) {
			if (ch == '"' && i + 1 < len && text[i + 1] == '"') {
				strbuf_addch(&field, '"');
				i++;
			} else if (ch == '"') {
				inq = 0;
			} else {
				strbuf_addch(&field, ch);
			}
			continue;
		}
		if (ch == '"') {
			inq = 1;
		} else if (ch == ',' || ch == '\n') {
			if (r->n == alloc) {
				alloc = alloc ? 2 * alloc : 64;
				r->f = xrealloc(r->f, sizeof(char *) * (size_t)alloc);
			}
			if (r->n < MAX_FIELDS)
				r->f[r->n++] = strbuf_detach(&field, NULL);
			else
				strbuf_reset(&field);
			if (ch == '\n') {
				i++;
				break;
			}
		} else if (ch != '\r') {
			strbuf_addch(&field, ch);
		}
	}
	if (inq) {
		strbuf_release(&field);
		*pos = len;
		return -1;
	}
	if (i >= len && any && (text[len - 1] != '\n')) {
		/* last line without a newline: its last field */
		if (r->n == alloc) {
			alloc = alloc ? 2 * alloc : 64;
			r->f = xrealloc(r->f, sizeof(char *) * (size_t)alloc);
		}
		r->f[r->n++] = strbuf_detach(&field, NULL);
	}
	strbuf_release(&field);
	*pos = i;
	return 1;
}

/* A number as ncu prints it: "33,600", "2.39", "1.5e+03". 0 when not one. */
static int parse_value(const char *s, double *v)
{
	char buf[128];
	size_t n = 0;
	char *end;
	while (isspace((unsigned char)*s))
		s++;
	for (; *s && n < sizeof(buf) - 1; s++)
		if (*s != ',')
			buf[n++] = *s;
	while (n && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = '\0';
	if (!n || *s)
		return 0;
	*v = strtod(buf, &end);
	return *end == '\0' && isfinite(*v);
}

static int find_col(const struct row *h, const char *name)
{
	int i;
	for (i = 0; i < h->n; i++)
		if (!strcmp(h->f[i], name))
			return i;
	return -1;
}

static int is_blank(const char *s, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++)
		if (!isspace((unsigned char)s[i]))
			return 0;
	return 1;
}

static void add_missing(cJSON *profile, const char *m)
{
	cJSON *a = cJSON_GetObjectItem(profile, "missing"), *it;
	cJSON_ArrayForEach(it, a)
		if (cJSON_IsString(it) && !strcmp(it->valuestring, m))
			return;
	cJSON_AddItemToArray(a, cJSON_CreateString(m));
}

enum go_status ncu_parse_csv(const char *text, size_t len, char *const *metrics,
			     cJSON **profile, struct strbuf *err)
{
	struct row hdr = { NULL, 0 }, units = { NULL, 0 }, r = { NULL, 0 };
	cJSON *kernels, *agg, *prof;
	size_t pos = 0;
	int rc, nrows = 0, rowno = 1, i, c_id, c_name, c_block, c_grid;
	int *cols = NULL, nmetrics = 0;
	enum go_status st = GO_OK;

	prof = cJSON_CreateObject();
	kernels = json_add_arr(prof, "kernels");
	agg = json_add_obj(prof, "metrics");
	json_add_arr(prof, "missing");
	*profile = prof;
	strbuf_reset(err);

	/* Skip ncu's own lines (==PROF==, ==WARNING==) and blank lines up to the header. */
	while (pos < len) {
		const char *eol = memchr(text + pos, '\n', len - pos);
		size_t n = eol ? (size_t)(eol - (text + pos)) : len - pos;
		if ((n >= 2 && !strncmp(text + pos, "==", 2)) || is_blank(text + pos, n)) {
			pos += n + (eol ? 1 : 0);
			continue;
		}
		break;
	}
	rc = next_row(text, len, &pos, &hdr);
	if (rc <= 0 || find_col(&hdr, "ID") != 0 || find_col(&hdr, "Kernel Name") < 0) {
		st = go_fail(err, GO_ERR_REMOTE, "ncu printed no CSV header (expected a first row "
				"\"ID\",...,\"Kernel Name\",...): the profile produced no result");
		goto out;
	}
	c_id = 0;
	c_name = find_col(&hdr, "Kernel Name");
	c_block = find_col(&hdr, "Block Size");
	c_grid = find_col(&hdr, "Grid Size");
	for (nmetrics = 0; metrics && metrics[nmetrics]; nmetrics++)
		;
	cols = xcalloc((size_t)(nmetrics ? nmetrics : 1), sizeof(int));
	for (i = 0; i < nmetrics; i++) {
		cols[i] = find_col(&hdr, metrics[i]);
		if (cols[i] < 0)
			add_missing(prof, metrics[i]);
	}

	while ((rc = next_row(text, len, &pos, &r)) != 0) {
		cJSON *k, *km;
		rowno++;
		if (rc < 0) {
			st = go_fail(err, GO_ERR_REMOTE, "ncu's CSV is cut short: a quoted field "
					"is not closed");
			goto out;
		}
		if (r.n == 1 && !*r.f[0]) {   /* blank line */
			row_free(&r);
			continue;
		}
		if (r.n != hdr.n) {
			st = go_fail(err, GO_ERR_REMOTE, "ncu's CSV is cut short or malformed: row %d "
					"has %d fields, the header %d", rowno, r.n, hdr.n);
			goto out;
		}
		if (!units.n && !*r.f[c_id]) {  /* the units row: no ID */
			units = r;
			r.f = NULL;
			r.n = 0;
			continue;
		}
		if (++nrows > MAX_ROWS) {
			row_free(&r);
			break;
		}
		k = cJSON_CreateObject();
		{
			double id;
			if (parse_value(r.f[c_id], &id))
				json_add_num(k, "id", id);
			else
				json_add_str(k, "id", r.f[c_id]);
		}
		json_add_str(k, "name", r.f[c_name]);
		json_add_str(k, "block", c_block >= 0 ? r.f[c_block] : NULL);
		json_add_str(k, "grid", c_grid >= 0 ? r.f[c_grid] : NULL);
		km = json_add_obj(k, "metrics");
		for (i = 0; i < nmetrics; i++) {
			cJSON *mo, *a;
			double v;
			const char *unit;
			if (cols[i] < 0)
				continue;
			unit = units.n ? units.f[cols[i]] : "";
			mo = json_add_obj(km, metrics[i]);
			if (parse_value(r.f[cols[i]], &v)) {
				json_add_num(mo, "value", v);
			} else {
				cJSON_AddNullToObject(mo, "value");
				json_add_str(mo, "raw", r.f[cols[i]]);
				add_missing(prof, metrics[i]);
				if (!err->len)
					go_fail(err, GO_ERR_REMOTE, "metric '%s' of kernel launch %s is "
						"'%s', not a number (not supported on this GPU, or "
						"the counter could not be read)", metrics[i],
						r.f[c_id], *r.f[cols[i]] ? r.f[cols[i]] : "(empty)");
				continue;
			}
			json_add_str(mo, "unit", unit);
			a = cJSON_GetObjectItem(agg, metrics[i]);
			if (!a) {
				a = json_add_obj(agg, metrics[i]);
				json_add_num(a, "value", v);
				json_add_str(a, "unit", unit);
				json_add_num(a, "min", v);
				json_add_num(a, "max", v);
				json_add_num(a, "n", 1);
			} else {
				double n = json_num(a, "n", 1), mean = json_num(a, "value", 0);
				cJSON_ReplaceItemInObject(a, "value",
							  cJSON_CreateNumber((mean * n + v) / (n + 1)));
				if (v < json_num(a, "min", v))
					cJSON_ReplaceItemInObject(a, "min", cJSON_CreateNumber(v));
				if (v > json_num(a, "max", v))
					cJSON_ReplaceItemInObject(a, "max", cJSON_CreateNumber(v));
				cJSON_ReplaceItemInObject(a, "n", cJSON_CreateNumber(n + 1));
			}
		}
		cJSON_AddItemToArray(kernels, k);
		row_free(&r);
	}
	if (err->len) {
		st = GO_ERR_REMOTE;
		goto out;
	}
	if (!nrows) {
		st = go_fail(err, GO_ERR_REMOTE, "no kernel launch was profiled (the kernel name "
				"regex matched no launch, or the program stopped before launching it)");
		goto out;
	}
	for (i = 0; i < nmetrics; i++) {
		if (cols[i] < 0) {
			st = go_fail(err, GO_ERR_REMOTE, "metric '%s' is missing from ncu's output "
					"(misspelt, or not available on this GPU: `ncu --query-metrics` "
					"lists the valid names)", metrics[i]);
			goto out;
		}
	}
out:
	row_free(&hdr);
	row_free(&units);
	row_free(&r);
	free(cols);
	return st;
}

/* The line of text around p, trimmed, at most 300 characters. */
static void add_line(struct strbuf *sb, const char *text, size_t len, const char *p)
{
	const char *bol = p, *eol = p, *end = text + len;
	while (bol > text && bol[-1] != '\n')
		bol--;
	while (eol < end && *eol != '\n')
		eol++;
	while (bol < eol && isspace((unsigned char)*bol))
		bol++;
	while (eol > bol && isspace((unsigned char)eol[-1]))
		eol--;
	strbuf_add(sb, bol, (size_t)(eol - bol) > 300 ? 300 : (size_t)(eol - bol));
}

static const char *find_n(const char *text, size_t len, const char *needle)
{
	size_t n = strlen(needle), i;
	for (i = 0; n <= len && i <= len - n; i++)
		if (!memcmp(text + i, needle, n))
			return text + i;
	return NULL;
}

int ncu_diagnose(const char *log, size_t len, struct strbuf *why)
{
	const char *p;
	if (!log || !len)
		return 0;
	if (find_n(log, len, "ERR_NVGPUCTRPERM")) {
		strbuf_addstr(why, "the host does not let this user read the GPU performance "
				   "counters (ERR_NVGPUCTRPERM): run the step as root, or set the "
				   "nvidia module option NVreg_RestrictProfilingToAdminUsers=0 "
				   "(e.g. in /etc/modprobe.d/, then reload the driver or reboot); see "
				   "https://developer.nvidia.com/ERR_NVGPUCTRPERM");
		return 1;
	}
	if ((p = find_n(log, len, "==ERROR=="))) {
		strbuf_addstr(why, "ncu: ");
		add_line(why, log, len, p);
		return 1;
	}
	if ((p = find_n(log, len, "No kernels were profiled"))) {
		strbuf_addstr(why, "ncu profiled no kernel: the kernel name regex matched no "
				   "launch (see the step's 'kernel' and 'launch_skip')");
		return 1;
	}
	return 0;
}
