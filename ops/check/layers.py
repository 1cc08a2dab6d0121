#!/usr/bin/env python3
"""The architecture's one-way rules, checked on src/.

A module is a .c and its .h (src/search/best.c + src/search/best.h). Two
graphs are read: A includes B (a file of A has #include "B.h"), and A
calls B (A's object needs a symbol that B's object defines, read with nm
from OBJDIR). Neither may have a circle. Besides:
  - only src/xloop.c and src/cmd/ include src/cmd/ (the command layer);
  - a folder's private header (*-impl.h) is included only in its folder;
  - a pure module includes only pure modules (and system headers);
  - src/lib/ (the small libraries) includes only src/lib/;
  - no file is over 900 lines without "Over 900 lines: REASON" in its
    first five lines.
usage: layers.py SRC [OBJDIR]   (exit 1 and one line per finding)
"""
import os
import re
import subprocess
import sys

PURE = {"lib/util", "lib/buf", "lib/jsonw", "tags", "glossary", "stages/judge", "slurm/reasons", "memsample",
        "jobsh/secrets", "lib/sha256", "slurm/parse", "slurm/parse-sacct", "slurm/parse-sacctmgr",
        "slurm/parse-hostlist", "slurm/parse-gres", "slurm/parse-sbatch", "slurm/parse-scontrol", "slurm/parse-sinfo",
        "slurm/parse-squeue", "slurm/parse-impl", "jobsh/jobsh", "jobsh/lex",
        "jobsh/jobsh-impl",
        "jobsh/parse", "jobsh/directives", "search/noise", "search/gp", "search/choose", "search/paired", "search/propose-value", "search/propose-change", "search/propose-impl",
        "search/propose", "search/propose-confirm", "search/confkey", "search/space", "lib/banned", "jobs/progress",
        "jobs/stop-rule"}


LONG = 900
ENTRY = re.compile(r"^cmd_[a-z0-9_]+_entry$")


def modules(src):
    """Every module name (path under src/ without the extension) -> its files."""
    mods = {}
    for d, _, files in os.walk(src):
        for f in files:
            if f.endswith((".c", ".h")):
                p = os.path.join(d, f)
                m = os.path.relpath(p, src)[:-2]
                mods.setdefault(m, []).append(p)
    return mods


def include_graph(src, mods):
    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)\.h"', re.M)
    g = {m: set() for m in mods}
    for m, files in mods.items():
        for p in files:
            for h in inc.findall(open(p, encoding="utf-8").read()):
                # a private header belongs to its folder's modules
                if h in mods and h != m and not m.endswith("-impl"):
                    g[m].add(h)
    return g


def call_graph(objdir, mods):
    """A -> B when A's object uses a symbol B's object defines."""
    defs, uses = {}, {}
    objs = {m: os.path.join(objdir, m + ".o") for m in mods}
    objs = {m: o for m, o in objs.items() if os.path.exists(o)}
    # one nm for every object ("FILE: SYMBOL TYPE ..." a line): an nm a
    # file cost the suite 180 processes, 18 CPU-s under the ASan build
    lines = {o: [] for o in objs.values()}
    if objs:
        out = subprocess.run(["nm", "-P", "-A"] + list(objs.values()),
                             capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            o, _, rest = line.partition(": ")
            if o in lines:
                lines[o].append(rest)
    for m, o in objs.items():
        uses[m] = set()
        for line in lines[o]:
            f = line.split()
            if len(f) < 2:
                continue
            if f[1] == "U":
                # the command table names each command's entry: that is
                # registration, not a call
                if not ENTRY.match(f[0]):
                    uses[m].add(f[0])
            elif f[1] in "TDBR":
                defs.setdefault(f[0], m)
    g = {m: set() for m in uses}
    for m, syms in uses.items():
        for s in syms:
            d = defs.get(s)
            if d and d != m:
                g[m].add(d)
    return g


def cycles(g):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
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
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    src = sys.argv[1]
    mods = modules(src)
    inc = include_graph(src, mods)
    bad = []
    for comp in cycles(inc):
        bad.append("include circle: " + " ".join(comp))
    for m, deps in sorted(inc.items()):
        for d in sorted(deps):
            if d.startswith("cmd/") and not (m.startswith("cmd/") or m == "xloop"):
                bad.append("%s includes the command layer (%s)" % (m, d))
            if d.endswith("-impl") and os.path.dirname(d) != os.path.dirname(m):
                bad.append("%s includes %s's private header %s" % (m, os.path.dirname(d), d))
            if m in PURE and d not in PURE:
                bad.append("pure %s includes %s" % (m, d))
            if m.startswith("lib/") and not d.startswith("lib/"):
                bad.append("%s is a small library and includes %s" % (m, d))
    if len(sys.argv) == 3:
        calls = call_graph(sys.argv[2], mods)
        if not calls:
            bad.append("no objects in '%s'" % sys.argv[2])
        for comp in cycles(calls):
            bad.append("call circle: " + " ".join(comp))
        for m, deps in sorted(calls.items()):
            for d in sorted(deps):
                if m in PURE and d not in PURE:
                    bad.append("pure %s calls %s" % (m, d))
    for files in mods.values():
        for p in files:
            lines = open(p, encoding="utf-8").read().split("\n")
            if len(lines) > LONG and not any("Over %d lines: " % LONG in l for l in lines[:5]):
                bad.append("%s has %d lines and no reason at its top" % (p, len(lines) - 1))
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
