#!/bin/sh
# check-records.sh -- run records against their JSON Schemas: every run.json
# against docs/schema/run.schema.json, every summary.json against
# docs/schema/summary.schema.json (Draft 2020-12, checked by Debian's
# python3-jsonschema).
#
#   scripts/check-records.sh [PATH...]
#
# A PATH is a run.json or summary.json, or a folder searched for both
# (default: reports); hard links of one file are checked once. Prints each violation as "FILE: JSON/PATH: what" and
# "records: N problems in M files", exit 1; or "records: ok (N run.json,
# M summary.json)", exit 0; exit 2 when the checker cannot run.
set -u

die() { echo "check-records.sh: $*" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd) || die "cannot find the repository root"
[ $# -gt 0 ] || set -- reports
for p in "$@"; do
	[ -e "$p" ] || die "no such file or folder '$p'"
done
# shellcheck source=scripts/jsonschema-python.sh
. "$ROOT/scripts/jsonschema-python.sh"
PY=$(jsonschema_python) || die "no python3 with jsonschema (apt-get install python3-jsonschema; scripts/deps.sh --tests installs it)"

exec "$PY" - "$ROOT/docs/schema" "$@" <<'PY'
import json, os, sys
import jsonschema

schema_dir, paths = sys.argv[1], sys.argv[2:]
validators = {}
for name in ("run.json", "summary.json"):
    with open(os.path.join(schema_dir, name.replace(".json", ".schema.json"))) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validators[name] = jsonschema.Draft202012Validator(schema)

files = []
for p in paths:
    if os.path.isdir(p):
        for d, _, names in os.walk(p):
            files += [os.path.join(d, n) for n in names if n in validators]
    else:
        files.append(p)
files.sort()

problems, bad_files, counts = 0, set(), {"run.json": 0, "summary.json": 0}
seen = set()   # (device, inode): hard links of one record are read once
for f in files:
    try:
        st = os.stat(f)
        if (st.st_dev, st.st_ino) in seen:
            continue
        seen.add((st.st_dev, st.st_ino))
    except OSError:
        pass
    kind = os.path.basename(f)
    if kind not in validators:
        print("%s: not a run.json or a summary.json" % f)
        problems += 1
        bad_files.add(f)
        continue
    counts[kind] += 1
    try:
        with open(f) as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as e:
        print("%s: cannot be read as JSON: %s" % (f, e))
        problems += 1
        bad_files.add(f)
        continue
    for e in sorted(validators[kind].iter_errors(doc), key=lambda e: list(map(str, e.absolute_path))):
        where = "/".join(str(x) for x in e.absolute_path) or "(top)"
        print("%s: %s: %s" % (f, where, e.message[:300]))
        problems += 1
        bad_files.add(f)

if problems:
    print("records: %d problems in %d files" % (problems, len(bad_files)))
    sys.exit(1)
print("records: ok (%d run.json, %d summary.json)" % (counts["run.json"], counts["summary.json"]))
PY
