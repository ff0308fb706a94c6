/* history-chart.c -- render a figure over commits as an SVG chart (see history-chart.h).
 *
 * Layout (pixels): plot area inside fixed margins; the legend sits to the
 * right of the plot, so it never covers a point; x labels are rotated -40
 * degrees under the axis and thinned to at most ~30. Text is escaped for
 * XML. Colours are the Okabe-Ito palette (readable with colour blindness);
 * step changes use shapes too (up/down triangles), not colour alone. */
#include "report/history-chart.h"

#include <math.h>
#include <string.h>
#include "core/banned.h"

#define W 960
#define H 520
#define ML 90
#define MR 230
#define MT 56
#define MB 120

static const char *const palette[] = { "#0072B2", "#E69F00", "#009E73", "#CC79A7",
				       "#56B4E9", "#D55E00", "#000000", "#F0E442" };
#define NPAL (sizeof(palette) / sizeof(palette[0]))

void svg_text(struct strbuf *sb, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': strbuf_addstr(sb, "&amp;"); break;
		case '<': strbuf_addstr(sb, "&lt;"); break;
		case '>': strbuf_addstr(sb, "&gt;"); break;
		case '"': strbuf_addstr(sb, "&quot;"); break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\t')
				strbuf_addch(sb, *s);
		}
	}
}

void history_ticks(double lo, double hi, int want, double *first, double *step, int *n)
{
	double range = hi - lo, raw, mag, f;
	if (!(range > 0))
		range = fabs(hi) > 0 ? fabs(hi) * 0.1 : 1;
	raw = range / (want > 1 ? want : 1);
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	*step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * mag;
	*first = floor(lo / *step) * *step;
	*n = (int)ceil((hi - *first) / *step - 1e-9) + 1;
	if (*n < 2)
		*n = 2;
	if (*n > 50)
		*n = 50;
}

static void fmt_tick(struct strbuf *sb, double v, double step)
{
	int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
	if (step < 1 && fabs(step * pow(10, dec) - round(step * pow(10, dec))) > 1e-6)
		dec++;
	strbuf_addf(sb, "%.*f", dec > 6 ? 6 : dec, v);
}

void history_svg(const struct history_chart *c, struct strbuf *svg)
{
	double lo = INFINITY, hi = -INFINITY, first, step, y0, y1;
	double pw = W - ML - MR, ph = H - MT - MB, slot;
	int i, s, n, every;

	for (i = 0; i < c->npts; i++) {
		const struct history_point *p = &c->pts[i];
		double a = isnan(p->lo) ? p->y : p->lo, b = isnan(p->hi) ? p->y : p->hi;
		if (a < lo)
			lo = a;
		if (b > hi)
			hi = b;
	}
	if (!c->npts) {
		lo = 0;
		hi = 1;
	}
	if (lo > 0 && lo < 0.5 * hi)
		lo = 0;             /* near zero anyway: start the axis at 0, honestly */
	else
		lo -= (hi - lo) * 0.08;
	hi += (hi - lo) * 0.08;
	history_ticks(lo, hi, 6, &first, &step, &n);
	y0 = first;
	y1 = first + step * (n - 1);
	if (y1 < hi)
		y1 = hi;
	slot = pw / (c->nslots > 0 ? c->nslots : 1);
#define X(i) (ML + ((i) + 0.5) * slot)
#define Y(v) (MT + ph - ((v) - y0) / (y1 - y0) * ph)

	strbuf_addf(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		    "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Arial, Helvetica, sans-serif\">\n",
		    W, H, W, H);
	strbuf_addf(svg, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", W, H);
	strbuf_addf(svg, "<text x=\"%d\" y=\"30\" font-size=\"17\" font-weight=\"bold\" "
		    "fill=\"#222\">", ML);
	svg_text(svg, c->title);
	strbuf_addstr(svg, "</text>\n");

	/* grid and y ticks */
	for (i = 0; i < n; i++) {
		double v = first + i * step, y = Y(v);
		if (v < y0 - 1e-12 || v > y1 + 1e-9)
			continue;
		strbuf_addf(svg, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#e3e3e3\"/>\n",
			    ML, y, ML + pw, y);
		strbuf_addf(svg, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#444\"/>\n",
			    ML - 5, y, ML, y);
		strbuf_addf(svg, "<text x=\"%d\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\" "
			    "fill=\"#333\">", ML - 8, y + 4);
		fmt_tick(svg, v, step);
		strbuf_addstr(svg, "</text>\n");
	}
	/* axes */
	strbuf_addf(svg, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%.0f\" stroke=\"#444\"/>\n", ML, MT,
		    ML, MT + ph);
	strbuf_addf(svg, "<line x1=\"%d\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#444\"/>\n", ML,
		    MT + ph, ML + pw, MT + ph);
	strbuf_addf(svg, "<text transform=\"translate(22,%.0f) rotate(-90)\" font-size=\"13\" "
		    "text-anchor=\"middle\" fill=\"#222\">", MT + ph / 2);
	svg_text(svg, c->y_label);
	strbuf_addstr(svg, "</text>\n");
	/* x labels */
	every = c->nslots > 30 ? (c->nslots + 29) / 30 : 1;
	for (i = 0; i < c->nslots; i++) {
		double x = X(i);
		strbuf_addf(svg, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#444\"/>\n",
			    x, MT + ph, x, MT + ph + (i % every ? 3 : 5));
		if (i % every)
			continue;
		strbuf_addf(svg, "<text transform=\"translate(%.1f,%.0f) rotate(-40)\" font-size=\"11\" "
			    "text-anchor=\"end\" font-family=\"DejaVu Sans Mono, monospace\" "
			    "fill=\"#333\">", x + 3, MT + ph + 16);
		svg_text(svg, c->slots[i]);
		strbuf_addstr(svg, "</text>\n");
	}
	strbuf_addf(svg, "<text x=\"%.0f\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\" "
		    "fill=\"#222\">commit (oldest to newest; one slot per run; + marks uncommitted changes)</text>\n",
		    ML + pw / 2, H - 12);

	/* series: lines, whiskers, points */
	for (s = 0; s < c->nseries; s++) {
		const char *col = palette[(size_t)s % NPAL];
		int started = 0;
		for (i = 0; i < c->npts; i++) {
			const struct history_point *p = &c->pts[i];
			if (p->series != s)
				continue;
			if (!started) {
				strbuf_addf(svg, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" "
					    "points=\"", col);
				started = 1;
			}
			strbuf_addf(svg, "%.1f,%.1f ", X(p->x), Y(p->y));
		}
		if (started)
			strbuf_addstr(svg, "\"/>\n");
		for (i = 0; i < c->npts; i++) {
			const struct history_point *p = &c->pts[i];
			double x, y;
			if (p->series != s)
				continue;
			x = X(p->x);
			y = Y(p->y);
			if (!isnan(p->lo) && !isnan(p->hi))
				strbuf_addf(svg, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
					    "stroke=\"%s\" stroke-opacity=\"0.6\"/>\n", x, Y(p->lo), x,
					    Y(p->hi), col);
			strbuf_addf(svg, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>\n", x, y,
				    col);
			if (p->step) {
				int worse = p->step > 0;
				/* worse: red upward triangle above the point; better: green down */
				if (worse)
					strbuf_addf(svg, "<path d=\"M%.1f %.1f l-8 14 h16 z\" fill=\"#D55E00\" "
						    "stroke=\"#7a2e00\"/>\n", x, y - 26);
				else
					strbuf_addf(svg, "<path d=\"M%.1f %.1f l-8 -14 h16 z\" fill=\"#009E73\" "
						    "stroke=\"#00573f\"/>\n", x, y - 10);
				strbuf_addf(svg, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" "
					    "font-weight=\"bold\" text-anchor=\"start\" fill=\"%s\">x%.2f %s"
					    "</text>\n", x + 10, y - 14, worse ? "#a33d00" : "#00704f",
					    p->ratio, worse ? "regression" : "gain");
			}
		}
	}

	/* legend, right of the plot */
	{
		double lx = ML + pw + 24, ly = MT + 8;
		strbuf_addf(svg, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"13\" font-weight=\"bold\" "
			    "fill=\"#222\">GPU</text>\n", lx, ly);
		for (s = 0; s < c->nseries; s++) {
			ly += 22;
			strbuf_addf(svg, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"%s\" "
				    "stroke-width=\"2\"/><circle cx=\"%.0f\" cy=\"%.0f\" r=\"4\" "
				    "fill=\"%s\"/>\n", lx, ly - 4, lx + 22, ly - 4,
				    palette[(size_t)s % NPAL], lx + 11, ly - 4, palette[(size_t)s % NPAL]);
			strbuf_addf(svg, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\" fill=\"#222\">",
				    lx + 30, ly);
			svg_text(svg, c->series[s]);
			strbuf_addstr(svg, "</text>\n");
		}
		ly += 34;
		strbuf_addf(svg, "<path d=\"M%.0f %.0f l-7 12 h14 z\" fill=\"#D55E00\"/>"
			    "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\" fill=\"#222\">%s</text>\n",
			    lx + 11, ly - 13, lx + 30, ly - 3,
			    c->higher_is_better ? "step down (regression)" : "step up (regression)");
		ly += 22;
		strbuf_addf(svg, "<path d=\"M%.0f %.0f l-7 -12 h14 z\" fill=\"#009E73\"/>"
			    "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\" fill=\"#222\">%s</text>\n",
			    lx + 11, ly - 1, lx + 30, ly - 3,
			    c->higher_is_better ? "step up (gain)" : "step down (gain)");
		ly += 22;
		strbuf_addf(svg, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#666\"/>"
			    "<text x=\"%.0f\" y=\"%.0f\" font-size=\"12\" fill=\"#222\">samples p10-p90"
			    "</text>\n", lx + 11, ly - 14, lx + 11, ly + 2, lx + 30, ly - 3);
		ly += 20;
		strbuf_addf(svg, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" fill=\"#555\">steps: "
			    "%s</text>\n", lx, ly, c->one_value ? "one value a run," : "Mann-Whitney p &lt; 0.002");
		strbuf_addf(svg, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" fill=\"#555\">%s "
			    "the factor</text>\n", lx, ly + 15, c->one_value ? "a ratio beyond" : "and beyond");
	}
	strbuf_addstr(svg, "</svg>\n");
#undef X
#undef Y
}
