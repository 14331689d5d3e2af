"""A recorded run's test.json checked against every option the harness knows: the run's
own and the workloads' records (``core.options.hand_in``), so that a value of a
workload's option edited by hand is refused in one line, as the run's own are.

The workloads' registry is imported here, when a run directory is read, not at the top
of the commands: checking a history file (EDN, JSONL) never pays for it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.run_json import check_test


def checked_test(test: Any, path: Path) -> dict[str, Any]:
    """``test`` (read from ``path``) checked by ``core.run_json.check_test`` once every
    workload's options record is handed in; TestJsonError (one line) otherwise."""
    import workloads.workload_registry  # noqa: F401  (it hands the records in)

    return check_test(test, path)
