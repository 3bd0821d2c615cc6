#!/usr/bin/python3
"""The Python under test/ held to the limits src/ has (source_shape.py):
no file over 450 lines, no function or method over 60, counted from its
def line to its last line.  Prints what breaks a rule and exits 1, or
prints a summary line."""

import ast
import glob
import os
import sys

MAX_FILE_LINES = 450
MAX_FUNCTION_LINES = 60
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def problems_of(rel, text):
    lines = len(text.splitlines())
    if lines > MAX_FILE_LINES:
        yield "%s: %d lines (at most %d)" % (rel, lines, MAX_FILE_LINES)
    for node in ast.walk(ast.parse(text, rel)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                yield "%s:%d: function %s has %d lines (at most %d)" % (
                    rel, node.lineno, node.name, length, MAX_FUNCTION_LINES)


def main():
    paths = sorted(glob.glob(os.path.join(ROOT, "test", "**", "*.py"), recursive=True))
    problems = []
    for path in paths:
        rel = os.path.relpath(path, ROOT)
        with open(path) as f:
            problems.extend(problems_of(rel, f.read()))
    for p in problems:
        print(p)
    if problems:
        return 1
    print("python shape: %d files under test/, none over %d lines, no function over %d"
          % (len(paths), MAX_FILE_LINES, MAX_FUNCTION_LINES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
