#!/usr/bin/env python3
"""mdcheck.py -- hostile text for the report tests (issue 31 item 11).

  mdcheck.py poison MODE IN OUT [IN OUT...]
                                  copy each run.json IN to OUT with a hostile
                                  payload appended to its strings: MODE all
                                  (every string but "schema") or names (all
                                  but one-word values such as PASS or ok, so
                                  the record's statuses keep their meaning)
  mdcheck.py html FILE...         exit 1, listing each, when the HTML that a
                                  Markdown renderer made of a report holds
                                  markup that no report writes: a tag outside
                                  the report's own, an on* attribute, or a
                                  src/href that loads from elsewhere
"""
import json
import re
import sys
from html.parser import HTMLParser

PAYLOAD = ("p``<img src=x onerror=alert(document.domain)>``q"
           "![t](http://evil.example/t.png)<b>x</b>`<a href=http://evil.example/a>")
ALLOWED = {"p", "code", "pre", "table", "thead", "tbody", "tr", "td", "th", "h1", "h2", "h3",
           "h4", "h5", "h6", "ul", "ol", "li", "strong", "em", "a", "details", "summary", "br",
           "hr", "blockquote", "img", "sup", "sub", "del"}


def poison(src, dst, mode):
    def walk(o):
        if isinstance(o, dict):
            return {k: (v if k == "schema" else walk(v)) for k, v in o.items()}
        if isinstance(o, list):
            return [walk(x) for x in o]
        if isinstance(o, str):
            if mode == "names" and re.fullmatch(r"[A-Za-z_]{1,12}", o):
                return o
            return o + PAYLOAD
        return o
    with open(src) as f:
        run = json.load(f)
    with open(dst, "w") as f:
        json.dump(walk(run), f)


def check_html(path):
    bad = []

    class P(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag not in ALLOWED:
                bad.append("tag <%s>" % tag)
            for k, v in attrs:
                if k.startswith("on"):
                    bad.append("attribute %s on <%s>" % (k, tag))
                if k in ("src", "href") and v and (
                        "://" in v or v.startswith("//") or
                        v.lower().startswith(("javascript:", "data:"))):
                    bad.append("%s=%s on <%s>" % (k, v, tag))
    with open(path) as f:
        P().feed(f.read())
    for b in sorted(set(bad)):
        print("%s: %s" % (path, b))
    return 1 if bad else 0


if __name__ == "__main__":
    a = sys.argv
    if len(a) >= 5 and len(a) % 2 == 1 and a[1] == "poison":
        for i in range(3, len(a), 2):
            poison(a[i], a[i + 1], a[2])
    elif len(a) >= 3 and a[1] == "html":
        sys.exit(max(check_html(f) for f in a[2:]))
    else:
        sys.exit(__doc__)
