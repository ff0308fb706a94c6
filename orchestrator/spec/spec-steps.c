/* spec-steps.c -- the spec's steps[]: correctness and benchmark runs, profile
 * (Nsight Compute), sanitize (compute-sanitizer) and sweep steps. */
#include "spec/spec-int.h"

#include <ctype.h>
#include <math.h> /* isfinite only: no -lm needed */
#include <stdlib.h>
#include <string.h>
#include "core/jsonutil.h"
#include "core/banned.h"

const char *const spec_default_metrics[] = {
	"sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active",
	"dram__throughput.avg.pct_of_peak_sustained_elapsed",
	"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
	"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
	"sm__warps_active.avg.pct_of_peak_sustained_active",
	"launch__registers_per_thread",
	"launch__occupancy_limit_registers",
	"gpu__time_duration.sum",
	NULL
};

static const char *const sanitizer_tools[] = { "memcheck", "racecheck", "synccheck",
					       "initcheck", NULL };

#define MAX_VARIANTS 256
#define MAX_METRICS 64

/* A string member that must be one of choices; *out keeps dflt when absent. */
static enum go_status get_choice(struct spec_ctx *c, const cJSON *obj, const char *key,
				 const char *const *choices, const char *dflt, char **out)
{
	size_t mark;
	TRY(spec_get_string(c, obj, key, 0, 0, out));
	if (!*out) {
		*out = xstrdup(dflt);
		return GO_OK;
	}
	mark = spec_push_key(c, key);
	TRY(spec_check_enum(c, *out, choices, key));
	spec_pop(c, mark);
	return GO_OK;
}

/* profile: metrics, kernel, launches, clock and cache control. */
static enum go_status parse_profile(struct spec_ctx *c, const cJSON *v, struct spec_step *st)
{
	static const char *const clocks[] = { "base", "none", NULL };
	static const char *const caches[] = { "all", "none", NULL };
	static const char *const modes[] = { "check", "profile", NULL };
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(v, "metrics");
	size_t mark;
	int i, j;

	if (m) {
		mark = spec_push_key(c, "metrics");
		TRY(spec_get_str_array(c, m, 0, &st->metrics));
		for (i = 0; st->metrics[i]; i++) {
			size_t m2 = spec_push_index(c, i);
			if (i >= MAX_METRICS)
				return spec_bad(c, "at most %d metrics per profile step", MAX_METRICS);
			if (!spec_is_safe_name(st->metrics[i], "_."))
				return spec_bad(c, "'%s' is not a Nsight Compute metric name (letters, digits, '_' and '.', such as 'dram__throughput.avg.pct_of_peak_sustained_elapsed')",
					   st->metrics[i]);
			for (j = 0; j < i; j++)
				if (!strcmp(st->metrics[j], st->metrics[i]))
					return spec_bad(c, "metric '%s' is listed twice", st->metrics[i]);
			spec_pop(c, m2);
		}
		spec_pop(c, mark);
	} else {
		for (i = 0; spec_default_metrics[i]; i++)
			;
		st->metrics = xcalloc((size_t)i + 1, sizeof(char *));
		for (i = 0; spec_default_metrics[i]; i++)
			st->metrics[i] = xstrdup(spec_default_metrics[i]);
	}
	TRY(spec_get_string(c, v, "kernel", 0, 0, &st->kernel));
	if (!st->kernel) {
		/* the program name as a regex: escape what a regex would read */
		struct strbuf sb = STRBUF_INIT;
		const char *p;
		for (p = st->prog->name; *p; p++) {
			if (!isalnum((unsigned char)*p) && *p != '_')
				strbuf_addch(&sb, '\\');
			strbuf_addch(&sb, *p);
		}
		st->kernel = strbuf_detach(&sb, NULL);
	}
	st->launch_count = 1;
	TRY(spec_get_int(c, v, "launch_skip", 0, 1000000, 0, &st->launch_skip));
	TRY(spec_get_int(c, v, "launch_count", 1, 100, 0, &st->launch_count));
	TRY(get_choice(c, v, "clock_control", clocks, "base", &st->clock_control));
	TRY(get_choice(c, v, "cache_control", caches, "all", &st->cache_control));
	TRY(get_choice(c, v, "mode", modes, "check", &st->mode));
	return GO_OK;
}

static enum go_status parse_sanitize(struct spec_ctx *c, const cJSON *v, struct spec_step *st)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(v, "tools");
	int i, j;
	if (t) {
		size_t mark = spec_push_key(c, "tools");
		TRY(spec_get_str_array(c, t, 0, &st->tools));
		for (i = 0; st->tools[i]; i++) {
			size_t m2 = spec_push_index(c, i);
			TRY(spec_check_enum(c, st->tools[i], sanitizer_tools, "compute-sanitizer tool"));
			for (j = 0; j < i; j++)
				if (!strcmp(st->tools[j], st->tools[i]))
					return spec_bad(c, "tool '%s' is listed twice", st->tools[i]);
			spec_pop(c, m2);
		}
		spec_pop(c, mark);
	} else {
		st->tools = xcalloc(5, sizeof(char *));
		for (i = 0; sanitizer_tools[i]; i++)
			st->tools[i] = xstrdup(sanitizer_tools[i]);
	}
	st->print_limit = 10;
	TRY(spec_get_int(c, v, "print_limit", 1, 10000, 0, &st->print_limit));
	st->mode = xstrdup("check");
	return GO_OK;
}

/* sweep: "sources": [the program's sources the defines are for], optional.
 * Each variant points to the list (plan.c passes the defines to those
 * sources' compiles, and to any other whose files name a define). */
static enum go_status parse_sweep_sources(struct spec_ctx *c, const cJSON *v, struct spec_step *st)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(v, "sources"), *x;
	size_t mark;
	int n, i, j;

	if (!a)
		return GO_OK;
	mark = spec_push_key(c, "sources");
	TRY(spec_need_type(c, a, cJSON_IsArray(a), "an array of the program's source files"));
	n = cJSON_GetArraySize(a);
	if (!n)
		return spec_bad(c, "name at least one of program '%s''s sources (or leave 'sources' out: "
			       "the defines then reach every source)", st->prog->name);
	st->sweep_sources = xcalloc((size_t)n + 1, sizeof(char *));
	i = 0;
	cJSON_ArrayForEach(x, a) {
		size_t m2 = spec_push_index(c, i);
		int found = 0;
		TRY(spec_need_type(c, x, cJSON_IsString(x), "a source file of the program"));
		for (j = 0; st->prog->sources && st->prog->sources[j]; j++)
			found |= !strcmp(st->prog->sources[j], x->valuestring);
		if (!found)
			return spec_bad(c, "'%s' is not one of program '%s''s sources", x->valuestring,
				       st->prog->name);
		for (j = 0; j < i; j++)
			if (!strcmp(st->sweep_sources[j], x->valuestring))
				return spec_bad(c, "'%s' is listed twice", x->valuestring);
		st->sweep_sources[i++] = xstrdup(x->valuestring);
		spec_pop(c, m2);
	}
	for (j = 0; j < st->nvariants; j++)
		st->variants[j].sources = st->sweep_sources;
	spec_pop(c, mark);
	return GO_OK;
}

/* sweep: "defines": {"KEY": [v1, v2], ...} -> the cartesian product, the
 * first key varying slowest. */
static enum go_status parse_sweep(struct spec_ctx *c, const cJSON *v, struct spec_step *st)
{
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(v, "defines");
	const cJSON *k, *prev, *x;
	struct spec_kv **vals = NULL;
	int *nvals = NULL, nkeys, total = 1, i, j;
	char **keys = NULL;
	size_t mark;
	enum go_status rc = GO_OK;

	if (st->prog->script) {
		spec_push_key(c, "program");
		return spec_bad(c, "'%s' is a script; a sweep varies compile-time defines of a compiled program",
			   st->prog->name);
	}
	if (st->prog->run) {
		spec_push_key(c, "program");
		return spec_bad(c, "'%s' runs its own command line; a sweep varies the defines of a program that nvcc builds",
			   st->prog->name);
	}
	if (!d)
		return spec_bad(c, "missing required key 'defines' (an object KEY -> [values], such as {\"TILE_M\": [64, 128]})");
	mark = spec_push_key(c, "defines");
	TRY(spec_need_type(c, d, cJSON_IsObject(d), "an object KEY -> [values]"));
	nkeys = cJSON_GetArraySize(d);
	if (!nkeys)
		return spec_bad(c, "must name at least one define");
	keys = xcalloc((size_t)nkeys, sizeof(char *));
	vals = xcalloc((size_t)nkeys, sizeof(*vals));
	nvals = xcalloc((size_t)nkeys, sizeof(int));
	i = 0;
	cJSON_ArrayForEach(k, d) {
		size_t m2 = spec_push_key(c, k->string);
		int n = cJSON_IsArray(k) ? cJSON_GetArraySize(k) : 1;
		keys[i] = k->string;
		for (prev = d->child; prev != k; prev = prev->next)
			if (!strcmp(prev->string, k->string)) {
				rc = spec_bad(c, "key appears twice");
				goto out;
			}
		if (!spec_is_c_identifier(k->string)) {
			rc = spec_bad(c, "'%s' is not a C identifier (letters, digits, '_'; not starting with a digit)",
				 k->string);
			goto out;
		}
		if (!n) {
			rc = spec_bad(c, "give at least one value");
			goto out;
		}
		vals[i] = xcalloc((size_t)n, sizeof(**vals));
		for (j = 0; j < n; j++) {
			size_t m3 = cJSON_IsArray(k) ? spec_push_index(c, j) : c->path.len;
			x = cJSON_IsArray(k) ? cJSON_GetArrayItem(k, j) : k;
			if (cJSON_IsNumber(x) && isfinite(x->valuedouble)) {
				vals[i][j].value = spec_render_num(x->valuedouble);
			} else if (cJSON_IsString(x) && *x->valuestring) {
				vals[i][j].value = xstrdup(x->valuestring);
			} else {
				rc = spec_bad(c, "expected a number or a non-empty string, found %s",
					 json_type_name(x));
				goto out;
			}
			nvals[i] = j + 1;
			rc = spec_check_nvcc_arg(c, "define value", vals[i][j].value, 0);
			if (rc != GO_OK)
				goto out;
			spec_pop(c, m3);
		}
		if ((long long)total * n > MAX_VARIANTS) {
			rc = spec_bad(c, "the sweep has more than %d variants; sweep fewer values",
				 MAX_VARIANTS);
			goto out;
		}
		total *= n;
		spec_pop(c, m2);
		i++;
	}
	spec_pop(c, mark);
	st->variants = xcalloc((size_t)total, sizeof(*st->variants));
	for (i = 0; i < total; i++) {
		struct spec_variant *var = &st->variants[st->nvariants++];
		struct strbuf label = STRBUF_INIT;
		int rest = i;
		var->defines = xcalloc((size_t)nkeys, sizeof(*var->defines));
		for (j = nkeys - 1; j >= 0; j--) {
			int idx = rest % nvals[j];
			rest /= nvals[j];
			var->defines[j].key = xstrdup(keys[j]);
			var->defines[j].value = xstrdup(vals[j][idx].value);
		}
		var->ndefines = nkeys;
		for (j = 0; j < nkeys; j++)
			strbuf_addf(&label, "%s%s=%s", j ? "," : "", var->defines[j].key,
				    var->defines[j].value);
		var->label = strbuf_detach(&label, NULL);
	}
	rc = parse_sweep_sources(c, v, st);
	if (rc != GO_OK)
		goto out;
	st->sweep_check = 1;
	x = cJSON_GetObjectItemCaseSensitive(v, "check");
	if (x) {
		size_t m4 = spec_push_key(c, "check");
		if (!cJSON_IsBool(x)) {
			rc = spec_bad(c, "expected true or false, found %s", json_type_name(x));
			goto out;
		}
		st->sweep_check = cJSON_IsTrue(x);
		spec_pop(c, m4);
	}
out:
	for (i = 0; i < nkeys; i++) {
		for (j = 0; j < nvals[i]; j++)
			free(vals[i][j].value);
		free(vals[i]);
	}
	free(vals);
	free(nvals);
	free(keys);
	return rc;
}

/* A kernel_timing step's "work": {"KEY": {"flops": N, "bytes": N}, ...},
 * what one launch of kernel KEY computes and moves (at least one of the
 * two, each a positive number); its CUPTI times are held to the GPU's
 * physical peaks with it (store/peaks.h). A key is checked against the
 * trace when the step has run: only then are the kernels known. */
static enum go_status parse_work(struct spec_ctx *c, const cJSON *w, struct spec_step *st)
{
	static const char *const keys[] = { "flops", "bytes", NULL };
	const cJSON *k;
	size_t mark, m2, m3;

	if (!w)
		return GO_OK;
	mark = spec_push_key(c, "work");
	TRY(spec_need_type(c, w, cJSON_IsObject(w) && cJSON_GetArraySize(w) > 0,
			   "an object naming kernels: {\"KEY\": {\"flops\": N, \"bytes\": N}}"));
	st->work = xcalloc((size_t)cJSON_GetArraySize(w), sizeof(*st->work));
	cJSON_ArrayForEach(k, w) {
		struct spec_kwork *kw = &st->work[st->nwork];
		const cJSON *f, *b;
		m2 = spec_push_key(c, k->string);
		if (!*k->string || spec_has_ctrl(k->string, 0))
			return spec_bad(c, "a kernel key must be non-empty, without control characters");
		TRY(spec_need_type(c, k, cJSON_IsObject(k), "an object {\"flops\": N, \"bytes\": N}"));
		TRY(spec_check_keys(c, k, keys));
		f = cJSON_GetObjectItemCaseSensitive(k, "flops");
		b = cJSON_GetObjectItemCaseSensitive(k, "bytes");
		if (!f && !b)
			return spec_bad(c, "say what one launch does: \"flops\", \"bytes\" or both");
		kw->key = xstrdup(k->string);
		st->nwork++;
		if (f) {
			m3 = spec_push_key(c, "flops");
			TRY(spec_get_positive(c, f));
			kw->flops = f->valuedouble;
			spec_pop(c, m3);
		}
		if (b) {
			m3 = spec_push_key(c, "bytes");
			TRY(spec_get_positive(c, b));
			kw->bytes = b->valuedouble;
			spec_pop(c, m3);
		}
		spec_pop(c, m2);
	}
	spec_pop(c, mark);
	return GO_OK;
}

/* a step's timeout_s (default DEFAULT_TIMEOUT_S) and gpus (0: one, if any) */
static enum go_status get_limits(struct spec_ctx *c, const cJSON *v, struct spec_step *st)
{
	st->timeout_s = DEFAULT_TIMEOUT_S;
	TRY(spec_get_int(c, v, "timeout_s", 1, TIMEOUT_MAX, 0, &st->timeout_s));
	return spec_get_int(c, v, "gpus", 1, SPEC_MAX_GPUS, 0, &st->gpus);
}

static enum go_status parse_step(struct spec_ctx *c, const cJSON *v, struct spec_step *st)
{
	static const char *const keys_run[] = { "kind", "program", "problems", "timeout_s", "gpus", "role",
						NULL };
	static const char *const keys_profile[] = { "kind", "program", "problems", "timeout_s", "gpus",
						    "metrics", "kernel", "launch_skip",
						    "launch_count", "clock_control",
						    "cache_control", "mode", NULL };
	static const char *const keys_sanitize[] = { "kind", "program", "problems", "timeout_s", "gpus",
						     "tools", "print_limit", NULL };
	static const char *const keys_sweep[] = { "kind", "program", "problems", "timeout_s", "gpus",
						  "defines", "check", "sources", NULL };
	static const char *const keys_ktime[] = { "kind", "program", "problems", "timeout_s", "gpus",
						  "repeat", "work", NULL };
	static const char *const roles[] = { "kernel", "baseline", NULL };
	const char *const *keys;
	char *kind = NULL, *role = NULL;
	const cJSON *pv, *kv;
	size_t mark;
	enum go_status rc;
	int i, n, j = -1, rep;

	TRY(spec_need_type(c, v, cJSON_IsObject(v), "an object"));
	kv = cJSON_GetObjectItemCaseSensitive(v, "kind");
	{
		enum step_kind k = STEP_CORRECTNESS;
		step_kind_parse(cJSON_GetStringValue(kv), &k);
		keys = k == STEP_PROFILE ? keys_profile : k == STEP_SANITIZE ? keys_sanitize
		     : k == STEP_SWEEP ? keys_sweep : k == STEP_KERNEL_TIMING ? keys_ktime : keys_run;
	}
	TRY(spec_check_keys(c, v, keys));
	TRY(spec_get_string(c, v, "kind", 1, 0, &kind));
	mark = spec_push_key(c, "kind");
	rc = spec_check_enum(c, kind, step_kind_names, "step kind");
	if (!step_kind_parse(kind, &st->kind))
		st->kind = STEP_CORRECTNESS;   /* refused by rc */
	free(kind);
	TRY(rc);
	spec_pop(c, mark);

	TRY(spec_get_string(c, v, "program", 1, 0, &st->program));
	st->prog = spec_find_program(c->s, st->program);
	if (!st->prog) {
		spec_push_key(c, "program");
		return spec_bad(c, "no program named \"%s\" in 'programs'", st->program);
	}

	pv = cJSON_GetObjectItemCaseSensitive(v, "problems");
	if (pv) {
		mark = spec_push_key(c, "problems");
		TRY(spec_get_str_array(c, pv, 0, &st->problems));
		for (n = 0; st->problems[n]; n++)
			;
		rep = spec_first_repeat((const char *const *)st->problems, n, &j);
		for (i = 0; st->problems[i]; i++) {
			size_t m2 = spec_push_index(c, i);
			if (!spec_find_problem(c->s, st->problems[i]))
				return spec_bad(c, "no problem named \"%s\" in 'problems'", st->problems[i]);
			if (i == rep)
				return spec_bad(c, "problem \"%s\" is listed twice", st->problems[i]);
			spec_pop(c, m2);
		}
		spec_pop(c, mark);
	} else {
		st->problems = xcalloc((size_t)c->s->nproblems + 1, sizeof(char *));
		for (i = 0; i < c->s->nproblems; i++)
			st->problems[i] = xstrdup(c->s->problems[i].name);
	}

	TRY(get_limits(c, v, st));

	if (st->kind == STEP_PROFILE || st->kind == STEP_SANITIZE) {
		if (st->prog->script) {
			spec_push_key(c, "program");
			return spec_bad(c, "'%s' is a script; %s steps run compiled programs",
				   st->prog->name, step_kind_name(st->kind));
		}
		if (st->prog->run) {
			spec_push_key(c, "program");
			return spec_bad(c, "'%s' runs its own command line; %s steps run programs on the harness for now",
				   st->prog->name, step_kind_name(st->kind));
		}
		return st->kind == STEP_PROFILE ? parse_profile(c, v, st) : parse_sanitize(c, v, st);
	}
	if (st->kind == STEP_SWEEP)
		return parse_sweep(c, v, st);
	if (st->kind == STEP_KERNEL_TIMING) {
		if (st->prog->script) {
			spec_push_key(c, "program");
			return spec_bad(c, "'%s' is a Python script; kernel_timing runs a compiled "
				   "program or a program's own command line ('run')", st->prog->name);
		}
		st->repeat = 3;
		TRY(spec_get_int(c, v, "repeat", 1, 100, 0, &st->repeat));
		return parse_work(c, cJSON_GetObjectItemCaseSensitive(v, "work"), st);
	}

	TRY(spec_get_string(c, v, "role", 0, 0, &role));
	if (role) {
		mark = spec_push_key(c, "role");
		rc = spec_check_enum(c, role, roles, "role");
		st->is_baseline = !strcmp(role, "baseline");
		free(role);
		TRY(rc);
		spec_pop(c, mark);
	}
	return GO_OK;
}

enum go_status spec_parse_steps(struct spec_ctx *c, const cJSON *root)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "steps");
	const cJSON *it;
	size_t mark;
	int n, i = 0;
	if (!v)
		return spec_bad(c, "missing required key 'steps'");
	mark = spec_push_key(c, "steps");
	TRY(spec_need_type(c, v, cJSON_IsArray(v), "an array of steps"));
	n = cJSON_GetArraySize(v);
	if (!n)
		return spec_bad(c, "must list at least one step");
	c->s->steps = xcalloc((size_t)n, sizeof(*c->s->steps));
	cJSON_ArrayForEach(it, v) {
		size_t m2 = spec_push_index(c, i++);
		TRY(parse_step(c, it, &c->s->steps[c->s->nsteps++]));
		spec_pop(c, m2);
	}
	spec_pop(c, mark);
	return GO_OK;
}
