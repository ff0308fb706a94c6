#!/bin/sh
# build-all.sh -- compile every program of every experiment for every arch its spec lists (compile-only check).
#
# usage: kernels/build-all.sh [OUTDIR] [SPEC...]
#   OUTDIR defaults to build/kernels; SPECs default to experiments/*.json.
# Each compiled program is built once per (program sources, libs, defines, flags,
# arch) with -Xptxas -v; ptxas reports go to OUTDIR/<exp>/<prog>.<arch>.log.
# Archs below a program's min_arch are skipped (as gpuorch would skip them).
# Script programs are byte-compiled with python3.  Exits 1 on any failure,
# after printing each failing build's log.  NVCC overrides the compiler,
# JOBS the parallelism (default: number of CPUs).
set -eu
cd "$(dirname "$0")/.."
OUT=${1:-build/kernels}
[ $# -gt 0 ] && shift
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
if [ ! -x "$NVCC" ]; then
	echo "error: nvcc not found (set NVCC=/path/to/nvcc)" >&2
	exit 1
fi
mkdir -p "$OUT"
PLAN="$OUT/plan.txt"
python3 - "$OUT" "$NVCC" "$@" > "$PLAN" <<'PY'
import glob, json, re, shlex, sys
out, nvcc, specs = sys.argv[1], sys.argv[2], sys.argv[3:] or sorted(glob.glob("experiments/*.json"))

def arch_key(a):
    m = re.fullmatch(r"sm_(\d+)([a-z]?)", a)
    if not m:
        sys.exit("error: bad arch %r" % a)
    return int(m.group(1)), m.group(2)

def arch_ok(arch, min_arch):
    if not min_arch:
        return True
    (n, s), (mn, ms) = arch_key(arch), arch_key(min_arch)
    if ms:  # arch-specific (sm_90a) is met only by itself
        return (n, s) == (mn, ms)
    return n >= mn

def gencode(arch):
    n, s = arch_key(arch)
    return "-gencode=arch=compute_%d%s,code=sm_%d%s" % (n, s, n, s)

for spec in specs:
    d = json.load(open(spec))
    exp = re.sub(r"[^A-Za-z0-9._-]", "_", d["name"])
    listed = set(d.get("sources", []))
    flags = list(d.get("build", {}).get("flags", []))
    defs = ["-D%s=%s" % (k, v) for k, v in sorted(d.get("build", {}).get("defines", {}).items())]
    archs = sorted(set(d["targets"].values()), key=arch_key)
    for name, p in sorted(d["programs"].items()):
        for f in p.get("sources", []) + ([p["script"]] if "script" in p else []):
            if f not in listed:
                sys.exit("error: %s: 'programs.%s': %s is not in 'sources'" % (spec, name, f))
        if "script" in p:
            print("PY\t%s/%s\t%s" % (exp, name, p["script"]))
            continue
        if "sources" not in p:
            # a program with its own build command (docs/byo.md): gpuorch
            # runs that command on the host; there is no nvcc line to check
            print("SKIP\t%s/%s\tits own build command (built on the host by gpuorch run)" % (exp, name))
            continue
        for arch in archs:
            if not arch_ok(arch, p.get("min_arch")):
                print("SKIP\t%s/%s.%s\tbelow min_arch %s" % (exp, name, arch, p["min_arch"]))
                continue
            cmd = [nvcc] + flags + ["-Xptxas", "-v"] + defs + [gencode(arch), "-o", "%s/%s/%s.%s" % (out, exp, name, arch)] \
                + p["sources"] + p.get("libs", [])
            print("CC\t%s/%s.%s\t%s" % (exp, name, arch, " ".join(shlex.quote(c) for c in cmd)))
PY
fails=0
# scripts
grep '^PY' "$PLAN" | while IFS="$(printf '\t')" read -r _ what script; do
	python3 -c "import ast,sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])" "$script" || { echo "FAIL $what ($script)"; exit 1; }
	echo "ok   $what (python syntax)"
done || fails=1
grep '^SKIP' "$PLAN" | while IFS="$(printf '\t')" read -r _ what why; do echo "skip $what: $why"; done
# compiled programs, in parallel
grep '^CC' "$PLAN" | cut -f2,3 > "$OUT/cc.txt"
export OUT
if ! xargs -P "$JOBS" -L 1 -d '\n' sh -c '
	what=$(printf "%s" "$1" | cut -f1); cmd=$(printf "%s" "$1" | cut -f2-)
	mkdir -p "$OUT/$(dirname "$what")"
	start=$(date +%s)
	if eval "$cmd" > "$OUT/$what.log" 2>&1; then
		echo "ok   $what ($(( $(date +%s) - start ))s)"
	else
		echo "FAIL $what"; cat "$OUT/$what.log"; exit 255
	fi' sh < "$OUT/cc.txt"; then
	fails=1
fi
# any ptxas spill or stack use in our kernels is worth seeing
grep -l "bytes spill stores" "$OUT"/*/*.log 2>/dev/null | while read -r f; do
	if grep -q "[1-9][0-9]* bytes spill stores" "$f"; then echo "note: spills in $f"; fi
done
if [ "$fails" -ne 0 ]; then
	echo "build-all: FAILED" >&2
	exit 1
fi
echo "build-all: all programs built into $OUT"
