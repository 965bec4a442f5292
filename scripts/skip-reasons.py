#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# skip-reasons.py JUNIT.xml — prints why each skipped test was skipped, from
# the JUnit file `ctest --output-junit` writes (the Makefile's test targets
# call it after ctest): CTest's own summary names skipped tests but keeps
# their reason for `ctest -V`. The reason is the test's last output line that
# mentions a skip, else its last line. Prints nothing when nothing skipped.
import sys
import xml.etree.ElementTree as ET


def reason(out):
    lines = [l.strip() for l in (out or "").splitlines() if l.strip()]
    for l in reversed(lines):
        if "skip" in l.lower():
            return l
    return lines[-1] if lines else "(no output)"


def main():
    if len(sys.argv) != 2:
        print("usage: skip-reasons.py JUNIT.xml", file=sys.stderr)
        return 2
    try:
        root = ET.parse(sys.argv[1]).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"skip-reasons: {sys.argv[1]}: {e}", file=sys.stderr)
        return 1
    skipped = [t for t in root.iter("testcase") if t.find("skipped") is not None]
    if skipped:
        print(f"{len(skipped)} test{'s' if len(skipped) != 1 else ''} skipped:")
    for t in skipped:
        print(f"  {t.get('name')}: {reason(t.findtext('system-out'))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
