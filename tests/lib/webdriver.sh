# shellcheck shell=sh
# webdriver.sh -- a real headless Chromium driven over W3C WebDriver with curl
# (Debian's chromium and chromium-driver; no npm, no Python packages).
#
#   webdriver_requires WHAT    skip the file (saying why) without chromium/chromedriver/curl
#   wd_start                   start chromedriver on a free loopback port and one
#                              headless session; stopped at exit
#   wd_url URL                 navigate (returns when the page has loaded)
#   wd_exec 'JS' [ARGS-JSON]   run a script (its body: "return ...;"); prints the
#                              returned value (strings raw, others as JSON)
#   wd_find CSS                prints the first matching element's id (fails when none)
#   wd_click ELEMENT-ID        click it
#   wd_wait_for 'JS' [S]       until the script returns true, at most S seconds (default 20)
#   wd_severe_log FILE         the browser log's SEVERE entries since the last call
#                              (console errors, uncaught exceptions, failed loads) into FILE
#   wd_screenshot FILE         a PNG of the page
# Every request is bounded (curl --max-time). JSON answers are read with
# build/tests/jsonq (runlib.sh's jq_).

WD_CHROMIUM=${WD_CHROMIUM:-$(command -v chromium 2>/dev/null)}
WD_DRIVER=${WD_DRIVER:-$(command -v chromedriver 2>/dev/null)}

webdriver_requires() {
	_why=
	[ -n "$WD_CHROMIUM" ] && [ -x "$WD_CHROMIUM" ] || _why="no chromium (Debian's 'chromium' package; scripts/deps.sh --tests installs it)"
	[ -n "$WD_DRIVER" ] && [ -x "$WD_DRIVER" ] || _why="${_why:+$_why, }no chromedriver (Debian's 'chromium-driver')"
	command -v curl >/dev/null 2>&1 || _why="${_why:+$_why, }no curl"
	if [ -n "$_why" ]; then
		test_skip "$1" "$_why"
		test_done
	fi
}

# wd_req_ METHOD PATH [BODY]: the answer in $TRASH/wd.out; fails on an HTTP
# error or a WebDriver error (printing it)
wd_req_() {
	_code=$(curl -s --max-time 60 -o "$TRASH/wd.out" -w '%{http_code}' -X "$1" \
		-H 'Content-Type: application/json' ${3:+--data-binary "$3"} \
		"http://127.0.0.1:$WD_PORT$2") || { echo "webdriver: $1 $2: curl failed" >&2; return 1; }
	[ "$_code" = 200 ] || { echo "webdriver: $1 $2: HTTP $_code: $(head -c 2000 "$TRASH/wd.out")" >&2; return 1; }
}

wd_start() {
	WD_PORT=$(( 30000 + $$ % 20000 ))
	_i=0
	while :; do
		"$WD_DRIVER" --port=$WD_PORT --allowed-ips=127.0.0.1 >"$TRASH/chromedriver.log" 2>&1 &
		WD_PID=$!
		test_at_exit "kill $WD_PID 2>/dev/null"
		_t=0
		while [ $_t -lt 100 ]; do
			curl -s --max-time 2 "http://127.0.0.1:$WD_PORT/status" 2>/dev/null | grep -q '"ready": *true' && break
			kill -0 $WD_PID 2>/dev/null || break
			sleep 0.1; _t=$((_t + 1))
		done
		kill -0 $WD_PID 2>/dev/null && [ $_t -lt 100 ] && break
		kill $WD_PID 2>/dev/null
		_i=$((_i + 1)); WD_PORT=$((WD_PORT + 1))
		[ $_i -lt 5 ] || { echo "chromedriver did not start:" >&2; cat "$TRASH/chromedriver.log" >&2; return 1; }
	done
	mkdir -p "$TRASH/chromium-profile"
	wd_req_ POST /session "{\"capabilities\":{\"alwaysMatch\":{\"browserName\":\"chrome\",
		\"goog:loggingPrefs\":{\"browser\":\"ALL\"},
		\"goog:chromeOptions\":{\"binary\":\"$WD_CHROMIUM\",\"args\":[\"--headless=new\",
		\"--no-sandbox\",\"--disable-gpu\",\"--disable-dev-shm-usage\",\"--window-size=1280,900\",
		\"--no-first-run\",\"--user-data-dir=$TRASH/chromium-profile\"]}}}}" || return 1
	WD_SESSION=$("$JSONQ" "$TRASH/wd.out" value.sessionId) || return 1
	test_at_exit "curl -s --max-time 20 -X DELETE http://127.0.0.1:$WD_PORT/session/$WD_SESSION >/dev/null"
	wd_req_ POST "/session/$WD_SESSION/timeouts" '{"pageLoad":30000,"script":20000,"implicit":0}'
}

wd_url() {
	wd_req_ POST "/session/$WD_SESSION/url" "{\"url\":\"$1\"}"
}

wd_exec() {
	_body=$(printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' | tr '\n\t' '  ')
	wd_req_ POST "/session/$WD_SESSION/execute/sync" "{\"script\":\"$_body\",\"args\":${2:-[]}}" &&
	"$JSONQ" "$TRASH/wd.out" value
}

wd_find() {
	_css=$(printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g')
	wd_req_ POST "/session/$WD_SESSION/element" "{\"using\":\"css selector\",\"value\":\"$_css\"}" &&
	# the W3C element reference: {"value":{"element-6066-11e4-a52e-4f735466cecf":"ID"}}
	sed -n 's/.*"element-6066-11e4-a52e-4f735466cecf": *"\([^"]*\)".*/\1/p' "$TRASH/wd.out" | grep .
}

wd_click() {
	wd_req_ POST "/session/$WD_SESSION/element/$1/click" '{}'
}

wd_wait_for() {
	_n=$(( ${2:-20} * 10 ))
	while [ $_n -gt 0 ]; do
		[ "$(wd_exec "$1")" = true ] && return 0
		sleep 0.1; _n=$((_n - 1))
	done
	echo "webdriver: waited ${2:-20} s for: $1" >&2
	return 1
}

wd_severe_log() {
	wd_req_ POST "/session/$WD_SESSION/se/log" '{"type":"browser"}' &&
	tr '{' '\n' <"$TRASH/wd.out" | grep '"level":"SEVERE"' >"$1"
	return 0
}

wd_screenshot() {
	wd_req_ GET "/session/$WD_SESSION/screenshot" &&
	"$JSONQ" "$TRASH/wd.out" value | base64 -d >"$1"
}
