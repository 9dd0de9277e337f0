#!/usr/bin/env python3
"""check_test_names.py - every unit has a test that says it tests it.

A unit is a .c file under payload/, cli/, common/ or injector/. It passes
when either
  - a unit test is named after it: tests/unit/P.c or tests/unit/P_WHAT.c,
    P being the unit's path with '/' as '_' and no .c (cli/util/parse.c:
    cli_util_parse.c; cli/link/client.c: cli_link_client_push.c too), or
    for a file named as its folder, the folder's path (cli/symbolize/
    symbolize.c: cli_symbolize.c); or
  - a test names it on a `Covers:` line of its header: `# Covers: a.c, b.c`
    near the top of tests/e2e/*.sh, ` * Covers: a.c, b.c` in the first
    comment of tests/unit/*.c, each unit by its path from the top of the
    tree. The line says what the test was seen to run (make coverage,
    mk/coverage.mk), not what it is about.
A `Covers:` entry that names no unit (a file that does not exist, or is
not a unit) fails too. Exits 1 naming each breach. Run by make layers
(so by make unit and make check). Usage: check_test_names.py [ROOT]
"""
import os
import re
import sys

UNIT_DIRS = ("payload", "cli", "common", "injector")
HEADER_LINES = 40  # Covers: lines are looked for in a test's first lines
COVERS = re.compile(r"^\s*(?:#|\*|/\*)\s*Covers:\s*(.*?)\s*(?:\*/)?\s*$")


def units(root):
    found = []
    for top in UNIT_DIRS:
        for d, _, names in os.walk(os.path.join(root, top)):
            for n in names:
                if n.endswith(".c"):
                    found.append(os.path.relpath(os.path.join(d, n), root))
    return sorted(found)


def named_after(unit, unit_tests):
    stem = unit[:-2]
    names = [stem.replace("/", "_")]
    folder, base = os.path.split(stem)
    if os.path.basename(folder) == base:
        names.append(folder.replace("/", "_"))
    return any(t == n or t.startswith(n + "_") for t in unit_tests for n in names)


def covers_lines(root):
    """(test file, line number, [unit paths]) for each Covers: line."""
    out = []
    for sub, ext in (("tests/e2e", ".sh"), ("tests/unit", ".c")):
        d = os.path.join(root, sub)
        for n in sorted(os.listdir(d)):
            if not n.endswith(ext):
                continue
            path = os.path.join(sub, n)
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                for i, line in enumerate(f, 1):
                    if i > HEADER_LINES:
                        break
                    m = COVERS.match(line)
                    if m:
                        names = [x.strip() for x in m.group(1).split(",") if x.strip()]
                        out.append((path, i, names))
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    all_units = units(root)
    unit_set = set(all_units)
    unit_tests = [n[:-2] for n in os.listdir(os.path.join(root, "tests/unit")) if n.endswith(".c")]
    covered = set()
    bad = []
    for path, line, names in covers_lines(root):
        for name in names:
            if name in unit_set:
                covered.add(name)
            else:
                why = "no such file" if not os.path.exists(os.path.join(root, name)) else "not a unit"
                bad.append("%s:%d: Covers: names %s (%s)" % (path, line, name, why))
    missing = [u for u in all_units if u not in covered and not named_after(u, unit_tests)]
    for b in bad:
        print("check_test_names: " + b)
    for u in missing:
        print("check_test_names: %s has no unit test named after it (tests/unit/%s.c) "
              "and no test names it on a Covers: line" % (u, u[:-2].replace("/", "_")))
    if bad or missing:
        print("check_test_names: %d of %d units without a test, %d bad Covers: entries"
              % (len(missing), len(all_units), len(bad)))
        return 1
    print("check_test_names: each of the %d units has a test" % len(all_units))
    return 0


if __name__ == "__main__":
    sys.exit(main())
