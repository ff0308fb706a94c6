/* spec-byo.c -- a program that is not on gpuorch's harness (docs/byo.md):
 * its own build ("build": {"command", "outputs", "ptxas"}), its own command
 * line ("run", "check") and figures read from its output ("figures"), and the
 * placeholders ({arch}, {arch_num}, {KEY}) those commands may use. */
#include "spec/spec.h"
#include "spec/spec-int.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

#define MAX_FIGURES 64

static const char *const reserved_figures[] = {
	"schema", "program", "mode", "status", "reason", "problem", "device", "config",
	"correctness", "timing", "model", "launches", "figures", "profile", "sanitizer",
	"ptxas", "speedup", "latency_us", "tflops", "gbps", "max_abs", "max_rel", "rel_l2", NULL
};

/* "command": one command (an array of strings) or several (an array of them). */
static enum go_status parse_commands(struct spec_ctx *c, const cJSON *v, char ****out)
{
	const cJSON *it;
	int n, i = 0;
	TRY(spec_need_type(c, v, cJSON_IsArray(v) && cJSON_GetArraySize(v) > 0,
			   "a non-empty array: one command [\"make\", \"-j\"] or several [[...], [...]]"));
	if (cJSON_IsString(v->child)) {
		*out = xcalloc(2, sizeof(char **));
		return spec_get_str_array(c, v, 0, &(*out)[0]);
	}
	n = cJSON_GetArraySize(v);
	*out = xcalloc((size_t)n + 1, sizeof(char **));
	cJSON_ArrayForEach(it, v) {
		size_t m = spec_push_index(c, i);
		TRY(spec_get_str_array(c, it, 0, &(*out)[i]));
		i++;
		spec_pop(c, m);
	}
	return GO_OK;
}

static enum go_status parse_build(struct spec_ctx *c, const cJSON *b, struct spec_program *p)
{
	static const char *const keys[] = { "command", "outputs", "ptxas", NULL };
	const cJSON *x;
	size_t mark = spec_push_key(c, "build"), m2;
	int i;

	TRY(spec_need_type(c, b, cJSON_IsObject(b), "an object {\"command\": [...], \"outputs\": [...]}"));
	TRY(spec_check_keys(c, b, keys));
	x = cJSON_GetObjectItemCaseSensitive(b, "command");
	if (!x)
		return spec_bad(c, "missing required key 'command' (e.g. [\"make\", \"-j\"])");
	m2 = spec_push_key(c, "command");
	TRY(parse_commands(c, x, &p->build_cmds));
	spec_pop(c, m2);
	x = cJSON_GetObjectItemCaseSensitive(b, "outputs");
	if (!x)
		return spec_bad(c, "missing required key 'outputs' (the files the build makes, e.g. [\"build/bench\"])");
	m2 = spec_push_key(c, "outputs");
	TRY(spec_get_str_array(c, x, 0, &p->outputs));
	for (i = 0; p->outputs[i]; i++) {
		size_t m3 = spec_push_index(c, i);
		TRY(spec_check_rel_path(c, p->outputs[i]));
		spec_pop(c, m3);
	}
	spec_pop(c, m2);
	x = cJSON_GetObjectItemCaseSensitive(b, "ptxas");
	if (x) {
		m2 = spec_push_key(c, "ptxas");
		TRY(spec_need_type(c, x, cJSON_IsBool(x), "true or false"));
		p->ptxas = cJSON_IsTrue(x);
		spec_pop(c, m2);
	}
	spec_pop(c, mark);
	return GO_OK;
}

/* A figure per kernel (docs/byo.md): "name_regex" (a line naming the block
 * the values after it belong to; its group 1 is the name) or "name_group"
 * (the group of the figure's own regex that holds the name). re: the
 * figure's regex, compiled. */
static enum go_status parse_kernel_name(struct spec_ctx *c, const cJSON *v, struct spec_figure *f,
					const regex_t *re)
{
	const cJSON *nr = cJSON_GetObjectItemCaseSensitive(v, "name_regex");
	const cJSON *ng = cJSON_GetObjectItemCaseSensitive(v, "name_group");
	if (nr && ng)
		return spec_bad(c, "give at most one of 'name_regex' (a line naming the kernel the "
				   "values after it belong to) and 'name_group' (the group of 'regex' "
				   "that names it on the value's own line)");
	if (ng) {
		size_t m = spec_push_key(c, "name_group");
		TRY(spec_need_type(c, ng, cJSON_IsNumber(ng) && ng->valuedouble >= 1 &&
				   ng->valuedouble <= 99 && ng->valuedouble == (double)ng->valueint,
				   "an integer from 1: the group of 'regex' that holds the kernel's name"));
		if (ng->valueint < 1 || (size_t)ng->valueint > re->re_nsub)
			return spec_bad(c, "'%s' has no group %d (it has %zu): count the opening "
					   "parentheses", f->regex, ng->valueint, re->re_nsub);
		if (ng->valueint == 1 && re->re_nsub < 2)
			return spec_bad(c, "with the kernel's name in group 1, the value is group 2, "
					   "and '%s' has one group: e.g. \"^([A-Za-z0-9_]+) +([0-9.]+) "
					   "GFLOPS\"", f->regex);
		f->name_group = ng->valueint;
		spec_pop(c, m);
	}
	if (nr) {
		regex_t nre;
		int rc;
		size_t m;
		TRY(spec_get_string(c, v, "name_regex", 1, 0, &f->name_regex));
		m = spec_push_key(c, "name_regex");
		rc = regcomp(&nre, f->name_regex, REG_EXTENDED);
		if (rc) {
			char msg[200];
			regerror(rc, &nre, msg, sizeof(msg));
			return spec_bad(c, "not a POSIX extended regular expression: %s", msg);
		}
		if (nre.re_nsub < 1) {
			regfree(&nre);
			return spec_bad(c, "'%s' has no group: put the kernel's name in parentheses, "
					   "e.g. \"^Running kernel ([A-Za-z0-9_]+)\"", f->name_regex);
		}
		regfree(&nre);
		spec_pop(c, m);
	}
	return GO_OK;
}

static enum go_status parse_figure(struct spec_ctx *c, const cJSON *v, struct spec_figure *f)
{
	static const char *const keys[] = { "regex", "json", "unit", "better", "name_regex",
					    "name_group", NULL };
	static const char *const better[] = { "higher", "lower", NULL };
	const cJSON *rx, *js;

	TRY(spec_need_type(c, v, cJSON_IsObject(v), "an object {\"regex\": ...} or {\"json\": ...}"));
	TRY(spec_check_keys(c, v, keys));
	rx = cJSON_GetObjectItemCaseSensitive(v, "regex");
	js = cJSON_GetObjectItemCaseSensitive(v, "json");
	if ((rx != NULL) == (js != NULL))
		return spec_bad(c, "give exactly one of 'regex' (a line of the output) and 'json' (a dotted path into the JSON object on its last line)");
	if (rx) {
		regex_t re;
		enum go_status st;
		int rc;
		TRY(spec_get_string(c, v, "regex", 1, 0, &f->regex));
		rc = regcomp(&re, f->regex, REG_EXTENDED);
		if (rc) {
			char msg[200];
			size_t m = spec_push_key(c, "regex");
			regerror(rc, &re, msg, sizeof(msg));
			(void)m;
			return spec_bad(c, "not a POSIX extended regular expression: %s", msg);
		}
		if (re.re_nsub < 1) {
			regfree(&re);
			spec_push_key(c, "regex");
			return spec_bad(c, "'%s' has no group: put the number in parentheses, e.g. \"GFLOPS: ([0-9.]+)\"",
					f->regex);
		}
		st = parse_kernel_name(c, v, f, &re);
		regfree(&re);
		TRY(st);
	} else {
		if (cJSON_GetObjectItemCaseSensitive(v, "name_regex") ||
		    cJSON_GetObjectItemCaseSensitive(v, "name_group"))
			return spec_bad(c, "'name_regex' and 'name_group' name the kernel of a 'regex' "
					   "figure's lines; a 'json' figure has one value");
		TRY(spec_get_string(c, v, "json", 1, 0, &f->json));
	}
	TRY(spec_get_string(c, v, "unit", 0, 1, &f->unit));
	TRY(spec_get_string(c, v, "better", 0, 0, &f->better));
	if (f->better) {
		size_t m = spec_push_key(c, "better");
		TRY(spec_check_enum(c, f->better, better, "direction"));
		spec_pop(c, m);
	}
	return GO_OK;
}

static enum go_status parse_figures(struct spec_ctx *c, const cJSON *v, struct spec_program *p)
{
	const cJSON *it, *prev;
	size_t mark = spec_push_key(c, "figures");
	TRY(spec_need_type(c, v, cJSON_IsObject(v), "an object of figure name -> {\"regex\"|\"json\", \"unit\", \"better\"}"));
	if (cJSON_GetArraySize(v) > MAX_FIGURES)
		return spec_bad(c, "at most %d figures", MAX_FIGURES);
	p->figures = xcalloc((size_t)cJSON_GetArraySize(v) + 1, sizeof(*p->figures));
	cJSON_ArrayForEach(it, v) {
		size_t m2 = spec_push_key(c, it->string);
		struct spec_figure *f = &p->figures[p->nfigures++];
		f->name = xstrdup(it->string);
		for (prev = v->child; prev != it; prev = prev->next)
			if (!strcmp(prev->string, it->string))
				return spec_bad(c, "figure named twice");
		if (!spec_is_safe_name(it->string, "_-") || strchr(it->string, '.'))
			return spec_bad(c, "'%s' is not a valid figure name (letters, digits, '_', '-')",
					it->string);
		if (spec_strv_has((char *const *)reserved_figures, it->string))
			return spec_bad(c, "'%s' is a name gpuorch already uses for a figure; pick another",
					it->string);
		TRY(parse_figure(c, it, f));
		spec_pop(c, m2);
	}
	spec_pop(c, mark);
	return GO_OK;
}

enum go_status spec_parse_byo(struct spec_ctx *c, const cJSON *v, struct spec_program *p)
{
	const cJSON *x;
	size_t mark;

	x = cJSON_GetObjectItemCaseSensitive(v, "build");
	if (x)
		TRY(parse_build(c, x, p));
	x = cJSON_GetObjectItemCaseSensitive(v, "run");
	if (x) {
		mark = spec_push_key(c, "run");
		TRY(spec_get_str_array(c, x, 0, &p->run));
		spec_pop(c, mark);
	}
	if (p->build_cmds && !p->run)
		return spec_bad(c, "has 'build' but no 'run': say how to run what it builds, e.g. \"run\": [\"build/bench\", \"{N}\"]");
	x = cJSON_GetObjectItemCaseSensitive(v, "check");
	if (x) {
		mark = spec_push_key(c, "check");
		TRY(spec_get_str_array(c, x, 0, &p->check));
		spec_pop(c, mark);
		if (!p->run)
			return spec_bad(c, "'check' needs 'run' (the program's own command line)");
	}
	x = cJSON_GetObjectItemCaseSensitive(v, "figures");
	if (x) {
		if (!p->run)
			return spec_bad(c, "'figures' are read from the output of 'run'; add 'run' (programs on the harness report their figures in their JSON result)");
		TRY(parse_figures(c, x, p));
	}
	return GO_OK;
}

/* ---------------------------------------------------------------- placeholders */

static int known(const char *name, size_t n, const struct spec_kv *kv, int nkv)
{
	int i;
	if ((n == 4 && !strncmp(name, "arch", 4)) || (n == 8 && !strncmp(name, "arch_num", 8)))
		return 1;
	for (i = 0; i < nkv; i++)
		if (strlen(kv[i].key) == n && !strncmp(kv[i].key, name, n))
			return 1;
	return 0;
}

/* Every {NAME} in the words is {arch}, {arch_num} or a key of kv. */
static enum go_status check_words(struct spec_ctx *c, char *const *words, const struct spec_kv *kv,
				  int nkv, const char *what)
{
	int i;
	for (i = 0; words && words[i]; i++) {
		const char *s = words[i];
		while ((s = strchr(s, '{')) != NULL) {
			size_t n = strspn(s + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.");
			if (n && s[1 + n] == '}' && !known(s + 1, n, kv, nkv)) {
				size_t m = spec_push_index(c, i);
				(void)m;
				return spec_bad(c, "'{%.*s}' is not {arch}, {arch_num} or %s", (int)n,
						s + 1, what);
			}
			s++;
		}
	}
	return GO_OK;
}

enum go_status spec_check_byo(struct spec_ctx *c)
{
	const struct spec *s = c->s;
	int i, j, k;
	for (i = 0; i < s->nprograms; i++) {
		const struct spec_program *p = &s->programs[i];
		size_t mark = spec_push_key(c, "programs"), m2;
		spec_push_key(c, p->name);
		for (j = 0; p->build_cmds && p->build_cmds[j]; j++) {
			m2 = spec_push_key(c, "build");
			spec_push_key(c, "command");
			if (p->build_cmds[1])
				spec_push_index(c, j);
			TRY(check_words(c, p->build_cmds[j], s->defines, s->ndefines,
					"a key of build.defines"));
			spec_pop(c, m2);
		}
		/* run and check: a parameter of every problem the program's steps run */
		for (k = 0; k < s->nsteps; k++) {
			const struct spec_step *st = &s->steps[k];
			int q;
			if (st->prog != p)
				continue;
			for (q = 0; st->problems[q]; q++) {
				const struct spec_problem *pr = spec_find_problem(s, st->problems[q]);
				char *what;
				enum go_status rc = GO_OK;
				if (!pr)
					continue;
				what = xstrfmt("a parameter of problem \"%s\"", pr->name);
				m2 = spec_push_key(c, "run");
				rc = check_words(c, p->run, pr->params, pr->nparams, what);
				spec_pop(c, m2);
				if (rc == GO_OK) {
					m2 = spec_push_key(c, "check");
					rc = check_words(c, p->check, pr->params, pr->nparams, what);
					spec_pop(c, m2);
				}
				free(what);
				if (rc != GO_OK)
					return rc;
			}
		}
		spec_pop(c, mark);
	}
	return GO_OK;
}

void spec_free_byo(struct spec_program *p)
{
	int i, j;
	for (i = 0; p->build_cmds && p->build_cmds[i]; i++) {
		for (j = 0; p->build_cmds[i][j]; j++)
			free(p->build_cmds[i][j]);
		free(p->build_cmds[i]);
	}
	free(p->build_cmds);
	for (i = 0; p->outputs && p->outputs[i]; i++)
		free(p->outputs[i]);
	free(p->outputs);
	for (i = 0; p->run && p->run[i]; i++)
		free(p->run[i]);
	free(p->run);
	for (i = 0; p->check && p->check[i]; i++)
		free(p->check[i]);
	free(p->check);
	for (i = 0; i < p->nfigures; i++) {
		free(p->figures[i].name);
		free(p->figures[i].regex);
		free(p->figures[i].json);
		free(p->figures[i].unit);
		free(p->figures[i].better);
		free(p->figures[i].name_regex);
	}
	free(p->figures);
}
