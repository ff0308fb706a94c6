/* test_gitinfo.c -- unit tests of proc_run (core/proc.c) and git provenance (store/gitinfo.c) on scratch repos. */
#include "core/proc.h"
#include "store/gitinfo.h"
#include "core/fsutil.h"
#include "core/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "core/banned.h"


static char tmp[] = "/tmp/test_gitinfo.XXXXXX";

/* Setup helper: run a shell snippet in dir (tests may use a shell; proc_run
 * itself never does). Returns the exit status. */
static int sh(const char *dir, const char *script)
{
	struct strbuf out = STRBUF_INIT, eo = STRBUF_INIT, err = STRBUF_INIT;
	const char *argv[] = { "sh", "-c", script, NULL };
	int code = -1;
	if (proc_run(dir, argv, &out, &eo, &code, &err) != GO_OK)
		printf("# cannot run sh: %s\n", err.buf);
	else if (code != 0)
		printf("# '%s' exited %d: %s\n", script, code, eo.buf);
	strbuf_release(&out);
	strbuf_release(&eo);
	strbuf_release(&err);
	return code;
}

static void test_proc_run(void)
{
	struct strbuf out = STRBUF_INIT, eo = STRBUF_INIT, err = STRBUF_INIT;
	enum go_status st;
	int code = -1;

	{
		const char *argv[] = { "echo", "hello", "it's", NULL };
		st = proc_run(NULL, argv, &out, &eo, &code, &err);
		CHECK(st == GO_OK && code == 0 && !strcmp(out.buf, "hello it's\n"),
		      "proc_run captures stdout, arguments passed verbatim", "st=%d code=%d out='%s'",
		      st, code, out.buf);
	}
	strbuf_reset(&out);
	{
		const char *argv[] = { "sh", "-c", "echo out; echo oops >&2; exit 3", NULL };
		st = proc_run(NULL, argv, &out, &eo, &code, &err);
		CHECK(st == GO_OK && code == 3 && !strcmp(out.buf, "out\n") &&
		      !strcmp(eo.buf, "oops\n"),
		      "proc_run separates stdout and stderr and returns the exit code",
		      "st=%d code=%d out='%s' err='%s'", st, code, out.buf, eo.buf);
	}
	strbuf_reset(&out);
	strbuf_reset(&eo);
	{
		const char *argv[] = { "sh", "-c", "echo x; exit 5", NULL };
		st = proc_run(NULL, argv, &out, NULL, NULL, &err);
		CHECK(st != GO_OK && strstr(err.buf, "exit status 5"),
		      "without exit_code a non-zero exit is an error", "st=%d err='%s'", st, err.buf);
	}
	strbuf_reset(&out);
	{
		const char *argv[] = { "sh", "-c", "kill -9 $$", NULL };
		st = proc_run(NULL, argv, &out, NULL, &code, &err);
		CHECK(st == GO_OK && code == 128 + 9, "a child killed by a signal reads as 128+signal",
		      "st=%d code=%d", st, code);
	}
	{
		const char *argv[] = { "pwd", NULL };
		st = proc_run("/", argv, &out, NULL, &code, &err);
		CHECK(st == GO_OK && !strcmp(out.buf, "/\n"), "proc_run runs in the given directory",
		      "out='%s'", out.buf);
	}
	strbuf_reset(&out);
	{
		const char *argv[] = { "pwd", NULL };
		st = proc_run("/no/such/dir", argv, &out, NULL, &code, &err);
		CHECK(st == GO_ERR_IO && strstr(err.buf, "/no/such/dir"),
		      "a missing directory is an error naming it", "st=%d err='%s'", st, err.buf);
	}
	{
		const char *argv[] = { "gpuorch-no-such-program", NULL };
		st = proc_run(NULL, argv, &out, NULL, &code, &err);
		CHECK(st == GO_ERR_NOT_FOUND && strstr(err.buf, "gpuorch-no-such-program"),
		      "a missing program is GO_ERR_NOT_FOUND, not exit 127", "st=%d err='%s'", st,
		      err.buf);
	}
	{
		/* Both pipes far beyond a pipe buffer: must not deadlock. */
		const char *argv[] = { "sh", "-c",
				       "head -c 3000000 /dev/zero >&2; head -c 2000000 /dev/zero; "
				       "head -c 1000000 /dev/zero >&2", NULL };
		strbuf_reset(&out);
		strbuf_reset(&eo);
		st = proc_run(NULL, argv, &out, &eo, &code, &err);
		CHECK(st == GO_OK && code == 0 && out.len == 2000000 && eo.len == 4000000,
		      "large stdout and stderr are both drained", "st=%d out=%zu err=%zu", st,
		      out.len, eo.len);
	}
	{
		const char *argv[] = { "sh", "-c", "head -c 100000 /dev/zero", NULL };
		strbuf_release(&out);
		out.max = 1000;
		st = proc_run(NULL, argv, &out, NULL, &code, &err);
		CHECK(st == GO_OK && code == 0 && out.len == 1000 && out.truncated,
		      "output is capped at ->max and marked truncated", "st=%d len=%zu trunc=%d", st,
		      out.len, out.truncated);
		out.max = 0;
	}
	{
		const char *argv[] = { "printf", "a\\000b", NULL };
		strbuf_release(&out);
		st = proc_run(NULL, argv, &out, NULL, &code, &err);
		CHECK(st == GO_OK && out.len == 3 && out.buf[1] == '\0' && out.buf[2] == 'b',
		      "output is binary-safe", "len=%zu", out.len);
	}
	strbuf_release(&out);
	strbuf_release(&eo);
	strbuf_release(&err);
}

static void test_git(void)
{
	struct strbuf err = STRBUF_INIT, data = STRBUF_INIT;
	struct git_info gi;
	char *repo = xstrfmt("%s/repo", tmp), *plain = xstrfmt("%s/plain", tmp);
	char first[41], head[41], hex[SHA256_HEX_LEN + 1];
	enum go_status st;

	fs_mkdir_p(repo, 0755, &err);
	fs_mkdir_p(plain, 0755, &err);

	st = git_info_worktree(plain, NULL, &gi, &err);
	CHECK(st == GO_OK && !gi.is_repo && !gi.commit[0] && !gi.diff,
	      "a directory outside git is not a repo (and not an error)", "st=%d is_repo=%d err=%s",
	      st, gi.is_repo, err.buf);
	git_info_release(&gi);

	sh(repo, "git init -q -b main && git config user.email t@example.com && "
		 "git config user.name Test && printf 'one\\n' > a.txt && git add a.txt");
	st = git_info_worktree(repo, NULL, &gi, &err);
	CHECK(st == GO_OK && gi.is_repo && !gi.commit[0] && gi.dirty && gi.diff &&
	      strstr(gi.diff, "+one"),
	      "a repo with no commits: is_repo, no commit, dirty, diff against the empty tree",
	      "st=%d is_repo=%d commit='%s' dirty=%d err=%s", st, gi.is_repo, gi.commit, gi.dirty,
	      err.buf);
	git_info_release(&gi);

	sh(repo, "git commit -q -m first && printf 'x\\000y\\n' > bin.dat && chmod +x bin.dat && "
		 "git add bin.dat && git commit -q -m second");
	st = git_info_worktree(repo, NULL, &gi, &err);
	CHECK(st == GO_OK && gi.is_repo && strlen(gi.commit) == 40 && !gi.dirty && !gi.diff &&
	      !gi.diff_sha256[0],
	      "a clean repo: 40-hex commit, not dirty, no diff", "st=%d commit='%s' dirty=%d", st,
	      gi.commit, gi.dirty);
	CHECK(gi.branch && !strcmp(gi.branch, "main"), "branch is reported", "branch=%s",
	      gi.branch ? gi.branch : "(null)");
	memcpy(head, gi.commit, 41);
	git_info_release(&gi);

	sh(repo, "printf 'untracked\\n' > new.txt");
	st = git_info_worktree(repo, NULL, &gi, &err);
	CHECK(st == GO_OK && !gi.dirty, "untracked files do not make the tree dirty", "dirty=%d",
	      gi.dirty);
	git_info_release(&gi);

	sh(repo, "printf 'one\\ntwo\\n' > a.txt");
	st = git_info_worktree(repo, NULL, &gi, &err);
	if (st == GO_OK && gi.diff)
		sha256_hex(gi.diff, strlen(gi.diff), hex);
	CHECK(st == GO_OK && gi.dirty && gi.diff && strstr(gi.diff, "+two") &&
	      !strcmp(head, gi.commit) && !strcmp(hex, gi.diff_sha256),
	      "a modified file: dirty, diff holds the change, diff_sha256 is its hash",
	      "st=%d dirty=%d diff=%s", st, gi.dirty, gi.diff ? gi.diff : "(null)");
	git_info_release(&gi);

	sh(repo, "git checkout -q --detach HEAD");
	st = git_info_worktree(repo, NULL, &gi, &err);
	CHECK(st == GO_OK && !gi.branch, "a detached HEAD has no branch", "branch=%s",
	      gi.branch ? gi.branch : "(null)");
	git_info_release(&gi);

	st = git_resolve(repo, "HEAD", first, &err);
	CHECK(st == GO_OK && !strcmp(first, head), "git_resolve HEAD gives the full commit id",
	      "st=%d got=%s", st, first);
	st = git_resolve(repo, "HEAD~1", first, &err);
	CHECK(st == GO_OK && strlen(first) == 40 && strcmp(first, head),
	      "git_resolve resolves HEAD~1", "st=%d got=%s err=%s", st, first, err.buf);
	st = git_resolve(repo, "no-such-branch", first, &err);
	CHECK(st == GO_ERR_GIT && strstr(err.buf, "unknown revision 'no-such-branch' in '") &&
	      strstr(err.buf, repo),
	      "an unknown revision is an error naming it and the repo", "st=%d err=%s", st, err.buf);
	st = git_resolve(repo, "--all", first, &err);
	CHECK(st == GO_ERR_GIT, "an option is never taken as a revision", "st=%d", st);
	st = git_resolve(plain, "HEAD", first, &err);
	CHECK(st == GO_ERR_GIT, "git_resolve outside a repo fails", "st=%d", st);

	st = git_show_file(repo, "HEAD", "a.txt", &data, &err);
	CHECK(st == GO_OK && !strcmp(data.buf, "one\n"),
	      "git_show_file gives the committed bytes, not the work tree's", "st=%d data='%s'",
	      st, data.buf);
	strbuf_reset(&data);
	st = git_show_file(repo, "HEAD", "bin.dat", &data, &err);
	CHECK(st == GO_OK && data.len == 4 && !memcmp(data.buf, "x\0y\n", 4),
	      "git_show_file is binary-safe", "st=%d len=%zu", st, data.len);
	strbuf_reset(&data);
	st = git_show_file(repo, "HEAD~1", "bin.dat", &data, &err);
	CHECK(st == GO_ERR_NOT_FOUND && strstr(err.buf, "'bin.dat'") &&
	      strstr(err.buf, "HEAD~1"),
	      "a file absent at that commit is GO_ERR_NOT_FOUND naming file and commit",
	      "st=%d err=%s", st, err.buf);
	st = git_show_file(repo, "nope", "a.txt", &data, &err);
	CHECK(st == GO_ERR_GIT && strstr(err.buf, "unknown revision 'nope'"),
	      "git_show_file with an unknown revision says so", "st=%d err=%s", st, err.buf);

	strbuf_release(&data);
	strbuf_release(&err);
	free(repo);
	free(plain);
}

/* Issue 31 item 12: with the paths a run ships, the diff is theirs only, and
 * a changed file with a secret's name is named, never diffed. */
static void test_git_paths(void)
{
	struct strbuf err = STRBUF_INIT;
	struct git_info gi;
	char *repo = xstrfmt("%s/paths", tmp);
	char *ship[] = { "src/k.c", NULL };
	char *ship_env[] = { "src/k.c", "src/.env", "conf/id_ed25519", "conf/server.pem", NULL };
	char *sub_ship[] = { "k.c", ".env", NULL };
	char hex[SHA256_HEX_LEN + 1];
	enum go_status st;

	fs_mkdir_p(repo, 0755, &err);
	sh(repo, "git init -q -b main && git config user.email t@example.com && git config user.name T && "
		 "mkdir src conf && printf 'int k;\\n' > src/k.c && printf 'A=1\\n' > src/.env && "
		 "printf 'A=1\\n' > .env && printf 'key\\n' > conf/id_ed25519 && printf 'c\\n' > conf/server.pem && "
		 "printf 'notes\\n' > notes.txt && git add -A && git commit -q -m one");

	sh(repo, "printf 'SECRET_DIRTY=hunter2\\n' >> .env && printf 'more\\n' >> notes.txt");
	st = git_info_worktree(repo, ship, &gi, &err);
	CHECK(st == GO_OK && gi.is_repo && strlen(gi.commit) == 40 && !gi.dirty && !gi.diff &&
	      !gi.withheld,
	      "paths given: changes only outside them leave the run clean, with no diff",
	      "st=%d dirty=%d diff=%s err=%s", st, gi.dirty, gi.diff ? gi.diff : "(null)", err.buf);
	git_info_release(&gi);

	sh(repo, "printf 'int k2;\\n' >> src/k.c");
	st = git_info_worktree(repo, ship, &gi, &err);
	if (st == GO_OK && gi.diff)
		sha256_hex(gi.diff, strlen(gi.diff), hex);
	CHECK(st == GO_OK && gi.dirty && gi.diff && strstr(gi.diff, "+int k2;") &&
	      !strstr(gi.diff, "SECRET_DIRTY") && !strstr(gi.diff, "notes") &&
	      !strcmp(hex, gi.diff_sha256) && !gi.withheld,
	      "paths given: the diff is exactly the shipped file's change",
	      "st=%d diff=%s", st, gi.diff ? gi.diff : "(null)");
	git_info_release(&gi);

	sh(repo, "printf 'TOKEN=abc\\n' >> src/.env && printf 'k2\\n' >> conf/id_ed25519");
	st = git_info_worktree(repo, ship_env, &gi, &err);
	CHECK(st == GO_OK && gi.dirty && gi.diff && strstr(gi.diff, "+int k2;") &&
	      !strstr(gi.diff, "TOKEN") && !strstr(gi.diff, ".env") && !strstr(gi.diff, "id_ed25519") &&
	      gi.withheld && !strcmp(gi.withheld, "conf/id_ed25519\nsrc/.env\n"),
	      "a shipped file with a secret's name is withheld from the diff and named; an "
	      "unchanged one (server.pem) is not named",
	      "st=%d withheld=%s diff=%s", st, gi.withheld ? gi.withheld : "(null)",
	      gi.diff ? gi.diff : "(null)");
	git_info_release(&gi);

	sh(repo, "git checkout -q src/k.c");
	st = git_info_worktree(repo, ship_env, &gi, &err);
	CHECK(st == GO_OK && gi.dirty && !gi.diff && gi.withheld &&
	      !strcmp(gi.withheld, "conf/id_ed25519\nsrc/.env\n"),
	      "only secrets changed: dirty, no diff at all, the files named",
	      "st=%d dirty=%d withheld=%s", st, gi.dirty, gi.withheld ? gi.withheld : "(null)");
	git_info_release(&gi);

	{
		/* a root below the repository's top: paths are relative to it */
		char *sub = xstrfmt("%s/src", repo);
		sh(repo, "printf 'int k3;\\n' >> src/k.c");
		st = git_info_worktree(sub, sub_ship, &gi, &err);
		CHECK(st == GO_OK && gi.dirty && gi.diff && strstr(gi.diff, "+int k3;") &&
		      gi.withheld && !strcmp(gi.withheld, ".env\n") && !strstr(gi.diff, "TOKEN"),
		      "a root inside the repository: its shipped paths, named relative to it",
		      "st=%d withheld=%s err=%s", st, gi.withheld ? gi.withheld : "(null)", err.buf);
		git_info_release(&gi);
		free(sub);
	}

	CHECK(git_secret_name(".env") && git_secret_name("a/.env.local") && git_secret_name("prod.env") &&
	      git_secret_name("k/server.pem") && git_secret_name("tls.key") && git_secret_name("id_rsa") &&
	      git_secret_name("x/id_ed25519.pub") && git_secret_name("credentials") &&
	      git_secret_name("aws/credentials.json") && git_secret_name("c.p12") &&
	      git_secret_name(".netrc") && !git_secret_name("env.c") && !git_secret_name("a.env.c") &&
	      !git_secret_name("key.cu") && !git_secret_name("src/keys.h") && !git_secret_name("my.netrc.txt"),
	      "secret names: by the last component, not a substring", "mismatch");
	strbuf_release(&err);
	free(repo);
}

int main(void)
{
	/* Keep the user's and the system's git configuration out of the tests. */
	setenv("GIT_CONFIG_GLOBAL", "/dev/null", 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	if (!mkdtemp(tmp)) {
		printf("not ok 1 - mkdtemp\n");
		return 1;
	}
	test_proc_run();
	test_git();
	test_git_paths();
	fs_remove_tree(tmp);
	return check_summary();
}
