/* spec-figures.c -- the spec's figures to compare with: baselines[] and
 * references[], and what is judged against them: expected[] and gates[]. */
#include "spec/spec-int.h"

#include <math.h> /* isfinite only: no -lm needed */
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

/* A string member that must name a problem (or program) of the spec. */
static enum go_status check_ref(struct spec_ctx *c, const cJSON *obj, const char *key,
				int required)
{
	char *name = NULL;
	size_t mark;
	int found;
	TRY(spec_get_string(c, obj, key, required, 0, &name));
	if (!name)
		return GO_OK;
	found = !strcmp(key, "program") ? spec_find_program(c->s, name) != NULL
					: spec_find_problem(c->s, name) != NULL;
	mark = spec_push_key(c, key);
	if (!found) {
		enum go_status st = spec_bad(c, "no %s named \"%s\" in '%ss'", key, name, key);
		free(name);
		return st;
	}
	free(name);
	spec_pop(c, mark);
	return GO_OK;
}

static enum go_status check_opt_string(struct spec_ctx *c, const cJSON *obj, const char *key,
				       int required)
{
	char *s = NULL;
	enum go_status st = spec_get_string(c, obj, key, required, 0, &s);
	free(s);
	return st;
}

/* A baseline or reference names the programs and problems it stands for
 * (issue 30 item 12: FA3's D=128 S=4k figure was set beside every problem):
 * exactly one of 'one' (a name) and 'many' (a non-empty array of names),
 * each a key of 'programs' / a problem of 'problems'. */
static enum go_status check_names(struct spec_ctx *c, const cJSON *it, const char *one, const char *many)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(it, one), *b = cJSON_GetObjectItemCaseSensitive(it, many);
	char **v = NULL;
	size_t mark;
	int i, found;
	if (!a && !b)
		return spec_bad(c, "name the %s%s it is for: '%s' (one) or '%s' (several); a figure measured on "
				   "one %s is no yardstick for another", one, !strcmp(one, "program") ? "" : "",
				one, many, one);
	if (a && b)
		return spec_bad(c, "give only one of '%s' and '%s'", one, many);
	if (a)
		return check_ref(c, it, one, 1);
	mark = spec_push_key(c, many);
	TRY(spec_get_str_array(c, b, 0, &v));
	for (i = 0; v[i]; i++) {
		size_t m2 = spec_push_index(c, i);
		found = !strcmp(one, "program") ? spec_find_program(c->s, v[i]) != NULL
						: spec_find_problem(c->s, v[i]) != NULL;
		if (!found) {
			enum go_status st = spec_bad(c, "no %s named \"%s\" in '%ss'", one, v[i], one);
			for (i = 0; v[i]; i++)
				free(v[i]);
			free(v);
			return st;
		}
		spec_pop(c, m2);
	}
	for (i = 0; v[i]; i++)
		free(v[i]);
	free(v);
	spec_pop(c, mark);
	return GO_OK;
}

/* baselines[] and references[]: name, gpu, the programs and problems it is
 * for, a figure, provenance. */
enum go_status spec_parse_figures(struct spec_ctx *c, const cJSON *root, const char *key,
				  cJSON **out)
{
	static const char *const keys[] = { "name", "gpu", "program", "programs", "problem", "problems",
					    "latency_us", "tflops", "source", "note", NULL };
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
	const cJSON *it;
	size_t mark;
	int i = 0;
	if (!v) {
		*out = cJSON_CreateArray();
		return GO_OK;
	}
	mark = spec_push_key(c, key);
	TRY(spec_need_type(c, v, cJSON_IsArray(v), "an array of objects"));
	cJSON_ArrayForEach(it, v) {
		size_t m2 = spec_push_index(c, i++);
		const cJSON *lat, *tf;
		TRY(spec_need_type(c, it, cJSON_IsObject(it), "an object"));
		TRY(spec_check_keys(c, it, keys));
		TRY(check_opt_string(c, it, "name", 1));
		TRY(check_opt_string(c, it, "gpu", 1));
		TRY(check_names(c, it, "program", "programs"));
		TRY(check_names(c, it, "problem", "problems"));
		TRY(check_opt_string(c, it, "source", 0));
		TRY(check_opt_string(c, it, "note", 0));
		lat = cJSON_GetObjectItemCaseSensitive(it, "latency_us");
		tf = cJSON_GetObjectItemCaseSensitive(it, "tflops");
		if (!lat && !tf)
			return spec_bad(c, "give one of 'latency_us' or 'tflops'");
		if (lat && tf)
			return spec_bad(c, "give only one of 'latency_us' or 'tflops'");
		spec_push_key(c, lat ? "latency_us" : "tflops");
		TRY(spec_get_positive(c, lat ? lat : tf));
		spec_pop(c, m2);
	}
	spec_pop(c, mark);
	*out = cJSON_Duplicate(v, 1);
	return GO_OK;
}

/* 'op' (one of < <= > >= ==) and a finite number 'value': expected[] and gates[]. */
static enum go_status check_op_value(struct spec_ctx *c, const cJSON *it)
{
	static const char *const ops[] = { "<", "<=", ">", ">=", "==", NULL };
	const cJSON *x;
	char *s = NULL;
	size_t mark;
	enum go_status st;
	TRY(spec_get_string(c, it, "op", 1, 0, &s));
	mark = spec_push_key(c, "op");
	st = spec_strv_has((char *const *)ops, s)
		? GO_OK
		: spec_bad(c, "unknown operator '%s' (expected '<', '<=', '>', '>=' or '==')", s);
	free(s);
	TRY(st);
	spec_pop(c, mark);
	x = cJSON_GetObjectItemCaseSensitive(it, "value");
	if (!x)
		return spec_bad(c, "missing required key 'value'");
	mark = spec_push_key(c, "value");
	TRY(spec_need_type(c, x, cJSON_IsNumber(x) && isfinite(x->valuedouble), "a number"));
	spec_pop(c, mark);
	return GO_OK;
}

static enum go_status check_metric(struct spec_ctx *c, const char *program, const char *m);

enum go_status spec_parse_expected(struct spec_ctx *c, const cJSON *root)
{
	static const char *const keys[] = { "program", "problem", "gpu", "metric", "op", "value",
					    "note", NULL };
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "expected");
	const cJSON *it;
	size_t mark;
	int i = 0;
	if (!v) {
		c->s->expected = cJSON_CreateArray();
		return GO_OK;
	}
	mark = spec_push_key(c, "expected");
	TRY(spec_need_type(c, v, cJSON_IsArray(v), "an array of objects"));
	cJSON_ArrayForEach(it, v) {
		size_t m2 = spec_push_index(c, i++), m3;
		char *s = NULL, *prog = NULL;
		enum go_status st;
		TRY(spec_need_type(c, it, cJSON_IsObject(it), "an object"));
		TRY(spec_check_keys(c, it, keys));
		TRY(check_ref(c, it, "program", 1));
		TRY(check_ref(c, it, "problem", 0));
		TRY(check_opt_string(c, it, "gpu", 0));
		TRY(check_opt_string(c, it, "note", 0));
		TRY(spec_get_string(c, it, "program", 1, 0, &prog));
		st = spec_get_string(c, it, "metric", 1, 0, &s);
		if (st == GO_OK) {
			m3 = spec_push_key(c, "metric");
			st = check_metric(c, prog, s);
			if (st == GO_OK && strlen(s) > 3 && !strcmp(s + strlen(s) - 3, "[*]"))
				st = spec_bad(c, "'%s': an expectation is one figure; name the kernel "
						 "('%.*s[KERNEL]'), or gate every kernel's with a gate",
					      s, (int)strlen(s) - 3, s);
			if (st == GO_OK)
				spec_pop(c, m3);
		}
		free(s);
		free(prog);
		TRY(st);
		TRY(check_op_value(c, it));
		spec_pop(c, m2);
	}
	spec_pop(c, mark);
	c->s->expected = cJSON_Duplicate(v, 1);
	return GO_OK;
}

/* A gate's or an expectation's metric must name a figure gpuorch records:
 * profile.<ncu metric> of a profile step of the program,
 * sanitizer.<tool>.errors|warnings of a sanitize step running that tool,
 * ptxas.<resource>, or what spec-metric.c accepts (the vocabulary, speedup,
 * a declared figure, kernel:KEY.FIELD, a dotted path into the result). */
static enum go_status check_metric(struct spec_ctx *c, const char *program, const char *m)
{
	static const char *const ptxas[] = { "registers", "spill_store_bytes", "spill_load_bytes",
					     "smem_bytes", "stack_bytes", "cmem_bytes", "barriers",
					     NULL };
	int i, j;
	if (strchr(m, ' '))
		return spec_bad(c, "a metric name has no spaces: 'latency_us', 'speedup', 'profile.<ncu metric>', 'sanitizer.memcheck.errors', 'ptxas.registers' or a dotted path into the result");
	if (!strncmp(m, "profile.", 8)) {
		for (i = 0; i < c->s->nsteps; i++) {
			const struct spec_step *st = &c->s->steps[i];
			if (st->kind != STEP_PROFILE || strcmp(st->program, program))
				continue;
			for (j = 0; st->metrics[j]; j++)
				if (!strcmp(st->metrics[j], m + 8))
					return GO_OK;
		}
		return spec_bad(c, "no profile step of '%s' collects '%s' (add it to that step's 'metrics')",
			   program, m + 8);
	}
	if (!strncmp(m, "sanitizer.", 10)) {
		const char *tool = m + 10, *dot = strchr(tool, '.');
		if (!dot || (strcmp(dot, ".errors") && strcmp(dot, ".warnings")))
			return spec_bad(c, "expected 'sanitizer.<tool>.errors' or 'sanitizer.<tool>.warnings', found '%s'",
				   m);
		for (i = 0; i < c->s->nsteps; i++) {
			const struct spec_step *st = &c->s->steps[i];
			if (st->kind != STEP_SANITIZE || strcmp(st->program, program))
				continue;
			for (j = 0; st->tools[j]; j++)
				if (strlen(st->tools[j]) == (size_t)(dot - tool) &&
				    !strncmp(st->tools[j], tool, (size_t)(dot - tool)))
					return GO_OK;
		}
		return spec_bad(c, "no sanitize step of '%s' runs '%.*s' (add a step {\"kind\": \"sanitize\", \"program\": \"%s\", \"tools\": [\"%.*s\"]})",
			   program, (int)(dot - tool), tool, program, (int)(dot - tool), tool);
	}
	if (!strncmp(m, "ptxas.", 6)) {
		if (c->s->nprograms && spec_find_program(c->s, program)->script)
			return spec_bad(c, "'%s' is a script: it has no ptxas resources", program);
		return spec_check_enum(c, m + 6, ptxas, "ptxas resource");
	}
	return spec_check_metric_name(c, program, m);
}

enum go_status spec_parse_gates(struct spec_ctx *c, const cJSON *root)
{
	static const char *const keys[] = { "name", "program", "problem", "gpu", "metric", "op",
					    "value", "note", NULL };
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "gates");
	const cJSON *it;
	size_t mark;
	int i = 0;
	if (!v) {
		c->s->gates = cJSON_CreateArray();
		return GO_OK;
	}
	mark = spec_push_key(c, "gates");
	TRY(spec_need_type(c, v, cJSON_IsArray(v), "an array of objects"));
	cJSON_ArrayForEach(it, v) {
		size_t m2 = spec_push_index(c, i++), m3;
		char *s = NULL, *prog = NULL;
		enum go_status st;
		TRY(spec_need_type(c, it, cJSON_IsObject(it), "an object"));
		TRY(spec_check_keys(c, it, keys));
		TRY(check_opt_string(c, it, "name", 0));
		TRY(check_ref(c, it, "program", 1));
		TRY(check_ref(c, it, "problem", 0));
		TRY(check_opt_string(c, it, "gpu", 0));
		TRY(check_opt_string(c, it, "note", 0));
		TRY(spec_get_string(c, it, "program", 1, 0, &prog));
		st = spec_get_string(c, it, "metric", 1, 0, &s);
		if (st == GO_OK) {
			m3 = spec_push_key(c, "metric");
			st = check_metric(c, prog, s);
			if (st == GO_OK)
				spec_pop(c, m3);
		}
		free(s);
		free(prog);
		TRY(st);
		TRY(check_op_value(c, it));
		spec_pop(c, m2);
	}
	spec_pop(c, mark);
	c->s->gates = cJSON_Duplicate(v, 1);
	return GO_OK;
}

enum go_status spec_parse_headline(struct spec_ctx *c, const cJSON *root)
{
	static const char *const keys[] = { "program", "problem", NULL };
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(root, "headline");
	size_t mark;
	if (!h)
		return GO_OK;
	mark = spec_push_key(c, "headline");
	TRY(spec_need_type(c, h, cJSON_IsObject(h), "an object {\"program\": P, \"problem\": Q}"));
	TRY(spec_check_keys(c, h, keys));
	TRY(check_ref(c, h, "program", 1));
	TRY(check_ref(c, h, "problem", 0));
	spec_pop(c, mark);
	return GO_OK;
}
