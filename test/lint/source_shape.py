#!/usr/bin/python3
"""The shape issue #30 asked of src/, kept by scripts/lint: no C file over
450 lines, no function over 60, and no circle among the modules (a.c
including b.h, b.c existing, is a call from a to b).  Prints what breaks a
rule and exits 1, or prints a summary line."""

import glob
import os
import re
import sys

MAX_FILE_LINES = 450
MAX_FUNCTION_LINES = 60
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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
    """Strongly connected components of more than one module (Tarjan)."""
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


def main():
    problems = []
    calls = {}
    sources = sorted(glob.glob(os.path.join(ROOT, "src", "**", "*.c"), recursive=True))
    modules = {os.path.basename(p)[:-2] for p in sources}
    for path in sources:
        rel = os.path.relpath(path, ROOT)
        with open(path) as f:
            lines = f.read().splitlines()
        if len(lines) > MAX_FILE_LINES:
            problems.append("%s: %d lines (at most %d)" % (rel, len(lines), MAX_FILE_LINES))
        problems.extend(long_functions(rel, lines))
        module = os.path.basename(path)[:-2]
        included = re.findall(r'^#include "(\w+)\.h"', "\n".join(lines), re.M)
        calls[module] = {m for m in included if m in modules and m != module}
    for component in circles(calls):
        problems.append("src: a circle of calls among %s (%s)" % (
            ", ".join(component),
            "; ".join("%s -> %s" % (m, ", ".join(sorted(calls[m] & set(component))))
                      for m in component)))
    for p in problems:
        print(p)
    if problems:
        return 1
    print("source shape: %d C files, none over %d lines, no function over %d, no circle"
          % (len(sources), MAX_FILE_LINES, MAX_FUNCTION_LINES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
