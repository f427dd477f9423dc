#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Checks of one generated report file shared by the report tests: the HTML
# parses strictly (every element closed in order, no stray end tag, unique
# ids), nothing is fetched (no src/href to anything, no <link>, no import),
# and the inlined data is JSON. Returns the data for the test to inspect.
import html.parser
import json

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class StrictParser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.ids, self.data_json = [], [], set(), None
        self.doctype = False
        self._in_data = False

    def handle_decl(self, decl):
        self.doctype = self.doctype or decl.lower() == "doctype html"

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            if a["id"] in self.ids:
                self.errors.append(f"duplicate id {a['id']!r} at line {self.getpos()[0]}")
            self.ids.add(a["id"])
        for name in ("src", "href"):
            if name in a:
                self.errors.append(f"<{tag} {name}={a[name]!r}> fetches something (line {self.getpos()[0]})")
        if tag == "link":
            self.errors.append(f"<link> at line {self.getpos()[0]}")
        if tag not in VOID:
            self.stack.append((tag, self.getpos()[0]))
        self._in_data = tag == "script" and a.get("id") == "report-data"

    def handle_startendtag(self, tag, attrs):
        if tag not in VOID:
            self.errors.append(f"self-closed <{tag}/> at line {self.getpos()[0]}")

    def handle_endtag(self, tag):
        if tag in VOID:
            self.errors.append(f"end tag of void <{tag}> at line {self.getpos()[0]}")
            return
        if not self.stack or self.stack[-1][0] != tag:
            open_tag = self.stack[-1] if self.stack else None
            self.errors.append(f"</{tag}> at line {self.getpos()[0]} closes {open_tag}")
            return
        self.stack.pop()
        self._in_data = False

    def handle_data(self, data):
        if self._in_data:
            self.data_json = (self.data_json or "") + data


def check_report(path):
    """Returns (data, errors) of the report at path."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    p = StrictParser()
    p.feed(text)
    p.close()
    errors = list(p.errors)
    if not p.doctype:
        errors.append("no <!DOCTYPE html>")
    if p.stack:
        errors.append(f"unclosed elements: {p.stack}")
    for needle in ("fetch(", "XMLHttpRequest", "import(", "new WebSocket", "new Worker("):
        if needle in text:
            errors.append(f"the page contains {needle!r}")
    data = None
    if p.data_json is None:
        errors.append("no <script id=report-data>")
    else:
        try:
            data = json.loads(p.data_json)
        except json.JSONDecodeError as e:
            errors.append(f"report-data is not JSON: {e}")
    return data, errors
