# SPDX-License-Identifier: MIT
"""Runs the pytest suite for CTest: exit 77 (CTest's skip) when pytest is not
installed (Debian: python3-pytest), pytest's own exit code otherwise."""
import sys

try:
    import pytest
except ImportError:
    print("SKIP: pytest is not installed for", sys.executable, "(apt-get install python3-pytest)")
    sys.exit(77)

sys.exit(pytest.main(sys.argv[1:]))
