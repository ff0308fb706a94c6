#!/usr/bin/env python3
"""ec2proxy.py -- a fault-injecting HTTP proxy in front of moto's EC2 server,
for the cloud tests (tests/t2526-cloud-faults.sh). Standard library only.

    ec2proxy.py PORT_FILE UPSTREAM RULES LOG

Listens on 127.0.0.1 (a free port, written to PORT_FILE once it listens) and
forwards every POST to UPSTREAM (moto_server's URL), except where RULES says
otherwise. RULES is read at each request; each line is

    ACTION N FAULT        the Nth call of ACTION (1 = the first)
    ACTION N+ FAULT       the Nth call and every later one

counted from the moment the file's content last changed (a test writes a new
file, the counts start again). FAULT is one of
    drop      forward it (moto acts on it), then close without a reply
    503       answer HTTP 503 "Unavailable" without forwarding
    expired   answer HTTP 400 ExpiredToken without forwarding
Every call is one line of LOG: "ACTION N FAULT-or-ok BODY" (the form body;
the signature is in the headers, which are not logged)."""
import http.client
import os
import http.server
import sys
import threading
import urllib.parse

PORT_FILE, UPSTREAM, RULES, LOG = sys.argv[1:5]
up = urllib.parse.urlsplit(UPSTREAM)
lock = threading.Lock()
state = {"rules": None, "counts": {}}

ERR = ('<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>%s</Code>'
       '<Message>%s</Message></Error></Errors><RequestID>ec2proxy</RequestID></Response>')


def fault_for(action):
    try:
        with open(RULES) as f:
            text = f.read()
    except OSError:
        text = ""
    with lock:
        if text != state["rules"]:
            state["rules"] = text
            state["counts"] = {}
        n = state["counts"].get(action, 0) + 1
        state["counts"][action] = n
    for line in text.splitlines():
        w = line.split()
        if len(w) != 3 or w[0] != action:
            continue
        if w[1].endswith("+") and n >= int(w[1][:-1]):
            return n, w[2]
        if w[1] == str(n):
            return n, w[2]
    return n, None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def reply(self, code, body, ctype="text/xml"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        form = urllib.parse.parse_qs(body.decode("utf-8", "replace"))
        action = form.get("Action", ["?"])[0]
        n, fault = fault_for(action)
        with lock, open(LOG, "a") as f:
            f.write("%s %d %s %s\n" % (action, n, fault or "ok", body.decode("utf-8", "replace")))
        if fault == "503":
            self.reply(503, ERR % ("Unavailable", "injected by ec2proxy"))
            return
        if fault == "expired":
            self.reply(400, ERR % ("ExpiredToken", "The security token included in the request is expired"))
            return
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        c = http.client.HTTPConnection(up.hostname, up.port, timeout=60)
        c.request("POST", up.path or "/", body, headers)
        r = c.getresponse()
        data = r.read()
        c.close()
        if fault == "drop":
            # moto has acted on it; the caller never hears
            self.close_connection = True
            return
        self.reply(r.status, data, r.getheader("Content-Type") or "text/xml")


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(PORT_FILE + ".tmp", "w") as f:
    f.write("%d\n" % srv.server_address[1])
os.replace(PORT_FILE + ".tmp", PORT_FILE)
srv.serve_forever()
