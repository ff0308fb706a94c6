/* test_spec.c -- unit tests of spec.c: a full valid spec, and one error per rule of docs/spec.md. */
#include "spec/spec.h"
#include "core/metric.h"
#include "core/fsutil.h"
#include "core/hash.h"
#include "core/jsonutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/banned.h"


#define DIR "tests/fixtures/specs"
#define ROOT DIR "/repo"
#define VALID DIR "/valid.json"

static cJSON *valid_json(void)
{
	struct strbuf err = STRBUF_INIT;
	cJSON *j = NULL;
	if (json_load_file(VALID, &j, GO_ERR_SPEC, &err) != GO_OK)
		printf("# cannot load %s: %s\n", VALID, err.buf);
	strbuf_release(&err);
	return j;
}

/* Walk "a.b.2.c"; creates nothing. Returns the parent of the last segment
 * and leaves the last segment in *last. */
static cJSON *walk(cJSON *root, const char *path, const char **last)
{
	cJSON *cur = root;
	const char *p = path;
	char key[128];
	for (;;) {
		size_t n = strcspn(p, ".");
		if (!p[n]) {
			*last = p;
			return cur;
		}
		memcpy(key, p, n);
		key[n] = '\0';
		cur = cJSON_IsArray(cur) ? cJSON_GetArrayItem(cur, atoi(key))
					 : cJSON_GetObjectItemCaseSensitive(cur, key);
		if (!cur)
			return NULL;
		p += n + 1;
	}
}

/* Set path to the JSON value text (NULL: delete it). Arrays: an index equal
 * to the size appends. */
static void set(cJSON *root, const char *path, const char *text)
{
	const char *last;
	cJSON *parent = walk(root, path, &last);
	cJSON *v = text ? cJSON_Parse(text) : NULL;
	if (!parent || (text && !v)) {
		printf("# bad test path or value: %s = %s\n", path, text ? text : "(delete)");
		cJSON_Delete(v);
		return;
	}
	if (cJSON_IsArray(parent)) {
		int i = atoi(last);
		if (!v)
			cJSON_DeleteItemFromArray(parent, i);
		else if (i >= cJSON_GetArraySize(parent))
			cJSON_AddItemToArray(parent, v);
		else
			cJSON_ReplaceItemInArray(parent, i, v);
	} else if (!v) {
		cJSON_DeleteItemFromObjectCaseSensitive(parent, last);
	} else if (cJSON_GetObjectItemCaseSensitive(parent, last)) {
		cJSON_ReplaceItemInObjectCaseSensitive(parent, last, v);
	} else {
		cJSON_AddItemToObject(parent, last, v);
	}
}

static enum go_status parse_json(cJSON *j, int check_files, struct spec **out,
				 struct strbuf *err)
{
	char *text = cJSON_Print(j);
	enum go_status st = spec_parse("exp.json", text, strlen(text), ROOT, check_files, out, err);
	free(text);
	return st;
}

/* Apply up to two edits to the valid spec and expect an error containing want. */
static void expect_error(const char *what, const char *p1, const char *v1, const char *p2,
			 const char *v2, const char *want)
{
	struct strbuf err = STRBUF_INIT;
	struct spec *s = NULL;
	cJSON *j = valid_json();
	enum go_status st;
	set(j, p1, v1);
	if (p2)
		set(j, p2, v2);
	st = parse_json(j, 1, &s, &err);
	CHECK(st == GO_ERR_SPEC && !s && strstr(err.buf, want) &&
	      !strncmp(err.buf, "exp.json: ", 10),
	      what, "st=%d want \"%s\" got \"%s\"", st, want, err.buf);
	spec_free(s);
	cJSON_Delete(j);
	strbuf_release(&err);
}

static const char *kv(const struct spec_kv *v, int n, const char *key)
{
	int i;
	for (i = 0; i < n; i++)
		if (!strcmp(v[i].key, key))
			return v[i].value;
	return "(absent)";
}

static void test_valid(void)
{
	struct strbuf err = STRBUF_INIT, bytes = STRBUF_INIT;
	struct spec *s = NULL;
	char hex[SHA256_HEX_LEN + 1];
	enum go_status st = spec_load(VALID, ROOT, 1, &s, &err);
	const struct spec_program *p;
	const struct spec_problem *pr;

	CHECK(st == GO_OK && s, "the full example spec loads", "st=%d err=%s", st, err.buf);
	if (!s)
		return;
	CHECK(!strcmp(s->path, VALID) && !strcmp(s->name, "Attention / WMMA: fwd (v2)") &&
	      !strcmp(s->phase, "Phase 3: WMMA attention forward") && s->description &&
	      strstr(s->description, "second line"),
	      "name, phase and description are read", "name=%s", s->name);
	CHECK(!strcmp(s->slug, "Attention-WMMA-fwd-v2"), "slug of the name", "slug=%s", s->slug);
	fs_read_file(VALID, &bytes, &err);
	sha256_hex(bytes.buf, bytes.len, hex);
	CHECK(!strcmp(s->hash, hex), "hash is the sha256 of the file's bytes", "%s vs %s", s->hash,
	      hex);
	CHECK(s->json && cJSON_IsObject(s->json) && json_str(s->json, "phase"),
	      "the parsed tree is kept", "json=%p", (void *)s->json);
	CHECK(s->sources[0] && !strcmp(s->sources[0], "cpu/sleep.cu") &&
	      !strcmp(s->sources[1], "kernels/attention/attn_wmma.cu") &&
	      !strcmp(s->sources[4], "kernels/harness/harness.h") && !s->sources[5],
	      "sources are sorted", "first=%s", s->sources[0]);
	CHECK(s->build_flags[0] && !strcmp(s->build_flags[1], "-lineinfo") && !s->build_flags[2] &&
	      s->build_timeout_s == 900,
	      "build flags and timeout", "timeout=%d", s->build_timeout_s);
	CHECK(s->ndefines == 5 && !strcmp(s->defines[0].key, "TILE_M") &&
	      !strcmp(kv(s->defines, s->ndefines, "TILE_M"), "64") &&
	      !strcmp(kv(s->defines, s->ndefines, "SCALE"), "0.125") &&
	      !strcmp(kv(s->defines, s->ndefines, "EPS"), "0.01") &&
	      !strcmp(kv(s->defines, s->ndefines, "BIG"), "1000") &&
	      !strcmp(kv(s->defines, s->ndefines, "MODE"), "fast"),
	      "defines keep file order; numbers render without '.0' and in shortest form",
	      "EPS=%s BIG=%s", kv(s->defines, s->ndefines, "EPS"), kv(s->defines, s->ndefines, "BIG"));
	CHECK(s->ntolerance == 2 && !strcmp(kv(s->tolerance, s->ntolerance, "max_abs"), "0.02") &&
	      !strcmp(kv(s->tolerance, s->ntolerance, "rel_l2"), "0.01"),
	      "tolerance values render as written", "max_abs=%s",
	      kv(s->tolerance, s->ntolerance, "max_abs"));
	CHECK(s->ntargets == 3 && !strcmp(s->targets[0].gpu, "L4") &&
	      !strcmp(s->targets[1].arch, "sm_90a"), "targets in file order", "n=%d", s->ntargets);

	p = spec_find_program(s, "attn_wmma");
	CHECK(p && p->sources && !strcmp(p->sources[1], "kernels/harness/harness.cu") &&
	      !p->sources[2] && !p->script && !strcmp(p->libs[0], "-lcublas") &&
	      !strcmp(p->min_arch, "sm_80") && p->needs_gpu == 1,
	      "a compiled program: sources, libs, min_arch, needs_gpu defaults to true", "p=%p",
	      (const void *)p);
	p = spec_find_program(s, "sdpa");
	CHECK(p && !p->sources && !strcmp(p->script, "kernels/baselines/sdpa.py") && p->libs &&
	      !p->libs[0] && !p->min_arch,
	      "a script program", "p=%p", (const void *)p);
	p = spec_find_program(s, "cpu_timer");
	CHECK(p && p->needs_gpu == 0, "needs_gpu false", "p=%p", (const void *)p);
	CHECK(!spec_find_program(s, "nope") && !spec_find_problem(s, "nope"),
	      "unknown names are not found", "%s", "");

	pr = spec_find_problem(s, "B1-H8-S4096-D128");
	CHECK(pr && pr->nparams == 6 && !strcmp(pr->params[4].key, "dtype") &&
	      !strcmp(pr->params[4].value, "fp16") && !strcmp(pr->params[5].value, "0.088388") &&
	      !strcmp(pr->params[2].value, "4096"),
	      "problem params: strings, integers and floats as written", "pr=%p",
	      (const void *)pr);

	CHECK(s->nsteps == 3 && s->steps[0].kind == STEP_CORRECTNESS &&
	      s->steps[0].timeout_s == 300 && s->steps[0].prog == spec_find_program(s, "attn_wmma") &&
	      !strcmp(s->steps[0].problems[0], "B16-H16-S512-D64") &&
	      !strcmp(s->steps[0].problems[1], "B1-H8-S4096-D128") && !s->steps[0].problems[2],
	      "a step without problems runs all of them, in order", "nsteps=%d", s->nsteps);
	CHECK(s->nsteps == 3 && s->steps[1].kind == STEP_BENCHMARK &&
	      s->steps[1].timeout_s == 600 && !strcmp(s->steps[1].problems[0], "B1-H8-S4096-D128") &&
	      !s->steps[1].problems[1] && !s->steps[1].is_baseline,
	      "step problems, default timeout 600, default role kernel", "timeout=%d",
	      s->nsteps == 3 ? s->steps[1].timeout_s : -1);
	CHECK(s->nsteps == 3 && s->steps[2].is_baseline && !strcmp(s->steps[2].program, "sdpa"),
	      "role baseline", "%s", "");
	CHECK(cJSON_GetArraySize(s->baselines) == 1 && cJSON_GetArraySize(s->references) == 1 &&
	      cJSON_GetArraySize(s->expected) == 2 &&
	      json_num(cJSON_GetArrayItem(s->baselines, 0), "latency_us", 0) == 47.10,
	      "baselines, references and expected are kept as JSON", "%s", "");
	CHECK(!strcmp(step_kind_name(STEP_CORRECTNESS), "correctness") &&
	      !strcmp(step_kind_name(STEP_BENCHMARK), "benchmark"),
	      "step kind names", "%s", "");

	CHECK(spec_arch_for_gpu(s, "NVIDIA H100 80GB HBM3") &&
	      !strcmp(spec_arch_for_gpu(s, "NVIDIA H100 80GB HBM3"), "sm_90a") &&
	      !strcmp(spec_arch_for_gpu(s, "NVIDIA L4"), "sm_89") &&
	      !strcmp(spec_arch_for_gpu(s, "nvidia h200"), "sm_90a") &&
	      !spec_arch_for_gpu(s, "Tesla T4") && !spec_arch_for_gpu(s, NULL),
	      "spec_arch_for_gpu: first case-insensitive substring match", "%s", "");
	spec_free(s);
	strbuf_release(&bytes);
	strbuf_release(&err);
}

static void test_minimal_and_defaults(void)
{
	const char *text =
		"{\"schema\":1,\"name\":\"m\",\"phase\":\"P\",\"sources\":[\"cpu/sleep.cu\"],"
		"\"programs\":{\"t\":{\"sources\":[\"cpu/sleep.cu\"]}},"
		"\"problems\":[{\"name\":\"one\"}],"
		"\"steps\":[{\"kind\":\"correctness\",\"program\":\"t\"}]}";
	struct strbuf err = STRBUF_INIT;
	struct spec *s = NULL;
	enum go_status st = spec_parse("min.json", text, strlen(text), ROOT, 1, &s, &err);
	CHECK(st == GO_OK && s && !s->description && s->build_timeout_s == 600 &&
	      s->build_flags && !s->build_flags[0] && s->ndefines == 0 && s->ntargets == 0 &&
	      s->ntolerance == 0 && s->problems[0].nparams == 0 &&
	      cJSON_IsArray(s->baselines) && cJSON_IsArray(s->references) &&
	      cJSON_IsArray(s->expected),
	      "a minimal spec gets the documented defaults", "st=%d err=%s", st, err.buf);
	CHECK(s && !strcmp(s->path, "min.json"), "spec_parse labels the spec", "%s", "");
	spec_free(s);
	s = NULL;

	st = spec_parse("min.json", text, strlen(text), "/nonexistent-root", 0, &s, &err);
	CHECK(st == GO_OK && s, "check_files=0 does not look at the files (for --commit)",
	      "st=%d err=%s", st, err.buf);
	spec_free(s);
	s = NULL;
	st = spec_parse("min.json", text, strlen(text), "/nonexistent-root", 1, &s, &err);
	CHECK(st == GO_ERR_SPEC && strstr(err.buf, "'sources[0]': no such file or directory 'cpu/sleep.cu' under '/nonexistent-root'"),
	      "check_files=1 requires every source under root", "st=%d err=%s", st, err.buf);
	strbuf_release(&err);
}

static void slug_case(const char *name, const char *want)
{
	struct strbuf err = STRBUF_INIT;
	struct spec *s = NULL;
	cJSON *j = valid_json();
	cJSON *n = cJSON_CreateString(name);
	enum go_status st;
	cJSON_ReplaceItemInObjectCaseSensitive(j, "name", n);
	st = parse_json(j, 1, &s, &err);
	CHECK(st == GO_OK && !strcmp(s->slug, want), "slug", "name \"%s\": want \"%s\" got \"%s\" %s",
	      name, want, s ? s->slug : "(none)", err.buf);
	spec_free(s);
	cJSON_Delete(j);
	strbuf_release(&err);
}

static void test_slugs(void)
{
	char long_name[101];
	char want[61];
	memset(long_name, 'a', 100);
	long_name[100] = '\0';
	memset(want, 'a', 60);
	want[60] = '\0';
	slug_case("attention-wmma", "attention-wmma");
	slug_case("  Phase 3:   WMMA // attention!! ", "Phase-3-WMMA-attention");
	slug_case("a--b__c..d", "a-b__c..d");
	slug_case("..", "experiment");
	slug_case(".", "experiment");
	slug_case("../../etc", "etc");
	slug_case("\xce\xb1\xce\xb2", "experiment");
	slug_case("$(rm -rf ~)", "rm-rf");
	slug_case(long_name, want);
}

static void test_files(void)
{
	struct strbuf err = STRBUF_INIT;
	struct spec *s = NULL;
	enum go_status st;

	st = spec_load(DIR "/bad-syntax.json", ROOT, 1, &s, &err);
	CHECK(st == GO_ERR_SPEC && !s && strstr(err.buf, DIR "/bad-syntax.json:5:"),
	      "a JSON syntax error names file:line:col", "st=%d err=%s", st, err.buf);
	st = spec_load(DIR "/typo.json", ROOT, 1, &s, &err);
	CHECK(st == GO_ERR_SPEC &&
	      !strcmp(err.buf, DIR "/typo.json: unknown key 'stpes' (did you mean 'steps'?)"),
	      "a misspelt top-level key is reported with a suggestion", "err=%s", err.buf);
	st = spec_load(DIR "/no-such-spec.json", ROOT, 1, &s, &err);
	CHECK(st == GO_ERR_NOT_FOUND && strstr(err.buf, "no-such-spec.json"),
	      "a missing spec file is not found", "st=%d err=%s", st, err.buf);
	{
		const char *dup = "{\"schema\":1,\"name\":\"a\",\"name\":\"b\"}";
		st = spec_parse("dup.json", dup, strlen(dup), ROOT, 1, &s, &err);
		CHECK(st == GO_ERR_SPEC && !strcmp(err.buf, "dup.json: key 'name' appears twice"),
		      "a duplicated key is an error", "err=%s", err.buf);
	}
	{
		const char *arr = "[1, 2]";
		st = spec_parse("arr.json", arr, strlen(arr), ROOT, 1, &s, &err);
		CHECK(st == GO_ERR_SPEC && strstr(err.buf, "expected a JSON object at the top level"),
		      "the top level must be an object", "err=%s", err.buf);
	}
	strbuf_release(&err);
}

static void test_errors(void)
{
	expect_error("headline names a program of the spec", "headline", "{\"program\": \"nope\"}", NULL, NULL,
		     "exp.json: 'headline.program': no program named \"nope\" in 'programs'");
	expect_error("headline's problem too", "headline",
		     "{\"program\": \"attn_wmma\", \"problem\": \"B2\"}", NULL, NULL,
		     "'headline.problem': no problem named \"B2\" in 'problems'");
	expect_error("headline needs its program", "headline", "{\"problem\": \"B16-H16-S512-D64\"}", NULL, NULL,
		     "'headline': missing required key 'program'");
	expect_error("headline is an object", "headline", "\"attn_wmma\"", NULL, NULL,
		     "'headline': expected an object");
	expect_error("headline takes program and problem only", "headline",
		     "{\"program\": \"attn_wmma\", \"metric\": \"tflops\"}", NULL, NULL, "metric");
	expect_error("exact message for an unknown step program",
		     "steps.2.program", "\"x\"", NULL, NULL,
		     "exp.json: 'steps[2].program': no program named \"x\" in 'programs'");
	expect_error("schema must be 1", "schema", "2", NULL, NULL,
		     "'schema': unsupported schema 2 (this gpuorch reads schema 1)");
	expect_error("schema must be a number", "schema", "\"1\"", NULL, NULL,
		     "'schema': expected an integer from 1 to 1, found a string");
	expect_error("schema is required", "schema", NULL, NULL, NULL,
		     "missing required key 'schema'");
	expect_error("name must not be empty", "name", "\"\"", NULL, NULL,
		     "'name': must not be empty");
	expect_error("name must be a string", "name", "42", NULL, NULL,
		     "'name': expected a string, found a number");
	expect_error("name at most 100 characters", "name",
		     "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"",
		     NULL, NULL, "'name': is 101 characters long; at most 100");
	expect_error("name without control characters", "name", "\"a\\nb\"", NULL, NULL,
		     "'name': must not contain control characters");
	expect_error("phase is required", "phase", NULL, NULL, NULL,
		     "missing required key 'phase'");
	expect_error("unknown top-level key with a suggestion", "descripton", "\"x\"", NULL, NULL,
		     "exp.json: unknown key 'descripton' (did you mean 'description'?)");
	expect_error("unknown key without a near match lists the keys", "zzzzzzzz", "1", NULL, NULL,
		     "unknown key 'zzzzzzzz' (expected 'schema', 'name',");
	expect_error("sources is required", "sources", NULL, NULL, NULL,
		     "missing required key 'sources'");
	expect_error("sources must not be empty", "sources", "[]", NULL, NULL,
		     "'sources': must not be empty");
	expect_error("absolute source path", "sources.0", "\"/etc/passwd\"", NULL, NULL,
		     "'sources[0]': '/etc/passwd' is absolute; give a path relative to the repository root");
	expect_error("'..' in a source path", "sources.0", "\"kernels/../../x.cu\"", NULL, NULL,
		     "'sources[0]': 'kernels/../../x.cu' leaves the repository ('..' is not allowed)");
	expect_error("'.' component in a source path", "sources.0", "\"./cpu/sleep.cu\"", NULL, NULL,
		     "'sources[0]': './cpu/sleep.cu' is not a plain relative path");
	expect_error("empty component in a source path", "sources.0", "\"cpu//sleep.cu\"", NULL,
		     NULL, "is not a plain relative path");
	expect_error("source that does not exist", "sources.5", "\"kernels/nope.cu\"", NULL, NULL,
		     "'sources[5]': no such file or directory 'kernels/nope.cu' under 'tests/fixtures/specs/repo'");
	expect_error("a glob that leaves the repository", "sources.5", "\"kernels/**/../x.cu\"",
		     NULL, NULL, "'sources[5]': 'kernels/**/../x.cu' leaves the repository");
	expect_error("an absolute glob", "sources.5", "\"/kernels/*.cu\"", NULL, NULL,
		     "'sources[5]': '/kernels/*.cu' is absolute");
	expect_error("a program source that no entry can select", "sources",
		     "[\"cpu/sleep.cu\", \"kernels/harness\"]", NULL, NULL,
		     "is not listed in the top-level 'sources'");
	expect_error("duplicate source", "sources.5", "\"kernels/harness/harness.h\"", NULL, NULL,
		     "'sources[5]': 'kernels/harness/harness.h' is listed twice (also 'sources[0]')");
	expect_error("source not a string", "sources.1", "7", NULL, NULL,
		     "'sources[1]': expected a string, found a number");
	expect_error("build must be an object", "build", "[]", NULL, NULL,
		     "'build': expected an object, found an array");
	expect_error("unknown build key", "build.flag", "[]", NULL, NULL,
		     "'build': unknown key 'flag' (did you mean 'flags'?)");
	expect_error("build flags must be strings", "build.flags.1", "true", NULL, NULL,
		     "'build.flags[1]': expected a string, found true");
	expect_error("define keys are C identifiers", "build.defines.1BAD", "1", NULL, NULL,
		     "'build.defines.1BAD': '1BAD' is not a C identifier");
	expect_error("define values are numbers or strings", "build.defines.X", "[1]", NULL, NULL,
		     "'build.defines.X': expected a number or a string, found an array");
	expect_error("build timeout range", "build.timeout_s", "86401", NULL, NULL,
		     "'build.timeout_s': expected an integer from 1 to 86400, found 86401");
	expect_error("build timeout integer", "build.timeout_s", "1.5", NULL, NULL,
		     "'build.timeout_s': expected an integer from 1 to 86400, found 1.5");
	expect_error("target arch format", "targets.H100", "\"sm90\"", NULL, NULL,
		     "'targets.H100': 'sm90' is not an arch; expected a string like \"sm_89\" or \"sm_90a\"");
	expect_error("target arch is a string", "targets.L4", "89", NULL, NULL,
		     "'targets.L4': expected a string like \"sm_90a\", found a number");
	expect_error("programs is required", "programs", NULL, NULL, NULL,
		     "missing required key 'programs'");
	expect_error("programs must not be empty", "programs", "{}", NULL, NULL,
		     "'programs': must name at least one program");
	expect_error("unknown program key with a suggestion", "programs.sdpa.scirpt", "\"x\"",
		     NULL, NULL, "'programs.sdpa': unknown key 'scirpt' (did you mean 'script'?)");
	expect_error("program with both sources and script", "programs.sdpa.sources",
		     "[\"cpu/sleep.cu\"]", NULL, NULL,
		     "'programs.sdpa': has more than one of 'sources' (nvcc builds it), 'script' (a Python script) and 'build'");
	expect_error("program with neither sources nor script", "programs.sdpa.script", NULL, NULL,
		     NULL, "'programs.sdpa': has none of 'sources' (a compiled program), 'script' (a Python script), 'build'");
	expect_error("program source must be listed in sources", "programs.attn_wmma.sources.0",
		     "\"kernels/other.cu\"", NULL, NULL,
		     "'programs.attn_wmma.sources[0]': 'kernels/other.cu' is not listed in the top-level 'sources'");
	expect_error("program script must be listed in sources", "programs.sdpa.script",
		     "\"kernels/baselines/other.py\"", NULL, NULL,
		     "'programs.sdpa.script': 'kernels/baselines/other.py' is not listed in the top-level 'sources'");
	expect_error("program sources are compilable files", "programs.attn_wmma.sources.1",
		     "\"kernels/harness/harness.h\"", NULL, NULL,
		     "'programs.attn_wmma.sources[1]': 'kernels/harness/harness.h' is not a .cu, .cpp");
	expect_error("program min_arch format", "programs.attn_wmma.min_arch", "\"compute_90\"",
		     NULL, NULL, "'programs.attn_wmma.min_arch': 'compute_90' is not an arch");
	expect_error("program needs_gpu is a bool", "programs.cpu_timer.needs_gpu", "\"no\"", NULL,
		     NULL, "'programs.cpu_timer.needs_gpu': expected true or false, found a string");
	expect_error("program libs are strings", "programs.attn_wmma.libs", "\"-lcublas\"", NULL,
		     NULL, "'programs.attn_wmma.libs': expected an array of strings, found a string");
	expect_error("program names have no control characters", "programs.a\tb",
		     "{\"script\":\"kernels/baselines/sdpa.py\"}", NULL, NULL,
		     "'programs.a\tb': not a valid program name");
	expect_error("problems are required", "problems", NULL, NULL, NULL,
		     "missing required key 'problems'");
	expect_error("problem name is required", "problems.0.name", NULL, NULL, NULL,
		     "'problems[0]': missing required key 'name'");
	expect_error("problem names are unique", "problems.1.name", "\"B16-H16-S512-D64\"", NULL,
		     NULL, "'problems[1].name': problem \"B16-H16-S512-D64\" is defined twice (also 'problems[0]')");
	expect_error("problem names have no control characters", "problems.0.name", "\"a\\u0001b\"",
		     NULL, NULL, "'problems[0].name': must not contain control characters");
	expect_error("params must not be true/false", "problems.0.params.causal", "true", NULL,
		     NULL, "'problems[0].params.causal': expected a number or a string, found true");
	expect_error("param names are flag names", "problems.0.params.a=b", "1", NULL, NULL,
		     "'problems[0].params.a=b': 'a=b' is not a valid parameter name");
	expect_error("unknown problem key", "problems.0.parms", "{}", NULL, NULL,
		     "'problems[0]': unknown key 'parms' (did you mean 'params'?)");
	expect_error("tolerance values are positive", "tolerance.max_abs", "-1", NULL, NULL,
		     "'tolerance.max_abs': expected a positive number, found -1");
	expect_error("tolerance values are numbers", "tolerance.max_abs", "\"0.1\"", NULL, NULL,
		     "'tolerance.max_abs': expected a positive number, found a string");
	expect_error("tolerance keys are known", "tolerance.rel_12", "0.1", NULL, NULL,
		     "'tolerance': unknown key 'rel_12' (did you mean 'rel_l2'?)");
	expect_error("steps are required", "steps", NULL, NULL, NULL, "missing required key 'steps'");
	expect_error("steps must not be empty", "steps", "[]", NULL, NULL,
		     "'steps': must list at least one step");
	expect_error("step kind is required", "steps.1.kind", NULL, NULL, NULL,
		     "'steps[1]': missing required key 'kind'");
	expect_error("a profile step takes no role", "steps.1.kind", "\"profile\"",
		     "steps.1.role", "\"baseline\"",
		     "'steps[1]': unknown key 'role' (did you mean 'mode'?)");
	expect_error("misspelt step kind", "steps.1.kind", "\"benchmrk\"", NULL, NULL,
		     "'steps[1].kind': unknown step kind 'benchmrk' (did you mean 'benchmark'?)");
	expect_error("unknown step kind", "steps.1.kind", "\"compile\"", NULL, NULL,
		     "'steps[1].kind': unknown step kind 'compile' (expected 'correctness', 'benchmark', 'profile', 'sanitize', 'sweep' or 'kernel_timing')");
	expect_error("step problems must exist", "steps.1.problems.1", "\"nope\"", NULL, NULL,
		     "'steps[1].problems[1]': no problem named \"nope\" in 'problems'");
	expect_error("step problems must not be empty", "steps.1.problems", "[]", NULL, NULL,
		     "'steps[1].problems': must not be empty");
	expect_error("step problems listed once", "steps.1.problems.1", "\"B1-H8-S4096-D128\"",
		     NULL, NULL, "'steps[1].problems[1]': problem \"B1-H8-S4096-D128\" is listed twice");
	expect_error("step timeout lower bound", "steps.0.timeout_s", "0", NULL, NULL,
		     "'steps[0].timeout_s': expected an integer from 1 to 86400, found 0");
	expect_error("step role", "steps.2.role", "\"base\"", NULL, NULL,
		     "'steps[2].role': unknown role 'base' (did you mean 'baseline'?)");
	expect_error("unknown step key", "steps.0.timeout", "5", NULL, NULL,
		     "'steps[0]': unknown key 'timeout' (did you mean 'timeout_s'?)");
	expect_error("step must be an object", "steps.0", "\"correctness\"", NULL, NULL,
		     "'steps[0]': expected an object, found a string");
	expect_error("baseline needs a figure", "baselines.0.latency_us", NULL, NULL, NULL,
		     "'baselines[0]': give one of 'latency_us' or 'tflops'");
	expect_error("baseline gives one figure", "baselines.0.tflops", "10", NULL, NULL,
		     "'baselines[0]': give only one of 'latency_us' or 'tflops'");
	expect_error("baseline problem must exist", "baselines.0.problem", "\"B2\"", NULL, NULL,
		     "'baselines[0].problem': no problem named \"B2\" in 'problems'");
	expect_error("baseline figure positive", "baselines.0.latency_us", "0", NULL, NULL,
		     "'baselines[0].latency_us': expected a positive number, found 0");
	expect_error("reference needs a name", "references.0.name", NULL, NULL, NULL,
		     "'references[0]': missing required key 'name'");
	expect_error("expected op must be known", "expected.0.op", "\"=\"", NULL, NULL,
		     "'expected[0].op': unknown operator '=' (expected '<', '<=', '>', '>=' or '==')");
	expect_error("expected metric not empty", "expected.0.metric", "\"\"", NULL, NULL,
		     "'expected[0].metric': must not be empty");
	expect_error("expected program must exist", "expected.1.program", "\"flash\"", NULL, NULL,
		     "'expected[1].program': no program named \"flash\" in 'programs'");
	expect_error("expected value is a number", "expected.1.value", "\"30\"", NULL, NULL,
		     "'expected[1].value': expected a number, found a string");
	expect_error("expected value is required", "expected.1.value", NULL, NULL, NULL,
		     "'expected[1]': missing required key 'value'");
	expect_error("expected must be an array", "expected", "{}", NULL, NULL,
		     "'expected': expected an array of objects, found an object");
}

static void test_arch(void)
{
	static const struct {
		const char *have, *need;
		int want;
	} cases[] = {
		{ "sm_90a", "sm_90a", 1 }, { "sm_90", "sm_90a", 0 },  { "sm_89", "sm_90a", 0 },
		{ "sm_90a", "sm_80", 1 },  { "sm_100a", "sm_90a", 0 }, { "sm_90", "sm_80", 1 },
		{ "sm_90a", "sm_90", 1 },  { "sm_80", "sm_90", 0 },    { "sm_120", "sm_90", 1 },
		{ "sm_89", NULL, 1 },      { "bogus", "sm_80", 0 },    { "sm_90", "sm_9", 0 },
	};
	size_t i;
	int ok = 1;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = spec_arch_satisfies(cases[i].have, cases[i].need);
		if (got != cases[i].want) {
			ok = 0;
			printf("# spec_arch_satisfies(%s, %s) = %d, want %d\n", cases[i].have,
			       cases[i].need ? cases[i].need : "NULL", got, cases[i].want);
		}
	}
	CHECK(ok, "spec_arch_satisfies: numeric order; an 'a' requirement only by that exact arch",
	      "see above");
}


/* profile, sanitize and sweep steps, and gates (docs/spec.md). */
static void test_tool_steps(void)
{
	struct strbuf err = STRBUF_INIT;
	struct spec *s = NULL;
	cJSON *j = valid_json();
	enum go_status st;
	set(j, "steps.3", "{\"kind\": \"profile\", \"program\": \"attn_wmma\", \"problems\": [\"B16-H16-S512-D64\"], "
	    "\"metrics\": [\"dram__throughput.avg.pct_of_peak_sustained_elapsed\"], \"launch_count\": 2}");
	set(j, "steps.4", "{\"kind\": \"sanitize\", \"program\": \"attn_wmma\", \"tools\": [\"memcheck\", \"racecheck\"]}");
	set(j, "steps.5", "{\"kind\": \"sweep\", \"program\": \"attn_wmma\", \"defines\": "
	    "{\"TILE_M\": [64, 128], \"TILE_N\": [32, 64, 96], \"MODE\": \"x\"}, \"check\": false}");
	set(j, "steps.6", "{\"kind\": \"profile\", \"program\": \"cpu_timer\"}");
	set(j, "gates", "[{\"program\": \"attn_wmma\", \"metric\": \"profile.dram__throughput.avg.pct_of_peak_sustained_elapsed\", \"op\": \">=\", \"value\": 60},"
	    "{\"program\": \"attn_wmma\", \"metric\": \"sanitizer.racecheck.errors\", \"op\": \"==\", \"value\": 0, \"name\": \"no races\"},"
	    "{\"program\": \"attn_wmma\", \"metric\": \"ptxas.spill_store_bytes\", \"op\": \"==\", \"value\": 0},"
	    "{\"program\": \"attn_wmma\", \"metric\": \"speedup\", \"op\": \">=\", \"value\": 2, \"gpu\": \"H100\"}]");
	st = parse_json(j, 1, &s, &err);
	CHECK(st == GO_OK && s, "profile, sanitize, sweep steps and gates load", "st=%d err=%s", st, err.buf);
	if (s) {
		const struct spec_step *p = &s->steps[3], *z = &s->steps[4], *w = &s->steps[5];
		CHECK(p->kind == STEP_PROFILE && p->metrics[0] && !p->metrics[1] &&
		      !strcmp(p->kernel, "attn_wmma") && p->launch_count == 2 && p->launch_skip == 0 &&
		      !strcmp(p->clock_control, "base") && !strcmp(p->cache_control, "all") &&
		      !strcmp(p->mode, "check"),
		      "a profile step gets its metrics and the defaults", "kernel=%s", p->kernel);
		CHECK(s->steps[6].metrics && !strcmp(s->steps[6].metrics[0], spec_default_metrics[0]) &&
		      !strcmp(s->steps[6].kernel, "cpu_timer"),
		      "a profile step without metrics gets the default set", "-");
		CHECK(z->kind == STEP_SANITIZE && !strcmp(z->tools[1], "racecheck") && !z->tools[2] &&
		      z->print_limit == 10, "a sanitize step lists its tools", "-");
		CHECK(w->kind == STEP_SWEEP && w->nvariants == 6 && !w->sweep_check &&
		      !strcmp(w->variants[0].label, "TILE_M=64,TILE_N=32,MODE=x") &&
		      !strcmp(w->variants[5].label, "TILE_M=128,TILE_N=96,MODE=x") &&
		      w->variants[1].ndefines == 3 && !strcmp(w->variants[1].defines[1].value, "64"),
		      "a sweep expands to the cartesian product, first key slowest",
		      "n=%d first=%s", w->nvariants, w->nvariants ? w->variants[0].label : "-");
		CHECK(cJSON_GetArraySize(s->gates) == 4, "gates are kept", "-");
		CHECK(!strcmp(step_kind_name(STEP_SWEEP), "sweep") &&
		      !strcmp(step_kind_name(STEP_SANITIZE), "sanitize"), "kind names", "-");
	}
	spec_free(s);
	cJSON_Delete(j);
	strbuf_release(&err);

	expect_error("a sanitizer tool is one of four", "steps.1",
		     "{\"kind\": \"sanitize\", \"program\": \"attn_wmma\", \"tools\": [\"memchek\"]}", NULL, NULL,
		     "'steps[1].tools[0]': unknown compute-sanitizer tool 'memchek' (did you mean 'memcheck'?)");
	expect_error("a sweep varies a compiled program", "steps.1",
		     "{\"kind\": \"sweep\", \"program\": \"sdpa\", \"defines\": {\"X\": [1]}}", NULL, NULL,
		     "'steps[1].program': 'sdpa' is a script; a sweep varies compile-time defines");
	expect_error("a sweep needs defines", "steps.1",
		     "{\"kind\": \"sweep\", \"program\": \"attn_wmma\"}", NULL, NULL,
		     "'steps[1]': missing required key 'defines'");
	expect_error("sweep define keys are C identifiers", "steps.1",
		     "{\"kind\": \"sweep\", \"program\": \"attn_wmma\", \"defines\": {\"1X\": [1]}}", NULL, NULL,
		     "'steps[1].defines.1X': '1X' is not a C identifier");
	expect_error("sweep define values reach nvcc safely", "steps.1",
		     "{\"kind\": \"sweep\", \"program\": \"attn_wmma\", \"defines\": {\"X\": [1, \"$(id)\"]}}", NULL, NULL,
		     "'steps[1].defines.X[1]': define value '$(id)' contains '$'");
	expect_error("sweeps are bounded", "steps.1",
		     "{\"kind\": \"sweep\", \"program\": \"attn_wmma\", \"defines\": {\"A\": [1,2,3,4,5,6,7,8], \"B\": [1,2,3,4,5,6,7,8], \"C\": [1,2,3,4,5]}}", NULL, NULL,
		     "'steps[1].defines.C': the sweep has more than 256 variants");
	expect_error("a sweep's sources are the program's", "steps.1",
		     "{\"kind\": \"sweep\", \"program\": \"attn_wmma\", \"defines\": {\"X\": [1]}, \"sources\": [\"kernels/harness/harness.cu\", \"kernels/other.cu\"]}", NULL, NULL,
		     "'steps[1].sources[1]': 'kernels/other.cu' is not one of program 'attn_wmma''s sources");
	expect_error("a sweep's sources: each once", "steps.1",
		     "{\"kind\": \"sweep\", \"program\": \"attn_wmma\", \"defines\": {\"X\": [1]}, \"sources\": [\"kernels/harness/harness.cu\", \"kernels/harness/harness.cu\"]}", NULL, NULL,
		     "'steps[1].sources[1]': 'kernels/harness/harness.cu' is listed twice");
	expect_error("a sweep's sources: at least one", "steps.1",
		     "{\"kind\": \"sweep\", \"program\": \"attn_wmma\", \"defines\": {\"X\": [1]}, \"sources\": []}", NULL, NULL,
		     "'steps[1].sources': name at least one of program 'attn_wmma''s sources");
	expect_error("a sweep's sources are strings", "steps.1",
		     "{\"kind\": \"sweep\", \"program\": \"attn_wmma\", \"defines\": {\"X\": [1]}, \"sources\": \"kernels/harness/harness.cu\"}", NULL, NULL,
		     "'steps[1].sources': expected an array of the program's source files");
	expect_error("profile clock control is base or none", "steps.1",
		     "{\"kind\": \"profile\", \"program\": \"attn_wmma\", \"clock_control\": \"bas\"}", NULL, NULL,
		     "'steps[1].clock_control': unknown clock_control 'bas' (did you mean 'base'?)");
	expect_error("profile metric names are checked", "steps.1",
		     "{\"kind\": \"profile\", \"program\": \"attn_wmma\", \"metrics\": [\"a b\"]}", NULL, NULL,
		     "'steps[1].metrics[0]': 'a b' is not a Nsight Compute metric name");
	expect_error("a profile gate needs a profile step collecting it", "gates",
		     "[{\"program\": \"attn_wmma\", \"metric\": \"profile.sm__x.sum\", \"op\": \">\", \"value\": 1}]", NULL, NULL,
		     "'gates[0].metric': no profile step of 'attn_wmma' collects 'sm__x.sum'");
	expect_error("a sanitizer gate needs that tool", "gates",
		     "[{\"program\": \"attn_wmma\", \"metric\": \"sanitizer.memcheck.errors\", \"op\": \"==\", \"value\": 0}]", NULL, NULL,
		     "'gates[0].metric': no sanitize step of 'attn_wmma' runs 'memcheck'");
	expect_error("ptxas gates name a resource", "gates",
		     "[{\"program\": \"attn_wmma\", \"metric\": \"ptxas.regs\", \"op\": \"<\", \"value\": 128}]", NULL, NULL,
		     "'gates[0].metric': unknown ptxas resource 'regs'");
	expect_error("gates name a program", "gates",
		     "[{\"program\": \"nope\", \"metric\": \"latency_us\", \"op\": \"<\", \"value\": 1}]", NULL, NULL,
		     "'gates[0].program': no program named \"nope\"");
	expect_error("gate operators are checked", "gates",
		     "[{\"program\": \"attn_wmma\", \"metric\": \"latency_us\", \"op\": \"=<\", \"value\": 1}]", NULL, NULL,
		     "'gates[0].op': unknown operator '=<'");
}

/* Apply up to two edits to the valid spec and expect it to load. */
static void expect_ok(const char *what, const char *p1, const char *v1, const char *p2,
		      const char *v2)
{
	struct strbuf err = STRBUF_INIT;
	struct spec *s = NULL;
	cJSON *j = valid_json();
	enum go_status st;
	set(j, p1, v1);
	if (p2)
		set(j, p2, v2);
	st = parse_json(j, 1, &s, &err);
	CHECK(st == GO_OK && s, what, "st=%d err=%s", st, err.buf);
	spec_free(s);
	cJSON_Delete(j);
	strbuf_release(&err);
}

#define BYO_PROG "{\"run\": [\"./bench\"], \"figures\": {\"gflops\": {\"regex\": \"GFLOPS: ([0-9.]+)\", " \
		 "\"better\": \"higher\"}, \"ms\": {\"json\": \"time.ms\"}}}"

/* Issue 30 item 8: a gate or an expectation on a name no step records is a
 * spec error (exit 2) naming the closest name, never a verdict after a run. */
static void test_metric_names(void)
{
	const struct metric_def *d;
	char buf[512];
	expect_error("a gate's typo of a declared figure names the figure", "programs.bench", BYO_PROG,
		     "gates", "[{\"program\": \"bench\", \"metric\": \"gflpos\", \"op\": \">\", \"value\": 1}]",
		     "'gates[0].metric': unknown metric 'gflpos' for program 'bench' (did you mean 'gflops'?)");
	expect_error("an expectation's typo of a declared figure names the figure", "programs.bench", BYO_PROG,
		     "expected", "[{\"program\": \"bench\", \"metric\": \"gflpos\", \"op\": \">\", \"value\": 1}]",
		     "'expected[0].metric': unknown metric 'gflpos' for program 'bench' (did you mean 'gflops'?)");
	expect_error("a program off the harness has no latency_us", "programs.bench", BYO_PROG,
		     "gates", "[{\"program\": \"bench\", \"metric\": \"latency_us\", \"op\": \"<\", \"value\": 1}]",
		     "'gates[0].metric': 'latency_us' is not a figure of 'bench': a program off the harness "
		     "records only the figures it declares (docs/byo.md): 'gflops', 'ms'");
	expect_ok("a declared figure is a gate's metric", "programs.bench", BYO_PROG,
		  "gates", "[{\"program\": \"bench\", \"metric\": \"ms\", \"op\": \"<\", \"value\": 1}]");
	expect_ok("a declared figure is an expectation's metric", "programs.bench", BYO_PROG,
		  "expected", "[{\"program\": \"bench\", \"metric\": \"gflops\", \"op\": \">\", \"value\": 1}]");
	expect_error("a typo of the vocabulary in expected[]", "expected.1.metric", "\"latncy_us\"", NULL, NULL,
		     "'expected[1].metric': unknown metric 'latncy_us' for program 'attn_wmma' (did you mean 'latency_us'?)");
	expect_error("a typo of the vocabulary in gates[]", "gates",
		     "[{\"program\": \"attn_wmma\", \"metric\": \"tflop\", \"op\": \">\", \"value\": 1}]", NULL, NULL,
		     "'gates[0].metric': unknown metric 'tflop' for program 'attn_wmma' (did you mean 'tflops'?)");
	expect_error("a name far from any lists what is recorded", "expected.1.metric", "\"zzzzzz\"", NULL, NULL,
		     "(expected one of these or a dotted path into the result such as 'timing.p90_us': 'latency_us', ");
	expect_error("a typo of a contract field", "expected.1.metric", "\"timing.p91_us\"", NULL, NULL,
		     "'expected[1].metric': unknown metric 'timing.p91_us' for program 'attn_wmma' (did you mean 'timing.p90_us'?)");
	expect_error("a typo of a result section", "expected.1.metric", "\"timng.p90_us\"", NULL, NULL,
		     "a result has no section 'timng' (did you mean 'timing'?)");
	expect_ok("speedup, config.* and problem.* are recorded", "gates",
		  "[{\"program\": \"attn_wmma\", \"metric\": \"speedup\", \"op\": \">\", \"value\": 1},"
		  "{\"program\": \"attn_wmma\", \"metric\": \"config.BM\", \"op\": \"==\", \"value\": 64},"
		  "{\"program\": \"sdpa\", \"metric\": \"model.bound_us\", \"op\": \">\", \"value\": 0}]", NULL, NULL);
	expect_error("a kernel figure needs a kernel_timing step", "gates",
		     "[{\"program\": \"attn_wmma\", \"metric\": \"kernel:attn.median_us\", \"op\": \"<\", \"value\": 1}]", NULL, NULL,
		     "'gates[0].metric': 'kernel:attn.median_us' is a kernel_timing figure, and no kernel_timing step of 'attn_wmma' runs");
	expect_error("a kernel figure's field is checked", "steps.3", "{\"kind\": \"kernel_timing\", \"program\": \"attn_wmma\"}",
		     "gates", "[{\"program\": \"attn_wmma\", \"metric\": \"kernel:attn.medain_us\", \"op\": \"<\", \"value\": 1}]",
		     "unknown metric 'medain_us' for program 'attn_wmma' (did you mean 'median_us'?)");
	expect_ok("a kernel figure of a kernel_timing step", "steps.3", "{\"kind\": \"kernel_timing\", \"program\": \"attn_wmma\"}",
		  "expected", "[{\"program\": \"attn_wmma\", \"metric\": \"kernel:a.b<1>.share_pct\", \"op\": \"<\", \"value\": 1}]");
	/* every name and result path of core/metric.c's vocabulary is accepted */
	for (d = metric_table; d->name; d++) {
		snprintf(buf, sizeof(buf), "[{\"program\": \"attn_wmma\", \"metric\": \"%s\", \"op\": \"<\", \"value\": 1},"
			 "{\"program\": \"attn_wmma\", \"metric\": \"%s\", \"op\": \"<\", \"value\": 1}]", d->name, d->path);
		expect_ok(d->name, "expected", buf, NULL, NULL);
	}
}

/* Issue 34: specs may carry comments (// and slash-star), read as
 * cJSON_Minify reads them; an error's line and column stay the file's. */
static void test_comments(void)
{
	const char *text =
		"// the minimal spec, commented\n"
		"{\"schema\": 1, \"name\": \"m\", /* inline */ \"phase\": \"P\",\n"
		" \"description\": \"see http://example.com/a // not a comment /* nor this */\",\n"
		" /* a block\n"
		"    over lines */\n"
		" \"sources\": [\"cpu/sleep.cu\"], // trailing\n"
		" \"programs\": {\"t\": {\"sources\": [\"cpu/sleep.cu\"]}},\n"
		" \"problems\": [{\"name\": \"one\"}],\n"
		" \"steps\": [{\"kind\": \"correctness\", \"program\": \"t\"}]}\n"
		"// after the value\n";
	const char *bad =
		"// line 1\n"
		"{\"schema\": 1, /* two\n"
		"   lines */ \"name\": \"m\",\n"
		"   \"phase\": \"P\" \"sources\": []}\n";
	const char *open = "{\"schema\": 1,\n  /* never closed\n}\n";
	struct strbuf err = STRBUF_INIT;
	struct spec *s = NULL;
	enum go_status st = spec_parse("c.json", text, strlen(text), ROOT, 1, &s, &err);
	CHECK(st == GO_OK && s && !strcmp(s->name, "m") && !strcmp(s->phase, "P") &&
	      s->description && !strcmp(s->description, "see http://example.com/a // not a comment /* nor this */") &&
	      s->nprograms == 1,
	      "a spec with // and block comments parses; // and /* in a string are the string's",
	      "st=%d err=%s", st, err.buf);
	spec_free(s);
	s = NULL;
	st = spec_parse("bad.json", bad, strlen(bad), ROOT, 1, &s, &err);
	CHECK(st == GO_ERR_SPEC && !s && strstr(err.buf, "bad.json:4:17: invalid JSON near '\"sources\": []}"),
	      "a syntax error after comments names the file's own line and column (4:17)", "%s", err.buf);
	strbuf_reset(&err);
	st = spec_parse("open.json", open, strlen(open), ROOT, 1, &s, &err);
	CHECK(st == GO_ERR_SPEC && !s && strstr(err.buf, "open.json:2:3: a /* comment is not closed"),
	      "a block comment never closed: an error at its start", "%s", err.buf);
	strbuf_release(&err);
}

int main(void)
{
	test_metric_names();
	test_tool_steps();
	test_valid();
	test_minimal_and_defaults();
	test_slugs();
	test_files();
	test_errors();
	test_arch();
	test_comments();
	return check_summary();
}
