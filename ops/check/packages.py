#!/usr/bin/python3
"""What the tests import and call, against what build.sh installs.

    ops/check/packages.py [ROOT]

A fresh machine has only Debian's base system and what build.sh installs
(its BUILD_PKGS and TEST_PKGS): a test that calls a program or imports a
Python module from any other package passes on a developer's machine and
fails on CI's. This finds them:

- Python modules: every import in tests/ and bench/ (.py files, and the
  `python3 -c` snippets of the shell scripts), less the standard library
  and the project's own modules, is looked up where Python finds it and
  mapped to its Debian package.
- Programs: every word in a command's place in the shell scripts of
  tests/, ops/ and build.sh (a line's start, after | ; && || $( ` and the
  wrappers as_user, env, timeout, nice, exec, runuser -u U --, sh -c) that
  names a program of this machine is mapped to its package.

A package counts as installed by the build when it is listed in build.sh,
is one of the listed packages' dependencies (Depends and Pre-Depends,
followed through), or is part of every Debian system (Priority required or
important, or Essential). Prints one line per module or program from any
other package and exits 1; exits 0 with a summary when there is none.
A module or program that is not on this machine at all is reported too.
"""
import ast
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), "..", ".."))
PATH_DIRS = ("/usr/local/bin", "/usr/bin", "/usr/sbin", "/bin", "/sbin")
# words in a command's place that are shell syntax or the tests' own helpers
SHELL_WORDS = {
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done",
    "case", "esac", "in", "function", "return", "local", "export", "set",
    "unset", "shift", "read", "echo", "printf", "test", "true", "false",
    "cd", "eval", "exec", "exit", "trap", "wait", "kill", "command", "type",
    "source", "declare", "readonly", "break", "continue", "let", "ulimit",
    "umask", "getopts", "hash", "times", "pwd", "builtin", "mapfile", "time",
}
# the first argument of these is a message, not a command
MESSAGE = re.compile(r"""\b(check|step|expect_rc\s+\d+|skip|ok|not_ok|echo|printf|say|die|msg|warn)\s+("[^"]*"|'[^']*')""")


def listed_packages():
    """The package names build.sh lists in its *_PKGS variables."""
    text = open(os.path.join(ROOT, "build.sh")).read()
    pkgs = set()
    for m in re.finditer(r'^[A-Z_]*PKGS="([^"]*)"', text, re.M):
        pkgs.update(m.group(1).split())
    return pkgs


def dpkg_state():
    """Installed packages: name -> (priority, essential, [dependencies])."""
    out = subprocess.run(
        ["dpkg-query", "-W", "-f",
         "${db:Status-Abbrev}\t${Package}\t${Priority}\t${Essential}\t"
         "${Pre-Depends}, ${Depends}\t${Provides}\n"],
        check=True, capture_output=True, text=True).stdout
    info, provides = {}, {}
    for line in out.splitlines():
        st, name, prio, ess, deps, prov = line.split("\t")
        if not st.startswith("ii"):
            continue
        alts = []
        for dep in deps.split(","):
            names = [re.split(r"[ (:]", d.strip())[0] for d in dep.split("|")]
            names = [n for n in names if n]
            if names:
                alts.append(names)
        info[name] = (prio, ess == "yes", alts)
        for p in prov.split(","):
            p = re.split(r"[ (]", p.strip())[0]
            if p:
                provides.setdefault(p, set()).add(name)
    return info, provides


def closure(roots, info, provides):
    """roots and everything they depend on, among installed packages."""
    seen, todo = set(), list(roots)
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        if p not in info:
            continue
        for alts in info[p][2]:
            for a in alts:
                for cand in [a] + sorted(provides.get(a, ())):
                    if cand in info and cand not in seen:
                        todo.append(cand)
    return seen


def file_owners():
    """Path -> package, from dpkg's file lists."""
    owner = {}
    for f in glob.glob("/var/lib/dpkg/info/*.list"):
        pkg = os.path.basename(f)[:-len(".list")].split(":")[0]
        with open(f, errors="replace") as fh:
            for line in fh:
                owner[line.rstrip("\n")] = pkg
    return owner


def owner_of(path, owner):
    """The package that ships path (or the file a symlink there names)."""
    for p in (path, os.path.realpath(path)):
        for q in (p, p.replace("/usr/", "/", 1) if p.startswith("/usr/") else "/usr" + p):
            if q in owner:
                return owner[q]
    return None


def shell_files():
    files = glob.glob(os.path.join(ROOT, "tests", "**", "*.sh"), recursive=True)
    files += glob.glob(os.path.join(ROOT, "ops", "**", "*.sh"), recursive=True)
    files += glob.glob(os.path.join(ROOT, "bench", "*.sh"))
    return files + [os.path.join(ROOT, "build.sh")]


def python_imports():
    """Top-level module -> a place it is imported, from tests/ and bench/."""
    mods = {}
    local = set()
    for f in glob.glob(os.path.join(ROOT, "**", "*.py"), recursive=True):
        local.add(os.path.splitext(os.path.basename(f))[0])
    pyfiles = glob.glob(os.path.join(ROOT, "tests", "**", "*.py"), recursive=True)
    pyfiles += glob.glob(os.path.join(ROOT, "bench", "*.py"))
    pyfiles += glob.glob(os.path.join(ROOT, "ops", "**", "*.py"), recursive=True)
    for f in pyfiles:
        try:
            tree = ast.parse(open(f).read(), f)
        except SyntaxError as e:
            print(f"{f}: cannot parse: {e}", file=sys.stderr)
            continue
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for n in names:
                mods.setdefault(n.split(".")[0], f"{os.path.relpath(f, ROOT)}:{node.lineno}")
    pat = re.compile(r"(?:^|[;\s'\"])(?:import\s+([\w., ]+)|from\s+(\w+)[\w.]*\s+import\b)")
    for f in shell_files():
        for i, line in enumerate(open(f, errors="replace"), 1):
            s = line.strip()
            # a shell line that speaks of python, or a python line (in a
            # heredoc or a multi-line -c): shell has no import or from
            if s.startswith("#") or not ("python" in s or "PY" in s or
                                         re.match(r"(import|from)\s", s)):
                continue
            for m in pat.finditer(line):
                for n in (m.group(1) or m.group(2) or "").split(","):
                    n = n.strip().split(" ")[0].split(".")[0]
                    if re.fullmatch(r"[A-Za-z_]\w*", n):
                        mods.setdefault(n, f"{os.path.relpath(f, ROOT)}:{i}")
    std = set(sys.stdlib_module_names) | set(sys.builtin_module_names)
    return {m: w for m, w in mods.items() if m not in std and m not in local}


# a command's place: a line's start or after an operator, then any of the
# wrappers that run the next word as a program
CMD_PLACE = re.compile(
    r"(?:^|[|;&(`]|\$\(|\bthen\b|\bdo\b|\belse\b|!)\s*"
    r"(?:(?:as_user|exec|env(?:\s+-\w+)*|nice\s+-n\s*-?\d+|timeout\s+\S+|nohup|setsid|"
    r"runuser\s+-u\s+\S+\s+--|sudo|xargs(?:\s+-\w+)*|[A-Za-z_]\w*=\S*)\s+)*"
    r"([A-Za-z][\w.+-]*)")
SH_C = re.compile(r"\bsh\s+-c\s+[\"']")


def shell_programs():
    """Program name -> a place it is called, from the shell scripts."""
    progs = {}
    for f in shell_files():
        for i, line in enumerate(open(f, errors="replace"), 1):
            s = line.strip()
            if s.startswith("#"):
                continue
            s = SH_C.sub("; ", MESSAGE.sub(r"\1 ''", s))
            for m in CMD_PLACE.finditer(s):
                w = m.group(1)
                if re.match(r"\s*=(?!=)", s[m.end():]):
                    continue  # an assignment
                if w not in SHELL_WORDS:
                    progs.setdefault(w, f"{os.path.relpath(f, ROOT)}:{i}")
    return progs


def main():
    info, provides = dpkg_state()
    listed = listed_packages()
    base = {p for p, (prio, ess, _) in info.items() if prio in ("required", "important") or ess}
    have = closure(listed | base, info, provides)
    owner = file_owners()
    bad = []
    import importlib.util
    mods = python_imports()
    for mod, where in sorted(mods.items()):
        try:
            spec = importlib.util.find_spec(mod)
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.origin:
            bad.append(f"python module {mod} ({where}): not on this machine")
            continue
        pkg = owner_of(spec.origin, owner)
        if pkg is None:
            bad.append(f"python module {mod} ({where}): {spec.origin} is in no Debian package")
        elif pkg not in have:
            bad.append(f"python module {mod} ({where}): package {pkg} is not installed by build.sh")
    progs = shell_programs()
    checked = 0
    for prog, where in sorted(progs.items()):
        path = next((os.path.join(d, prog) for d in PATH_DIRS
                     if os.access(os.path.join(d, prog), os.X_OK)), None)
        if path is None:
            continue  # a function, a variable's word, or a program of the project
        checked += 1
        if path.startswith("/usr/local/"):
            bad.append(f"program {prog} ({where}): {path} is not from Debian")
            continue
        pkg = owner_of(path, owner)
        if pkg is not None and pkg not in have:
            bad.append(f"program {prog} ({where}): package {pkg} is not installed by build.sh")
    for b in bad:
        print(b)
    if bad:
        return 1
    print(f"packages: {len(mods)} python modules and {checked} programs the tests use "
          f"all come from build.sh's {len(listed)} packages or the base system")
    return 0


if __name__ == "__main__":
    sys.exit(main())
