#!/usr/bin/env python3
# openapi-check.py -- validate a JSON file against the request or the 200
# reply of one operation of an OpenAPI 3 document, strictly: every object
# that lists its properties may hold no other (the published documents do
# not say additionalProperties: false, so a misspelt field would pass).
#
#   openapi-check.py DOC PATH METHOD request|response FILE
#
# Exits 0 when FILE is valid, 1 with the first errors when not, 2 when the
# document has no such operation. Uses python3-jsonschema (Debian).
import copy, json, sys
import jsonschema

doc_path, path, method, which, file = sys.argv[1:6]
doc = json.load(open(doc_path))
# "/slurm/v0.0.42/nodes/" or "/slurm/v0.0.39/nodes": the documents differ in the trailing slash
# (gpuorch asks without it, as slurmrestd 22.05 answers), so either names the path
paths = doc.get('paths', {})
if path not in paths:
    path = path[:-1] if path.endswith('/') else path + '/'
op = paths.get(path, {}).get(method.lower())
if op is None:
    print('%s: no %s %s' % (doc_path, method, path))
    sys.exit(2)
if which == 'request':
    schema = op['requestBody']['content']['application/json']['schema']
else:
    schema = op['responses']['200']['content']['application/json']['schema']

def strict(x):
    if isinstance(x, dict):
        y = {k: strict(v) for k, v in x.items()}
        if y.get('type') == 'object' and 'properties' in y and 'additionalProperties' not in y:
            y['additionalProperties'] = False
        return y
    if isinstance(x, list):
        return [strict(v) for v in x]
    return x

root = {'components': strict(copy.deepcopy(doc['components']))}
root.update(strict(schema))
v = jsonschema.Draft7Validator(root)
errs = sorted(v.iter_errors(json.load(open(file))), key=lambda e: list(e.absolute_path))
for e in errs[:5]:
    print('%s: %s: at %s: %s' % (file, path, '/'.join(str(p) for p in e.absolute_path) or '(root)', e.message))
sys.exit(1 if errs else 0)
