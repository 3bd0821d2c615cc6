#!/usr/bin/python3
"""The shape of src/ (issues #30 and #42), kept by scripts/lint: no C file
over 450 lines, no function over 60, and calls that go one way.  A call is a
symbol one object file uses and another defines (nm), so it is seen through
any header, a shared one included.  Among files and among folders there is
no circle; a folder calls only the folders below it in LAYERS and includes
only their public headers (PUBLIC).  A setting's C variable is written by
the GUC machinery only: no file but settings.c assigns to it.  Shared memory
is one segment, which only idgen.c asks for and makes.  Run after make;
prints what breaks a rule and exits 1, or prints a summary."""

import glob
import os
import re
import subprocess
import sys

MAX_FILE_LINES = 450
MAX_FUNCTION_LINES = 60
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(ROOT, "src")

# The folders of src/, lowest first: each calls only those before it.  "."
# is src/ itself, the module's entry (_PG_init, the WAL resource manager).
LAYERS = ["base", "defs", "marks", "horizon", "lease", "provenance", "gen", "sql", "."]
# The one header of a folder that other folders include; base/ is the
# ground of small modules, each header its own module's; sql/ and src/ are
# included by no one.
PUBLIC = {"defs": "layout_defs.h", "marks": "marks.h", "horizon": "horizon.h",
          "lease": "lease.h", "provenance": "provenance.h", "gen": "gen.h"}
SETTINGS = "base/settings"
# idgen.c makes the one segment and hands each module its part
SHMEM = "idgen"
SHMEM_CALLS = {"ShmemInitStruct", "RequestAddinShmemSpace"}


def long_functions(path, lines):
    """A definition starts at a line beginning with its name and "(" (the
    return type on the line before, as pgindent has it) and ends at the
    first "}" in column 0."""
    start = name = None
    for number, line in enumerate(lines, 1):
        m = re.match(r"([A-Za-z_]\w*)\(", line)
        if m and start is None:
            start, name = number, m.group(1)
        elif line.startswith("}") and start is not None:
            if number - start > MAX_FUNCTION_LINES:
                yield "%s:%d: function %s has %d lines (at most %d)" % (
                    path, start, name, number - start, MAX_FUNCTION_LINES)
            start = None


def circles(calls):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(calls[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(calls):
        if v not in index:
            visit(v)
    return found


def private_includes(paths):
    """A header of another folder that is not its public one."""
    for path in paths:
        folder = os.path.dirname(os.path.relpath(path, SRC)) or "."
        with open(path) as f:
            for number, line in enumerate(f, 1):
                m = re.match(r'#include "(\w+)/(\w+\.h)"', line)
                if m and m.group(1) in LAYERS and m.group(1) != folder and \
                        m.group(1) != "base" and PUBLIC.get(m.group(1)) != m.group(2):
                    yield "%s:%d: includes %s/%s, not the folder's public header (%s)" % (
                        os.path.relpath(path, ROOT), number, m.group(1), m.group(2),
                        PUBLIC.get(m.group(1), "none"))


def setting_writes(modules):
    """Assignments to and increments of the variables settings.h declares
    (or of their fields), outside settings.c.  A const pointer to one, as
    a plan's limits, reads it."""
    with open(os.path.join(SRC, SETTINGS + ".h")) as f:
        names = re.findall(r"^extern\s[\w\s*]*?\b(idgen_\w+);", f.read(), re.M)
    write = re.compile(r"(?:\+\+|--)\s*\b(%s)\b|\b(%s)\b(?:\.\w+)?\s*(?:[-+*/%%&|^]?=(?!=)|\+\+|--)"
                       % ("|".join(names), "|".join(names)))
    for m in modules:
        if m == SETTINGS:
            continue
        with open(os.path.join(SRC, m + ".c")) as f:
            for number, line in enumerate(f, 1):
                for hit in write.finditer(line):
                    yield "src/%s.c:%d: writes %s, a setting's variable: only %s.c does" % (
                        m, number, hit.group(1) or hit.group(2), SETTINGS)


def symbols(obj):
    """The global symbols an object file defines, and those it uses."""
    out = subprocess.run(["nm", "-P", obj], check=True, capture_output=True, text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        name, kind = line.split()[:2]
        if kind == "U":
            used.add(name)
        elif kind.isupper():
            defined.add(name)
    return defined, used


def call_graph(modules, problems):
    """Module (path under src/ without ".c") -> the modules it calls."""
    defined, used, owner = {}, {}, {}
    for m in modules:
        obj = os.path.join(SRC, m + ".o")
        if not os.path.exists(obj) or os.path.getmtime(obj) < os.path.getmtime(obj[:-2] + ".c"):
            problems.append("src/%s.o: missing or older than its source (run make first)" % m)
            continue
        defined[m], used[m] = symbols(obj)
        if m != SHMEM:
            problems.extend("src/%s.c: calls %s: only src/%s.c makes shared memory, a part for each"
                            " module" % (m, s, SHMEM) for s in sorted(used[m] & SHMEM_CALLS))
        for s in defined[m]:
            owner[s] = m
    return {m: {owner[s] for s in used[m] if s in owner and owner[s] != m} for m in defined}


def report_circles(kind, calls, problems):
    for component in circles(calls):
        problems.append("src: a circle of calls among %s %s (%s)" % (
            kind, ", ".join(component),
            "; ".join("%s -> %s" % (m, ", ".join(sorted(calls[m] & set(component))))
                      for m in component)))


def main():
    problems = []
    sources = sorted(glob.glob(os.path.join(SRC, "**", "*.c"), recursive=True))
    modules = [os.path.relpath(p, SRC)[:-2] for p in sources]
    for path in sources:
        rel = os.path.relpath(path, ROOT)
        with open(path) as f:
            lines = f.read().splitlines()
        if len(lines) > MAX_FILE_LINES:
            problems.append("%s: %d lines (at most %d)" % (rel, len(lines), MAX_FILE_LINES))
        problems.extend(long_functions(rel, lines))
    for m in modules:
        if (os.path.dirname(m) or ".") not in LAYERS:
            problems.append("src/%s.c: its folder is in no layer (LAYERS in %s)"
                            % (m, os.path.relpath(__file__, ROOT)))
    problems.extend(setting_writes(modules))
    problems.extend(private_includes(sorted(glob.glob(os.path.join(SRC, "**", "*.[ch]"),
                                                      recursive=True))))
    calls = call_graph(modules, problems)
    folder = {m: os.path.dirname(m) or "." for m in calls}
    folders = {f: set() for f in folder.values()}
    for m, called in calls.items():
        for c in called:
            if folder[c] == folder[m]:
                continue
            folders[folder[m]].add(folder[c])
            if folder[c] in LAYERS and folder[m] in LAYERS and \
                    LAYERS.index(folder[c]) > LAYERS.index(folder[m]):
                problems.append("src/%s.c calls up, into src/%s.c (%s is below %s in LAYERS)"
                                % (m, c, folder[m], folder[c]))
    report_circles("files", calls, problems)
    report_circles("folders", folders, problems)
    for p in problems:
        print(p)
    if problems:
        return 1
    print("source shape: %d C files in %d folders, none over %d lines, no function over %d;"
          " %d calls between files, none in a circle, none up a folder, none through a private"
          " header; no setting written outside settings.c, no shared memory made outside idgen.c"
          % (len(sources), len(folders), MAX_FILE_LINES, MAX_FUNCTION_LINES,
             sum(len(c) for c in calls.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
