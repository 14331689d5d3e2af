"""No code names a workload or a fault outside the module that defines it and its
registry: everything else reads the registries (``workloads.workload_registry``,
``nemesis.fault_registry``, and the kinds of fault on the ground floor, ``core.faults``). The
same grep as for target names (``tests.support.names``: string constants, docstrings left
out); where the word means something else, the exemption says what, file by file, and each
exemption must still be needed."""

from __future__ import annotations

import importlib
from pathlib import Path

from nemesis.fault_registry import FAULTS
from nemesis.faults import __path__ as faults_path
from nemesis.spec import FaultSpec
from tests.support.names import ROOT, product_strings
from workloads.workload import Workload
from workloads.workload_registry import WORKLOADS

OWN_REGISTRIES = ("workloads/workload_registry.py", "nemesis/fault_registry.py", "core/faults.py")

EXEMPT: dict[str, set[str]] = {
    # Abilities a target has (core.abilities.Ability): the words match the faults needing them.
    "core/abilities.py": {"kill", "pause", "clock", "power-loss"},
    # Linearizability models named "cas-register" (Knossos's), not the workload.
    "core/formats/__init__.py": {"cas-register"},
    "checkers/linear/models/__init__.py": {"cas-register"},
    "checkers/linear/models/register.py": {"cas-register"},
    "checkers/linear/simulate.py": {"cas-register"},
    "checkers/linear/stale.py": {"cas-register", "partition"},
    # The --lock option's flat name, in the options record of the lock and lease.
    "workloads/common/lock_options.py": {"lock"},
    # An op's f "lock" (the mutex model's acquire).
    "checkers/linear/models/mutex.py": {"lock"},
    # "partition": a history split per key (P-compositionality), not the network fault.
    "checkers/linear/counterexample.py": {"partition"},
    "checkers/linear/prepare.py": {"partition"},
    "checkers/linear/unique.py": {"partition"},
    "checkers/linearizability.py": {"partition"},
    "checkers/linear/streamed.py": {"partition"},
    "harness/report/_anomaly.py": {"partition"},
    "harness/report/_explain.py": {"partition"},
    "harness/report/_file_page.py": {"partition"},
    "harness/report/_file_timeline.py": {"partition"},
    # The election and herd checkers' names (results.json's keys).
    "checkers/election.py": {"election"},
    "checkers/herd.py": {"herd"},
    # Words for what is held ("the lock", "the election"), in the checkers' sentences and
    # in the held resources' names and client messages.
    "checkers/holdings.py": {"lock", "election"},
    # The client events' field naming what a session is held for (a registry instance's
    # member: ``workloads.common.lease``), read for the session's moves.
    "checkers/membership.py": {"lock"},
    "workloads/cycles.py": {"election"},
    "workloads/lock/ops.py": {"lock"},
    "workloads/common/factories.py": {"lock"},
    # The --lock option (a lock implementation), not the workload.
    "harness/report/_runs.py": {"lock"},
    # The timeline's lane of clock offsets (a JSON key and a lane kind).
    "harness/report/_timeline.py": {"clock"},
    # The shell's kill command.
    "clusters/remote/base.py": {"kill"},
}


def _owner_modules(
    folder: Path, attribute: str, kind: type[Workload] | type[FaultSpec]
) -> dict[str, str]:
    """Name -> the module (relative path) whose ``attribute`` is a ``kind`` of that name."""
    owners: dict[str, str] = {}
    for path in sorted(folder.rglob("*.py")):
        rel = path.relative_to(ROOT)
        module = importlib.import_module(".".join(rel.with_suffix("").parts))
        value = getattr(module, attribute, None)
        if isinstance(value, kind):
            owners[value.name] = rel.as_posix()
    return owners


def _owners() -> dict[str, str]:
    workloads = _owner_modules(ROOT / "workloads", "WORKLOAD", Workload)
    faults = _owner_modules(Path(faults_path[0]), "FAULT", FaultSpec)
    assert set(workloads) == set(WORKLOADS) and set(faults) == set(FAULTS)
    return {**workloads, **faults}


def _target_dirs() -> tuple[str, ...]:
    """The targets' own subpackages: each backs the workloads its spec lists (its clients
    and its service may name them)."""
    return tuple(
        f"clusters/{p.parent.name}/" for p in sorted((ROOT / "clusters").glob("*/spec.py"))
    )


def _uses() -> list[tuple[str, int, str]]:
    """Every (file, line, name) of a workload or fault name outside its module and the
    registries (the targets' subpackages may name workloads)."""
    owners = _owners()
    found = []
    for rel, node in product_strings():
        name = node.value
        if name not in owners or rel == owners[name] or rel in OWN_REGISTRIES:
            continue
        if name in WORKLOADS and rel.startswith(_target_dirs()):
            continue
        found.append((rel, node.lineno, name))
    return found


def test_every_workload_and_fault_has_one_module() -> None:
    owners = _owners()
    assert len(set(owners.values())) == len(owners)


def test_no_code_names_a_workload_or_fault_outside_its_module_and_registry() -> None:
    stray = [f"{f}:{n}: {name!r}" for f, n, name in _uses() if name not in EXEMPT.get(f, set())]
    assert stray == [], "names outside their module and registry: " + "; ".join(stray)


def test_every_exemption_is_still_needed() -> None:
    used = {(f, name) for f, _, name in _uses()}
    stale = [(f, n) for f, names in EXEMPT.items() for n in names if (f, n) not in used]
    assert stale == [], f"exemptions no longer needed: {stale}"
