#!/usr/bin/env python3
"""The crate's import graph, from its own `use crate::...`, `crate::...` and
`super::...` paths: which top-level module (a folder of src/, or a file at
its root) uses which, the circles among them, and the circles among files.

    python3 bench/imports.py [--arrows]

Standard library only. A path is resolved to the deepest module file it
names; `#[path]` modules are followed. Test modules (`#[cfg(test)]` blocks
at the end of a file) are read too, as they are compiled with the file.
"""
import os
import re
import sys

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")


def modules():
    """Module path (tuple) -> file, for every .rs file under src/."""
    out = {}
    for root, _, files in os.walk(SRC):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(root, f), SRC)
            parts = rel[:-3].split(os.sep)
            if parts == ["lib"] or parts == ["main"]:
                continue
            if parts[-1] == "mod":
                parts = parts[:-1]
            out[tuple(parts)] = rel
    # `#[path = "x.rs"] mod y;` declarations.
    for mod, rel in list(out.items()):
        text = open(os.path.join(SRC, rel)).read()
        here = os.path.dirname(rel) if not rel.endswith("mod.rs") else os.path.dirname(rel)
        for m in re.finditer(r'#\[path\s*=\s*"([^"]+)"\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)', text):
            target = os.path.normpath(os.path.join(here, m.group(1)))
            out.pop(next((k for k, v in out.items() if v == target), None), None)
            out[mod + (m.group(2),)] = target
    return out


def expand(tree):
    """`a::{b, c::{d}}` -> [a::b, a::c::d]."""
    tree = re.sub(r"\s+", "", tree)
    m = re.match(r"^(.*?)\{(.*)\}$", tree)
    if not m:
        return [tree]
    prefix, body = m.groups()
    items, depth, cur = [], 0, ""
    for ch in body:
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    items.append(cur)
    return [p for item in items if item for p in expand(prefix + item)]


def paths(text):
    text = re.sub(r"//[^\n]*", "", text)
    for m in re.finditer(r"\buse\s+([^;]+);", text):
        yield from expand(m.group(1))
    for m in re.finditer(r"(?<![\w:])((?:crate|super)(?:::\w+)+)", text):
        yield m.group(1)


def resolve(path, mod, mods):
    parts = path.split("::")
    if parts[0] == "crate":
        base = ()
        parts = parts[1:]
    elif parts[0] == "super":
        base = mod
        while parts and parts[0] == "super":
            base = base[:-1]
            parts = parts[1:]
    else:
        return None
    full = base + tuple(p for p in parts if p not in ("self", "*"))
    for n in range(len(full), 0, -1):
        if full[:n] in mods:
            return mods[full[:n]]
    return None


def unit(rel):
    head = rel.split(os.sep)[0]
    return head + "/" if os.sep in rel else head


def graph():
    mods = modules()
    edges = {}
    for mod, rel in mods.items():
        text = open(os.path.join(SRC, rel)).read()
        # A file's own module is its folder when it is a mod.rs.
        for p in paths(text):
            # `super` in a file `a/b.rs` (module a::b) means a.
            target = resolve(p, mod, mods)
            if target and target != rel:
                edges.setdefault(rel, set()).add(target)
    return mods, edges


def sccs(nodes, edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return [c for c in out if len(c) > 1]


def main():
    mods, edges = graph()
    files = set(mods.values())
    units = {unit(f) for f in files}
    uedges = {}
    why = {}
    for a, bs in edges.items():
        for b in bs:
            if unit(a) != unit(b):
                uedges.setdefault(unit(a), set()).add(unit(b))
                why.setdefault((unit(a), unit(b)), []).append((a, b))
    ucircles = sccs(units, uedges)
    fcircles = sccs(files, edges)
    crossing = [c for c in fcircles if len({unit(f) for f in c}) > 1]
    print(f"{len(files)} files in {len(units)} top-level modules; "
          f"{sum(len(v) for v in uedges.values())} module-to-module arrows")
    print(f"circles among top-level modules: {len(ucircles)}"
          + "".join(f"\n  {len(c)} modules: {', '.join(c)}" for c in ucircles))
    print(f"circles among files: {len(fcircles)} ({len(crossing)} crossing modules)"
          + "".join(f"\n  {len(c)} files: {', '.join(c)}" for c in fcircles))
    if "--arrows" in sys.argv:
        for c in ucircles:
            members = set(c)
            for (a, b), pairs in sorted(why.items()):
                if a in members and b in members:
                    print(f"  {a} -> {b}: " + ", ".join(f"{x} -> {y}" for x, y in sorted(pairs)))


if __name__ == "__main__":
    main()
