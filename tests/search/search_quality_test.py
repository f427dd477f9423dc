#!/usr/bin/env python3
"""The default search's quality on the small bundled traces (issue 35, item
5). When issue 4 closed, `tailor search` found on every bundled trace a DMM
better than every built-in (docs/search.md); later, boolean_sets' search
with seed 1 fell to 0.808 of Kingsley, worse than S10's 0.799: copies of one
DMM filled the elite and the search stopped exploring. This records three
workloads at the sizes of bench/search_gain.py --small (about 1 M events
each), runs the default search with seed 1, and fails unless the found DMM's
fitness is below every built-in's on each.

Usage: search_quality_test.py TAILOR WORKLOAD_DIR WORK_DIR
"""
import json
import os
import subprocess
import sys

SIZES = {"boolean_sets": 150, "cfrac": 2, "olden_health": 400}


def main():
    tailor, bin_dir, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    failed = []
    for name, size in SIZES.items():
        trace = os.path.join(work, f"{name}.trace")
        subprocess.run([tailor, "record", "-q", "-o", trace, "--", os.path.join(bin_dir, f"wl_{name}"), "--size", str(size)],
                       check=True, stdout=subprocess.DEVNULL)
        out = subprocess.run([tailor, "search", trace, "--seed", "1", "--json"], check=True, capture_output=True, text=True)
        fitness = {row["dmm"]: row["fitness"] for row in json.loads(out.stdout)["normalized_to_kng"]}
        found = fitness.pop("found")
        best = min(fitness, key=fitness.get)
        print(f"{name}: found {found:.4f}, best built-in {best} {fitness[best]:.4f}")
        if found >= fitness[best]:
            failed.append(f"{name}: the found DMM ({found:.4f}) does not beat {best} ({fitness[best]:.4f})")
    for f in failed:
        print("FAIL:", f)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
