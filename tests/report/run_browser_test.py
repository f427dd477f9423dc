#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# ctest's entry to the browser tests: makes a trace with three threads
# (make_trace), writes its report with every section (DMMs with heap maps, a
# short search) and runs browser_test.py on it; the screenshot lands in WORK.
# Mode sampled: the same trace marked as sampled (record --sample), its
# report (no DMM: a sampled trace cannot be simulated) rendered.
# Usage: run_browser_test.py TAILOR MAKE_TRACE SHARE_DIR WORK render|sort|flame|sampled
import os
import shutil
import subprocess
import sys

tailor, make_trace, share, work, mode = sys.argv[1:6]
here = os.path.dirname(os.path.abspath(__file__))
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
trace = os.path.join(work, "threads.trace")
report = os.path.join(work, "report.html")
if mode == "sampled":
    subprocess.run([make_trace, trace, "sampled"], check=True)
    subprocess.run([tailor, "report", trace, "-o", report], check=True)
    mode = "render"
else:
    subprocess.run([make_trace, trace, "threads"], check=True)
    subprocess.run([tailor, "report", trace, "--dmm", "kng,lea," + os.path.join(share, "dmm", "simulator-paper-table4.json"),
                    "--search", "--generations", "3", "--population", "6", "-o", report], check=True)
args = [sys.executable, os.path.join(here, "browser_test.py"), mode, report]
if mode == "render":
    args += ["--screenshot", os.path.join(work, "report.png")]
sys.exit(subprocess.run(args).returncode)
