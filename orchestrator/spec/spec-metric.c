/* spec-metric.c -- which metric names a gate or an expectation may use.
 *
 * A gate or an expectation on a figure no step records is a typo that only
 * shows after a GPU run (a gate fails "not measured", an expectation stays
 * "not measured" for ever), so spec check refuses it, with the closest name
 * the program does record:
 *   - a program on the result contract (sources or script): the vocabulary
 *     (core/metric.c's table: latency_us, tflops, gbps, min_us, ...),
 *     speedup, and dotted paths into the result whose section is one the
 *     contract defines (timing., model., correctness., device. fields by
 *     name; config. and problem. are the program's own);
 *   - a program off the harness (docs/byo.md): only the figures it declares
 *     (NAME[KERNEL] or NAME[*] for one that names its kernels);
 *   - any program: kernel:KEY.FIELD of its kernel_timing step, and
 *     profile.*, sanitizer.*, ptxas.* (spec-figures.c checks those). */
#include "spec/spec-int.h"

#include <stdlib.h>
#include <string.h>
#include "core/metric.h"
#include "core/banned.h"

/* The numeric fields docs/result-contract.md defines, by section. */
static const char *const timing_fields[] = {
	"n", "min_us", "p10_us", "median_us", "mean_us", "p90_us", "max_us", "cv_pct",
	"gpu_time_s", "wall_s", "dropped_throttled", "warmup", "event_overhead_us",
	"l2_flush_bytes", "input_sets", "sm_clock_mhz_median", "samples_total", NULL
};
static const char *const model_fields[] = {
	"flops", "bytes", "tflops", "gbps", "peak_tflops", "peak_gbps", "floor_us", "pct_of_floor",
	"bound_tflops", "bound_gbps", "bound_us", NULL
};
static const char *const correctness_fields[] = {
	"max_abs", "max_rel", "rel_l2", "nonfinite", "unwritten", NULL
};
static const char *const device_fields[] = {
	"sm_count", "l2_bytes", "smem_per_block_optin", "global_mem_bytes", "sm_clock_mhz",
	"mem_clock_mhz", NULL
};
static const char *const sections[] = {
	"timing", "model", "correctness", "device", "config", "problem", "figures", NULL
};
/* figures.NAME.FIELD: a figure the program prints in its result (NAME is
 * the program's, known after a run), its value or its judgement against
 * the physical peaks (store/peaks.h) */
static const char *const figure_fields[] = { "value", "pct_of_peak", "peak", NULL };
static const char *const kernel_fields[] = {
	"median_us", "min_us", "max_us", "launches", "total_us", "share_pct", "tflops", "gbps", NULL
};

int spec_metric_is_vocabulary(const char *m)
{
	const struct metric_def *d = metric_find(m);
	return d && !strcmp(d->name, m);
}

/* "unknown metric 'M' for program 'P' (did you mean 'X'? | WHAT: 'a', 'b')". */
static enum go_status unknown(struct spec_ctx *c, const char *program, const char *m,
			      const char *const *choices, const char *what)
{
	const char *best = str_suggest(m, choices);
	struct strbuf sb = STRBUF_INIT;
	enum go_status st;
	int i;
	if (best) {
		strbuf_addf(&sb, "did you mean '%s'?", best);
	} else {
		strbuf_addf(&sb, "%s: ", what);
		for (i = 0; choices[i]; i++)
			strbuf_addf(&sb, "%s'%s'", i ? ", " : "", choices[i]);
		if (!i)
			strbuf_addstr(&sb, "none");
	}
	st = spec_bad(c, "unknown metric '%s' for program '%s' (%s)", m, program, sb.buf);
	strbuf_release(&sb);
	return st;
}

static int has_kernel_timing(const struct spec *s, const char *program)
{
	int i;
	for (i = 0; i < s->nsteps; i++)
		if (s->steps[i].kind == STEP_KERNEL_TIMING && !strcmp(s->steps[i].program, program))
			return 1;
	return 0;
}

/* Whether a kernel_timing step of program declares work for kernel KEY
 * (the first n bytes of key): its flops (want_flops) or its bytes. */
static int declares_work(const struct spec *s, const char *program, const char *key, size_t n,
			 int want_flops)
{
	int i, j;
	for (i = 0; i < s->nsteps; i++) {
		const struct spec_step *st = &s->steps[i];
		if (st->kind != STEP_KERNEL_TIMING || strcmp(st->program, program))
			continue;
		for (j = 0; j < st->nwork; j++)
			if (strlen(st->work[j].key) == n && !strncmp(st->work[j].key, key, n) &&
			    (want_flops ? st->work[j].flops : st->work[j].bytes) > 0)
				return 1;
	}
	return 0;
}

/* kernel:KEY.FIELD: KEY is known only after a run; FIELD and the step now
 * (a rate, tflops or gbps, needs the kernel's work declared). */
static enum go_status check_kernel(struct spec_ctx *c, const char *program, const char *m)
{
	const char *dot = strrchr(m + 7, '.');
	if (!has_kernel_timing(c->s, program))
		return spec_bad(c, "'%s' is a kernel_timing figure, and no kernel_timing step of '%s' "
				   "runs (add {\"kind\": \"kernel_timing\", \"program\": \"%s\"})",
				m, program, program);
	if (!dot || dot == m + 7)
		return spec_bad(c, "expected 'kernel:KEY.FIELD' (FIELD: median_us, min_us, max_us, "
				   "launches, total_us, share_pct, tflops or gbps), found '%s'", m);
	if ((!strcmp(dot + 1, "tflops") || !strcmp(dot + 1, "gbps")) &&
	    !declares_work(c->s, program, m + 7, (size_t)(dot - m - 7), !strcmp(dot + 1, "tflops")))
		return spec_bad(c, "'%s' is the rate of kernel '%.*s' from its declared work, and no "
				   "kernel_timing step of '%s' declares its %s (add \"work\": "
				   "{\"%.*s\": {\"%s\": N}} to the step: what one launch %s)",
				m, (int)(dot - m - 7), m + 7, program,
				!strcmp(dot + 1, "tflops") ? "flops" : "bytes", (int)(dot - m - 7), m + 7,
				!strcmp(dot + 1, "tflops") ? "flops" : "bytes",
				!strcmp(dot + 1, "tflops") ? "computes" : "reads and writes");
	if (spec_strv_has((char *const *)kernel_fields, dot + 1))
		return GO_OK;
	return unknown(c, program, dot + 1, kernel_fields, "a kernel's fields");
}

/* A dotted path into a result on the contract: SECTION.FIELD. */
static enum go_status check_path(struct spec_ctx *c, const char *program, const char *m)
{
	const char *dot = strchr(m, '.');
	size_t n = (size_t)(dot - m);
	const char *const *fields = NULL;
	char *sec = xstrfmt("%.*s", (int)n, m);
	enum go_status st = GO_OK;
	if (!strcmp(sec, "timing"))
		fields = timing_fields;
	else if (!strcmp(sec, "model"))
		fields = model_fields;
	else if (!strcmp(sec, "correctness"))
		fields = correctness_fields;
	else if (!strcmp(sec, "device"))
		fields = device_fields;
	else if (!strcmp(sec, "figures"))
		fields = figure_fields;
	else if (!spec_strv_has((char *const *)sections, sec))
		st = spec_bad(c, "unknown metric '%s' for program '%s': a result has no section '%s'%s%s%s "
				 "(docs/result-contract.md: timing., model., correctness., device., "
				 "config., problem., figures.)", m, program, sec,
			      str_suggest(sec, sections) ? " (did you mean '" : "",
			      str_suggest(sec, sections) ? str_suggest(sec, sections) : "",
			      str_suggest(sec, sections) ? "'?)" : "");
	if (fields == figure_fields) {
		const char *fd = strrchr(dot + 1, '.');
		if (!fd || fd == dot + 1 || !spec_strv_has((char *const *)fields, fd + 1))
			st = spec_bad(c, "unknown metric '%s' for program '%s': a figure the program prints "
					 "is 'figures.NAME.value', 'figures.NAME.pct_of_peak' or "
					 "'figures.NAME.peak' (docs/result-contract.md)", m, program);
	} else if (fields && !spec_strv_has((char *const *)fields, dot + 1)) {
		const char *best = str_suggest(dot + 1, fields);
		st = best ? spec_bad(c, "unknown metric '%s' for program '%s' (did you mean '%s.%s'?)",
				     m, program, sec, best)
			  : spec_bad(c, "unknown metric '%s' for program '%s': docs/result-contract.md "
					"defines no '%s' under '%s'", m, program, dot + 1, sec);
	}
	free(sec);
	return st;
}

/* m is NAME[...] of figure `name`: the part in brackets, else NULL */
static const char *kernel_of(const char *name, const char *m)
{
	size_t n = strlen(name);
	return !strncmp(m, name, n) && m[n] == '[' ? m + n + 1 : NULL;
}

/* m names figure f: NAME for a figure with one value, NAME[KERNEL] or
 * NAME[*] (every kernel's) for one per kernel (docs/byo.md). */
static enum go_status check_kernel_figure(struct spec_ctx *c, const struct spec_figure *f,
					  const char *m)
{
	const char *k = kernel_of(f->name, m);
	size_t n;
	int named = f->name_regex || f->name_group;
	if (!k && !named)
		return GO_OK;
	if (!k)
		return spec_bad(c, "'%s' gives a figure per kernel: name one kernel's, "
				   "'%s[KERNEL]', or every kernel's, '%s[*]'", m, m, m);
	if (!named)
		return spec_bad(c, "'%s' has one value, not one per kernel: say '%s' (or give the "
				   "figure a 'name_regex' or 'name_group', docs/byo.md)", f->name,
				f->name);
	n = strlen(k);
	if (n < 2 || k[n - 1] != ']' || (strcmp(k, "*]") && !metric_kernel_name_ok(k, n - 1)))
		return spec_bad(c, "'%s': a kernel's figure is '%s[KERNEL]' (1-64 letters, digits, "
				   "'_', '-' or '+', as the program prints it) or '%s[*]' (every "
				   "kernel's)", m, f->name, f->name);
	return GO_OK;
}

enum go_status spec_check_metric_name(struct spec_ctx *c, const char *program, const char *m)
{
	const struct spec_program *p = spec_find_program(c->s, program);
	const char **names;
	const struct metric_def *d;
	enum go_status st;
	int i, n = 0;

	if (!strncmp(m, "kernel:", 7))
		return check_kernel(c, program, m);
	if (!p)
		return GO_OK;   /* check_ref said so */
	for (i = 0; i < p->nfigures; i++) {
		const struct spec_figure *f = &p->figures[i];
		if (strcmp(f->name, m) && !kernel_of(f->name, m))
			continue;
		return check_kernel_figure(c, f, m);
	}
	if (!p->run) {
		if (spec_metric_is_vocabulary(m) || !strcmp(m, "speedup"))
			return GO_OK;
		if (strchr(m, '.'))
			return check_path(c, program, m);
	}
	/* what this program records, for the closest name */
	for (d = metric_table; d->name; d++)
		;
	names = xcalloc((size_t)p->nfigures + (size_t)(d - metric_table) + 2, sizeof(*names));
	for (i = 0; i < p->nfigures; i++)
		names[n++] = p->figures[i].name;
	if (!p->run) {
		for (d = metric_table; d->name; d++)
			names[n++] = d->name;
		names[n++] = "speedup";
	}
	if (p->run && !str_suggest(m, names)) {
		struct strbuf sb = STRBUF_INIT;
		for (i = 0; i < n; i++)
			strbuf_addf(&sb, "%s'%s'", i ? ", " : "", names[i]);
		st = spec_bad(c, "'%s' is not a figure of '%s': a program off the harness records only "
				 "the figures it declares (docs/byo.md): %s", m, program,
			      n ? sb.buf : "it declares none");
		strbuf_release(&sb);
	} else {
		st = unknown(c, program, m, names, "expected one of these or a dotted path into the "
			     "result such as 'timing.p90_us'");
	}
	free(names);
	return st;
}
