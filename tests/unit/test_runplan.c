/* test_runplan.c -- unit tests of runplan.c: the plan file a real sh reads
 * back gives every value unchanged (quotes, $, backquotes, newlines), bad
 * plans are refused with nothing written, and the embedded runner is
 * orchestrator/remote/runner.sh byte for byte. Run from the repository root. */
#include "remote/runplan.h"
#include "remote/runner-script.h"
#include "remote/start-script.h"
#include "remote/probe-script.h"
#include "remote/clean-script.h"
#include "cloud/guard-script.h"
#include "core/fsutil.h"
#include "core/proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "core/banned.h"

/* Defines the plan's calls as functions that print their name and each
 * argument followed by a NUL byte, then sources the plan. */
static const char reader[] =
	"for f in plan_version src_dir max_builds fail_fast text_cap probe_later build step; do\n"
	"  eval \"$f() { printf '%s\\\\0' $f \\\"\\$@\\\"; }\"\n"
	"done\n"
	". \"$1\"\n";

static const char nasty[] = "it's \"$HOME\" `id` $(id) \\ \n\ttab; rm -rf / #";

/* Runs sh READER PLAN; out gets the NUL-separated words. */
static int read_back(const char *shell, const struct strbuf *plan, struct strbuf *out)
{
	char path[] = "/tmp/gpuorch-test-runplan.XXXXXX";
	struct strbuf err = STRBUF_INIT;
	const char *argv[] = { shell, "-c", reader, "sh", path, NULL };
	int fd = mkstemp(path), code = -1;
	if (fd < 0)
		return -1;
	if (write(fd, plan->buf, plan->len) != (ssize_t)plan->len)
		code = -2;
	close(fd);
	if (code != -2 && proc_run(NULL, argv, out, NULL, &code, &err) != GO_OK) {
		printf("# %s: %s\n", shell, err.buf);
		code = -3;
	}
	unlink(path);
	strbuf_release(&err);
	return code;
}

/* The n-th NUL-terminated word of out, or NULL. */
static const char *nth(const struct strbuf *out, int n)
{
	size_t at = 0;
	while (n-- > 0) {
		size_t l = strlen(out->buf + at);
		at += l + 1;
		if (at >= out->len)
			return NULL;
	}
	return at < out->len ? out->buf + at : NULL;
}

static int word_is(const struct strbuf *out, int n, const char *want)
{
	const char *w = nth(out, n);
	return w && !strcmp(w, want);
}

static void test_round_trip(const char *shell)
{
	struct runplan_build b[] = {
		{ "k1", "/w/builds/k 1", "/w/builds/k 1/prog", nasty, 600, 0 },
	};
	struct runplan_step s[] = {
		{ "bench.x", "/w/runs/r/bench.x", "echo 'hi'", "/tmp/gpuorch-gpu0.lock", "k1", 30, 120 },
		{ "script", "/w/runs/r/script", nasty, NULL, NULL, 5, 9 },
	};
	struct runplan p = { "/w/content/c/src", 3, 1, 1000, b, 1, s, 2, NULL };
	struct strbuf plan = STRBUF_INIT, out = STRBUF_INIT, err = STRBUF_INIT;
	char what[128];
	int code;

	CHECK(runplan_write(&p, &plan, &err) == GO_OK, "a good plan is written", "%s", err.buf);
	code = read_back(shell, &plan, &out);
	snprintf(what, sizeof(what), "%s sources the plan", shell);
	CHECK(code == 0, what, "exit %d", code);
	snprintf(what, sizeof(what), "%s reads every value back unchanged", shell);
	CHECK(word_is(&out, 0, "plan_version") && word_is(&out, 1, "1") &&
	      word_is(&out, 2, "src_dir") && word_is(&out, 3, "/w/content/c/src") &&
	      word_is(&out, 4, "max_builds") && word_is(&out, 5, "3") &&
	      word_is(&out, 6, "fail_fast") && word_is(&out, 7, "1") &&
	      word_is(&out, 8, "text_cap") && word_is(&out, 9, "1000") &&
	      word_is(&out, 10, "build") && word_is(&out, 11, "k1") &&
	      word_is(&out, 12, "/w/builds/k 1") && word_is(&out, 13, "/w/builds/k 1/prog") &&
	      word_is(&out, 14, "600") && word_is(&out, 15, nasty) &&
	      word_is(&out, 16, "step") && word_is(&out, 17, "bench.x") &&
	      word_is(&out, 18, "/w/runs/r/bench.x") && word_is(&out, 19, "30") &&
	      word_is(&out, 20, "/tmp/gpuorch-gpu0.lock") && word_is(&out, 21, "120") &&
	      word_is(&out, 22, "k1") && word_is(&out, 23, "echo 'hi'") &&
	      word_is(&out, 24, "step") && word_is(&out, 25, "script") &&
	      word_is(&out, 27, "5") && word_is(&out, 28, "") && word_is(&out, 29, "0") &&
	      word_is(&out, 30, "") && word_is(&out, 31, nasty) && !nth(&out, 32),
	      what, "plan:\n%s", plan.buf);
	strbuf_release(&plan);
	strbuf_release(&out);
	strbuf_release(&err);
}

static void expect_refused(const struct runplan *p, const char *what, const char *needle)
{
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	enum go_status st;
	strbuf_addstr(&out, "before");
	st = runplan_write(p, &out, &err);
	CHECK(st != GO_OK && !strcmp(out.buf, "before") && strstr(err.buf, needle), what,
	      "status %d, out '%s', err '%s'", st, out.buf, err.buf);
	strbuf_release(&out);
	strbuf_release(&err);
}

static void test_refused(void)
{
	struct runplan_build b[] = {
		{ "k1", "/w/b/k1", "/w/b/k1/p", "nvcc", 60, 0 },
		{ "k1", "/w/b/k2", "/w/b/k2/p", "nvcc", 60, 0 },
	};
	struct runplan_step s[] = {
		{ "a", "/w/r/a", "true", NULL, "nope", 5, 0 },
		{ "a\nb", "/w/r/b", "true", NULL, NULL, 5, 0 },
		{ "c", "w/r/c", "true", NULL, NULL, 5, 0 },
		{ "d", "/w/r/d", "true", NULL, NULL, 0, 0 },
		{ "a", "/w/r/a", "true", NULL, NULL, 5, 0 },
		{ "a", "/w/r/a", "true", NULL, NULL, 5, 0 },
	};
	struct runplan p = { "/w/src", 1, 0, 0, b, 1, NULL, 0, NULL };

	p.max_builds = 0;
	expect_refused(&p, "max_builds 0 is refused", "max_builds");
	p.max_builds = 1;
	p.src_dir = "src";
	expect_refused(&p, "a relative src_dir is refused", "absolute");
	p.src_dir = "/w/src";
	p.nbuilds = 2;
	expect_refused(&p, "a build listed twice is refused", "'k1' is listed twice");
	p.nbuilds = 1;
	p.steps = &s[0];
	p.nsteps = 1;
	expect_refused(&p, "a step naming an unknown build is refused", "build 'nope'");
	p.steps = &s[1];
	expect_refused(&p, "a newline in a step id is refused", "control character");
	p.steps = &s[2];
	expect_refused(&p, "a relative step directory is refused", "not an absolute path");
	p.steps = &s[3];
	expect_refused(&p, "a zero step timeout is refused", "out of range");
	p.steps = &s[4];
	p.nsteps = 2;
	expect_refused(&p, "a step listed twice is refused", "listed twice");
}

/* A probe that answered first (probe.h, host_info.later): the plan names
 * where the rest will be, right after text_cap; an absolute path only. */
static void test_probe_later(void)
{
	struct runplan_build b[] = { { "k1", "/w/b/k1", "/w/b/k1/p", "nvcc", 60, 0 } };
	struct runplan p = { "/w/src", 1, 1, 0, b, 1, NULL, 0, "/h/my cache/gpuorch/probe-0.4242" };
	struct strbuf plan = STRBUF_INIT, out = STRBUF_INIT, err = STRBUF_INIT;
	int code;

	CHECK(runplan_write(&p, &plan, &err) == GO_OK, "a plan with probe_later is written", "%s",
	      err.buf);
	code = read_back("sh", &plan, &out);
	CHECK(code == 0 && word_is(&out, 8, "text_cap") && word_is(&out, 10, "probe_later") &&
	      word_is(&out, 11, "/h/my cache/gpuorch/probe-0.4242") && word_is(&out, 12, "build"),
	      "probe_later FILE follows text_cap and reads back unchanged", "exit %d, plan:\n%s",
	      code, plan.buf);
	p.probe_later = "cache/probe-0.1";
	expect_refused(&p, "a relative probe_later is refused", "probe_later 'cache/probe-0.1' is not an absolute path");
	strbuf_release(&plan);
	strbuf_release(&out);
	strbuf_release(&err);
}

/* What scripts/embed.sh --sh embeds of a shell script: its lines less
 * those that are blank or whose first non-blank character is '#'. */
static void strip_sh(const struct strbuf *in, struct strbuf *out)
{
	const char *p = in->buf, *end = in->buf + in->len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl + 1 : end, *q = p;
		while (q < e && (*q == ' ' || *q == '\t' || *q == '\r'))
			q++;
		if (q < e && *q != '\n' && *q != '#')
			strbuf_add(out, p, (size_t)(e - p));
		p = e;
	}
}

/* The shell scripts gpuorch sends inside command lines: each embedded as
 * its file less its comments, NUL-terminated. */
static void test_embedded_sh(void)
{
	static const struct {
		const char *path;
		const unsigned char *text;
		const size_t *len;
	} sh[] = {
		{ "orchestrator/remote/start.sh", gpuorch_start_sh, &gpuorch_start_sh_len },
		{ "orchestrator/remote/probe-sig.sh", gpuorch_probe_sig_sh, &gpuorch_probe_sig_sh_len },
		{ "orchestrator/remote/probe.sh", gpuorch_probe_sh, &gpuorch_probe_sh_len },
		{ "orchestrator/remote/clean.sh", gpuorch_clean_sh, &gpuorch_clean_sh_len },
		{ "orchestrator/cloud/guard.sh", gpuorch_guard_sh, &gpuorch_guard_sh_len },
	};
	size_t i;

	for (i = 0; i < sizeof(sh) / sizeof(sh[0]); i++) {
		struct strbuf file = STRBUF_INIT, want = STRBUF_INIT, err = STRBUF_INIT;
		char what[160];
		snprintf(what, sizeof(what), "the embedded %s is the file less its comment lines",
			 sh[i].path);
		if (fs_read_file(sh[i].path, &file, &err) != GO_OK) {
			CHECK(0, what, "%s", err.buf);
		} else {
			strip_sh(&file, &want);
			CHECK(want.len == *sh[i].len && !memcmp(want.buf, sh[i].text, want.len) &&
			      sh[i].text[*sh[i].len] == '\0',
			      what, "%zu vs %zu bytes", want.len, *sh[i].len);
		}
		strbuf_release(&file);
		strbuf_release(&want);
		strbuf_release(&err);
	}
	CHECK(strstr((const char *)gpuorch_start_sh, " -v a='" RUNNER_MARKER "' -v b='" PLAN_MARKER
		     "' -v c='" EXECD_MARKER "' -v e='" AGENT_MARKER "' -v f='" AGENT_FILE "' "),
	      "start.sh splits its stdin at the markers remote.c writes (start-script.h)",
	      "start.sh's awk names other markers");
}

static void test_embedded(void)
{
	struct strbuf file = STRBUF_INIT, err = STRBUF_INIT;
	CHECK(fs_read_file("orchestrator/remote/runner.sh", &file, &err) == GO_OK,
	      "the runner's source is readable", "%s", err.buf);
	CHECK(file.len == gpuorch_runner_sh_len && !memcmp(file.buf, gpuorch_runner_sh, file.len) &&
	      gpuorch_runner_sh[gpuorch_runner_sh_len] == '\0',
	      "the embedded runner is runner.sh byte for byte, NUL-terminated",
	      "%zu vs %zu bytes", file.len, gpuorch_runner_sh_len);
	CHECK(runplan_default_max_builds(16) == 16 && runplan_default_max_builds(0) == 1,
	      "builds are bounded by the host's cores, at least 1", "%d %d",
	      runplan_default_max_builds(16), runplan_default_max_builds(0));
	strbuf_release(&file);
	strbuf_release(&err);
}

/* A sweep variant's build carries MAYFAIL 1; a plain build has no 6th word. */
static void test_may_fail(void)
{
	struct runplan_build b[] = {
		{ "k1", "/w/b/k1", "/w/b/k1/p", "nvcc", 60, 0 },
		{ "k2", "/w/b/k2", "/w/b/k2/p", "nvcc", 60, 1 },
	};
	struct runplan p = { "/w/src", 2, 1, 0, b, 2, NULL, 0, NULL };
	struct strbuf plan = STRBUF_INIT, err = STRBUF_INIT;

	CHECK(runplan_write(&p, &plan, &err) == GO_OK, "a plan with a may-fail build is written",
	      "%s", err.buf);
	CHECK(strstr(plan.buf, "build 'k1' '/w/b/k1' '/w/b/k1/p' 60 'nvcc'\n") &&
	      strstr(plan.buf, "build 'k2' '/w/b/k2' '/w/b/k2/p' 60 'nvcc' 1\n"),
	      "only the may-fail build has MAYFAIL 1", "plan:\n%s", plan.buf);
	strbuf_release(&plan);
	strbuf_release(&err);
}

int main(void)
{
	test_may_fail();
	test_round_trip("sh");
	if (access("/bin/bash", X_OK) == 0)
		test_round_trip("/bin/bash");
	if (access("/bin/dash", X_OK) == 0)
		test_round_trip("/bin/dash");
	test_refused();
	test_probe_later();
	test_embedded();
	test_embedded_sh();
	return check_summary();
}
