#!/usr/bin/python3
"""Reads a part of the server log written under scripts/fuzz's settings
(log_line_prefix = '%m [%p] %e ', log_min_error_statement = error) and
reports what went wrong in the server while that part ran:

  - crashes: a server process terminated by a signal or an exception, or
    exiting with a code other than 0 and 1, or a PANIC; with the query the
    process was running, from the postmaster's DETAIL line;
  - internal errors (SQLSTATE XX000), with the statement that raised them;
  - errors counted by SQLSTATE.

Usage: logscan.py LOG START END LABEL [SUMMARY.json]   (START, END: byte offsets)
"""

import collections
import json
import re
import sys

ENTRY = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \S+ \[(\d+)\] (\w{5}) "
                   r"(LOG|ERROR|FATAL|PANIC|WARNING|DETAIL|HINT|CONTEXT|STATEMENT|NOTICE"
                   r"|INFO|DEBUG\d?|QUERY|LOCATION):  (.*)$")
CRASH = re.compile(r"process \(PID \d+\) (was terminated by (signal|exception)"
                   r"|exited with exit code (?![01]\b))")
def entries(text):
    """(pid, sqlstate, level, message) per log entry, continuation lines joined."""
    current = None
    for line in text.splitlines():
        m = ENTRY.match(line)
        if m:
            if current:
                yield current
            current = [m.group(1), m.group(2), m.group(3), m.group(4)]
        elif current:
            current[3] += "\n" + line
    if current:
        yield current


def shorten(s, n=400):
    s = " ".join(s.split())
    return s if len(s) <= n else s[:n] + "..."


def main():
    path, start, end, label = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    with open(path, "rb") as f:
        f.seek(start)
        text = f.read(end - start).decode("utf-8", "replace")
    states = collections.Counter()
    internal = collections.OrderedDict()
    crashes = []
    restarts = 0
    last_error = {}
    pending_crash = None
    for pid, state, level, msg in entries(text):
        if level in ("ERROR", "FATAL", "PANIC"):
            states[state] += 1
            last_error[pid] = (state, msg)
            if level == "PANIC":
                crashes.append({"log": "PANIC: " + msg, "query": ""})
            if state == "XX000":
                key = re.sub(r"\d+", "N", msg)
                internal.setdefault(key, [msg, "", 0])
                internal[key][2] += 1
        elif level == "STATEMENT" and state == "XX000":
            key = re.sub(r"\d+", "N", last_error.get(pid, ("", ""))[1])
            if key in internal and not internal[key][1]:
                internal[key][1] = msg
        elif level == "LOG" and CRASH.search(msg):
            pending_crash = {"log": msg, "query": ""}
            crashes.append(pending_crash)
        elif level == "DETAIL" and pending_crash is not None and \
                msg.startswith("Failed process was running: "):
            pending_crash["query"] = msg[len("Failed process was running: "):]
            pending_crash = None
        elif level == "LOG" and msg.startswith("all server processes terminated; reinitializing"):
            restarts += 1
    print("%s: server log: %d errors; by SQLSTATE: %s" % (
        label, sum(states.values()),
        ", ".join("%s %d" % kv for kv in states.most_common(8)) or "none"))
    print("%s: internal errors (XX000): %d distinct" % (label, len(internal)))
    for msg, stmt, n in internal.values():
        print("    %dx %s\n       query: %s" % (n, shorten(msg, 200), shorten(stmt) or "(not logged)"))
    print("%s: crashes: %d (crash restarts: %d)" % (label, len(crashes), restarts))
    # Grouped by how the process ended, with the first few queries of each.
    groups = collections.OrderedDict()
    for c in crashes:
        groups.setdefault(re.sub(r"PID \d+", "PID N", c["log"]), []).append(c["query"])
    for how, queries in groups.items():
        print("    %dx %s" % (len(queries), shorten(how, 200)))
        for q in queries[:3]:
            print("       query: %s" % (shorten(q) or "(none)"))
        if len(queries) > 3:
            print("       ... and %d more: see the server log" % (len(queries) - 3))
    if len(sys.argv) > 5:
        with open(sys.argv[5], "w") as f:
            json.dump({"crashes": len(crashes), "restarts": restarts,
                       "internal": len(internal), "errors": sum(states.values())}, f)


if __name__ == "__main__":
    main()
