#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs every misuse program (tests/misuse/cases) under glibc, default
libtailor and secure libtailor (TAILOR_SECURE=1, when the library has it) and
prints what each allocator does: caught (the allocator stopped the program
with a message: SIGABRT), caught (fault) (an access the misuse is made of
faulted: a guard page or no-access region; common.h's Access tells it from
a fault inside malloc or free), prevented (the program found
that the allocator's layout defeated the misuse: a freed block not handed
out at once, freed or fresh memory without earlier data), crash (another
signal), missed (the program ran to its end), n/a (the C library lacks the
function). Cases about one block run at three sizes (small, medium, large).

--check (ctest): fails if default libtailor no longer catches a case listed in
EXPECT_TAILOR, if a libtailor report is not one line naming the function and
the address, if libtailor catches less than glibc, or if secure libtailor
misses a case default libtailor catches or catches less than 90% of them.

  tests/misuse/misuse_table.py --bindir build/misuse --lib build/lib/libtailor.so [--markdown]

--markdown adds a column per peer installed (mimalloc, jemalloc, tcmalloc,
Scudo).
"""
import argparse
import glob
import os
import re
import signal
import subprocess
import sys

# Cases default libtailor must catch (the rest it may miss, as documented in
# docs/allocator.md).
EXPECT_TAILOR = {
    "double_free", "double_free_delayed", "double_free_interleaved", "double_free_large",
    "double_free_huge", "double_free_threads", "invalid_free_stack", "invalid_free_global",
    "invalid_free_interior", "invalid_free_unaligned", "invalid_free_interior_large",
    "invalid_free_wild", "realloc_freed", "sized_delete_wrong", "array_delete_scalar",
    "free_sized_wrong",
}
# Cases only a check of the bytes around blocks can catch (canaries: secure
# mode); glibc catches some through its inline chunk headers.
NEEDS_CANARY = {"overflow_one", "overflow_many", "overflow_memcpy", "underflow_one", "underflow_many", "underflow_memcpy"}
# Cases default libtailor leaves to secure mode although glibc catches some
# of their sizes (docs/allocator.md, "Heap misuse", says why): a freed block
# handed out again at once and freed memory kept as it was are what its fast
# paths are made of; glibc catches the large ones because it maps each block
# above 128 KiB alone and unmaps it at free (a system call and fresh page
# faults per large block), and reuse_realloc because its realloc bypasses
# its per-thread cache.
LEFT_TO_SECURE = {"reuse_malloc", "reuse_similar", "reuse_realloc", "freed_not_cleared", "fresh_not_zero",
                  "use_after_free_write", "use_after_free_write_end"}
# Cases about one block of one size: run at three sizes (small, medium,
# large: common.h's case_size). The rest are about one particular address or
# size (a stack address, malloc(0), a 64 MiB block...) and run once.
SIZELESS = {"double_free_huge", "double_free_large", "double_free_zero", "invalid_free_global",
            "invalid_free_interior_large", "invalid_free_stack", "invalid_free_wild",
            "malloc0_read", "malloc0_write", "malloc0_write_freed"}
SIZES = ("small", "medium", "large")
REPORT = re.compile(r"^tailor: [a-z_ \[\]]+\(\): .*0x[0-9a-f]+")


def caught(verdict):
    return verdict.startswith("caught") or verdict == "prevented"


def run(prog, size, env):
    p = subprocess.run([prog] + ([size] if size else []), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
    err = p.stderr.decode(errors="replace")
    if p.returncode == 77:
        return "n/a", err
    if p.returncode == 3 and "misuse prevented" in err:
        return "prevented", err
    if p.returncode == -signal.SIGABRT:
        return "caught", err
    if p.returncode == 4:  # common.h's Access: the misuse's own access faulted
        return "caught (fault)", err
    if p.returncode < 0:
        return "crash", err
    return "missed", err


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bindir", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()

    base = {k: v for k, v in os.environ.items() if not k.startswith("TAILOR_") and k != "LD_PRELOAD"}
    base["TAILOR_CONFIG"] = "/dev/null"
    modes = [("glibc", dict(base)), ("libtailor", dict(base, LD_PRELOAD=args.lib))]
    secure = subprocess.run(["grep", "-c", "TAILOR_SECURE", args.lib], capture_output=True).stdout.strip()
    if secure not in (b"", b"0"):
        modes.append(("libtailor secure", dict(base, LD_PRELOAD=args.lib, TAILOR_SECURE="1")))
    # The peers where installed (bench/alloc_compare.py's Debian packages)
    # and LLVM's hardened allocator, where libclang-rt-14-dev is installed
    # (the fuzzers need it): the peer of the secure mode. In the table only.
    if args.markdown:
        libdir = "/usr/lib/x86_64-linux-gnu"
        for name, lib in (("mimalloc", "libmimalloc.so.2"), ("jemalloc", "libjemalloc.so.2"),
                          ("tcmalloc", "libtcmalloc_minimal.so.4")):
            if os.path.exists(os.path.join(libdir, lib)):
                modes.append((name, dict(base, LD_PRELOAD=os.path.join(libdir, lib))))
        scudo = glob.glob("/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.scudo_standalone-x86_64.so")
        if scudo:
            modes.append(("scudo", dict(base, LD_PRELOAD=sorted(scudo)[-1])))

    progs = sorted(f for f in os.listdir(args.bindir) if f.startswith("misuse_"))
    if not progs:
        print("no misuse programs in", args.bindir)
        return 1
    rows, problems = [], []
    runs = [(f, f[len("misuse_"):], None) if f[len("misuse_"):] in SIZELESS else (f, f[len("misuse_"):], size)
            for f in progs for size in SIZES]
    runs = list(dict.fromkeys(runs))
    for f, base_name, size in runs:
        name = base_name + (" " + size if size else "")
        row = [name]
        for mode, env in modes:
            verdict, err = run(os.path.join(args.bindir, f), size, env)
            row.append(verdict)
            if mode.startswith("libtailor") and verdict == "caught":  # a report line (not a fault)
                lines = [l for l in err.splitlines() if l.startswith("tailor:")]
                if len(lines) != 1 or not REPORT.match(lines[0]):
                    problems.append(f"{name} ({mode}): report is not one line naming the call and address: {err!r}")
                row[-1] = "caught"
            if mode == "libtailor" and base_name in EXPECT_TAILOR and verdict != "caught":
                problems.append(f"{name}: default libtailor should catch it, got {verdict}: {err.strip()!r}")
        rows.append(row)

    header = ["case"] + [m for m, _ in modes]
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        w = max(len(r[0]) for r in rows) + 2
        print("".join(h.ljust(w if i == 0 else 18) for i, h in enumerate(header)))
        for r in rows:
            print("".join(c.ljust(w if i == 0 else 18) for i, c in enumerate(r)))
    totals = ["caught"] + [f"{sum(caught(r[i]) for r in rows)}/{len(rows)}" for i in range(1, len(header))]
    if args.markdown:
        print("| **" + "** | **".join(totals) + "** |")
    else:
        print("".join(c.ljust(w if i == 0 else 18) for i, c in enumerate(totals)))

    glibc = {r[0] for r in rows if caught(r[1])}
    tailor = {r[0] for r in rows if caught(r[2])}
    if args.check:
        # TAILOR_ON_ERROR: warn reports and skips the call (the program goes
        # on), ignore skips it silently.
        for mode, want_lines in (("warn", 1), ("ignore", 0)):
            for case in ("double_free", "invalid_free_interior", "sized_delete_wrong"):
                env = dict(base, LD_PRELOAD=args.lib, TAILOR_ON_ERROR=mode)
                p = subprocess.run([os.path.join(args.bindir, "misuse_" + case)], env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
                err = p.stderr.decode(errors="replace")
                lines = [l for l in err.splitlines() if l.startswith("tailor:")]
                if p.returncode != 0 or len(lines) != want_lines or "misuse not detected" not in err:
                    problems.append(f"TAILOR_ON_ERROR={mode} {case}: exit {p.returncode}, stderr {err!r}")
        if len(header) > 3:
            secure = {r[0] for r in rows if caught(r[3])}
            zero = {"malloc0_read", "malloc0_write", "malloc0_write_freed"}
            if zero - secure:
                problems.append("secure mode lets an access through a zero-size block pass: " + ", ".join(sorted(zero - secure)))
            if tailor - secure:
                problems.append("secure mode misses what the default catches: " + ", ".join(sorted(tailor - secure)))
            if len(secure) < len(rows):
                problems.append("secure mode misses " + ", ".join(sorted({r[0] for r in rows} - secure)))
            # Each check can be turned off, and then misses its case.
            for var, case, size in (("TAILOR_SECURE_QUARANTINE=0", "reuse_malloc", "small"),
                                    ("TAILOR_SECURE_ZERO=0", "use_after_free_write_end", "medium"),
                                    ("TAILOR_SECURE_ZERO=0", "fresh_not_zero", "small")):
                k, v = var.split("=")
                env = dict(base, LD_PRELOAD=args.lib, TAILOR_SECURE="1", **{k: v})
                verdict, _ = run(os.path.join(args.bindir, "misuse_" + case), size, env)
                if verdict != "missed":
                    problems.append(f"{var}: {case} {size} should be missed with the check off, got {verdict}")
        else:
            problems.append("the library has no secure mode (TAILOR_SECURE)")
        left = {c for c in glibc - tailor if c.split()[0] not in NEEDS_CANARY | LEFT_TO_SECURE}
        if left:
            problems.append("glibc catches what default libtailor misses: " + ", ".join(sorted(left)))
        for p in problems:
            print("FAIL:", p)
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
