"""The workloads, one line each: the CLI's choices and help, the options' defaults that
depend on the workload, the plan and the checks all read this table."""

from __future__ import annotations

from typing import Final

from core.option_checks import OptionError, unknown_name
from core.options import hand_in
from workloads.discovery import workload as discovery_workload
from workloads.election import workload as election_workload
from workloads.herd import workload as herd_workload
from workloads.ids import workload as unique_ids_workload
from workloads.lock import workload as lock_workload
from workloads.register import workload as cas_register_workload
from workloads.unique_key import workload as unique_key_workload
from workloads.version_cas import workload as version_cas_workload
from workloads.watch import workload as watch_workload
from workloads.workload import Workload

WORKLOADS: Final[dict[str, Workload]] = {
    "lock": lock_workload.WORKLOAD,
    "cas-register": cas_register_workload.WORKLOAD,
    "election": election_workload.WORKLOAD,
    "registry": discovery_workload.WORKLOAD,
    "version-cas": version_cas_workload.WORKLOAD,
    "unique-key": unique_key_workload.WORKLOAD,
    "unique-ids": unique_ids_workload.WORKLOAD,
    "herd": herd_workload.WORKLOAD,
    "watch": watch_workload.WORKLOAD,
}

hand_in(*(record for w in WORKLOADS.values() for record in w.records))

DEFAULT_WORKLOAD: Final = next(iter(WORKLOADS))
"""The workload of a run that names none: the first of the table."""

OLD_NAMES: Final = {"register": "cas-register"}
"""Names workloads had in older runs' test.json -> their names now."""


def workload_models() -> dict[str, str]:
    """Each workload name (old ones too) -> the linearizability model of its histories,
    for ``harness check`` of a history file whose test.json names only its workload."""
    models = {w.name: w.model for w in WORKLOADS.values() if w.model is not None}
    models.update({old: models[new] for old, new in OLD_NAMES.items() if new in models})
    return models


def get_workload(name: str) -> Workload:
    """The workload named ``name`` (empty: the default one), else a one-line OptionError
    listing them."""
    found = WORKLOADS.get(name or DEFAULT_WORKLOAD)
    if found is None:
        raise OptionError(unknown_name("workload", name, list(WORKLOADS), "for --workload"))
    return found


def workloads_help() -> str:
    """Each workload with its help line, one a line, for ``--workload``'s reference."""
    return "\n".join(f"{w.name}: {w.help}" for w in WORKLOADS.values())
