#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs every misuse program (tests/misuse/cases) under glibc, default
libtailor and secure libtailor (TAILOR_SECURE=1, when the library has it) and
prints what each allocator does: caught (the allocator stopped the program
with a message: SIGABRT), caught (fault) (an access the misuse is made of
faulted, for the cases in FAULT_CATCHES), crash (another signal), missed (the program ran to
its end), n/a (the C library lacks the function).

--check (ctest): fails if default libtailor no longer catches a case listed in
EXPECT_TAILOR, if a libtailor report is not one line naming the function and
the address, if libtailor catches less than glibc, or if secure libtailor
misses a case default libtailor catches or catches less than 90% of them.

  tests/misuse/misuse_table.py --bindir build/misuse --lib build/lib/libtailor.so [--markdown]
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
NEEDS_CANARY = {"overflow_one", "overflow_many", "underflow_one", "underflow_many"}
# Cases whose misuse is an access, not a call: an allocator stops them by
# making the access fault (SIGSEGV), as secure mode's no-access region for
# malloc(0) does; there is no report line. A fault counts as caught here
# only, and secure mode must catch each of them.
FAULT_CATCHES = {"malloc0_read", "malloc0_write", "malloc0_write_freed"}
REPORT = re.compile(r"^tailor: [a-z_ \[\]]+\(\): .*0x[0-9a-f]+")


def run(prog, env):
    p = subprocess.run([prog], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
    err = p.stderr.decode(errors="replace")
    if p.returncode == 77:
        return "n/a", err
    if p.returncode == -signal.SIGABRT:
        return "caught", err
    if p.returncode in (-signal.SIGSEGV, -signal.SIGBUS) and os.path.basename(prog)[len("misuse_"):] in FAULT_CATCHES:
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
    # LLVM's hardened allocator, where libclang-rt-14-dev is installed (the
    # fuzzers need it): the peer of the secure mode.
    scudo = glob.glob("/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.scudo_standalone-x86_64.so")
    if scudo and args.markdown:
        modes.append(("scudo", dict(base, LD_PRELOAD=sorted(scudo)[-1])))

    progs = sorted(f for f in os.listdir(args.bindir) if f.startswith("misuse_"))
    if not progs:
        print("no misuse programs in", args.bindir)
        return 1
    rows, problems = [], []
    for f in progs:
        name = f[len("misuse_"):]
        row = [name]
        for mode, env in modes:
            verdict, err = run(os.path.join(args.bindir, f), env)
            row.append(verdict)
            if mode.startswith("libtailor") and verdict == "caught":  # a report line (not a fault)
                lines = [l for l in err.splitlines() if l.startswith("tailor:")]
                if len(lines) != 1 or not REPORT.match(lines[0]):
                    problems.append(f"{name} ({mode}): report is not one line naming the call and address: {err!r}")
                row[-1] = "caught"
            if mode == "libtailor" and name in EXPECT_TAILOR and verdict != "caught":
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
    totals = ["caught"] + [f"{sum(r[i].startswith('caught') for r in rows)}/{len(rows)}" for i in range(1, len(header))]
    if args.markdown:
        print("| **" + "** | **".join(totals) + "** |")
    else:
        print("".join(c.ljust(w if i == 0 else 18) for i, c in enumerate(totals)))

    glibc = {r[0] for r in rows if r[1].startswith("caught")}
    tailor = {r[0] for r in rows if r[2].startswith("caught")}
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
            secure = {r[0] for r in rows if r[3].startswith("caught")}
            if FAULT_CATCHES - secure:
                problems.append("secure mode lets an access through a zero-size block pass: " + ", ".join(sorted(FAULT_CATCHES - secure)))
            if tailor - secure:
                problems.append("secure mode misses what the default catches: " + ", ".join(sorted(tailor - secure)))
            if len(secure) * 10 < len(rows) * 9:
                problems.append(f"secure mode catches {len(secure)}/{len(rows)}, below 90%")
        else:
            problems.append("the library has no secure mode (TAILOR_SECURE)")
        if glibc - tailor - NEEDS_CANARY:
            problems.append("glibc catches what default libtailor misses: " + ", ".join(sorted(glibc - tailor - NEEDS_CANARY)))
        for p in problems:
            print("FAIL:", p)
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
