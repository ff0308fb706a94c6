/* compare.c -- figures of run records and verdicts between two runs (see compare.h).
 *
 * Pairing: each figure of run A is matched with the unused figure of run B
 * that measured the same program (or its --pair partner) on the same
 * problem, of the same sweep variant (none for a plain benchmark),
 * preferring the same host name, then the same GPU model. What is
 * left on either side is reported as missing. A pair's verdict is decided
 * in this order: correctness changed (step status, the program's own status,
 * or the correctness step) -> different; resources (registers, spills,
 * shared memory), nvcc or driver changed -> different, with the timing
 * verdict still shown beside it; else the timing verdict of stats_compare(). */
#include "report/compare.h"
#include "store/runkeys.h"
#include "core/jsonutil.h"
#include "store/runread.h"
#include "store/samples.h"
#include "core/strpool.h"
#include "core/vocab.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

/* Both NULL counts as equal here (e.g. no GPU on either side). */
static int same_str(const char *a, const char *b)
{
	return (!a && !b) || rr_streq(a, b);
}

const char *figure_gpu_label(const struct figure *f)
{
	return f->gpu && *f->gpu ? f->gpu : "no GPU";
}

static void resources_of(const cJSON *host, struct figure *f)
{
	const cJSON *b, *r;
	f->registers = f->spill_bytes = f->smem_bytes = -1;
	cJSON_ArrayForEach(b, cJSON_GetObjectItem(host, "builds")) {
		if (!rr_streq(json_str(b, "program"), f->program) || !same_str(json_str(b, "arch"), f->arch) ||
		    !same_str(json_str(b, "variant"), f->variant))
			continue;
		cJSON_ArrayForEach(r, cJSON_GetObjectItem(b, "resources")) {
			int reg = (int)json_num(r, "registers", -1);
			int sp = (int)json_num(r, "spill_store_bytes", 0) +
				 (int)json_num(r, "spill_load_bytes", 0);
			int sm = (int)json_num(r, "smem_bytes", -1);
			if (reg > f->registers)
				f->registers = reg;
			f->spill_bytes = (f->spill_bytes < 0 ? 0 : f->spill_bytes) + sp;
			if (sm > f->smem_bytes)
				f->smem_bytes = sm;
		}
		break;
	}
}

/* A new figure of step s of host h, its identity and context filled in. */
static struct figure *new_figure(struct figures *out, int *cap, const cJSON *run, const cJSON *h,
				 const cJSON *s)
{
	const cJSON *info = cJSON_GetObjectItem(h, "info"), *res = cJSON_GetObjectItem(s, "result");
	struct figure *f;
	if (out->n == *cap) {
		*cap = *cap ? 2 * *cap : 8;
		out->v = xrealloc(out->v, (size_t)*cap * sizeof(*out->v));
	}
	f = &out->v[out->n++];
	memset(f, 0, sizeof(*f));
	f->run_id = json_str(run, "run_id");
	f->commit = json_str(json_path(run, "provenance.git"), "commit");
	f->host = json_str(h, "name");
	f->gpu = json_str(info, "gpu_name");
	f->compute_cap = json_str(info, "compute_cap");
	f->program = json_str(s, "program");
	f->problem = json_str(s, "problem");
	f->arch = json_str(s, "arch");
	f->role = json_str(s, "role");
	f->variant = json_str(s, "variant");
	f->status = json_str(s, "status");
	f->result_status = json_str(res, "status");
	f->nvcc_version = json_str(json_path(info, "nvcc"), "version");
	f->driver = json_str(info, "driver");
	/* the GPU the step ran on (its slot's: a host of many GPUs, --spread),
	 * else the host's */
	f->gpu_uuid = json_str(cJSON_GetArrayItem(cJSON_GetObjectItem(s, "gpus"), 0), "uuid");
	if (!f->gpu_uuid)
		f->gpu_uuid = json_str(info, "gpu_uuid");
	f->max_clock_mhz = rr_num_or_nan(info, "max_sm_clock_mhz");
	f->clock_mhz = NAN;
	f->median_us = f->min_us = f->max_us = f->tflops = f->gbps = NAN;
	f->registers = f->spill_bytes = f->smem_bytes = -1;
	return f;
}

/* A named figure of step s: output figure x (field NULL: x is
 * result.figures.NAME, its value, unit and better beside it) or kernel x
 * (result["kernel:KEY"]) whose FIELD is the figure. Unit and direction come
 * from the one vocabulary (metric_named). A value that is not a finite
 * number is no figure. */
static void add_named(struct figures *out, int *cap, const cJSON *run, const cJSON *h,
		      const cJSON *s, const cJSON *x, const char *field)
{
	struct figure *f;
	double v;
	char *full;

	if (!x->string || !rr_num(x, field ? field : "value", &v))
		return;
	f = new_figure(out, cap, run, h, s);
	f->value = v;
	f->name = x->string;
	f->field = field;
	full = field ? xstrfmt("%s.%s", x->string, field) : NULL;
	metric_named(full ? full : x->string, json_str(x, "unit"), json_str(x, "better"), &f->unit,
		     &f->better);
	free(full);
}

/* A sweep variant's benchmark step: its check is the variant's other step. */
static int is_sweep_bench(const cJSON *s)
{
	return rr_is_kind(s, STEP_SWEEP) && rr_str(s, "variant") && rr_streq(rr_str(s, "mode"), "bench");
}

/* The correctness step of figure f on host h: the plain one of its program
 * and problem, or its variant's check. */
static const cJSON *check_of(const cJSON *h, const struct figure *f)
{
	const cJSON *s = NULL;
	if (!f->variant)
		return rr_find_step(h, STEP_CORRECTNESS, f->program, f->problem, NULL, NULL);
	while ((s = rr_next_step(h, s, STEP_SWEEP, f->program, f->problem, NULL, NULL)) != NULL)
		if (rr_streq(rr_str(s, "variant"), f->variant) && rr_streq(rr_str(s, "mode"), "check"))
			return s;
	return NULL;
}

/* The timing figure of benchmark step s of host h. */
static void add_timing(struct figures *out, int *cap, const cJSON *run, const cJSON *h,
		       const cJSON *s)
{
	const cJSON *res = cJSON_GetObjectItem(s, "result");
	struct figure *f = new_figure(out, cap, run, h, s);
	struct samples sm;
	double total;

	f->check_status = rr_str(check_of(h, f), "status");
	f->median_us = rr_num_or_nan(res, METRIC_MEDIAN_PATH);
	f->min_us = rr_num_or_nan(res, "timing.min_us");
	f->max_us = rr_num_or_nan(res, "timing.max_us");
	f->tflops = rr_num_or_nan(res, "model.tflops");
	f->gbps = rr_num_or_nan(res, "model.gbps");
	f->clock_mhz = rr_num_or_nan(res, "timing.sm_clock_mhz_median");
	f->samples_at = json_path(res, "timing.samples_at");
	f->samples_kept = rr_str(rr_obj(res, "timing"), "samples_kept");
	if (rr_num(res, "timing.n", &total) && total >= 1 && total < 1e9)
		f->ntotal = (int)total;
	switch (samples_read_timing(rr_obj(res, "timing"), &sm, NULL)) {
	case 1:
		f->samples = sm.v;
		f->nsamples = sm.n;
		f->ntotal = sm.total;
		break;
	case -1:
		f->samples_error = "its packed samples cannot be decoded (record damaged?)";
		break;
	}
	resources_of(h, f);
}

static void collect(const cJSON *run, int sweeps, struct figures *out)
{
	const cJSON *h, *s;
	int cap = 0;

	out->v = NULL;
	out->n = 0;
	cJSON_ArrayForEach(h, cJSON_GetObjectItem(run, "hosts")) {
		cJSON_ArrayForEach(s, cJSON_GetObjectItem(h, "steps")) {
			const cJSON *res = cJSON_GetObjectItem(s, "result");
			if (!rr_is_kind(s, STEP_BENCHMARK) && !(sweeps && is_sweep_bench(s)))
				continue;
			/* a program's own figures stand for its step when it has no timing */
			if (!json_path(res, METRIC_MEDIAN_PATH) &&
			    cJSON_GetArraySize(cJSON_GetObjectItem(res, "figures")) > 0)
				continue;
			add_timing(out, &cap, run, h, s);
		}
	}
	cJSON_ArrayForEach(h, cJSON_GetObjectItem(run, "hosts")) {
		cJSON_ArrayForEach(s, cJSON_GetObjectItem(h, "steps")) {
			const cJSON *res = cJSON_GetObjectItem(s, "result"), *x;
			/* output figures (any step), then kernel medians (kernel_timing) */
			cJSON_ArrayForEach(x, rr_obj(res, "figures"))
				add_named(out, &cap, run, h, s, x, NULL);
			if (!rr_is_kind(s, STEP_KERNEL_TIMING))
				continue;
			cJSON_ArrayForEach(x, res)
				if (x->string && metric_is_kernel(x->string))
					add_named(out, &cap, run, h, s, x, "median_us");
		}
	}
}

void figures_of_run(const cJSON *run, struct figures *out)
{
	collect(run, 0, out);
}

void figures_of_run_sweeps(const cJSON *run, struct figures *out)
{
	collect(run, 1, out);
}

void figures_release(struct figures *f)
{
	int i;
	for (i = 0; i < f->n; i++)
		free(f->v[i].samples);
	free(f->v);
	f->v = NULL;
	f->n = 0;
}

/* every string of a figure (samples_error is static text) */
static const size_t figure_strs[] = {
	offsetof(struct figure, run_id), offsetof(struct figure, commit),
	offsetof(struct figure, host), offsetof(struct figure, gpu),
	offsetof(struct figure, compute_cap), offsetof(struct figure, program),
	offsetof(struct figure, problem), offsetof(struct figure, arch),
	offsetof(struct figure, role), offsetof(struct figure, variant),
	offsetof(struct figure, status),
	offsetof(struct figure, result_status), offsetof(struct figure, check_status),
	offsetof(struct figure, samples_kept), offsetof(struct figure, gpu_uuid),
	offsetof(struct figure, nvcc_version), offsetof(struct figure, driver),
	offsetof(struct figure, name), offsetof(struct figure, field),
	offsetof(struct figure, unit),
};
#define FIGURE_NSTRS (sizeof(figure_strs) / sizeof(figure_strs[0]))

/* the address of f's i-th string pointer */
static const char **figure_str(struct figure *f, size_t i)
{
	return (const char **)((char *)f + figure_strs[i]);
}

struct figure *figure_keep(struct figure *f)
{
	size_t i, total = 0;
	struct figure *k;
	char *at;
	for (i = 0; i < FIGURE_NSTRS; i++) {
		const char *str = *figure_str(f, i);
		total += str ? strlen(str) + 1 : 0;
	}
	/* one block: the figure, then its strings */
	k = xmalloc(sizeof(*k) + total);
	*k = *f;
	at = (char *)(k + 1);
	for (i = 0; i < FIGURE_NSTRS; i++) {
		const char **str = figure_str(k, i);
		size_t n;
		if (!*str)
			continue;
		n = strlen(*str) + 1;
		memcpy(at, *str, n);
		*str = at;
		at += n;
	}
	k->samples_at = NULL;
	f->samples = NULL;   /* the samples go with the copy */
	f->nsamples = 0;
	return k;
}

void figure_intern(struct figure *f, struct strpool *pool)
{
	size_t i;
	for (i = 0; i < FIGURE_NSTRS; i++) {
		const char **str = figure_str(f, i);
		*str = strpool_get(pool, *str);
	}
	f->samples_at = NULL;
}

void figure_free_kept(struct figure *k)
{
	if (k)
		free(k->samples);
	free(k);
}

int figure_is_named(const struct figure *f, const char *name)
{
	size_t n;
	if (!f->name || !name)
		return 0;
	if (!strcmp(f->name, name))
		return 1;
	n = strlen(f->name);
	return f->field && !strncmp(name, f->name, n) && name[n] == '.' && !strcmp(name + n + 1, f->field);
}

/* Whether the list "A, B, C" holds name as one of its items. */
static int list_has(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;
	while ((p = strstr(p, name)) != NULL) {
		if ((p == list || (p >= list + 2 && !strncmp(p - 2, ", ", 2))) &&
		    (p[n] == '\0' || !strncmp(p + n, ", ", 2)))
			return 1;
		p++;
	}
	return 0;
}

int figures_list_names(const struct figures *fs, const char *program, const char *problem,
		       struct strbuf *sb)
{
	int i, n = 0;
	for (i = 0; i < fs->n; i++) {
		const struct figure *f = &fs->v[i];
		char *full;
		if (!f->name || (program && !rr_streq(f->program, program)) ||
		    (problem && !rr_streq(f->problem, problem)))
			continue;
		full = f->field ? xstrfmt("%s.%s", f->name, f->field) : xstrdup(f->name);
		if (!list_has(sb->buf, full)) {
			strbuf_addf(sb, "%s%s", sb->len ? ", " : "", full);
			n++;
		}
		free(full);
	}
	return n;
}

const char *compare_row_verdict(const struct cmp_row *r, int reproduce)
{
	const struct figure *f = r->a ? r->a : r->b;
	if (f && f->name && r->verdict == CMP_FASTER)
		return "better";
	if (f && f->name && r->verdict == CMP_SLOWER)
		return "worse";
	return compare_verdict_name(r->verdict, reproduce);
}

const char *compare_verdict_name(enum cmp_verdict v, int reproduce)
{
	switch (v) {
	case CMP_SAME: return reproduce ? "reproduced" : "same";
	case CMP_FASTER: return "faster";
	case CMP_SLOWER: return "slower";
	case CMP_DIFFERENT: return "different";
	case CMP_INSUFFICIENT: return "insufficient data";
	case CMP_MISSING: return "missing";
	case CMP_NOT_COMPARABLE: return "not comparable";
	}
	return "?";
}

/* ---- pairing ---- */

static int wants(const struct cmp_opts *o, const struct figure *f, int side_b)
{
	if (!o->pair_a)
		return 1;
	return rr_streq(f->program, side_b ? o->pair_b : o->pair_a);
}

static int partners(const struct cmp_opts *o, const struct figure *a, const struct figure *b)
{
	if (!same_str(a->problem, b->problem) || !same_str(a->name, b->name) ||
	    !same_str(a->variant, b->variant))
		return 0;
	if (o->pair_a)
		return rr_streq(a->program, o->pair_a) && rr_streq(b->program, o->pair_b);
	return rr_streq(a->program, b->program);
}

/* A step's status PASS, or a program's own result.status "pass"
 * (docs/result-contract.md). */
static int is_pass(const char *s)
{
	return item_status_is(s, ST_PASS) || (s && !strcmp(s, "pass"));
}

static void add_change(struct strbuf *sb, const char *fmt_name, const char *a, const char *b)
{
	if (sb->len)
		strbuf_addstr(sb, "; ");
	strbuf_addf(sb, "%s %s -> %s", fmt_name, a ? a : "none", b ? b : "none");
}

static void add_int_change(struct strbuf *sb, const char *name, int a, int b)
{
	if (a < 0 || b < 0 || a == b)
		return;
	if (sb->len)
		strbuf_addstr(sb, "; ");
	strbuf_addf(sb, "%s %d -> %d", name, a, b);
}

int compare_named(const struct figure *a, const struct figure *b, double factor, struct stats_cmp *t)
{
	double ratio = a->value != 0 ? b->value / a->value : NAN;
	int beyond;

	memset(t, 0, sizeof(*t));
	t->ratio = ratio;
	t->p = NAN;
	t->verdict = STATS_SAME;
	if (isnan(ratio) || ratio < 0) {
		t->verdict = STATS_INSUFFICIENT;
		t->why = "a ratio of these values means nothing (zero or opposite signs)";
		return 0;
	}
	t->why = "one value per run: the ratio rule alone";
	beyond = stats_beyond_factor(ratio, factor);   /* 1 up, -1 down */
	if (a->better == METRIC_HIGHER_BETTER)
		t->verdict = beyond > 0 ? STATS_FASTER : beyond < 0 ? STATS_SLOWER : STATS_SAME;
	else if (a->better == METRIC_LOWER_BETTER)
		t->verdict = beyond < 0 ? STATS_FASTER : beyond > 0 ? STATS_SLOWER : STATS_SAME;
	else
		return beyond != 0;
	return 0;
}

/* A named figure: the ratio rule alone, in its better direction. Exactly at
 * the factor is "same", as for timings ("beyond the factor"). */
static void judge_named(struct cmp_row *r, const struct cmp_opts *o)
{
	const struct figure *a = r->a, *b = r->b;
	double factor = o->factor;
	int moved;

	if (compare_instances_differ(a, b)) {
		factor = o->instance_factor > 0 ? o->instance_factor : CMP_INSTANCE_FACTOR;
		factor = factor > o->factor ? factor : o->factor;
		strbuf_addf(&r->notes, "GPU instances differ (%.12s vs %.12s): the same within x%.3g "
			    "across instances", a->gpu_uuid, b->gpu_uuid, factor);
	}
	moved = compare_named(a, b, factor, &r->t);

	if (!same_str(a->status, b->status))
		add_change(&r->changes, "step", a->status, b->status);
	if (!same_str(a->gpu, b->gpu))   /* only with --cross-gpu */
		strbuf_addf(&r->notes, "%sGPU differs: %s vs %s (--cross-gpu)", r->notes.len ? "; " : "",
			    figure_gpu_label(a), figure_gpu_label(b));
	if (r->t.verdict == STATS_INSUFFICIENT) {
		r->verdict = r->changes.len ? CMP_DIFFERENT : CMP_INSUFFICIENT;
		return;
	}
	if (moved)
		strbuf_addf(&r->changes, "value x%.3f (no better direction declared)", r->t.ratio);
	if (r->t.verdict == STATS_SLOWER)
		r->regression = 1;
	if (is_pass(a->status) && !is_pass(b->status))
		r->regression = 1;
	r->verdict = r->changes.len ? CMP_DIFFERENT : r->t.verdict == STATS_FASTER ? CMP_FASTER
		     : r->t.verdict == STATS_SLOWER ? CMP_SLOWER : CMP_SAME;
}

int compare_comparable(const struct figure *a, const struct figure *b, const struct cmp_opts *o,
		       struct strbuf *why)
{
	if (o->cross_gpu)
		return 1;
	if (!same_str(a->gpu, b->gpu)) {
		strbuf_addf(why, "different GPU models: %s vs %s", figure_gpu_label(a),
			    figure_gpu_label(b));
		return 0;
	}
	if (a->compute_cap && b->compute_cap && strcmp(a->compute_cap, b->compute_cap)) {
		strbuf_addf(why, "different compute capabilities: %s vs %s", a->compute_cap,
			    b->compute_cap);
		return 0;
	}
	if (a->max_clock_mhz > 0 && b->max_clock_mhz > 0 && a->max_clock_mhz != b->max_clock_mhz) {
		strbuf_addf(why, "different SM clock caps: %.0f vs %.0f MHz", a->max_clock_mhz,
			    b->max_clock_mhz);
		return 0;
	}
	return 1;
}

int compare_instances_differ(const struct figure *a, const struct figure *b)
{
	return a->gpu_uuid && b->gpu_uuid && strcmp(a->gpu_uuid, b->gpu_uuid) != 0;
}

static void add_note(struct strbuf *sb, const char *s)
{
	strbuf_addf(sb, "%s%s", sb->len ? "; " : "", s);
}

/* "A 2000 of 9876" for a side that stores a subset */
static void subset_words(struct strbuf *sb, const char *side, const struct figure *f)
{
	if (f->ntotal > f->nsamples && f->nsamples > 0)
		strbuf_addf(sb, "%s%s %d of %d", sb->len ? ", " : "", side, f->nsamples, f->ntotal);
}

int compare_timing(const struct figure *a, const struct figure *b, const struct cmp_opts *o,
		   struct stats_cmp *t, struct strbuf *notes)
{
	double factor = o->factor > 0 ? o->factor : STATS_DEFAULT_FACTOR;
	double rec = a->median_us > 0 && b->median_us > 0 ? b->median_us / a->median_us : NAN;
	struct strbuf sb = STRBUF_INIT;
	int suspect = 0;

	if (compare_instances_differ(a, b)) {
		double fi = o->instance_factor > 0 ? o->instance_factor : CMP_INSTANCE_FACTOR;
		if (fi > factor)
			factor = fi;
		strbuf_addf(&sb, "GPU instances differ (%.12s vs %.12s): the same within x%.3g across "
			    "instances", a->gpu_uuid, b->gpu_uuid, factor);
		add_note(notes, sb.buf);
		strbuf_reset(&sb);
	}
	stats_compare(a->samples, a->nsamples, b->samples, b->nsamples, o->alpha, factor, t);
	if (a->samples_error || b->samples_error)
		t->why = a->samples_error ? a->samples_error : b->samples_error;
	if (!a->nsamples || !b->nsamples) {
		t->ratio = rec;    /* no samples to test: the medians are all there is */
		goto out;
	}
	subset_words(&sb, "A", a);
	subset_words(&sb, "B", b);
	if (sb.len) {
		char *what = strbuf_detach(&sb, NULL);
		strbuf_addf(&sb, "the stored samples are a subset (%s; %s): the test, ratio and verdict "
			    "use them", what, a->ntotal > a->nsamples && a->samples_kept ? a->samples_kept
			    : b->ntotal > b->nsamples && b->samples_kept ? b->samples_kept
			    : "which ones the record does not say");
		free(what);
		add_note(notes, sb.buf);
		strbuf_reset(&sb);
	}
	/* a record whose samples and medians tell different stories */
	if (!isnan(rec) && !isnan(t->ratio) &&
	    stats_beyond_factor(rec, factor) != stats_beyond_factor(t->ratio, factor)) {
		t->verdict = STATS_INSUFFICIENT;
		t->why = "the stored samples do not represent the recorded medians";
		strbuf_addf(&sb, "the recorded medians give x%.3f, the stored samples x%.3f", rec,
			    t->ratio);
		add_note(notes, sb.buf);
		/* either side of the story says slower: it cannot be ruled out */
		suspect = stats_beyond_factor(rec, factor) > 0 || stats_beyond_factor(t->ratio, factor) > 0;
	}
out:
	strbuf_release(&sb);
	return suspect;
}

static void judge(struct cmp_row *r, const struct cmp_opts *o)
{
	const struct figure *a = r->a, *b = r->b;
	struct strbuf why = STRBUF_INIT;
	int correctness = 0, suspect, env = 0;

	if (!compare_comparable(a, b, o, &why)) {
		/* timings of two kinds of GPU say nothing about the code */
		r->verdict = CMP_NOT_COMPARABLE;
		r->t.why = NULL;
		r->t.ratio = a->name ? (a->value != 0 ? b->value / a->value : NAN)
			     : a->median_us > 0 && b->median_us > 0 ? b->median_us / a->median_us : NAN;
		strbuf_addf(&r->notes, "%s (give --cross-gpu to compare them anyway)", why.buf);
		strbuf_release(&why);
		return;
	}
	strbuf_release(&why);
	if (a->name) {
		judge_named(r, o);
		return;
	}
	suspect = compare_timing(a, b, o, &r->t, &r->notes);
	if (!same_str(a->status, b->status)) {
		add_change(&r->changes, "step", a->status, b->status);
		correctness = 1;
	}
	if (!same_str(a->result_status, b->result_status)) {
		add_change(&r->changes, "result", a->result_status, b->result_status);
		correctness = 1;
	}
	if (!same_str(a->check_status, b->check_status)) {
		add_change(&r->changes, "correctness", a->check_status, b->check_status);
		correctness = 1;
	}
	if (correctness && is_pass(a->status) && (!is_pass(b->status) ||
						   (a->check_status && !is_pass(b->check_status)) ||
						   (is_pass(a->result_status) && !is_pass(b->result_status))))
		r->regression = 1;
	if (o->pair_a) {
		/* Two different programs: their resources differ by design, so
		 * they are shown, not called a difference. */
		struct strbuf res = STRBUF_INIT;
		add_int_change(&res, "registers", a->registers, b->registers);
		add_int_change(&res, "spill bytes", a->spill_bytes, b->spill_bytes);
		add_int_change(&res, "smem bytes", a->smem_bytes, b->smem_bytes);
		if (res.len)
			strbuf_addf(&r->notes, "%s%s", r->notes.len ? "; " : "", res.buf);
		strbuf_release(&res);
	} else {
		add_int_change(&r->changes, "registers", a->registers, b->registers);
		add_int_change(&r->changes, "spill bytes", a->spill_bytes, b->spill_bytes);
		add_int_change(&r->changes, "smem bytes", a->smem_bytes, b->smem_bytes);
	}
	if (a->nvcc_version && b->nvcc_version && strcmp(a->nvcc_version, b->nvcc_version))
		add_change(&r->changes, "nvcc", a->nvcc_version, b->nvcc_version);
	if (a->driver && b->driver && strcmp(a->driver, b->driver)) {
		add_change(&r->changes, "driver", a->driver, b->driver);
		env = 1;
	}
	if (!same_str(a->gpu, b->gpu))   /* only with --cross-gpu */
		strbuf_addf(&r->notes, "%sGPU differs: %s vs %s (--cross-gpu)", r->notes.len ? "; " : "",
			    figure_gpu_label(a), figure_gpu_label(b));
	/* a slower timing under another driver is not the code's regression */
	if ((r->t.verdict == STATS_SLOWER || suspect) && !env)
		r->regression = 1;
	if (r->changes.len) {
		r->verdict = CMP_DIFFERENT;
		return;
	}
	switch (r->t.verdict) {
	case STATS_SAME: r->verdict = CMP_SAME; break;
	case STATS_FASTER: r->verdict = CMP_FASTER; break;
	case STATS_SLOWER: r->verdict = CMP_SLOWER; break;
	case STATS_INSUFFICIENT: r->verdict = CMP_INSUFFICIENT; break;
	}
}

static struct cmp_row *new_row(struct cmp_result *out, int *cap)
{
	struct cmp_row *r;
	if (out->nrows == *cap) {
		*cap = *cap ? 2 * *cap : 8;
		out->rows = xrealloc(out->rows, (size_t)*cap * sizeof(*out->rows));
	}
	r = &out->rows[out->nrows++];
	memset(r, 0, sizeof(*r));
	strbuf_init(&r->changes, 0);
	strbuf_init(&r->notes, 0);
	r->t.p = NAN;
	r->t.ratio = NAN;
	return r;
}

/* Why figure f has no partner in the other run: for a named figure, the
 * figures the other run has for that program and problem. */
static void say_missing(struct strbuf *notes, const struct figure *f, const struct figures *other,
			const char *program, const char *which)
{
	struct strbuf names = STRBUF_INIT;
	if (!f->name) {
		strbuf_addf(notes, "not measured in the %s run", which);
		return;
	}
	strbuf_addf(notes, "not measured in the %s run, ", which);
	if (figures_list_names(other, program, f->problem, &names))
		strbuf_addf(notes, "whose figures of %s %s are %s", program ? program : "?",
			    f->problem ? f->problem : "?", names.buf);
	else
		strbuf_addf(notes, "which has no named figure of %s %s", program ? program : "?",
			    f->problem ? f->problem : "?");
	strbuf_release(&names);
}

/* Figure f is the variant after p in one sweep of its run. */
static int next_variant(const struct figure *p, const struct figure *f)
{
	return p->variant && f->variant && same_str(p->program, f->program) &&
	       same_str(p->problem, f->problem) && same_str(p->name, f->name);
}

/* Move the last row to position at (the rows from at on shift down one);
 * row_b[] (the row of each of B's nb figures, -1: none) follows. */
static void move_last_row(struct cmp_result *out, int *row_b, int nb, int at)
{
	struct cmp_row r = out->rows[out->nrows - 1];
	int i;
	memmove(&out->rows[at + 1], &out->rows[at], (size_t)(out->nrows - 1 - at) * sizeof(r));
	out->rows[at] = r;
	for (i = 0; i < nb; i++)
		if (row_b[i] >= at)
			row_b[i] = row_b[i] == out->nrows - 1 ? at : row_b[i] + 1;
}

void compare_runs(const struct figures *a, const struct figures *b, const struct cmp_opts *o,
		  struct cmp_result *out)
{
	int *row_b = xmalloc(((size_t)b->n + 1) * sizeof(*row_b));   /* -1: not paired yet */
	int i, j, cap = 0;

	memset(out, 0, sizeof(*out));
	for (j = 0; j < b->n; j++)
		row_b[j] = -1;
	for (i = 0; i < a->n; i++) {
		const struct figure *fa = &a->v[i];
		int best = -1, best_score = -1;
		struct cmp_row *r;
		if (!wants(o, fa, 0))
			continue;
		for (j = 0; j < b->n; j++) {
			int score;
			if (row_b[j] >= 0 || !partners(o, fa, &b->v[j]))
				continue;
			score = 2 * same_str(fa->host, b->v[j].host) + same_str(fa->gpu, b->v[j].gpu) * 4;
			if (score > best_score) {
				best_score = score;
				best = j;
			}
		}
		r = new_row(out, &cap);
		r->a = fa;
		if (best < 0) {
			r->verdict = CMP_MISSING;
			say_missing(&r->notes, fa, b, o->pair_a ? o->pair_b : fa->program, "second");
			continue;
		}
		row_b[best] = out->nrows - 1;
		r->b = &b->v[best];
		judge(r, o);
	}
	/* B's figures A lacks: at the end, in B's order; a sweep variant right
	 * after the variant before it in B's sweep (a sweep's order, merged) */
	for (j = 0; j < b->n; j++) {
		struct cmp_row *r;
		if (row_b[j] >= 0 || !wants(o, &b->v[j], 1))
			continue;
		r = new_row(out, &cap);
		r->b = &b->v[j];
		r->verdict = CMP_MISSING;
		say_missing(&r->notes, &b->v[j], a, o->pair_a ? o->pair_a : b->v[j].program, "first");
		row_b[j] = out->nrows - 1;
		if (j > 0 && row_b[j - 1] >= 0 && next_variant(&b->v[j - 1], &b->v[j]))
			move_last_row(out, row_b, b->n, row_b[j - 1] + 1);
	}
	for (i = 0; i < out->nrows; i++) {
		out->count[out->rows[i].verdict]++;
		out->nregressions += out->rows[i].regression;
	}
	free(row_b);
}

void compare_result_release(struct cmp_result *r)
{
	int i;
	for (i = 0; i < r->nrows; i++) {
		strbuf_release(&r->rows[i].changes);
		strbuf_release(&r->rows[i].notes);
	}
	free(r->rows);
	memset(r, 0, sizeof(*r));
}

/* ---- rendering ---- */

static void add_num_or_null(cJSON *o, const char *key, double v)
{
	if (isnan(v))
		cJSON_AddNullToObject(o, key);
	else
		json_add_num(o, key, v);
}

/* What a JSON row is of: program, problem, a sweep's variant (its key only
 * on a sweep's rows: the rows of runs without sweeps read as before), the
 * figure, and a named figure's values, unit and direction. */
static void add_identity(cJSON *j, const struct cmp_row *w, const struct figure *f)
{
	json_add_str(j, "program", f->program);
	json_add_str(j, "problem", f->problem);
	if (f->variant)
		json_add_str(j, "variant", f->variant);
	if (f->field) {
		char *full = xstrfmt("%s.%s", f->name, f->field);
		json_add_str(j, "figure", full);
		free(full);
	} else {
		json_add_str(j, "figure", f->name ? f->name : "latency_us");
	}
	if (f->name) {
		add_num_or_null(j, "value_a", w->a ? w->a->value : NAN);
		add_num_or_null(j, "value_b", w->b ? w->b->value : NAN);
		json_add_str(j, "unit", f->unit);
		json_add_str(j, "better", metric_better_name(f->better));
	}
}

cJSON *compare_result_json(const struct cmp_result *r, const struct cmp_opts *o)
{
	cJSON *out = cJSON_CreateObject(), *rule = json_add_obj(out, "rule");
	cJSON *rows = json_add_arr(out, "rows"), *counts;
	int i;
	json_add_num(rule, "alpha", o->alpha);
	json_add_num(rule, "factor", o->factor);
	for (i = 0; i < r->nrows; i++) {
		const struct cmp_row *w = &r->rows[i];
		const struct figure *f = w->a ? w->a : w->b;
		cJSON *j = cJSON_CreateObject();
		add_identity(j, w, f);
		json_add_str(j, "host_a", w->a ? w->a->host : NULL);
		json_add_str(j, "host_b", w->b ? w->b->host : NULL);
		json_add_str(j, "gpu_a", w->a ? w->a->gpu : NULL);
		json_add_str(j, "gpu_b", w->b ? w->b->gpu : NULL);
		add_num_or_null(j, "median_a_us", w->a ? w->a->median_us : NAN);
		add_num_or_null(j, "median_b_us", w->b ? w->b->median_us : NAN);
		add_num_or_null(j, "n_a", w->a && (w->a->ntotal || w->a->nsamples)
				? (w->a->ntotal > w->a->nsamples ? w->a->ntotal : w->a->nsamples) : NAN);
		add_num_or_null(j, "n_b", w->b && (w->b->ntotal || w->b->nsamples)
				? (w->b->ntotal > w->b->nsamples ? w->b->ntotal : w->b->nsamples) : NAN);
		add_num_or_null(j, "stored_a", w->a ? w->a->nsamples : NAN);
		add_num_or_null(j, "stored_b", w->b ? w->b->nsamples : NAN);
		add_num_or_null(j, "clock_a_mhz", w->a ? w->a->clock_mhz : NAN);
		add_num_or_null(j, "clock_b_mhz", w->b ? w->b->clock_mhz : NAN);
		json_add_str(j, "gpu_uuid_a", w->a ? w->a->gpu_uuid : NULL);
		json_add_str(j, "gpu_uuid_b", w->b ? w->b->gpu_uuid : NULL);
		add_num_or_null(j, "ratio", w->a && w->b ? w->t.ratio : NAN);
		add_num_or_null(j, "p", w->a && w->b ? w->t.p : NAN);
		json_add_str(j, "verdict", compare_row_verdict(w, o->reproduce));
		json_add_str(j, "changes", w->changes.len ? w->changes.buf : NULL);
		json_add_str(j, "notes", w->notes.len ? w->notes.buf : NULL);
		json_add_bool(j, "regression", w->regression);
		cJSON_AddItemToArray(rows, j);
	}
	counts = json_add_obj(out, "counts");
	for (i = CMP_SAME; i < CMP_NVERDICTS; i++)
		json_add_num(counts, compare_verdict_name((enum cmp_verdict)i, o->reproduce), r->count[i]);
	json_add_num(out, "regressions", r->nregressions);
	return out;
}

void compare_fmt_figure(struct strbuf *sb, const struct figure *f)
{
	if (!f) {
		strbuf_addstr(sb, "-");
		return;
	}
	if (f->name) {
		if (f->unit && !strcmp(f->unit, "us"))
			metric_fmt_us(sb, f->value);
		else
			strbuf_addf(sb, "%.6g", f->value);   /* as the program printed it, mostly */
		if (f->unit)
			strbuf_addf(sb, " %s", f->unit);
		if (!is_pass(f->status))
			strbuf_addf(sb, " %s", f->status ? f->status : "");
		return;
	}
	if (isnan(f->median_us)) {
		strbuf_addf(sb, "no timing (%s)", f->status ? f->status : "no status");
		return;
	}
	metric_fmt_us(sb, f->median_us);
	strbuf_addstr(sb, " us [");
	metric_fmt_us(sb, f->min_us);
	strbuf_addstr(sb, "-");
	metric_fmt_us(sb, f->max_us);
	if (f->nsamples && f->ntotal > f->nsamples)
		strbuf_addf(sb, ", n=%d, %d stored]", f->ntotal, f->nsamples);
	else if (f->nsamples || f->ntotal)
		strbuf_addf(sb, ", n=%d]", f->nsamples > f->ntotal ? f->nsamples : f->ntotal);
	else
		strbuf_addstr(sb, ", no samples]");
	if (f->clock_mhz > 0)
		strbuf_addf(sb, " at %.0f MHz", f->clock_mhz);
	if (!is_pass(f->status))
		strbuf_addf(sb, " %s", f->status ? f->status : "");
}

/* Pipes and newlines would break a Markdown table cell. */
static void add_cell(struct strbuf *md, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '|')
			strbuf_addstr(md, "\\|");
		else if (*s == '\n' || *s == '\r')
			strbuf_addch(md, ' ');
		else
			strbuf_addch(md, *s);
	}
}

static void add_pval(struct strbuf *sb, double p)
{
	if (isnan(p))
		strbuf_addstr(sb, "-");
	else if (p < 1e-4)
		strbuf_addf(sb, "%.1e", p);
	else
		strbuf_addf(sb, "%.4f", p);
}

void compare_render_table(struct strbuf *md, const struct cmp_result *r, const struct cmp_opts *o,
			  const char *label_a, const char *label_b)
{
	int i;
	struct strbuf cell = STRBUF_INIT;
	strbuf_addstr(md, "| figure | host (GPU) | ");
	add_cell(md, label_a);
	strbuf_addstr(md, " | ");
	add_cell(md, label_b);
	strbuf_addstr(md, " | ratio | p | verdict |\n|---|---|---|---|---|---|---|\n");
	for (i = 0; i < r->nrows; i++) {
		const struct cmp_row *row = &r->rows[i];
		const struct figure *f = row->a ? row->a : row->b;
		strbuf_reset(&cell);
		if (o->pair_a)
			strbuf_addf(&cell, "%s vs %s %s", o->pair_a, o->pair_b,
				    f->problem ? f->problem : "?");
		else
			strbuf_addf(&cell, "%s %s", f->program ? f->program : "?",
				    f->problem ? f->problem : "?");
		if (f->variant)
			strbuf_addf(&cell, " [%s]", f->variant);
		if (f->name)
			strbuf_addf(&cell, " · %s%s%s", f->name, f->field ? "." : "", f->field ? f->field : "");
		if (f->role && !strcmp(f->role, "baseline"))
			strbuf_addstr(&cell, " (baseline)");
		strbuf_addstr(md, "| ");
		add_cell(md, cell.buf);
		strbuf_reset(&cell);
		if (row->a && row->b && !same_str(row->a->host, row->b->host))
			strbuf_addf(&cell, "%s / %s", row->a->host ? row->a->host : "?",
				    row->b->host ? row->b->host : "?");
		else
			strbuf_addstr(&cell, f->host ? f->host : "?");
		if (row->a && row->b && !same_str(row->a->gpu, row->b->gpu))
			strbuf_addf(&cell, " (%s / %s)", figure_gpu_label(row->a),
				    figure_gpu_label(row->b));
		else
			strbuf_addf(&cell, " (%s)", figure_gpu_label(f));
		strbuf_addstr(md, " | ");
		add_cell(md, cell.buf);
		strbuf_reset(&cell);
		compare_fmt_figure(&cell, row->a);
		strbuf_addstr(md, " | ");
		add_cell(md, cell.buf);
		strbuf_reset(&cell);
		compare_fmt_figure(&cell, row->b);
		strbuf_addstr(md, " | ");
		add_cell(md, cell.buf);
		strbuf_addstr(md, " | ");
		if (isnan(row->t.ratio))
			strbuf_addstr(md, "-");
		else
			strbuf_addf(md, "x%.3f", row->t.ratio);
		strbuf_addstr(md, " | ");
		add_pval(md, row->t.p);
		strbuf_addstr(md, " | **");
		strbuf_addstr(md, compare_row_verdict(row, o->reproduce));
		strbuf_addstr(md, "**");
		strbuf_reset(&cell);
		if (row->changes.len)
			strbuf_addf(&cell, ": %s", row->changes.buf);
		if (row->verdict == CMP_DIFFERENT)
			strbuf_addf(&cell, "; timing %s", stats_verdict_name(row->t.verdict));
		if (row->t.why && row->verdict != CMP_MISSING)
			strbuf_addf(&cell, " (%s)", row->t.why);
		if (row->notes.len)
			strbuf_addf(&cell, "; %s", row->notes.buf);
		if (row->regression)
			strbuf_addstr(&cell, "; REGRESSION");
		add_cell(md, cell.buf);
		strbuf_addstr(md, " |\n");
	}
	strbuf_release(&cell);
}

void compare_describe_run(struct strbuf *sb, const cJSON *run)
{
	const cJSON *git = json_path(run, "provenance.git");
	const char *commit = json_str(git, "commit");
	strbuf_addf(sb, "%s (%s, ", json_str(run, "run_id") ? json_str(run, "run_id") : "?",
		    json_str(json_path(run, "experiment"), "name") ?
		    json_str(json_path(run, "experiment"), "name") : "?");
	if (commit && cJSON_IsTrue(cJSON_GetObjectItem(git, "dirty")))
		strbuf_addf(sb, "commit %.12s + uncommitted changes (diff %.12s)", commit,
			    json_str(git, "diff_sha256") ? json_str(git, "diff_sha256") : "not recorded");
	else if (commit)
		strbuf_addf(sb, "commit %.12s", commit);
	else
		strbuf_addstr(sb, "no commit");
	strbuf_addf(sb, ", %s)", json_str(run, RK_STARTED_AT) ? json_str(run, RK_STARTED_AT) : "?");
}
