# SPDX-License-Identifier: MIT
"""Runs one example under examples/python for CTest: exit 77 (CTest's skip)
when NumPy, which every example checks its result with, is not installed for
this interpreter (Debian: python3-numpy); the example's own exit code
otherwise. Usage: run_example.py EXAMPLE.py [ARGS...]"""
import runpy
import sys

if len(sys.argv) < 2:
    print("usage: run_example.py EXAMPLE.py [ARGS...]", file=sys.stderr)
    sys.exit(2)
try:
    import numpy  # noqa: F401  (imported only to see that it is there)
except ImportError:
    print("SKIP: NumPy is not installed for", sys.executable, "(apt-get install python3-numpy)")
    sys.exit(77)

sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
