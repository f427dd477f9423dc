#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# `tailor report` end to end on traces of known content (tests/report/
# make_trace.cpp writes them): one event, three threads with cross-thread
# frees, a cut copy of it, simulated DMMs with heap maps, a short search,
# and a spec that fails to load (a clear error, no file). Every report must
# pass report_check.py (strict parse, nothing fetched, JSON data).
# Usage: report_test.py TAILOR MAKE_TRACE SHARE_DIR WORK_DIR
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_check import check_report  # noqa: E402

tailor, make_trace, share, work = sys.argv[1:5]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = []
passed = 0


def run(*args, ok=True):
    p = subprocess.run([tailor, "report", *args], capture_output=True, text=True, timeout=300)
    if ok and p.returncode != 0:
        raise AssertionError(f"tailor report {' '.join(args)} exited {p.returncode}: {p.stderr}")
    return p


def trace(kind):
    path = os.path.join(work, kind + ".trace")
    subprocess.run([make_trace, path, kind], check=True)
    return path


def report(name, *args):
    out = os.path.join(work, name + ".html")
    run(*args, "-o", out)
    data, errors = check_report(out)
    if errors:
        raise AssertionError(f"{out}: " + "; ".join(errors))
    return data


def test(fn):
    global passed
    try:
        fn()
        passed += 1
        print(f"PASS {fn.__name__}")
    except Exception as e:  # noqa: BLE001 - every failure is reported, then the next test runs
        failures.append(fn.__name__)
        print(f"FAIL {fn.__name__}: {e}")


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def one_event():
    d = report("one", trace("one"))
    expect(d["summary"]["objects"] == 1, f"objects {d['summary']['objects']}")
    expect(d["summary"]["max_in_use_bytes"] == 24, "max in use")
    expect(len(d["in_use"]["points"]) == 1 and d["in_use"]["points"][0][2] == 24, f"series {d['in_use']['points']}")
    expect(d["trace"]["complete"], "complete")
    expect(d["dmms"] == [] and d["search"] is None, "no DMM without --dmm")


def threads():
    d = report("threads", trace("threads"), "--points", "100")
    th = d["threads"]
    expect([t["allocations"] for t in th["threads"]] == [400, 400, 400], f"threads {th['threads']}")
    expect(sorted(th["cross"]) == [[1, 2, 300], [2, 1, 300]], f"cross {th['cross']}")
    expect(d["summary"]["cross_thread_releases"] == 600, "cross-thread releases")
    pts = d["in_use"]["points"]
    expect(len(pts) == 100, f"{len(pts)} points, asked for 100")
    expect(max(p[2] for p in pts) == d["in_use"]["peak"]["bytes"] == d["summary"]["max_in_use_bytes"],
           "the series' highest point is the peak")
    peak = d["in_use"]["peak"]["time_s"]
    expect(any(p[0] == peak and p[2] == d["in_use"]["peak"]["bytes"] for p in pts) or pts[0][0] <= peak <= pts[-1][0],
           f"the peak's time {peak} lies on the series' time axis")
    expect(sum(d["lifetimes"]["events"]) == 900 and sum(d["lifetimes"]["ns"]) == 900, "lifetimes of 900 frees")
    expect(len(d["sites"]["rows"]) == 5 and sum(r["calls"] for r in d["sites"]["rows"]) == 1200, "call sites")
    st = d["stacks"]  # main -> work_a (sites 0-2) / work_b (sites 3-4)
    alloc = st["allocated"]
    expect(alloc["value"] == st["allocated_bytes"] == d["summary"]["total_bytes"], f"allocated {alloc['value']}")
    main = alloc["children"]
    expect(len(main) == 1 and main[0]["value"] == alloc["value"] and len(main[0]["children"]) == 2,
           f"one outermost frame with two callees: {main}")
    expect(sum(c["value"] for c in main[0]["children"]) == alloc["value"], "the callees hold every byte")
    expect(sorted(len(c["children"]) for c in main[0]["children"]) == [2, 3], "sites 0-2 and 3-4")
    expect(st["peak"]["value"] == st["peak_bytes"] == d["summary"]["max_in_use_bytes"], "the peak's bytes")
    lk = d["leaks"]
    expect(lk["objects"] == 300 and lk["end"] == "at exit (status 0)", f"leaks {lk['objects']} {lk['end']}")
    expect(sum(r["blocks"] for r in lk["rows"]) == 300 and sum(r["bytes"] for r in lk["rows"]) == lk["bytes"]
           == d["summary"]["live_bytes_at_end"], "the leaks' rows add up to the blocks live at the end")
    expect(len(lk["rows"]) == lk["sites"] <= 5, f"leak sites {lk['sites']}")
    expect([r["bytes"] for r in lk["rows"]] == sorted((r["bytes"] for r in lk["rows"]), reverse=True),
           "leaks largest first")


def cut():
    src = trace("threads")
    path = os.path.join(work, "cut.trace")
    with open(src, "rb") as f:
        whole = f.read()
    with open(path, "wb") as f:
        f.write(whole[: len(whole) * 6 // 10])
    d = report("cut", path, "--dmm", "kng")
    expect(not d["trace"]["complete"] and d["trace"]["cut"], "the cut is reported")
    expect(0 < d["trace"]["events"] < 2100, f"events {d['trace']['events']}")


def dmms_and_heap_maps():
    spec = os.path.join(share, "dmm", "simulator-paper-table4.json")
    d = report("dmms", trace("threads"), "--dmm", f"kng,lea,s10,{spec}")
    names = [x["name"] for x in d["dmms"]]
    expect(len(names) == 4 and names[0] == "kng", f"dmms {names}")
    for x in d["dmms"]:
        n = x["normalized_to_kng"]
        expect(all(v > 0 for v in n.values()), f"{x['name']} normalized {n}")
        expect(len(x["heap_maps"]) == len(d["moments"]) >= 2, "one heap map per moment")
        for m in x["heap_maps"]:
            expect(m["block_bytes"] <= m["held_bytes"], "blocks inside held memory")
            expect(m["blocks_outside_held"] == 0, "no block outside held memory")
            covered = sum(r[2] - r[1] for r in m["runs"])
            expect(covered <= m["rows"] * m["row_bytes"], "runs inside the map")
            expect(m["live_blocks"] == 0 or m["runs"], "live blocks are drawn")
    kng = d["dmms"][0]["normalized_to_kng"]
    expect(all(abs(v - 1) < 1e-9 for v in kng.values()), f"kng normalized to itself {kng}")


def search():
    d = report("search", trace("threads"), "--search", "--generations", "3", "--population", "6")
    s = d["search"]
    expect(s and s["found"]["allocators"], "a found DMM")
    expect([h[0] for h in s["history"]][-1] == 3, f"history {s['history']}")
    expect(d["dmms"][0]["name"] == "kng" and d["dmms"][-1]["name"] == "found", "found compared with kng")


def bad_spec():
    spec = os.path.join(work, "bad.json")
    with open(spec, "w") as f:
        json.dump({"allocators": [{"sizes": {"min": 0, "max": None}, "mechanism": "no-such-mechanism"}]}, f)
    out = os.path.join(work, "bad.html")
    p = run(trace("threads"), "--dmm", f"kng,{spec}", "-o", out, ok=False)
    expect(p.returncode != 0, "a bad spec fails")
    expect("bad.json" in p.stderr and "mechanism" in p.stderr, f"the error names the file and field: {p.stderr!r}")
    expect(not os.path.exists(out), "no file written")
    expect(not [f for f in os.listdir(work) if f.startswith("bad.html")], "no temporary file left")


for t in (one_event, threads, cut, dmms_and_heap_maps, search, bad_spec):
    test(t)
print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
