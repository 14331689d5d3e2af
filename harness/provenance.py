"""What a suite result was made from: the suite file's digest and the harness's commit.

Each suite result records both (``suite.json``), so that ``harness merge`` can refuse to
put together shards that ran different suites or different code: a merged result would
otherwise claim one suite's verdicts for runs made by another.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import Final

UNKNOWN: Final = "unknown"
"""The commit of a harness that is neither a git checkout nor told its commit."""


def suite_digest(path: Path) -> str:
    """The sha256 of the suite file's bytes: equal for equal suites, wherever they run."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def source_commit() -> str:
    """The commit the harness runs from: ``HARNESS_COMMIT`` or ``GITHUB_SHA`` when set
    (a container image or a workflow says it), else the git checkout's ``HEAD`` with
    ``-dirty`` when it has changes, else ``unknown``."""
    for var in ("HARNESS_COMMIT", "GITHUB_SHA"):
        if os.environ.get(var):
            return os.environ[var]
    here = Path(__file__).resolve().parent
    try:
        head = _git(here, "rev-parse", "HEAD")
        dirty = _git(here, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return UNKNOWN
    return f"{head}-dirty" if dirty else head


def _git(cwd: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, check=True
    )
    return out.stdout.strip()
