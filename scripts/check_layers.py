#!/usr/bin/env python3
"""Checks that every #include in src/ stays within the layer table of
src/README.md: a file of layer A may include a header of layer B only if B
is A itself or a layer A may use, directly or through the layers those use
(the table's "may use" column names them; "all of the above" is every layer
listed before). Every header of src/ is included by its path from the one
include root src/ ("search/evaluator.h"), so that the layer shows at the
include line: a bare name of a src/ header ("evaluator.h") is an error too.
Exits 1 naming each include that crosses the table or names a header bare.

usage: scripts/check_layers.py [ROOT]
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
# Public headers under include/tailor/, by the layer that implements them.
PUBLIC = {"tailor/tailor.h": "alloc", "tailor/trace": "trace", "tailor/trace.h": "trace",
          "tailor/locality": "locality", "tailor/locality.h": "locality", "tailor/allocator.h": "locality",
          "tailor/list.h": "locality", "tailor/set.h": "locality", "tailor/map.h": "locality"}


def read_table(readme):
    """(layer -> folder, layer -> set of layers it may use) from the README's table, in its order."""
    folders, uses, order = {}, {}, []
    for line in open(readme, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or cells[0] in ("layer", "---") or not line.startswith("|"):
            continue
        layer = cells[0]
        m = re.match(r"`src/([a-z_]+)/`", cells[1])
        if not m:
            continue
        folders[layer] = m.group(1)
        words = set(re.findall(r"[a-z_]+", cells[2].split(";")[0]))
        uses[layer] = set(order) if "all of the above" in cells[2] else words
        order.append(layer)
    for layer in uses:
        uses[layer] &= set(order)
    return folders, uses, order


def closure(uses):
    full = {}
    for layer in uses:
        seen, todo = set(), list(uses[layer])
        while todo:
            x = todo.pop()
            if x not in seen:
                seen.add(x)
                todo.extend(uses.get(x, ()))
        full[layer] = seen
    return full


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    folders, uses, order = read_table(os.path.join(root, "src", "README.md"))
    if not folders:
        sys.exit("check_layers: no layer table in src/README.md")
    allowed = closure(uses)
    layer_of_folder = {f: l for l, f in folders.items()}
    by_name = {}
    for layer, folder in folders.items():
        for dirpath, _, files in os.walk(os.path.join(root, "src", folder)):
            for f in files:
                by_name.setdefault(f, set()).add(layer)
    problems = []
    for layer, folder in folders.items():
        base = os.path.join(root, "src", folder)
        for dirpath, _, files in os.walk(base):
            for f in sorted(files):
                if not f.endswith((".h", ".cpp", ".c")):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    inc = m.group(1)
                    target = None
                    if inc.startswith("tailor/"):
                        key = inc if inc in PUBLIC else "/".join(inc.split("/")[:2])
                        target = PUBLIC.get(key)
                    elif "/" in inc and inc.split("/")[0] in layer_of_folder:
                        target = layer_of_folder[inc.split("/")[0]]
                    elif inc in by_name:
                        problems.append(f"{rel}:{n}: \"{inc}\" is a header of layer "
                                        f"{', '.join(sorted(by_name[inc]))}: name it by its folder "
                                        f"(\"{folders[next(iter(sorted(by_name[inc])))]}/{inc}\")")
                        continue
                    if target is None or target == layer or target in allowed[layer]:
                        continue
                    problems.append(f"{rel}:{n}: layer {layer} includes \"{inc}\" of layer {target}, "
                                    f"which src/README.md does not let it use")
    for p in problems:
        print(p, file=sys.stderr)
    print(f"check_layers: {len(order)} layers, {len(problems)} includes across the table")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
