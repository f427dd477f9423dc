#!/usr/bin/env python3
"""Checks the length of every function in src/ and include/ (docs/README's
code rules): a function of the CLI (src/cli) at most 80 lines, any other at
most 120, from its first line to its closing brace. Functions are found by
Universal Ctags (Debian's universal-ctags). Prints the longest functions;
exits 1, naming each, if one is over its limit.

usage: scripts/function_lengths.py [--top N] [--ctags PATH] [ROOT]
"""
import argparse
import os
import shutil
import subprocess
import sys

LIMITS = (("src/cli/", 80), ("", 120))  # first matching prefix wins


def limit_of(path):
    return next(limit for prefix, limit in LIMITS if path.startswith(prefix))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", nargs="?", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--top", type=int, default=5, help="longest functions to print")
    ap.add_argument("--ctags", default=shutil.which("ctags-universal") or shutil.which("ctags"))
    args = ap.parse_args()
    if not args.ctags:
        sys.exit("function_lengths: Universal Ctags not found (apt-get install universal-ctags)")
    root = os.path.abspath(args.root)
    out = subprocess.run([args.ctags, "-R", "--languages=C++", "--kinds-C++=f", "--fields=+ne", "-x",
                          "--_xformat=%{line}\t%{end}\t%N\t%F", "src", "include"],
                         cwd=root, capture_output=True, text=True, check=True).stdout
    functions = []
    for line in out.splitlines():
        first, end, name, path = line.split("\t")
        if end == "-":
            continue
        functions.append((int(end) - int(first) + 1, path, int(first), name))
    if not functions:
        sys.exit("function_lengths: ctags found no function under src/ and include/")
    functions.sort(reverse=True)
    for length, path, first, name in functions[:args.top]:
        print(f"{length:5} {path}:{first} {name}")
    over = [f for f in functions if f[0] > limit_of(f[1])]
    for length, path, first, name in over:
        print(f"function_lengths: {path}:{first}: {name} has {length} lines (at most {limit_of(path)})",
              file=sys.stderr)
    print(f"{len(functions)} functions, {len(over)} over their limit")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
