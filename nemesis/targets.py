"""What each fault may aim at: the values of ``--nemesis-target`` per fault.

Each fault's ``FaultSpec`` (``nemesis.fault_registry``) says the values it takes, its default,
and whether it also takes node names (``n2``, ``n1,n3``). ``--help`` lists them,
validation refuses anything else before a run starts (a fault aimed somewhere else than
asked would be a lie), and node names are checked against the cluster's nodes once it
exists. Light to import: the command line reads it for every ``--help``.

``--nemesis-target`` is one value for every fault asked for (``holder``), or one per
fault, separated by semicolons (``client-pause=holder;partition=leader``); a fault not
named gets its default.
"""

from __future__ import annotations

import re
from typing import Final

from core.cluster import Cluster
from core.option_checks import OptionError
from core.options import RunOptions
from nemesis.fault_registry import FAULTS, spec_of
from nemesis.nodes import node_names

NODE_NAME: Final = re.compile(r"n[1-9][0-9]*")
MAX_NODES: Final = 99
NEEDS_HOLDERS: Final = frozenset({"holder"})


def targets_help() -> str:
    """The values of ``--nemesis-target`` per fault, one a line, for its reference."""
    return "\n".join(
        f"{f.name}: {f.aim.takes()} (default {f.aim.default})"
        if f.aim.targets
        else f"{f.name}: no target"
        for f in FAULTS.values()
    )


def aims() -> tuple[str, ...]:
    """Every value some fault takes as its one target (node names aside), for completion."""
    return tuple(dict.fromkeys(t for f in FAULTS.values() for t in f.aim.targets))


def parse_targets(spec: str | None) -> dict[str | None, str]:
    """``--nemesis-target`` as fault -> value; the key None holds a value for every fault."""
    if spec is None:
        return {}
    parsed: dict[str | None, str] = {}
    for item in (x.strip() for x in spec.split(";")):
        fault, sep, value = item.partition("=")
        key, value = (fault.strip(), value.strip()) if sep else (None, item)
        if not value:
            raise OptionError(
                f"--nemesis-target {spec!r}: an empty target; give one value, "
                "or fault=value pairs separated by ;"
            )
        if key is not None and key not in FAULTS:
            raise OptionError(
                f"--nemesis-target {spec!r}: {key!r} is not a fault; faults are {', '.join(FAULTS)}"
            )
        if key in parsed:
            raise OptionError(f"--nemesis-target {spec!r} aims {key or 'every fault'} twice")
        parsed[key] = value
    return parsed


def target_of(fault: str, opts: RunOptions) -> str | None:
    """What ``fault`` aims at in this run: its value in ``--nemesis-target``, else the
    fault's default (None: it takes no target)."""
    parsed = parse_targets(opts.faults.nemesis_target)
    return parsed.get(fault, parsed.get(None, spec_of(fault).aim.default))


def check_nodes(opts: RunOptions, cluster: Cluster) -> None:
    """Node names in ``--nemesis-target`` must be nodes of the cluster."""
    for fault in opts.fault_names():
        spec = target_of(fault, opts)
        if spec is None or spec in spec_of(fault).aim.targets:
            continue
        unknown = [n for n in node_names(spec) if n not in cluster.nodes()]
        if unknown:
            raise OptionError(
                f"--nemesis-target names {', '.join(unknown)}, not node(s) of "
                f"this cluster: its nodes are {', '.join(cluster.nodes())}"
            )


def recorded_aim(asked: object, hit: object) -> tuple[str | None, int | None]:
    """What a recorded fault start hit, to aim its replay there (``harness.replay``): the
    nodes of a server fault (``"n2,n3"``, from its completion's ``nodes``) or the one
    client process a client fault froze or killed (its ``processes``); (None, None) when
    it was not aimed by a word or hit nothing a replay can name. ``asked`` is the
    start's invocation value, ``hit`` its ok completion's."""
    if not (isinstance(asked, dict) and isinstance(hit, dict)):
        return None, None
    nodes, processes = hit.get("nodes"), hit.get("processes")
    if isinstance(nodes, list) and nodes and "target" in asked:
        return ",".join(map(str, nodes)), None
    if isinstance(processes, list) and len(processes) == 1 and asked.get("target") != "all":
        process = processes[0]
        return None, process if isinstance(process, int) else None
    return None, None
