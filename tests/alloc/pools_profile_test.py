#!/usr/bin/env python3
"""Call-site pools end to end (docs/pools.md), on a bundled workload:

  1. `tailor record` the workload, `tailor pools TRACE -o pools.conf`: at
     least one site is chosen, each line in the profile format;
  2. the workload with TAILOR_POOLS_FILE=pools.conf prints its golden output
     and pools exactly the profile's sites (TAILOR_POOLS_REPORT=1 lists them);
  3. with TAILOR_POOLS=1 (online monitor), every site of the profile is
     pooled too, with the same slot size;
  4. a bad profile gives one line on stderr naming the file and the line,
     and the program runs unpooled with its golden output;
  5. `tailor stats --strides --json`: the profiled sites are reported as
     pooled, and with pools their most common stride is their slot size.

usage: pools_profile_test.py TAILOR LIBTAILOR WORKLOAD SIZE GOLDEN
"""
import json
import os
import re
import subprocess
import sys
import tempfile

tailor, lib, workload, size, golden = sys.argv[1:6]
golden_text = open(golden).read()
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def run(env_extra, label):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TAILOR_")}
    env.update({"LD_PRELOAD": lib, "TAILOR_CONFIG": "/dev/null", "TAILOR_POOLS_REPORT": "1"})
    env.update(env_extra)
    p = subprocess.run([workload, "--size", size], env=env, capture_output=True, text=True)
    check(p.returncode == 0, f"{label}: exit status {p.returncode}")
    check(p.stdout == golden_text, f"{label}: output differs from the golden file")
    sites = set(re.findall(r"^tailor: pooled site (\S+) (0x[0-9a-f]+) slot (\d+)$", p.stderr, re.M))
    other = [l for l in p.stderr.splitlines()
             if l.startswith("tailor:") and "pooled site" not in l and not l.startswith("tailor: pools: ")]
    return sites, other


with tempfile.TemporaryDirectory(prefix="tailor-pools-") as d:
    trace = os.path.join(d, "w.trace")
    conf = os.path.join(d, "pools.conf")
    subprocess.run([tailor, "record", "-o", trace, "--", workload, "--size", size], check=True,
                   stdout=subprocess.DEVNULL)
    out = subprocess.run([tailor, "pools", trace, "-o", conf], check=True, capture_output=True, text=True).stdout
    check("site(s) chosen" in out, "tailor pools prints its summary")
    lines = [l for l in open(conf).read().splitlines() if l and not l.startswith("#")]
    check(len(lines) >= 1, "the profile lists at least one site")
    profile = set()
    for l in lines:
        m = re.match(r"^site (\S+) (0x[0-9a-f]+) (\d+)\s+#", l)
        check(m is not None, f"profile line format: {l!r}")
        if m:
            slot = (int(m.group(3)) + 15) // 16 * 16
            profile.add((m.group(1), m.group(2), str(slot)))

    offline, other = run({"TAILOR_POOLS_FILE": conf}, "profile")
    check(not other, f"profile: unexpected messages {other}")
    check(offline == profile, f"profile: pooled sites {sorted(offline)} != profile {sorted(profile)}")

    online, other = run({"TAILOR_POOLS": "1"}, "online")
    check(not other, f"online: unexpected messages {other}")
    check(profile <= online, f"online: profile sites {sorted(profile - online)} not pooled online")

    bad = os.path.join(d, "bad.conf")
    with open(bad, "w") as f:
        f.write("# a comment\nsite wl 0x10 32\nsite wl zz 32\n")
    sites, other = run({"TAILOR_POOLS_FILE": bad}, "bad profile")
    check(len(other) == 1 and bad in other[0] and "line 3" in other[0] and "running without pools" in other[0],
          f"bad profile: one clear line expected, got {other}")
    check(not sites, "bad profile: nothing pooled")

    strides = json.loads(subprocess.run([tailor, "stats", trace, "--strides", "--json", "--top", "50"], check=True,
                                        capture_output=True, text=True).stdout)
    by_offset = {(s["module"], hex(s["module_offset"])): s for s in strides}
    for module, offset, slot in profile:
        s = by_offset.get((module, offset))
        check(s is not None, f"stats --strides reports the profiled site {module} {offset}")
        if s is not None:
            check(s["pooled"] and s["slot"] == int(slot), f"stats --strides: {module} {offset} pooled, slot {slot}")
            # Pooling makes strides regular (the pool allocation paper): the most common one is the slot, at least as
            # often as the recorded most common one (an area boundary may break a run of strides).
            check(s["pool_stride"] == int(slot) and s["pool_stride_share"] >= s["stride_share"] - 0.01,
                  f"stats --strides: {module} {offset} with pools strides by its slot "
                  f"({s['pool_stride']} {s['pool_stride_share']:.2f}, recorded {s['stride_share']:.2f})")

    # --every-site models a pooling of --strides: alone it is an error, not ignored.
    alone = subprocess.run([tailor, "stats", trace, "--every-site"], capture_output=True, text=True)
    check(alone.returncode != 0 and "--every-site requires --strides" in alone.stderr,
          f"stats --every-site without --strides: status {alone.returncode}, {alone.stderr.strip()!r}")

# The report reaches stderr when the program closes it at exit, as coreutils
# do (close_stdout): `sort` of a few lines makes enough requests to decide sites.
env = {k: v for k, v in os.environ.items() if not k.startswith("TAILOR_")}
env.update({"LD_PRELOAD": lib, "TAILOR_CONFIG": "/dev/null", "TAILOR_POOLS": "1", "TAILOR_POOLS_REPORT": "1"})
p = subprocess.run(["sort"], input="".join(f"{i * 7919 % 1000}\n" for i in range(2000)), env=env,
                   capture_output=True, text=True)
check(p.returncode == 0 and re.search(r"^tailor: pools: \d+ sites, \d+ pooled", p.stderr, re.M) is not None,
      f"TAILOR_POOLS_REPORT under sort, which closes stderr at exit: status {p.returncode}, {p.stderr.strip()!r}")

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("pools profile: ok")
