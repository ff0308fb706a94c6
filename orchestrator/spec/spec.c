/* spec.c -- load an experiment spec (docs/spec.md) and validate all of it.
 *
 * Design: one pass over the parsed cJSON tree that validates and fills
 * struct spec at the same time, stopping at the first problem. A struct
 * spec_ctx carries the label (the file name in messages) and the JSON path of
 * the value being looked at, pushed and popped as the walk goes down
 * ("steps[2].program"), so every message reads
 * "FILE: 'steps[2].program': what is wrong". Every object's keys are checked
 * against the keys it may have before its values are read, so a typo is
 * reported as a typo (with a suggestion) rather than as a missing field.
 * The struct is allocated zeroed, so spec_free() can free a half-built one.
 *
 * Files: this one holds the sections sources, build, targets, programs,
 * problems and tolerance and the top level (spec_parse, spec_load,
 * spec_free); spec-steps.c the steps; spec-figures.c baselines, references,
 * expected[] and gates[]; spec-check.c the messages and the generic checks;
 * spec-query.c the questions asked of a spec (a program by name, ...). What
 * they share is declared in spec-int.h, with a spec_ prefix. Calls go one
 * way: spec.c -> spec-steps.c, spec-figures.c -> spec-check.c, spec-query.c. */
#include "spec/spec.h"
#include "spec/spec-int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "core/fsutil.h"
#include "core/jsonutil.h"
#include "core/banned.h"

#define NAME_MAX_LEN 100
#define SLUG_MAX_LEN 60

/* ---------------------------------------------------------------- sections */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static enum go_status parse_sources(struct spec_ctx *c, const cJSON *root)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "sources");
	size_t mark;
	int j, n;
	if (!v)
		return spec_bad(c, "missing required key 'sources' (the files that ship)");
	mark = spec_push_key(c, "sources");
	TRY(spec_get_str_array(c, v, 0, &c->s->sources));
	for (n = 0; c->s->sources[n]; n++) {
		const char *p = c->s->sources[n];
		size_t m2 = spec_push_index(c, n);
		int glob = spec_source_is_glob(p);
		if (strcmp(p, "."))
			TRY(spec_check_rel_path(c, p));
		for (j = 0; j < n; j++)
			if (!strcmp(c->s->sources[j], p))
				return spec_bad(c, "'%s' is listed twice (also 'sources[%d]')", p, j);
		if (c->check_files && !glob) {
			char *full = xstrfmt("%s/%s", c->root, p);
			struct stat sbuf;
			int rc = stat(full, &sbuf);
			free(full);
			if (rc < 0)
				return spec_bad(c, "no such file or directory '%s' under '%s'", p,
						c->root);
			if (!S_ISREG(sbuf.st_mode) && !S_ISDIR(sbuf.st_mode))
				return spec_bad(c, "'%s' is neither a regular file nor a directory", p);
		}
		spec_pop(c, m2);
	}
	qsort(c->s->sources, (size_t)n, sizeof(char *), cmp_str);
	spec_pop(c, mark);
	return GO_OK;
}

static enum go_status parse_build(struct spec_ctx *c, const cJSON *root)
{
	static const char *const keys[] = { "flags", "defines", "timeout_s", NULL };
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(root, "build");
	const cJSON *v;
	size_t mark, m2;
	int i;

	c->s->build_timeout_s = DEFAULT_TIMEOUT_S;
	if (!b) {
		c->s->build_flags = xcalloc(1, sizeof(char *));
		return GO_OK;
	}
	mark = spec_push_key(c, "build");
	TRY(spec_need_type(c, b, cJSON_IsObject(b), "an object"));
	TRY(spec_check_keys(c, b, keys));
	v = cJSON_GetObjectItemCaseSensitive(b, "flags");
	if (v) {
		m2 = spec_push_key(c, "flags");
		TRY(spec_get_str_array(c, v, 1, &c->s->build_flags));
		for (i = 0; c->s->build_flags[i]; i++) {
			size_t m3 = spec_push_index(c, i);
			TRY(spec_check_nvcc_arg(c, "flag", c->s->build_flags[i], 0));
			spec_pop(c, m3);
		}
		spec_pop(c, m2);
	} else {
		c->s->build_flags = xcalloc(1, sizeof(char *));
	}
	v = cJSON_GetObjectItemCaseSensitive(b, "defines");
	if (v) {
		m2 = spec_push_key(c, "defines");
		TRY(spec_get_kv(c, v, 1, &c->s->defines, &c->s->ndefines));
		for (i = 0; i < c->s->ndefines; i++) {
			size_t m3 = spec_push_key(c, c->s->defines[i].key);
			TRY(spec_check_nvcc_arg(c, "define value", c->s->defines[i].value, 0));
			spec_pop(c, m3);
		}
		spec_pop(c, m2);
	}
	TRY(spec_get_int(c, b, "timeout_s", 1, TIMEOUT_MAX, 0, &c->s->build_timeout_s));
	spec_pop(c, mark);
	return GO_OK;
}

static enum go_status parse_targets(struct spec_ctx *c, const cJSON *root)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "targets");
	const cJSON *it, *prev;
	size_t mark;
	int i = 0;
	if (!t)
		return GO_OK;
	mark = spec_push_key(c, "targets");
	TRY(spec_need_type(c, t, cJSON_IsObject(t), "an object of GPU name -> arch"));
	c->s->targets = xcalloc((size_t)cJSON_GetArraySize(t) + 1, sizeof(*c->s->targets));
	cJSON_ArrayForEach(it, t) {
		size_t m2 = spec_push_key(c, it->string);
		for (prev = t->child; prev != it; prev = prev->next)
			if (!strcmp(prev->string, it->string))
				return spec_bad(c, "key appears twice");
		if (!*it->string)
			return spec_bad(c, "empty GPU name");
		TRY(spec_check_arch(c, it));
		c->s->targets[i].gpu = xstrdup(it->string);
		c->s->targets[i].arch = xstrdup(it->valuestring);
		c->s->ntargets = ++i;
		spec_pop(c, m2);
	}
	spec_pop(c, mark);
	return GO_OK;
}

static int has_compiled_ext(const char *p)
{
	static const char *const exts[] = { ".cu", ".cpp", ".cc", ".cxx", ".c", NULL };
	const char *dot = strrchr(p, '.');
	const char *const *e;
	if (!dot || strchr(dot, '/'))
		return 0;
	for (e = exts; *e; e++)
		if (!strcmp(dot, *e))
			return 1;
	return 0;
}

static const char *const datatypes[] = { "fp32", "tf32", "fp16", "bf16", "fp8", NULL };

static enum go_status parse_program(struct spec_ctx *c, const cJSON *v, struct spec_program *p)
{
	static const char *const keys[] = { "sources", "script", "libs", "min_arch",
					    "needs_gpu", "build", "run", "check", "figures",
					    "datatype", "baseline_problem", NULL };
	const cJSON *src, *scr, *bld, *run, *x;
	size_t mark;
	int i;

	p->needs_gpu = 1;
	TRY(spec_need_type(c, v, cJSON_IsObject(v), "an object"));
	if (!*p->name || strlen(p->name) > NAME_MAX_LEN || spec_has_ctrl(p->name, 0))
		return spec_bad(c, "not a valid program name (1-%d characters, no control characters)",
			   NAME_MAX_LEN);
	TRY(spec_check_keys(c, v, keys));
	src = cJSON_GetObjectItemCaseSensitive(v, "sources");
	scr = cJSON_GetObjectItemCaseSensitive(v, "script");
	bld = cJSON_GetObjectItemCaseSensitive(v, "build");
	run = cJSON_GetObjectItemCaseSensitive(v, "run");
	if (!!src + !!scr + !!bld > 1)
		return spec_bad(c, "has more than one of 'sources' (nvcc builds it), 'script' (a Python script) and 'build' (the project's own build); give one");
	if ((src || scr) && run)
		return spec_bad(c, "'run' is for programs off the harness; a program with '%s' is run by gpuorch (docs/result-contract.md)",
				src ? "sources" : "script");
	if (!src && !scr && !bld && !run)
		return spec_bad(c, "has none of 'sources' (a compiled program), 'script' (a Python script), 'build' (the project's own build) and 'run' (its own command line)");
	TRY(spec_parse_byo(c, v, p));
	if (src) {
		mark = spec_push_key(c, "sources");
		TRY(spec_get_str_array(c, src, 0, &p->sources));
		for (i = 0; p->sources[i]; i++) {
			size_t m2 = spec_push_index(c, i);
			int j;
			if (!spec_source_may_select(c->s, p->sources[i]))
				return spec_bad(c, "'%s' is not listed in the top-level 'sources'",
					   p->sources[i]);
			TRY(spec_check_nvcc_arg(c, "compiled source", p->sources[i], 1));
			if (!has_compiled_ext(p->sources[i]))
				return spec_bad(c, "'%s' is not a .cu, .cpp, .cc, .cxx or .c file (headers belong in the top-level 'sources' only)",
					   p->sources[i]);
			for (j = 0; j < i; j++)
				if (!strcmp(p->sources[j], p->sources[i]))
					return spec_bad(c, "'%s' is listed twice", p->sources[i]);
			spec_pop(c, m2);
		}
		spec_pop(c, mark);
	} else if (scr) {
		TRY(spec_get_string(c, v, "script", 1, 0, &p->script));
		mark = spec_push_key(c, "script");
		TRY(spec_check_rel_path(c, p->script));
		if (!spec_source_may_select(c->s, p->script))
			return spec_bad(c, "'%s' is not listed in the top-level 'sources'", p->script);
		spec_pop(c, mark);
	}
	x = cJSON_GetObjectItemCaseSensitive(v, "libs");
	if (x) {
		mark = spec_push_key(c, "libs");
		TRY(spec_get_str_array(c, x, 1, &p->libs));
		for (i = 0; p->libs[i]; i++) {
			size_t m3 = spec_push_index(c, i);
			TRY(spec_check_nvcc_arg(c, "library flag", p->libs[i], 0));
			spec_pop(c, m3);
		}
		spec_pop(c, mark);
	} else {
		p->libs = xcalloc(1, sizeof(char *));
	}
	x = cJSON_GetObjectItemCaseSensitive(v, "min_arch");
	if (x) {
		mark = spec_push_key(c, "min_arch");
		TRY(spec_check_arch(c, x));
		p->min_arch = xstrdup(x->valuestring);
		spec_pop(c, mark);
	}
	x = cJSON_GetObjectItemCaseSensitive(v, "needs_gpu");
	if (x) {
		mark = spec_push_key(c, "needs_gpu");
		TRY(spec_need_type(c, x, cJSON_IsBool(x), "true or false"));
		p->needs_gpu = cJSON_IsTrue(x);
		spec_pop(c, mark);
	}
	TRY(spec_get_string(c, v, "datatype", 0, 0, &p->datatype));
	if (p->datatype && !spec_strv_has((char *const *)datatypes, p->datatype)) {
		mark = spec_push_key(c, "datatype");
		return spec_bad(c, "unknown datatype '%s' (expected 'fp32', 'tf32', 'fp16', 'bf16' or 'fp8': "
				   "the peak its figures are held to)", p->datatype);
	}
	TRY(spec_get_string(c, v, "baseline_problem", 0, 0, &p->baseline_problem));
	return GO_OK;
}

/* programs.NAME.baseline_problem names a problem (checked once problems are read). */
static enum go_status check_baseline_problems(struct spec_ctx *c)
{
	int i;
	for (i = 0; i < c->s->nprograms; i++) {
		const struct spec_program *p = &c->s->programs[i];
		if (p->baseline_problem && !spec_find_problem(c->s, p->baseline_problem)) {
			spec_push_key(c, "programs");
			spec_push_key(c, p->name);
			spec_push_key(c, "baseline_problem");
			return spec_bad(c, "no problem named \"%s\" in 'problems'", p->baseline_problem);
		}
	}
	return GO_OK;
}

static enum go_status parse_programs(struct spec_ctx *c, const cJSON *root)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "programs");
	const cJSON *it, *prev;
	size_t mark;
	int n;
	if (!v)
		return spec_bad(c, "missing required key 'programs'");
	mark = spec_push_key(c, "programs");
	TRY(spec_need_type(c, v, cJSON_IsObject(v), "an object of program name -> program"));
	n = cJSON_GetArraySize(v);
	if (!n)
		return spec_bad(c, "must name at least one program");
	c->s->programs = xcalloc((size_t)n, sizeof(*c->s->programs));
	cJSON_ArrayForEach(it, v) {
		size_t m2 = spec_push_key(c, it->string);
		struct spec_program *p = &c->s->programs[c->s->nprograms++];
		for (prev = v->child; prev != it; prev = prev->next)
			if (!strcmp(prev->string, it->string))
				return spec_bad(c, "program named twice");
		p->name = xstrdup(it->string);
		TRY(parse_program(c, it, p));
		spec_pop(c, m2);
	}
	spec_pop(c, mark);
	return GO_OK;
}

static enum go_status parse_problems(struct spec_ctx *c, const cJSON *root)
{
	static const char *const keys[] = { "name", "params", NULL };
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "problems");
	const cJSON *it;
	size_t mark;
	int i = 0, n, j = -1, rep;
	const char **names;
	if (!v)
		return spec_bad(c, "missing required key 'problems' (a program without parameters takes one problem with no 'params')");
	mark = spec_push_key(c, "problems");
	TRY(spec_need_type(c, v, cJSON_IsArray(v), "an array of problems"));
	n = cJSON_GetArraySize(v);
	if (!n)
		return spec_bad(c, "must list at least one problem");
	c->s->problems = xcalloc((size_t)n, sizeof(*c->s->problems));
	/* a name defined twice: found by sorting, not by comparing each with all before it */
	names = xcalloc((size_t)n, sizeof(*names));
	cJSON_ArrayForEach(it, v) {
		const cJSON *nm = cJSON_IsObject(it) ? cJSON_GetObjectItemCaseSensitive(it, "name") : NULL;
		names[i++] = cJSON_IsString(nm) ? nm->valuestring : NULL;
	}
	rep = spec_first_repeat(names, n, &j);
	free(names);
	i = 0;
	cJSON_ArrayForEach(it, v) {
		size_t m2 = spec_push_index(c, i);
		struct spec_problem *p = &c->s->problems[c->s->nproblems++];
		const cJSON *params;
		TRY(spec_need_type(c, it, cJSON_IsObject(it), "an object"));
		TRY(spec_check_keys(c, it, keys));
		TRY(spec_get_string(c, it, "name", 1, 0, &p->name));
		if (strlen(p->name) > NAME_MAX_LEN) {
			spec_push_key(c, "name");
			return spec_bad(c, "is %zu characters long; at most %d", strlen(p->name),
				   NAME_MAX_LEN);
		}
		if (i == rep) {
			spec_push_key(c, "name");
			return spec_bad(c, "problem \"%s\" is defined twice (also 'problems[%d]')",
				   p->name, j);
		}
		params = cJSON_GetObjectItemCaseSensitive(it, "params");
		if (params) {
			size_t m3 = spec_push_key(c, "params");
			TRY(spec_get_kv(c, params, 0, &p->params, &p->nparams));
			spec_pop(c, m3);
		}
		spec_pop(c, m2);
		i++;
	}
	spec_pop(c, mark);
	spec_index_problems(c->s);
	return GO_OK;
}

static enum go_status parse_tolerance(struct spec_ctx *c, const cJSON *root)
{
	static const char *const keys[] = { "max_abs", "max_rel", "rel_l2", NULL };
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "tolerance");
	const cJSON *it;
	size_t mark;
	if (!v)
		return GO_OK;
	mark = spec_push_key(c, "tolerance");
	TRY(spec_need_type(c, v, cJSON_IsObject(v), "an object"));
	TRY(spec_check_keys(c, v, keys));
	c->s->tolerance = xcalloc((size_t)cJSON_GetArraySize(v) + 1, sizeof(*c->s->tolerance));
	cJSON_ArrayForEach(it, v) {
		size_t m2 = spec_push_key(c, it->string);
		struct spec_kv *kv = &c->s->tolerance[c->s->ntolerance];
		TRY(spec_get_positive(c, it));
		kv->key = xstrdup(it->string);
		kv->value = spec_render_num(it->valuedouble);
		c->s->ntolerance++;
		spec_pop(c, m2);
	}
	spec_pop(c, mark);
	return GO_OK;
}

/* ---------------------------------------------------------------- top level */

static char *make_slug(const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p;
	for (p = name; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		int ok = isalnum(ch) || ch == '.' || ch == '_' || ch == '-';
		if (!ok || ch == '-') {
			if (sb.len && sb.buf[sb.len - 1] != '-')
				strbuf_addch(&sb, '-');
			continue;
		}
		if (ch == '.' && !sb.len)
			continue; /* no hidden directories */
		strbuf_addch(&sb, ch);
	}
	if (sb.len > SLUG_MAX_LEN)
		strbuf_setlen(&sb, SLUG_MAX_LEN);
	while (sb.len && (sb.buf[sb.len - 1] == '-' || sb.buf[sb.len - 1] == '.'))
		strbuf_setlen(&sb, sb.len - 1);
	if (!sb.len)
		strbuf_addstr(&sb, "experiment");
	return strbuf_detach(&sb, NULL);
}

static enum go_status parse_root(struct spec_ctx *c, const cJSON *root)
{
	static const char *const keys[] = { "schema", "name", "phase", "description", "sources",
					    "build", "targets", "programs", "problems",
					    "tolerance", "steps", "baselines", "references",
					    "expected", "gates", "headline", "spread", NULL };
	struct spec *s = c->s;
	int schema = 0, mark;
	const cJSON *sv;

	if (!cJSON_IsObject(root))
		return spec_bad(c, "expected a JSON object at the top level, found %s", json_type_name(root));
	TRY(spec_check_keys(c, root, keys));
	sv = cJSON_GetObjectItemCaseSensitive(root, "schema");
	if (!sv)
		return spec_bad(c, "missing required key 'schema' (add \"schema\": 1)");
	if (cJSON_IsNumber(sv) && sv->valuedouble != 1) {
		spec_push_key(c, "schema");
		return spec_bad(c, "unsupported schema %.17g (this gpuorch reads schema 1)",
			   sv->valuedouble);
	}
	TRY(spec_get_int(c, root, "schema", 1, 1, 1, &schema));
	TRY(spec_get_string(c, root, "name", 1, 0, &s->name));
	if (strlen(s->name) > NAME_MAX_LEN) {
		spec_push_key(c, "name");
		return spec_bad(c, "is %zu characters long; at most %d", strlen(s->name), NAME_MAX_LEN);
	}
	s->slug = make_slug(s->name);
	TRY(spec_get_string(c, root, "phase", 1, 0, &s->phase));
	TRY(spec_get_string(c, root, "description", 0, 1, &s->description));
	if ((sv = cJSON_GetObjectItemCaseSensitive(root, "spread")) != NULL) {
		mark = spec_push_key(c, "spread");
		TRY(spec_need_type(c, sv, cJSON_IsBool(sv), "true or false"));
		s->spread = cJSON_IsTrue(sv);
		spec_pop(c, mark);
	}
	TRY(parse_sources(c, root));
	TRY(parse_build(c, root));
	TRY(parse_targets(c, root));
	TRY(parse_programs(c, root));
	TRY(parse_problems(c, root));
	TRY(check_baseline_problems(c));
	TRY(parse_tolerance(c, root));
	TRY(spec_parse_steps(c, root));
	TRY(spec_check_byo(c));
	TRY(spec_parse_figures(c, root, "baselines", &s->baselines));
	TRY(spec_parse_figures(c, root, "references", &s->references));
	TRY(spec_parse_expected(c, root));
	TRY(spec_parse_gates(c, root));
	TRY(spec_parse_headline(c, root));
	return GO_OK;
}

enum go_status spec_parse(const char *label, const char *text, size_t len,
			  const char *root, int check_files, struct spec **out,
			  struct strbuf *err)
{
	struct spec_ctx c;
	struct spec *s;
	enum go_status st;

	*out = NULL;
	s = xcalloc(1, sizeof(*s));
	s->path = xstrdup(label);
	sha256_hex(text, len, s->hash);
	st = json_parse_commented(text, len, label, &s->json, err);
	if (st != GO_OK) {
		spec_free(s);
		return GO_ERR_SPEC;
	}
	c.label = label;
	c.root = root ? root : ".";
	c.check_files = check_files;
	c.err = err;
	c.s = s;
	strbuf_init(&c.path, 0);
	st = parse_root(&c, s->json);
	strbuf_release(&c.path);
	if (st != GO_OK) {
		spec_free(s);
		return st;
	}
	*out = s;
	return GO_OK;
}

enum go_status spec_load(const char *path, const char *root, int check_files,
			 struct spec **out, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT;
	enum go_status st;
	*out = NULL;
	st = fs_read_file(path, &text, err);
	if (st == GO_OK)
		st = spec_parse(path, text.buf, text.len, root, check_files, out, err);
	strbuf_release(&text);
	return st;
}

static void free_strv(char **v)
{
	char **p;
	if (!v)
		return;
	for (p = v; *p; p++)
		free(*p);
	free(v);
}

static void free_kv(struct spec_kv *kv, int n)
{
	int i;
	for (i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

void spec_free(struct spec *s)
{
	int i;
	if (!s)
		return;
	free(s->path);
	free(s->name);
	free(s->slug);
	free(s->phase);
	free(s->description);
	free_strv(s->sources);
	free_strv(s->build_flags);
	free_kv(s->defines, s->ndefines);
	for (i = 0; i < s->ntargets; i++) {
		free(s->targets[i].gpu);
		free(s->targets[i].arch);
	}
	free(s->targets);
	for (i = 0; i < s->nprograms; i++) {
		free(s->programs[i].name);
		free_strv(s->programs[i].sources);
		free(s->programs[i].script);
		free_strv(s->programs[i].libs);
		free(s->programs[i].min_arch);
		free(s->programs[i].datatype);
		free(s->programs[i].baseline_problem);
		spec_free_byo(&s->programs[i]);
	}
	free(s->programs);
	for (i = 0; i < s->nproblems; i++) {
		free(s->problems[i].name);
		free_kv(s->problems[i].params, s->problems[i].nparams);
	}
	free(s->problems);
	free(s->problems_by_name);
	free_kv(s->tolerance, s->ntolerance);
	for (i = 0; i < s->nsteps; i++) {
		struct spec_step *st = &s->steps[i];
		int j;
		free(st->program);
		free_strv(st->problems);
		free_strv(st->metrics);
		free(st->kernel);
		free(st->clock_control);
		free(st->cache_control);
		free(st->mode);
		free_strv(st->tools);
		for (j = 0; j < st->nwork; j++)
			free(st->work[j].key);
		free(st->work);
		for (j = 0; j < st->nvariants; j++) {
			free(st->variants[j].label);
			free_kv(st->variants[j].defines, st->variants[j].ndefines);
		}
		free(st->variants);
		free_strv(st->sweep_sources);
	}
	free(s->steps);
	cJSON_Delete(s->baselines);
	cJSON_Delete(s->references);
	cJSON_Delete(s->expected);
	cJSON_Delete(s->gates);
	cJSON_Delete(s->json);
	free(s);
}
