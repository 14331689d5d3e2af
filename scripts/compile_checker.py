#!/usr/bin/env python3
"""Compile the linearizability search with mypyc (see ``core.compiled``).

    .venv/bin/python scripts/compile_checker.py [--require]

Prints one line: where the build is, or why there is none (the plain Python checker then
runs). Exit status 0 unless ``--require`` is given and the build failed.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.compiled import main

if __name__ == "__main__":
    sys.exit(main())
