"""The election workload, whole: clients campaign, write as leader with their epoch,
resign.

``workload.py`` is its ``Workload``, ``client.py`` its client and the backend protocol a
target implements. This face hands on the client's names, what a target and a worker
import; the workload itself (its checkers) is imported by the registry alone."""

from workloads.election.client import (
    ElectionClient,
)

__all__ = [
    "ElectionClient",
]
