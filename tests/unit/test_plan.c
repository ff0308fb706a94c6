/* test_plan.c -- unit tests of plan.c: build keys (every input that changes
 * the binary changes the key, so a changed flag or define never reuses a
 * stale binary), the nvcc command line, and the ncu / compute-sanitizer
 * command lines (flags whose loss changes what gpuorch reads back, such as
 * the CSV export's --print-units base). Specs are parsed from text with
 * spec_parse (check_files 0: no sources are read). */
#include "spec/plan.h"
#include "spec/spec.h"
#include "core/fsutil.h"
#include "core/proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "check.h"
#include "core/banned.h"

/* A spec with BUILD spliced in as its "build" object and one sweep. */
static struct spec *spec_with(const char *build, const char *sweep_tile)
{
	struct strbuf err = STRBUF_INIT;
	struct spec *s = NULL;
	char *text = xstrfmt(
		"{\"schema\": 1, \"name\": \"plan test\", \"phase\": \"p\","
		" \"sources\": [\"k.cu\"],"
		" \"build\": %s,"
		" \"targets\": {\"H100\": \"sm_90a\"},"
		" \"programs\": {\"k\": {\"sources\": [\"k.cu\"]}},"
		" \"problems\": [{\"name\": \"small\", \"params\": {\"n\": 1024}}],"
		" \"steps\": ["
		"  {\"kind\": \"benchmark\", \"program\": \"k\"},"
		"  {\"kind\": \"profile\", \"program\": \"k\", \"metrics\": [\"gpu__time_duration.sum\","
		"   \"dram__bytes_read.sum\"], \"kernel\": \"attn\", \"launch_count\": 3},"
		"  {\"kind\": \"sanitize\", \"program\": \"k\", \"tools\": [\"memcheck\", \"racecheck\"]},"
		"  {\"kind\": \"sweep\", \"program\": \"k\", \"defines\": {\"TILE\": [%s]}}"
		" ]}", build, sweep_tile);
	if (spec_parse("plan.json", text, strlen(text), ".", 0, &s, &err) != GO_OK)
		printf("# spec did not parse: %s\n", err.buf);
	free(text);
	strbuf_release(&err);
	return s;
}

static char *const archs[] = { "sm_90a", NULL };

static void host_init(struct plan_host *h)
{
	memset(h, 0, sizeof(*h));
	h->workdir = "/w";
	h->content_id = "c0ffee";
	h->run_id = "run1";
	h->archs = archs;
	h->narchs = 1;
	h->run_arch = "sm_90a";
	h->nvcc = "/usr/local/cuda/bin/nvcc";
	h->nvcc_version = "13.0.88";
	h->ncu = "/opt/ncu/ncu";
	h->sanitizer = "/usr/local/cuda/bin/compute-sanitizer";
}

/* The key of the plain (non-sweep) build of program k for this spec/host. */
static void key_of(const char *build, const struct plan_host *h, char out[SHA256_HEX_LEN + 1])
{
	struct spec *s = spec_with(build, "64, 128");
	struct plan p;
	int i;
	out[0] = '\0';
	if (!s)
		return;
	plan_make(&p, s, h);
	for (i = 0; i < p.nbuilds; i++)
		if (!p.builds[i].variant)
			memcpy(out, p.builds[i].key, SHA256_HEX_LEN + 1);
	plan_release(&p);
	spec_free(s);
}

static const struct plan_step *find_step(const struct plan *p, const char *id)
{
	int i;
	for (i = 0; i < p->nsteps; i++)
		if (!strcmp(p->steps[i].id, id))
			return &p->steps[i];
	return NULL;
}

static void test_build_keys(void)
{
	static const char base[] = "{\"flags\": [\"-O3\"], \"defines\": {\"TILE\": 64, \"MODE\": 1}}";
	char k0[SHA256_HEX_LEN + 1], k1[SHA256_HEX_LEN + 1];
	struct plan_host h;

	host_init(&h);
	key_of(base, &h, k0);
	key_of(base, &h, k1);
	CHECK(k0[0] && !strcmp(k0, k1), "the same inputs give the same build key", "%s / %s", k0, k1);

#define DIFFERS(build, what) do { \
	key_of(build, &h, k1); \
	CHECK(k1[0] && strcmp(k0, k1), what, "key unchanged: %s", k1); \
} while (0)
	DIFFERS("{\"flags\": [\"-O3\"], \"defines\": {\"TILE\": 32, \"MODE\": 1}}",
		"a changed build.defines value changes the key (no stale binary)");
	DIFFERS("{\"flags\": [\"-O3\"], \"defines\": {\"TILE\": 64, \"MODE\": 1, \"X\": 0}}",
		"an added define changes the key");
	DIFFERS("{\"flags\": [\"-O3\"], \"defines\": {\"TILE\": 64, \"MODEX\": 1}}",
		"a renamed define changes the key");
	DIFFERS("{\"flags\": [\"-O2\"], \"defines\": {\"TILE\": 64, \"MODE\": 1}}",
		"a changed build flag changes the key");
	DIFFERS("{\"flags\": [\"-O3\", \"-lineinfo\"], \"defines\": {\"TILE\": 64, \"MODE\": 1}}",
		"an added build flag changes the key");
	h.nvcc_version = "13.1.0";
	DIFFERS(base, "another nvcc version changes the key");
	host_init(&h);
	h.content_id = "beef";
	DIFFERS(base, "other sources (content id) change the key");
#undef DIFFERS
}

static void test_build_commands(void)
{
	struct spec *s = spec_with("{\"flags\": [\"-O3\"], \"defines\": {\"TILE\": 64, \"MODE\": 1}}",
				   "64, 128");
	struct plan_host h;
	struct plan p;
	const struct plan_build *plain = NULL, *v128 = NULL, *v64 = NULL;
	int i;

	host_init(&h);
	if (!s) {
		CHECK(0, "spec parses", "-");
		return;
	}
	plan_make(&p, s, &h);
	for (i = 0; i < p.nbuilds; i++) {
		const struct plan_build *b = &p.builds[i];
		if (!b->variant)
			plain = b;
		else if (!strcmp(b->variant->label, "TILE=128"))
			v128 = b;
		else if (!strcmp(b->variant->label, "TILE=64"))
			v64 = b;
	}
	CHECK(p.nbuilds == 3 && plain && v64 && v128, "one plain build and one per sweep variant",
	      "nbuilds=%d", p.nbuilds);
	if (!(plain && v64 && v128)) {
		plan_release(&p);
		spec_free(s);
		return;
	}
	CHECK(strstr(plain->command, "'/usr/local/cuda/bin/nvcc' '-gencode=arch=compute_90a,code=sm_90a' '-O3' -Xptxas=-v") &&
	      strstr(plain->command, " '-DTILE=64' '-DMODE=1' -c 'k.cu' && ") &&
	      strstr(plain->command, " o='/w/objects' && mkdir -p \"$o\" && gpuorch_obj() { ") &&
	      strstr(plain->command, " && gpuorch_obj ") &&
	      strstr(plain->command, "'/usr/local/cuda/bin/nvcc' '-gencode=arch=compute_90a,code=sm_90a' '-O3' -o '/w/builds/") &&
	      strstr(plain->command, "-rpath=/usr/local/cuda/lib64"),
	      "nvcc command: each source compiled to its object (gencode, flags, -Xptxas=-v, defines), then "
	      "linked (output, objects, rpath)",
	      "%s", plain->command);
	{
		/* the object of k.cu: named by a key that the defines change */
		const char *a = strstr(plain->command, "&& gpuorch_obj "), *b = strstr(v128->command, "&& gpuorch_obj ");
		char ka[33] = "", kb[33] = "";
		if (a)
			snprintf(ka, sizeof(ka), "%.32s", a + 15);
		if (b)
			snprintf(kb, sizeof(kb), "%.32s", b + 15);
		CHECK(a && b && strlen(ka) == 32 && strspn(ka, "0123456789abcdef") == 32 &&
		      strcmp(ka, kb) && strstr(plain->command, "\"$o\"/") &&
		      strstr(strstr(plain->command, "\"$o\"/"), ka),
		      "an object per source, keyed by its compile (a sweep's define makes another) and linked by that key",
		      "%s | %s", ka, kb);
	}
	CHECK(strstr(v128->command, "'-DTILE=128'") && !strstr(v128->command, "-DTILE=64") &&
	      strstr(v128->command, "'-DMODE=1'"),
	      "a sweep's value replaces the global define of the same name", "%s", v128->command);
	CHECK(strcmp(v128->key, v64->key) && strcmp(v128->key, plain->key) &&
	      strcmp(v128->dir, v64->dir),
	      "each variant has its own key and build directory", "%s %s", v128->key, v64->key);
	CHECK(!strncmp(plain->dir, "/w/builds/", 10) && strlen(plain->dir) == 10 + 16 &&
	      !strncmp(plain->dir + 10, plain->key, 16) && !strcmp(plain->bin + strlen(plain->dir), "/k"),
	      "build dir is W/builds/<first 16 hex of the key>, binary named after the program",
	      "%s %s", plain->dir, plain->bin);
	plan_release(&p);
	spec_free(s);
}

static void test_tool_commands(void)
{
	struct spec *s = spec_with("{\"flags\": [\"-O3\"]}", "64");
	struct plan_host h;
	struct plan p;
	const struct plan_step *prof, *mc, *rc, *bench;

	host_init(&h);
	if (!s) {
		CHECK(0, "spec parses", "-");
		return;
	}
	plan_make(&p, s, &h);
	prof = find_step(&p, "profile.k.small");
	mc = find_step(&p, "sanitize.k.small.memcheck");
	rc = find_step(&p, "sanitize.k.small.racecheck");
	bench = find_step(&p, "benchmark.k.small");
	CHECK(prof && mc && rc && bench, "profile, 2 sanitize and benchmark steps planned", "nsteps=%d",
	      p.nsteps);
	if (!(prof && mc && rc && bench)) {
		plan_release(&p);
		spec_free(s);
		return;
	}
	CHECK(!prof->skip_reason && !mc->skip_reason && prof->needs_gpu && mc->needs_gpu,
	      "tool steps run (GPU, tools found) and need the GPU lock", "%s",
	      prof->skip_reason ? prof->skip_reason : "-");
	CHECK(strstr(prof->command, "'/opt/ncu/ncu' '--metrics' 'gpu__time_duration.sum,dram__bytes_read.sum'") &&
	      strstr(prof->command, "'--kernel-name' 'regex:attn'") &&
	      strstr(prof->command, " --launch-skip 0 --launch-count 3 ") &&
	      strstr(prof->command, "'--clock-control' 'base'") &&
	      strstr(prof->command, "'--log-file' '/w/runs/run1/profile.k.small/ncu.log'") &&
	      strstr(prof->command, " -f -o '/w/runs/run1/profile.k.small/profile' "),
	      "ncu profile command: metrics, kernel regex, launches, clocks, log, report", "%s",
	      prof->command);
	/* The export must be in base units: without --print-units base ncu
	 * writes us / Mbyte / Ghz (tests/fixtures/gpu-tools/ncu-3launch-nobase.csv)
	 * and every gate on a time or size would read a scaled number. */
	CHECK(strstr(prof->command, "; rc=$?; '/opt/ncu/ncu' --import '/w/runs/run1/profile.k.small/profile.ncu-rep'"
				    " --csv --page raw --print-units base >'/w/runs/run1/profile.k.small/profile.csv'"
				    " 2>>'/w/runs/run1/profile.k.small/ncu.log'; exit $rc") != NULL,
	      "ncu export: --import REP --csv --page raw --print-units base > CSV; the program's status kept",
	      "%s", prof->command);
	CHECK(prof->profile_csv && !strcmp(prof->profile_csv, "/w/runs/run1/profile.k.small/profile.csv") &&
	      prof->tool_log && !strcmp(prof->tool_log, "/w/runs/run1/profile.k.small/ncu.log"),
	      "the profile step knows where its CSV and log are", "%s",
	      prof->profile_csv ? prof->profile_csv : "-");
	CHECK(strstr(mc->command, "'/usr/local/cuda/bin/compute-sanitizer' '--tool' 'memcheck' --print-limit ") &&
	      strstr(mc->command, " --error-exitcode 99 '--log-file' '/w/runs/run1/sanitize.k.small.memcheck/sanitizer.log' ") &&
	      strstr(mc->command, " --mode=check '--n=1024'") &&
	      strstr(rc->command, "'--tool' 'racecheck'"),
	      "compute-sanitizer command: tool, --error-exitcode 99, log file, the program in check mode",
	      "%s", mc->command);
	CHECK(strstr(bench->command, "/k' --mode=bench '--n=1024'") != NULL,
	      "benchmark command: the binary, --mode=bench, quoted params", "%s", bench->command);
	plan_release(&p);
	spec_free(s);

	/* no GPU: tool steps are skipped with the reason, naming the tool's path */
	s = spec_with("{\"flags\": [\"-O3\"]}", "64");
	host_init(&h);
	h.run_arch = NULL;
	h.no_gpu_reason = "nvidia-smi: not found";
	plan_make(&p, s, &h);
	prof = find_step(&p, "profile.k.small");
	CHECK(prof && prof->skip_reason &&
	      strstr(prof->skip_reason, "no CUDA device on this host (nvidia-smi: not found); ncu found at /opt/ncu/ncu"),
	      "no GPU: a profile step is SKIPPED, saying why", "%s",
	      prof && prof->skip_reason ? prof->skip_reason : "-");
	plan_release(&p);
	spec_free(s);
}

static void test_small(void)
{
	char *g = plan_gencode("sm_90a"), *a = plan_slug("sweep.k[TILE=64].small", 120),
	     *b = plan_slug("../..", 10);
	CHECK(!strcmp(g, "-gencode=arch=compute_90a,code=sm_90a"), "gencode of sm_90a", "%s", g);
	CHECK(!strcmp(a, "sweep.k-TILE-64-.small"), "a slug keeps only file-name-safe characters",
	      "%s", a);
	CHECK(!strcmp(b, "..-.."), "a slug is never a path: ../.. -> ..-..", "%s", b);
	free(g);
	free(a);
	free(b);
}

/* nvcc on PATH as a wrapper script (/usr/local/bin/nvcc): the executable's
 * rpath is nvcc's own CUDA tree (its TOP), never /usr/local/lib64. Built for
 * real with the nvcc here, when there is one, and read back with readelf. */
static void test_wrapper_rpath(void)
{
	struct spec *s = spec_with("{}", "64");
	struct plan_host h;
	struct plan p;
	const struct plan_build *b = NULL;
	char tmp[] = "/tmp/test_plan.XXXXXX";
	struct strbuf err = STRBUF_INIT, out = STRBUF_INIT;
	const char *real = "/usr/local/cuda/bin/nvcc";
	char *wrapper, *text;
	int i, code = -1;

	if (!s || !mkdtemp(tmp)) {
		CHECK(0, "spec parses, scratch folder", "-");
		spec_free(s);
		return;
	}
	host_init(&h);
	h.workdir = tmp;
	wrapper = xstrfmt("%s/usr-local-bin/nvcc", tmp);
	h.nvcc = wrapper;
	plan_make(&p, s, &h);
	for (i = 0; i < p.nbuilds; i++)
		if (!p.builds[i].variant)
			b = &p.builds[i];
	CHECK(b && !strstr(b->command, "/usr-local-bin/lib64") &&
	      strstr(b->command, "cuda_top=$(") && strstr(b->command, "-Xlinker=-rpath=\"$cuda_top\"/lib64"),
	      "a wrapper nvcc: the rpath comes from nvcc's TOP, not from the wrapper's folder",
	      "%s", b ? b->command : "(no build)");
	if (!b || !fs_is_file(real)) {
		printf("# skip: no %s to build with\n", real);
		goto out;
	}
	text = xstrfmt("#!/bin/sh\nexec %s \"$@\"\n", real);
	fs_mkdir_p(p.src_dir, 0755, &err);
	fs_mkdir_p(b->dir, 0755, &err);
	{
		char *d = fs_dirname(wrapper), *src = xstrfmt("%s/k.cu", p.src_dir);
		const char *k = "__global__ void k(int *x) { *x = 1; }\nint main(void) { return 0; }\n";
		fs_mkdir_p(d, 0755, &err);
		fs_write_atomic(wrapper, text, strlen(text), &err);
		chmod(wrapper, 0755);
		fs_write_atomic(src, k, strlen(k), &err);
		free(d);
		free(src);
	}
	free(text);
	{
		/* the build line as the host runs it, with a plain arch this nvcc knows */
		char *cmd = xstrdup(b->command), *g = strstr(cmd, "compute_90a,code=sm_90a");
		const char *sh[] = { "sh", "-c", cmd, NULL };
		if (g)
			memcpy(g, "compute_90,code=sm_90  ", 23);
		proc_run(NULL, sh, &out, NULL, &code, &err);
		free(cmd);
	}
	CHECK(code == 0 && fs_is_file(b->bin), "the wrapper builds the program", "exit %d: %s", code,
	      err.buf);
	{
		const char *re[] = { "readelf", "-d", b->bin, NULL };
		strbuf_reset(&out);
		proc_run(NULL, re, &out, NULL, &code, &err);
		CHECK(strstr(out.buf, "/usr/local/cuda/bin/../lib64") && !strstr(out.buf, "usr-local-bin/../lib64") &&
		      !strstr(out.buf, "usr-local-bin/lib64"),
		      "its RUNPATH is nvcc's CUDA tree", "%s", out.buf);
	}
out:
	plan_release(&p);
	spec_free(s);
	fs_remove_tree(tmp);
	free(wrapper);
	strbuf_release(&err);
	strbuf_release(&out);
}

/* The compile words of source src in build b's command: from its
 * "gpuorch_obj KEY 'src' " to the next " && " (NULL when absent). */
static char *compile_of(const struct plan_build *b, const char *src)
{
	char *pat = xstrfmt(" '%s' ", src);
	const char *p = strstr(b->command, "&& gpuorch_obj "), *q, *e;
	char *out = NULL;
	for (; p && !out; p = strstr(p + 1, "&& gpuorch_obj ")) {
		q = p + 15 + 32;
		if (strncmp(q, pat, strlen(pat)))
			continue;
		e = strstr(q, " && ");
		out = e ? xstrfmt("%.*s", (int)(e - p), p) : xstrdup(p);
	}
	free(pat);
	return out;
}

/* A sweep that names its "sources": its defines reach those sources'
 * compiles, and any other's whose files name a define; the others keep one
 * object for every variant. */
static void test_sweep_sources(void)
{
	static const char spec_text[] =
		"{\"schema\": 1, \"name\": \"sweep sources\", \"phase\": \"p\","
		" \"sources\": [\"k.cu\", \"h.cu\", \"u.cu\", \"knob.h\", \"plain.h\"],"
		" \"build\": {\"defines\": {\"TILE\": 16}},"
		" \"targets\": {\"H100\": \"sm_90a\"},"
		" \"programs\": {\"k\": {\"sources\": [\"k.cu\", \"h.cu\", \"u.cu\"]}},"
		" \"problems\": [{\"name\": \"small\"}],"
		" \"steps\": [{\"kind\": \"sweep\", \"program\": \"k\", \"sources\": [\"k.cu\"],"
		"  \"defines\": {\"TILE\": [64, 128]}}]}";
	/* h.cu reads plain.h only; u.cu reads knob.h, which names TILE */
	static char *const inc_h[] = { "q:plain.h", NULL }, *const inc_u[] = { "q:knob.h", NULL };
	struct plan_source src[] = {
		{ "h.cu", "11", inc_h, 0, "#include \"plain.h\"\nint TILES = 3; /* TILE_X, xTILE */\n", 0 },
		{ "k.cu", "22", NULL, 0, "int k = TILE;\n", 0 },
		{ "knob.h", "33", NULL, 0, "#define WIDTH (2 * TILE)\n", 0 },
		{ "plain.h", "44", NULL, 0, "#define PLAIN 1\n", 0 },
		{ "u.cu", "55", inc_u, 0, "#include \"knob.h\"\n", 0 },
	};
	struct strbuf err = STRBUF_INIT;
	struct spec *s = NULL;
	struct plan_host h;
	struct plan p;
	const struct plan_build *v64 = NULL, *v128 = NULL;
	char *k64, *k128, *h64, *h128, *u64, *u128;
	int i;

	for (i = 0; i < 5; i++)
		src[i].size = strlen(src[i].text);
	host_init(&h);
	h.sources = src;
	h.nsources = 5;
	if (spec_parse("plan.json", spec_text, strlen(spec_text), ".", 0, &s, &err) != GO_OK) {
		CHECK(0, "a sweep with sources parses", "%s", err.buf);
		strbuf_release(&err);
		return;
	}
	plan_make(&p, s, &h);
	for (i = 0; i < p.nbuilds; i++) {
		if (p.builds[i].variant && !strcmp(p.builds[i].variant->label, "TILE=64"))
			v64 = &p.builds[i];
		if (p.builds[i].variant && !strcmp(p.builds[i].variant->label, "TILE=128"))
			v128 = &p.builds[i];
	}
	k64 = v64 ? compile_of(v64, "k.cu") : NULL;
	k128 = v128 ? compile_of(v128, "k.cu") : NULL;
	h64 = v64 ? compile_of(v64, "h.cu") : NULL;
	h128 = v128 ? compile_of(v128, "h.cu") : NULL;
	u64 = v64 ? compile_of(v64, "u.cu") : NULL;
	u128 = v128 ? compile_of(v128, "u.cu") : NULL;
	CHECK(k64 && k128 && strstr(k64, "'-DTILE=64'") && !strstr(k64, "-DTILE=16") &&
	      strstr(k128, "'-DTILE=128'") && strncmp(k64, k128, 47),
	      "a source the sweep names: its variant's define, an object per variant", "%s | %s",
	      k64 ? k64 : "-", k128 ? k128 : "-");
	CHECK(h64 && h128 && strstr(h64, "'-DTILE=16'") && !strstr(h64, "-DTILE=64") &&
	      !strcmp(h64, h128),
	      "a source it does not name, whose files do not name TILE (TILES, TILE_X, xTILE are other "
	      "names): the spec's value, one object for both variants", "%s | %s",
	      h64 ? h64 : "-", h128 ? h128 : "-");
	CHECK(u64 && u128 && strstr(u64, "'-DTILE=64'") && strstr(u128, "'-DTILE=128'"),
	      "a source it does not name that reads a header naming TILE: the define reaches it anyway",
	      "%s | %s", u64 ? u64 : "-", u128 ? u128 : "-");
	free(k64);
	free(k128);
	free(h64);
	free(h128);
	free(u64);
	free(u128);
	plan_release(&p);
	/* without the files' text (a large file, not kept) the define reaches it */
	src[3].text = NULL;
	plan_make(&p, s, &h);
	for (i = 0, v64 = NULL; i < p.nbuilds; i++)
		if (p.builds[i].variant && !strcmp(p.builds[i].variant->label, "TILE=64"))
			v64 = &p.builds[i];
	h64 = v64 ? compile_of(v64, "h.cu") : NULL;
	CHECK(h64 && strstr(h64, "'-DTILE=64'"), "a file whose text is not known: the define reaches its readers",
	      "%s", h64 ? h64 : "-");
	free(h64);
	plan_release(&p);
	spec_free(s);
	strbuf_release(&err);
}

/* The build of program name (not a sweep's), or NULL. */
static const struct plan_build *build_of(const struct plan *p, const char *name)
{
	int i;
	for (i = 0; i < p->nbuilds; i++)
		if (!p->builds[i].variant && !strcmp(p->builds[i].prog->name, name))
			return &p->builds[i];
	return NULL;
}

/* Issue 32: two programs built alike (the same build command, or the same
 * sources through nvcc) are one build -- one key, one directory, made once
 * (same_as) -- whatever their names and outputs; another command is
 * another build in another directory. */
static void test_shared_builds(void)
{
	static const char spec_text[] =
		"{\"schema\": 1, \"name\": \"shared\", \"phase\": \"p\", \"sources\": [\".\"],"
		" \"targets\": {\"H100\": \"sm_90a\"},"
		" \"programs\": {"
		"  \"a\": {\"build\": {\"command\": [\"sh\", \"build.sh\"], \"outputs\": [\"bin/a\"]},"
		"         \"run\": [\"bin/a\"], \"figures\": {\"x\": {\"regex\": \"x=([0-9]+)\"}}},"
		"  \"b\": {\"build\": {\"command\": [\"sh\", \"build.sh\"], \"outputs\": [\"bin/b\", \"bin/a\"]},"
		"         \"run\": [\"bin/b\"], \"figures\": {\"x\": {\"regex\": \"x=([0-9]+)\"}}},"
		"  \"c\": {\"build\": {\"command\": [\"sh\", \"build.sh\", \"other\"], \"outputs\": [\"bin/c\"]},"
		"         \"run\": [\"bin/c\"], \"figures\": {\"x\": {\"regex\": \"x=([0-9]+)\"}}},"
		"  \"n1\": {\"sources\": [\"src/k.cu\"]}, \"n2\": {\"sources\": [\"src/k.cu\"]}},"
		" \"problems\": [{\"name\": \"small\"}],"
		" \"steps\": [{\"kind\": \"benchmark\", \"program\": \"a\"}, {\"kind\": \"benchmark\", \"program\": \"b\"},"
		"  {\"kind\": \"benchmark\", \"program\": \"c\"}, {\"kind\": \"benchmark\", \"program\": \"n1\"},"
		"  {\"kind\": \"benchmark\", \"program\": \"n2\"}]}";
	struct strbuf err = STRBUF_INIT;
	struct spec *s = NULL;
	struct plan_host h;
	struct plan p;
	const struct plan_build *a, *b, *c, *n1, *n2;
	const struct plan_step *sb;
	const char *loop;

	host_init(&h);
	if (spec_parse("plan.json", spec_text, strlen(spec_text), ".", 0, &s, &err) != GO_OK) {
		CHECK(0, "a spec with shared builds parses", "%s", err.buf);
		strbuf_release(&err);
		return;
	}
	plan_make(&p, s, &h);
	a = build_of(&p, "a");
	b = build_of(&p, "b");
	c = build_of(&p, "c");
	n1 = build_of(&p, "n1");
	n2 = build_of(&p, "n2");
	if (!a || !b || !c || !n1 || !n2) {
		CHECK(0, "a build for each program", "nbuilds=%d", p.nbuilds);
		plan_release(&p);
		spec_free(s);
		return;
	}
	CHECK(!strcmp(a->key, b->key) && !strcmp(a->dir, b->dir) && !a->same_as && b->same_as == a &&
	      !strcmp(a->command, b->command),
	      "two programs with one build command: one key, one directory, the second made as the first",
	      "%s %s same_as %p", a->key, b->key, (const void *)b->same_as);
	loop = strstr(a->command, " && for o in ");
	CHECK(loop && !strncmp(loop, " && for o in 'bin/a' 'bin/b'; do ", 33),
	      "the build checks every output of the programs it serves, each once", "%s",
	      loop ? loop : a->command);
	CHECK(!strcmp(a->bin + strlen(a->dir), "/tree/bin/a") && !strcmp(b->bin + strlen(b->dir), "/tree/bin/b"),
	      "each program runs its own output from the one tree", "%s %s", a->bin, b->bin);
	CHECK(strcmp(c->key, a->key) && strcmp(c->dir, a->dir) && !c->same_as &&
	      strstr(c->command, " && for o in 'bin/c'; do "),
	      "another build command: another build in another directory", "%s %s", c->dir, a->dir);
	CHECK(!strcmp(n1->key, n2->key) && n2->same_as == n1 && !strcmp(n1->bin, n2->bin) &&
	      !strcmp(n1->bin + strlen(n1->dir), "/k"),
	      "two nvcc programs of the same sources: one build, its executable named after the source",
	      "%s %s", n1->bin, n2->bin);
	sb = find_step(&p, "benchmark.b.small");
	CHECK(sb && sb->build == b && !strncmp(sb->command, "cd '", 4) &&
	      !strncmp(sb->command + 4, a->tree, strlen(a->tree)),
	      "the second program's step runs in the shared tree", "%s", sb ? sb->command : "-");
	plan_release(&p);
	spec_free(s);
	strbuf_release(&err);
}

int main(void)
{
	test_build_keys();
	test_build_commands();
	test_tool_commands();
	test_small();
	test_wrapper_rpath();
	test_sweep_sources();
	test_shared_builds();
	return check_summary();
}
