# shellcheck shell=sh
# longnames.sh -- a project whose sources have a 250-byte path and a
# non-ASCII (UTF-8) name, for the tests that ship it (issue 32: ustar's
# 100-byte name field once refused such a tree before anything was sent).
#
# Source after runlib.sh:   . "$SRCDIR/tests/lib/longnames.sh"
#
#   LONG_C   src/<120 d>/<123 f>.c: 250 bytes, each component under 255
#            (a copy of the fixture's cputimer.c: gpuorch builds it with nvcc)
#   UML_C    src/ümlaut-ядро.c: a C program built by its own command line,
#            printing "answer: 42"
#   longnames_project    project_init, then both files and
#                        experiments/longnames.json (sources ["."]: the
#                        program "longtimer" from LONG_C, "umlaut" from
#                        UML_C, one step each), committed
#   longnames_check RUN SRC [ANSWER]   the run passed, umlaut printed
#                        ANSWER (default 42), and the sources in SRC (a
#                        content dir's src/ on the host) are the project's,
#                        byte for byte, at their exact names

LONG_C=src/$(printf '%0120d' 0 | tr 0 d)/$(printf '%0123d' 0 | tr 0 f).c
UML_C='src/ümlaut-ядро.c'

longnames_project() {
	project_init &&
	test "$(printf %s "$LONG_C" | wc -c)" -eq 250 &&
	mkdir -p "proj/${LONG_C%/*}" &&
	cp proj/cpu/cputimer.c "proj/$LONG_C" &&
	printf '#include <stdio.h>\nint main(void) { printf("answer: %%d\\n", 42); return 0; }\n' \
		>"proj/$UML_C" &&
	cat >proj/experiments/longnames.json <<-JSON &&
	{
	  "schema": 1, "name": "longnames", "phase": "Test phase: long and non-ASCII file names",
	  "sources": ["."],
	  "build": {"flags": ["-O2"], "timeout_s": 300},
	  "targets": {"H100": "sm_90a"},
	  "programs": {
	    "longtimer": {"sources": ["$LONG_C"], "needs_gpu": false},
	    "umlaut": {"build": {"command": ["cc", "-o", "umlaut", "$UML_C"], "outputs": ["umlaut"]},
	               "run": ["./umlaut"],
	               "figures": {"answer": {"regex": "^answer: ([0-9]+)$"}},
	               "needs_gpu": false}
	  },
	  "problems": [{"name": "small", "params": {"work": 2000}}],
	  "steps": [{"kind": "correctness", "program": "longtimer", "timeout_s": 60},
	            {"kind": "benchmark", "program": "umlaut", "timeout_s": 60}]
	}
	JSON
	(cd proj && git add -A && git commit -qm "long and non-ASCII names")
}

longnames_check() {
	test "$(jq_ "$1/run.json" hosts.0.builds.0.status)" = PASS &&
	test "$(jq_ "$1/run.json" hosts.0.builds.1.status)" = PASS &&
	test "$(run_step "$1" correctness.longtimer.small status)" = PASS &&
	test "$(run_step "$1" benchmark.umlaut.small status)" = PASS &&
	test "$(run_step "$1" benchmark.umlaut.small result.figures.answer.value)" = "${3:-42}" &&
	cmp "proj/$LONG_C" "$2/$LONG_C" &&
	cmp "proj/$UML_C" "$2/$UML_C" &&
	cmp proj/experiments/longnames.json "$2/experiments/longnames.json"
}
