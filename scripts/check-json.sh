#!/bin/sh
# check-json.sh -- a command's --json output against its versioned JSON
# Schema in docs/schema/ (cli-*.schema.json; Draft 2020-12, checked by
# Debian's python3-jsonschema, as scripts/check-records.sh checks records).
#
#   scripts/check-json.sh SCHEMA FILE...
#
# SCHEMA is a path or a name under docs/schema (cli-run.schema.json). Prints
# each violation as "FILE: JSON/PATH: what" and "json: N problems", exit 1;
# "json: ok (N files against SCHEMA)", exit 0; exit 2 when it cannot run.
set -u

die() { echo "check-json.sh: $*" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd) || die "cannot find the repository root"
[ $# -ge 2 ] || die "usage: scripts/check-json.sh SCHEMA FILE..."
schema=$1
[ -e "$schema" ] || schema=$ROOT/docs/schema/$1
[ -f "$schema" ] || die "no schema '$1' (a path, or a name under docs/schema)"
shift
for p in "$@"; do
	[ -f "$p" ] || die "no such file '$p'"
done
# shellcheck source=scripts/jsonschema-python.sh
. "$ROOT/scripts/jsonschema-python.sh"
PY=$(jsonschema_python) || die "no python3 with jsonschema (apt-get install python3-jsonschema)"

exec "$PY" - "$schema" "$@" <<'PY'
import json, sys
import jsonschema

schema_path, files = sys.argv[1], sys.argv[2:]
with open(schema_path) as f:
    schema = json.load(f)
jsonschema.Draft202012Validator.check_schema(schema)
# the schemas beside it, by their $id: one may use another's $defs
# (cli-runs.schema.json uses cli-run.schema.json#/$defs/run)
import os
store = {}
d = os.path.dirname(os.path.abspath(schema_path))
for n in sorted(os.listdir(d)):
    if n.endswith(".schema.json"):
        with open(os.path.join(d, n)) as f:
            s = json.load(f)
        if "$id" in s:
            store[s["$id"]] = s
kwargs = {}
try:
    from referencing import Registry, Resource
    kwargs["registry"] = Registry().with_resources(
        [(k, Resource.from_contents(x)) for k, x in store.items()])
except ImportError:   # Debian's python3-jsonschema 4.10: its resolver
    kwargs["resolver"] = jsonschema.RefResolver.from_schema(schema, store=store)
v = jsonschema.Draft202012Validator(schema, **kwargs)
problems = 0
for name in files:
    try:
        with open(name) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print("%s: not JSON: %s" % (name, e))
        problems += 1
        continue
    for e in sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path)):
        path = "/".join(str(p) for p in e.absolute_path) or "(top)"
        print("%s: %s: %s" % (name, path, e.message))
        problems += 1
if problems:
    print("json: %d problems" % problems)
    sys.exit(1)
print("json: ok (%d files against %s)" % (len(files), schema_path.rsplit("/", 1)[-1]))
PY
