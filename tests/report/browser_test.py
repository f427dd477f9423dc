#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Opens a generated report in headless Chromium through the DevTools protocol
# (a minimal WebSocket client below: the standard library has none) and
# checks it as a person would see it.
#   render: every chart drew (each visible <canvas> is a chart with painted
#           pixels), no console error or exception, rendered within
#           --max-ms of navigation; saves a full-page screenshot.
#   sort:   clicks each header of the call-site table twice (real mouse
#           events) and checks the rows follow that column both ways.
# Exits 77 (ctest SKIP_RETURN_CODE) when Chromium is absent.
# Usage: browser_test.py render|sort REPORT.html [--screenshot PNG] [--max-ms N]
import argparse
import base64
import http.client
import json
import re
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

SKIP = 77


class DevTools:
    """One WebSocket to one page target; send() waits for the reply, events are kept."""

    def __init__(self, port, path):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        reply = b""
        while b"\r\n\r\n" not in reply:
            reply += self.sock.recv(4096)
        head, self.buffer = reply.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError(f"WebSocket upgrade refused: {head[:200]!r}")
        self.next_id, self.events = 0, []

    def _recv_exact(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise RuntimeError("DevTools connection closed")
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def _recv_message(self):
        data = b""
        while True:
            b0, b1 = self._recv_exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._recv_exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._recv_exact(8))[0]
            data += self._recv_exact(n)
            if b0 & 0x80:
                return json.loads(data)

    def send(self, method, **params):
        self.next_id += 1
        payload = json.dumps({"id": self.next_id, "method": method, "params": params}).encode()
        mask = os.urandom(4)
        n = len(payload)
        header = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n)
                                   if n < 65536 else bytes([0x80 | 127]) + struct.pack(">Q", n))
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
        while True:
            msg = self._recv_message()
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def evaluate(self, expression):
        r = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"page script failed: {r['exceptionDetails']}")
        return r["result"].get("value")

    def errors(self):
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append(p["exceptionDetails"].get("exception", {}).get("description") or p["exceptionDetails"]["text"])
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description"))) for a in p.get("args", [])))
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append(p["entry"].get("text"))
        return out


def start_chromium(chromium, profile):
    args = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={profile}", "--remote-debugging-port=0", "--window-size=1400,1000", "about:blank"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port_file = os.path.join(profile, "DevToolsActivePort")
    deadline = time.time() + 30
    while time.time() < deadline:
        if os.path.exists(port_file):
            lines = open(port_file).read().split()
            if len(lines) >= 2:
                return proc, int(lines[0])
        if proc.poll() is not None:
            raise RuntimeError(f"chromium exited with status {proc.returncode}")
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("chromium did not open its DevTools port in 30 s")


def page_target(port):
    for _ in range(100):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("GET", "/json/list")
        targets = json.loads(c.getresponse().read())
        pages = [t for t in targets if t.get("type") == "page"]
        if pages:
            return pages[0]["webSocketDebuggerUrl"].split(str(port), 1)[1]
        time.sleep(0.05)
    raise RuntimeError("no page target")


def open_report(dt, path, max_ms):
    for domain in ("Runtime", "Log", "Page"):
        dt.send(f"{domain}.enable")
    start = time.monotonic()
    dt.send("Page.navigate", url="file://" + os.path.abspath(path))
    while True:
        if dt.evaluate("document.readyState === 'complete' && !!(document.body && document.body.dataset.rendered)"):
            break
        if dt.errors():
            break
        if (time.monotonic() - start) * 1000 > max(10 * max_ms, 20000):
            raise AssertionError("the page never finished rendering")
        time.sleep(0.01)
    return (time.monotonic() - start) * 1000


def check_render(dt, report, screenshot, max_ms):
    ms = open_report(dt, report, max_ms)
    errors = dt.errors()
    if errors:
        raise AssertionError(f"console errors: {errors}")
    state = dt.evaluate("""(() => {
      const visible = [...document.querySelectorAll('canvas')].filter(c => c.closest('[hidden]') === null);
      const charts = window.tailorReport.charts;
      return { renderMs: window.tailorReport.renderMs, charts: charts,
        canvases: visible.map(c => {
          const ctx = c.getContext('2d');
          const px = ctx.getImageData(0, 0, c.width, c.height).data;
          let painted = 0;
          for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) ++painted;
          return { id: c.id, width: c.width, height: c.height, painted: painted, chart: charts.includes(c.id) };
        }) };
    })()""")
    bad = [c for c in state["canvases"] if not c["chart"] or c["painted"] < 500 or c["width"] == 0]
    if bad or not state["canvases"]:
        raise AssertionError(f"charts not drawn: {bad or 'no canvas'}")
    flame = dt.evaluate("""(() => { const d = JSON.parse(document.getElementById('report-data').textContent);
      return d.stacks ? document.querySelectorAll('#flame svg rect').length : -1; })()""")
    if flame == 0:
        raise AssertionError("the trace has stacks, but no flame graph was drawn")
    leaks = dt.evaluate("""(() => { const d = JSON.parse(document.getElementById('report-data').textContent).leaks;
      return { rows: d.rows.length, shown: document.querySelectorAll('#leaks-table tbody tr').length,
               note: document.getElementById('leaks-note').textContent }; })()""")
    if leaks["shown"] != leaks["rows"] or not leaks["note"]:
        raise AssertionError(f"leaks table not drawn: {leaks}")
    sampled = dt.evaluate("""(() => { const s = JSON.parse(document.getElementById('report-data').textContent).summary;
      const line = document.getElementById('sampled-line');
      return { interval: s.sampling.interval, hidden: line.hidden, text: line.textContent,
               summary: document.getElementById('summary').textContent }; })()""")
    if sampled["interval"] > 0 and (sampled["hidden"] or "Sampled trace" not in sampled["text"]
                                    or "\u00b1" not in sampled["summary"]):
        raise AssertionError(f"a sampled trace's report does not say its figures are estimates: {sampled}")
    if sampled["interval"] == 0 and not sampled["hidden"]:
        raise AssertionError("an exact trace's report calls it sampled")
    if ms > max_ms:
        raise AssertionError(f"opened and rendered in {ms:.0f} ms, more than {max_ms} ms")
    height = dt.evaluate("document.documentElement.scrollHeight")
    dt.send("Emulation.setDeviceMetricsOverride", width=1400, height=int(height), deviceScaleFactor=1, mobile=False)
    time.sleep(0.3)  # Chart.js redraws on resize
    shot = dt.send("Page.captureScreenshot", format="png")
    with open(screenshot, "wb") as f:
        f.write(base64.b64decode(shot["data"]))
    print(f"rendered {len(state['canvases'])} charts ({', '.join(c['id'] for c in state['canvases'])}) "
          f"in {ms:.0f} ms from navigation (script {state['renderMs']:.0f} ms); screenshot {screenshot}")


def click(dt, selector):
    box = dt.evaluate(f"""(() => {{ const e = document.querySelector({json.dumps(selector)});
      e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect();
      return [r.left + r.width / 2, r.top + r.height / 2]; }})()""")
    for kind in ("mousePressed", "mouseReleased"):
        dt.send("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)


def check_flame(dt, report, max_ms):
    """A click on a box of the flame graph zooms into it: it then spans the
    graph's width; the search box marks the matching boxes; reset zooms out."""
    open_report(dt, report, max_ms)
    state = """(name => { const svg = document.querySelector('#flame svg');
      const g = [...svg.querySelectorAll('g')].find(g => (g.querySelector('title') || {}).textContent?.startsWith(name));
      const r = g && g.querySelector('rect');
      return { svg: svg.getBoundingClientRect().width, width: r ? r.getBoundingClientRect().width : -1,
               details: document.getElementById('flame-details').textContent }; })"""
    names = dt.evaluate("""(() => { const d = JSON.parse(document.getElementById('report-data').textContent).stacks;
      const main = d.allocated.children[0]; return main.children.map(c => c.name); })()""")
    share = dt.evaluate("""(() => { const d = JSON.parse(document.getElementById('report-data').textContent).stacks;
      return d.allocated.children[0].children[0].value / d.allocated.value; })()""")
    time.sleep(0.2)
    before = dt.evaluate(f"{state}({json.dumps(names[0])})")
    if abs(before["width"] / before["svg"] - share) > 0.02:
        raise AssertionError(f"{names[0]!r} holds {share:.3f} of the bytes, its box {before}")
    dt.evaluate(f"""(() => {{ const g = [...document.querySelectorAll('#flame svg g')].find(g =>
      (g.querySelector('title') || {{}}).textContent?.startsWith({json.dumps(names[0])}));
      g.dispatchEvent(new MouseEvent('click', {{bubbles: true}})); }})()""")
    time.sleep(0.2)
    zoomed = dt.evaluate(f"{state}({json.dumps(names[0])})")
    if zoomed["width"] < 0.95 * zoomed["svg"]:
        raise AssertionError(f"after a click on {names[0]!r} it does not span the graph: {zoomed}")
    click(dt, "#flame-reset")
    time.sleep(0.2)
    reset = dt.evaluate(f"{state}({json.dumps(names[0])})")
    if abs(reset["width"] - before["width"]) > 1:
        raise AssertionError(f"reset zoom did not restore {names[0]!r}: {before} then {reset}")
    dt.evaluate("""(() => { const s = document.getElementById('flame-search'); s.value = %s;
      s.dispatchEvent(new Event('input')); })()""" % json.dumps(names[1]))
    searched = dt.evaluate(f"{state}({json.dumps(names[1])})")
    found = re.match(r"search: (\d+) of (\d+)", searched["details"])
    if not found or int(found.group(1)) == 0:
        raise AssertionError(f"searching {names[1]!r} found nothing: {searched}")
    errors = dt.errors()
    if errors:
        raise AssertionError(f"console errors: {errors}")
    print(f"flame graph: zoomed into {names[0]!r} ({before['width']:.0f} -> {zoomed['width']:.0f} of "
          f"{zoomed['svg']:.0f} px), searched {names[1]!r} ({searched['details']}), reset")


def check_sort(dt, report, max_ms):
    open_report(dt, report, max_ms)
    keys = dt.evaluate("[...document.querySelectorAll('#sites-table th')].map(th => th.dataset.key)")
    rows = dt.evaluate("JSON.parse(document.getElementById('report-data').textContent).sites.rows.length")
    if len(keys) < 5 or rows < 2:
        raise AssertionError(f"a table of {len(keys)} columns and {rows} rows cannot show sorting")
    # The column's values as the page holds them, in the displayed order; checked
    # pairwise with the page's own comparison (numbers, or localeCompare for text).
    check = """(key => { const data = JSON.parse(document.getElementById('report-data').textContent).sites;
      const col = [...document.querySelectorAll('#sites-table th')].findIndex(th => th.dataset.key === key);
      const th = document.querySelectorAll('#sites-table th')[col];
      const shown = [...document.querySelectorAll('#sites-table tbody tr')].map(tr => Number(tr.dataset.address));
      const byName = new Map(data.rows.map(r => [r.address, r]));
      const value = r => key === 'calls_pct' ? r.calls : key === 'bytes_pct' ? r.bytes : r[key];
      const dir = th.getAttribute('aria-sort') === 'ascending' ? 1 : -1;
      let ok = shown.length === data.rows.length;
      for (let i = 1; i < shown.length; ++i) { const a = value(byName.get(shown[i - 1])), b = value(byName.get(shown[i]));
        const c = typeof a === 'string' ? a.localeCompare(b) : a - b; if (c * dir > 0) ok = false; }
      return { ok: ok, dir: dir, first: shown[0] }; })"""
    directions = []
    for key in keys:
        for _ in range(2):
            click(dt, f"#sites-table th[data-key={key}]")
            r = dt.evaluate(f"{check}({json.dumps(key)})")
            if not r["ok"]:
                raise AssertionError(f"after clicking {key!r}, the rows are not sorted ({r})")
            directions.append(r["dir"])
        if directions[-1] == directions[-2]:
            raise AssertionError(f"a second click on {key!r} did not reverse the order")
    errors = dt.errors()
    if errors:
        raise AssertionError(f"console errors: {errors}")
    print(f"sorted by each of {len(keys)} columns both ways ({rows} rows)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["render", "sort", "flame"])
    ap.add_argument("report")
    ap.add_argument("--screenshot", default="report.png")
    ap.add_argument("--max-ms", type=float, default=2000)
    ap.add_argument("--chromium", default=os.environ.get("CHROMIUM") or shutil.which("chromium") or "")
    a = ap.parse_args()
    if not a.chromium or not os.path.exists(a.chromium):
        print("SKIP: Chromium is not installed (Debian package 'chromium'; scripts/install-deps.sh installs it)")
        return SKIP
    profile = tempfile.mkdtemp(prefix="tailor-chromium-")
    proc = None
    try:
        proc, port = start_chromium(a.chromium, profile)
        dt = DevTools(port, page_target(port))
        if a.mode == "render":
            check_render(dt, a.report, a.screenshot, a.max_ms)
        elif a.mode == "flame":
            check_flame(dt, a.report, a.max_ms)
        else:
            check_sort(dt, a.report, a.max_ms)
        return 0
    except (AssertionError, RuntimeError) as e:
        print(f"FAIL: {e}")
        return 1
    finally:
        if proc:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
