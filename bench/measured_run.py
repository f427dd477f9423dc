"""One measured run of a program, as the allocator comparisons
(alloc_compare.py, pools_compare.py) take it: wall time, peak RSS and output.
Shared so that both measure peak RSS the same way."""
import subprocess
import sys
import tempfile
import time


def run_with_peak_rss(cmd, env, rss_file_prefix, failure_message):
    """Wall time (seconds), peak RSS (KiB) and the CompletedProcess (stdout
    and stderr as bytes) of one run of cmd under env; when the run fails,
    exits with failure_message(proc).

    Peak RSS comes from GNU time's %M (wait4's ru_maxrss of its child): a
    child forked straight from Python would count Python's own pages, which
    the kernel records in ru_maxrss at exec."""
    with tempfile.NamedTemporaryFile("r", prefix=rss_file_prefix, suffix=".rss") as rss_file:
        start = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file.name] + cmd, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            sys.exit(failure_message(proc))
        rss = int(rss_file.read().split()[-1])
    return elapsed, rss, proc
