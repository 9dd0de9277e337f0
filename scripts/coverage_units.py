#!/usr/bin/env python3
"""coverage_units.py BUILD_DIR - after a run of a --coverage build, one line a
unit (a .c file under payload/, cli/, common/ or injector/) whose functions
ran: the unit, functions run of its functions, lines run of its lines, and
the names of the functions run. A unit built more than once (common/ in the
payload, the cli and the unit tests) counts a function as run when any of
its builds ran it. Read by people choosing the `# Covers:` lines of the e2e
tests (make coverage, mk/coverage.mk)."""
import json, os, subprocess, sys

UNIT_DIRS = ("payload/", "cli/", "common/", "injector/")


def gcov_json(gcda):
    out = subprocess.run(["gcov", "-j", "-t", gcda], capture_output=True, check=False)
    for chunk in out.stdout.decode(errors="replace").splitlines():
        chunk = chunk.strip()
        if chunk.startswith("{"):
            yield json.loads(chunk)


def main():
    build = sys.argv[1]
    funcs, lines = {}, {}
    for top, _, names in os.walk(build):
        for name in names:
            if not name.endswith(".gcda"):
                continue
            for doc in gcov_json(os.path.join(top, name)):
                for f in doc.get("files", []):
                    src = os.path.normpath(f["file"])
                    if not src.startswith(UNIT_DIRS) or not src.endswith(".c"):
                        continue
                    fr = funcs.setdefault(src, {})
                    for fn in f.get("functions", []):
                        fr[fn["demangled_name"]] = fr.get(fn["demangled_name"], 0) + fn["execution_count"]
                    lr = lines.setdefault(src, {})
                    for ln in f.get("lines", []):
                        lr[ln["line_number"]] = lr.get(ln["line_number"], 0) + ln["count"]
    for src in sorted(funcs):
        run = sorted(n for n, c in funcs[src].items() if c > 0)
        if not run:
            continue
        lr = lines[src]
        print("%s\t%d/%d functions\t%d/%d lines\t%s" % (
            src, len(run), len(funcs[src]), sum(1 for c in lr.values() if c > 0), len(lr), " ".join(run)))


if __name__ == "__main__":
    main()
