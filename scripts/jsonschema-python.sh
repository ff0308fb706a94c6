# shellcheck shell=sh
# jsonschema-python.sh -- sourced by scripts/check-records.sh and
# scripts/check-json.sh: the python3 that has jsonschema (Debian's
# python3-jsonschema), Debian's first, then whatever python3 is on PATH.
#
#   PY=$(jsonschema_python) || die "..."

jsonschema_python() {
	for _c in /usr/bin/python3 python3; do
		if command -v "$_c" >/dev/null 2>&1 && "$_c" -c 'import jsonschema' 2>/dev/null; then
			echo "$_c"
			return 0
		fi
	done
	return 1
}
