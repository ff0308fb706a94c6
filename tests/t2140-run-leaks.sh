#!/bin/sh
# cost: 25
test_description='what a run leaves: a report that renders no HTML from names, a source.diff of the shipped files without secrets, host files private'
# Issue 31 items 11-13, on one run of a spec with hostile names over the
# test sshd, whose session umask is 022 (a host's usual one):
# - report.md, rendered by cmark, holds no <img>, handler or remote load,
#   and names still render as code (report/report-format.c);
# - source.diff covers exactly the shipped files (and the spec): a dirty
#   .env that does not ship is not in it, a shipped one is named in
#   provenance.git.diff_withheld and the report, never diffed (store/gitinfo.c);
# - everything gpuorch wrote under the host's workdir is 0700/0600
#   (umask 077 in every remote script, runner.sh, the execd).
# On 70a5877 (before the fixes) the HTML had <img onerror> and
# src=http://evil.example, source.diff held SECRET_DIRTY and TOKEN, and
# the workdir, content/<cid>/src/* and the step logs were 755/644.
umask 022
. "$(dirname "$0")/lib/testlib.sh"
. "$SRCDIR/tests/lib/sshd.sh"
. "$SRCDIR/tests/lib/runlib.sh"

run_requires_sshd_nvcc 'leak tests'

EVIL='p``<img src=x onerror=alert(document.domain)>``q'

test_expect_success 'setup: tracked .env files, a spec with hostile names, a dirty tree' '
	sshd_start a &&
	sshd_write_hosts_json hosts.json a &&
	W=$(sshd_var a WORKDIR) && rmdir "$W" &&
	project_init &&
	printf "A=1\n" >proj/.env && printf "B=1\n" >proj/cpu/.env &&
	cat >proj/experiments/hostile.json <<-JSON &&
	{
	  "schema": 1, "name": "hostile",
	  "phase": "Phase ![t](http://evil.example/t.png) <img src=x onerror=alert(1)>",
	  "description": "Text \`x ![d](http://evil.example/d.png) [l](http://evil.example/l)",
	  "sources": ["cpu"],
	  "targets": {"H100": "sm_90a"},
	  "programs": {"$EVIL": {"sources": ["cpu/cputimer.c"], "needs_gpu": false},
	               "cputimer": {"sources": ["cpu/cputimer.c"], "needs_gpu": false}},
	  "problems": [{"name": "s\`\`<img src=x onerror=alert(2)>\`\`t", "params": {"work": 2000}}],
	  "steps": [{"kind": "correctness", "program": "$EVIL", "timeout_s": 60},
	            {"kind": "correctness", "program": "cputimer", "timeout_s": 60}]
	}
	JSON
	(cd proj && git add -A && git commit -qm "secrets tracked") &&
	printf "SECRET_DIRTY=hunter2\n" >>proj/.env &&
	printf "TOKEN=s3cr3t\n" >>proj/cpu/.env &&
	printf "/* dirty-shipped */\n" >>proj/cpu/cputimer.c &&
	(cd proj && "$GPUORCH" run experiments/hostile.json --hosts ../hosts.json) >run.out 2>&1;
	cat run.out && run=$(last_run_dir) && echo "$run" >run.dir &&
	test "$(jq_ $run/run.json outcome)" = passed
'

test_expect_success 'source.diff: the shipped change only; no secret, shipped or not' '
	run=$(cat run.dir) &&
	test "$(jq_ $run/run.json provenance.git.dirty)" = true &&
	test "$(jq_ $run/run.json provenance.git.diff_file)" = source.diff &&
	grep -F "+/* dirty-shipped */" $run/source.diff &&
	! grep -e SECRET_DIRTY -e TOKEN -e "\.env" $run/source.diff &&
	test "$(jq_ $run/run.json provenance.git.diff_withheld --len)" = 1 &&
	test "$(jq_ $run/run.json provenance.git.diff_withheld.0)" = cpu/.env &&
	! grep -r -e SECRET_DIRTY -e TOKEN=s3cr3t $run &&
	grep "\*\*not recorded\*\* (a secret.s name): \`cpu/.env\`" $run/report.md
'

test_expect_success 'the recorded diff applies to its commit and gives the shipped file as it ran' '
	run=$(cat run.dir) &&
	rm -rf wt && git -C proj worktree add -q --detach ../wt HEAD &&
	git -C wt apply "$run/source.diff" &&
	cmp wt/cpu/cputimer.c proj/cpu/cputimer.c &&
	git -C proj worktree remove --force ../wt
'

test_expect_success 'report.md: rendered by cmark, no HTML from the names, the names as code' '
	run=$(cat run.dir) &&
	if ! command -v cmark >/dev/null 2>&1; then
		echo "no cmark here (apt-get install cmark)"; false
	fi &&
	grep -F "evil.example" $run/report.md &&
	cmark --unsafe $run/report.md >report.html &&
	python3 "$SRCDIR/tests/lib/mdcheck.py" html report.html &&
	! grep -i "<img" report.html && ! grep "src=\"http://evil" report.html &&
	grep -F "<code>p\`\`&lt;img src=x onerror=alert(document.domain)&gt;\`\`q</code>" report.html &&
	grep -F "<code>cputimer</code>" report.html &&
	grep -F "<code>correctness.cputimer." report.html
'

test_expect_success 'every file and directory gpuorch wrote under the host workdir is its user'"'"'s alone' '
	W=$(sshd_var a WORKDIR) &&
	test -d "$W/content" &&
	find "$W" -perm /077 >open.txt; cat open.txt &&
	test ! -s open.txt &&
	test "$(stat -c %a "$W")" = 700 &&
	cid=$(jq_ $(cat run.dir)/run.json provenance.content_id) &&
	: "0400: a hard link to its read-only blob (start.sh)" &&
	test "$(stat -c %a "$W/content/$cid/src/cpu/.env")" = 400 &&
	test "$(find "$W" -type f -perm -100 | wc -l)" -gt 0 &&
	test "$(find "$W" -type f -name stdout | wc -l)" -gt 0
'

test_done
