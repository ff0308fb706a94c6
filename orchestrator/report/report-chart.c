/* report-chart.c -- the report's "Medians per problem" charts: for each host and problem where two
 * or more programs were benchmarked, an SVG bar chart of each program's median time with its
 * p10-p90 whisker, the baseline's bar in grey and its median marked across the plot, fastest on
 * top. The charts are files beside report.md (charts/HOST-PROBLEM.svg, written by report_write);
 * the section links them and says in words what they show. Built from run.json alone. */
#include "report/report-int.h"

#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include "core/fsutil.h"
#include "report/history-chart.h"
#include "core/banned.h"

#define MAX_BARS 32
#define CW 760
#define CML 230     /* left margin: program names */
#define CMR 120     /* right margin: values */
#define CMT 48
#define CMB 46
#define ROW 28

struct bar {
	const char *program;
	double median, p10, p90;
	int baseline;
};

static int cmp_bar(const void *a, const void *b)
{
	double x = ((const struct bar *)a)->median, y = ((const struct bar *)b)->median;
	return x < y ? -1 : x > y;
}

/* The benchmarked programs of host h on problem: their medians and whiskers. */
static int bars_for(const cJSON *h, const char *problem, struct bar *out)
{
	const cJSON *s;
	int n = 0;
	FOR_EACH_STEP_OF(s, h, STEP_BENCHMARK, problem) {
		double m, lo, hi;
		if (!item_status_is(rr_str(s, "status"), ST_PASS) || !rr_str(s, "program") ||
		    !rr_num(rr_result(s), METRIC_MEDIAN_PATH, &m) || !(m > 0) || n == MAX_BARS)
			continue;
		if (!rr_num(rr_result(s), "timing.p10_us", &lo) || !(lo > 0))
			lo = m;
		if (!rr_num(rr_result(s), "timing.p90_us", &hi) || !(hi > 0))
			hi = m;
		out[n].program = rr_str(s, "program");
		out[n].median = m;
		out[n].p10 = lo;
		out[n].p90 = hi;
		out[n].baseline = rpt_is_baseline(s);
		n++;
	}
	qsort(out, (size_t)n, sizeof(*out), cmp_bar);
	return n;
}

/* "charts/HOST-PROBLEM.svg", every byte outside [A-Za-z0-9._-] as '_' */
static void chart_name(struct strbuf *sb, const char *host, const char *problem)
{
	const char *parts[2] = { host, problem };
	int k;
	strbuf_addstr(sb, "charts/");
	for (k = 0; k < 2; k++) {
		const char *p;
		if (k)
			strbuf_addch(sb, '-');
		for (p = parts[k]; *p; p++)
			strbuf_addch(sb, (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
					 (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-' ? *p : '_');
	}
	strbuf_addstr(sb, ".svg");
}

static void fmt_us(struct strbuf *sb, double us)
{
	if (us >= 1000)
		strbuf_addf(sb, "%.4g ms", us / 1000);
	else
		strbuf_addf(sb, "%.4g µs", us);
}

static void chart_svg(struct strbuf *svg, const char *title, const struct bar *b, int n)
{
	int Hh = CMT + n * ROW + CMB, i, nt;
	double xmax = 0, first, step, pw = CW - CML - CMR;
	const struct bar *base = NULL;

	for (i = 0; i < n; i++) {
		if (b[i].p90 > xmax)
			xmax = b[i].p90;
		if (b[i].median > xmax)
			xmax = b[i].median;
		if (b[i].baseline && !base)
			base = &b[i];
	}
	history_ticks(0, xmax * 1.05, 6, &first, &step, &nt);
	xmax = first + step * (nt - 1);
#define XP(v) (CML + pw * (v) / xmax)
	strbuf_addf(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		    "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
		    "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
		    CW, Hh, CW, Hh, CW, Hh);
	strbuf_addstr(svg, "<text x=\"12\" y=\"26\" font-size=\"15\" font-weight=\"bold\">");
	svg_text(svg, title);
	strbuf_addstr(svg, "</text>\n");
	for (i = 0; i < nt; i++) {
		double v = first + step * i, x = XP(v);
		strbuf_addf(svg, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e3e3e3\"/>\n", x,
			    CMT - 4, x, CMT + n * ROW);
		strbuf_addf(svg, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">", x,
			    CMT + n * ROW + 16);
		strbuf_addf(svg, "%g", v);
		strbuf_addstr(svg, "</text>\n");
	}
	strbuf_addf(svg, "<text x=\"%.1f\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">median time (µs), "
			 "whisker p10-p90, shorter is faster</text>\n", CML + pw / 2, CMT + n * ROW + 36);
	for (i = 0; i < n; i++) {
		int y = CMT + i * ROW;
		double xm = XP(b[i].median), xl = XP(b[i].p10), xh = XP(b[i].p90), cy = y + ROW / 2.0 - 2;
		strbuf_addf(svg, "<text x=\"%d\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">", CML - 8, cy + 4);
		svg_text(svg, b[i].program);
		if (b[i].baseline)
			strbuf_addstr(svg, " (baseline)");
		strbuf_addstr(svg, "</text>\n");
		strbuf_addf(svg, "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"16\" fill=\"%s\"/>\n", CML,
			    cy - 8, xm - CML, b[i].baseline ? "#999999" : "#0072B2");
		strbuf_addf(svg, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>\n"
				 "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>\n"
				 "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>\n",
			    xl, cy, xh, cy, xl, cy - 5, xl, cy + 5, xh, cy - 5, xh, cy + 5);
		strbuf_addf(svg, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">", (xh > xm ? xh : xm) + 6, cy + 4);
		fmt_us(svg, b[i].median);
		if (base && !b[i].baseline)
			strbuf_addf(svg, " (%.2f×)", base->median / b[i].median);
		strbuf_addstr(svg, "</text>\n");
	}
	if (base)
		strbuf_addf(svg, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#D55E00\" "
				 "stroke-dasharray=\"5,4\"/>\n",
			    XP(base->median), CMT - 6, XP(base->median), CMT + n * ROW);
	strbuf_addstr(svg, "</svg>\n");
#undef XP
}

/* Calls fn for every chart of the run: its file name (charts/...svg) and its SVG. */
static void each_chart(const cJSON *run, void (*fn)(const char *name, const char *svg, const char *host,
						    const char *problem, const struct bar *b, int n, void *arg),
		       void *arg)
{
	const cJSON *h;
	FOR_EACH_OBJ(h, rr_arr(run, "hosts")) {
		const char *probs[64];
		int np = rpt_problems(NULL, h, STEP_BENCHMARK, probs, 64), i;
		for (i = 0; i < np; i++) {
			struct bar b[MAX_BARS];
			struct strbuf name = STRBUF_INIT, svg = STRBUF_INIT, title = STRBUF_INIT;
			int n = bars_for(h, probs[i], b);
			if (n < 2)
				continue;
			chart_name(&name, rpt_host_name(h), probs[i]);
			strbuf_addf(&title, "%s on %s", probs[i], rpt_host_name(h));
			if (rpt_gpu_name(h))
				strbuf_addf(&title, " (%s)", rpt_gpu_name(h));
			chart_svg(&svg, title.buf, b, n);
			fn(name.buf, svg.buf, rpt_host_name(h), probs[i], b, n, arg);
			strbuf_release(&name);
			strbuf_release(&svg);
			strbuf_release(&title);
		}
	}
}

static void link_chart(const char *name, const char *svg, const char *host, const char *problem,
		       const struct bar *b, int n, void *arg)
{
	struct strbuf *md = arg;
	(void)svg;
	strbuf_addstr(md, "![");
	rpt_md_cell_n(md, problem, 80);
	strbuf_addstr(md, " on ");
	rpt_md_cell_n(md, host, 64);
	strbuf_addf(md, "](%s)  \n", name);
	strbuf_addstr(md, "Fastest: ");
	rpt_md_code(md, b[0].program);
	strbuf_addstr(md, " ");
	fmt_us(md, b[0].median);
	if (n > 1) {
		strbuf_addstr(md, "; slowest: ");
		rpt_md_code(md, b[n - 1].program);
		strbuf_addstr(md, " ");
		fmt_us(md, b[n - 1].median);
	}
	strbuf_addstr(md, ".\n\n");
}

void rpt_section_charts(struct rpt_ctx *c)
{
	struct strbuf body = STRBUF_INIT;
	each_chart(c->run, link_chart, &body);
	if (body.len) {
		strbuf_addstr(c->md, "## Medians per problem\n\n"
				     "Each program's median time on each problem, with its p10-p90 whisker; "
				     "the baseline's bar is grey and its median the dashed line; the figure "
				     "after a bar is the baseline's time over the program's (above 1: faster). "
				     "Fastest on top.\n\n");
		strbuf_add(c->md, body.buf, body.len);
	}
	strbuf_release(&body);
}

struct write_arg {
	const char *dir;
	enum go_status st;
	struct strbuf *err;
};

static void write_chart(const char *name, const char *svg, const char *host, const char *problem,
			const struct bar *b, int n, void *arg)
{
	struct write_arg *w = arg;
	char *path, *cdir;
	(void)host, (void)problem, (void)b, (void)n;
	if (w->st != GO_OK)
		return;
	cdir = xstrfmt("%s/charts", w->dir);
	path = xstrfmt("%s/%s", w->dir, name);
	/* charts/ inside the report's directory, which must exist (no parents made) */
	if (mkdir(cdir, 0755) != 0 && errno != EEXIST)
		w->st = go_fail(w->err, GO_ERR_IO, "cannot create %s: %s", cdir, strerror(errno));
	if (w->st == GO_OK)
		w->st = fs_write_atomic(path, svg, strlen(svg), w->err);
	free(cdir);
	free(path);
}

enum go_status report_write_charts(const cJSON *run, const char *dir, struct strbuf *err)
{
	struct write_arg w = { dir, GO_OK, err };
	each_chart(run, write_chart, &w);
	return w.st;
}
