"""How a run's clients run: each in a worker process of its own, or in threads of the
harness process (``--clients process|thread|auto``).

A worker process can be frozen (SIGSTOP), killed or given a clock of its own alone, which
the client faults need; it costs a process, its pipe and two messages per operation. A
thread costs neither, but it cannot be frozen or killed alone, and it runs the harness's
own interpreter. So ``auto`` picks threads only where nothing needs a process: a target
whose service is a local process (the sim), or a workload its target says was measured
with threads under its server faults (``Offer.threads``: etcd's
cas-register), no fault aimed at a client (``FaultSpec.in_clients``, read from the
faults' registry) and clients that run with the harness's Python (not a lock library,
which runs in an environment of its own). Anything else on a real target keeps processes
under ``auto`` until measured; ``--clients thread`` runs them there where nothing needs a
process, and is refused in one line where something does. test.json records the mode and
why (``clients``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, NamedTuple

from core.option_checks import OptionError, unknown_name
from core.option_records import CLIENT_MODES
from nemesis.fault_registry import FAULTS
from workloads.libraries.library_registry import LIBRARIES
from workloads.workload_registry import get_workload

if TYPE_CHECKING:
    from clusters.spec import TargetSpec
    from core.options import RunOptions

AUTO: Final = "auto"
PROCESS: Final = "process"
THREAD: Final = "thread"


class ClientMode(NamedTuple):
    """The mode a run's clients run in (``process`` or ``thread``) and why, in words:
    test.json's ``clients``."""

    mode: str
    why: str

    def to_dict(self) -> dict[str, str]:
        return {"mode": self.mode, "why": self.why}

    def line(self) -> str:
        """The mode in words, for the run's start line."""
        kind = "threads" if self.mode == THREAD else "processes"
        return f"clients in {kind} ({self.why})"


def needs_process(opts: RunOptions) -> str | None:
    """Why the run's clients need a process each, in words (None: nothing needs one): a
    fault aimed at the clients, or a lock library run with its own interpreter."""
    aimed = [n for n in opts.fault_names() if n in FAULTS and FAULTS[n].in_clients]
    if aimed:
        return f"--nemesis {aimed[0]} acts on a client process"
    variant = get_workload(opts.workload).variant
    if variant is not None and opts.get(variant.option) in LIBRARIES:
        return f"{variant.flag} {opts.get(variant.option)} runs in its own environment's Python"
    return None


def client_mode(opts: RunOptions, target: TargetSpec) -> ClientMode:
    """The mode the run's clients run in, and why; a one-line OptionError for a mode
    that is none, or for ``--clients thread`` where something needs a process."""
    asked = opts.clients.mode
    if asked not in CLIENT_MODES:
        raise OptionError(unknown_name("client mode", asked, CLIENT_MODES, "for --clients"))
    need = needs_process(opts)
    if asked == PROCESS:
        return ClientMode(PROCESS, "asked")
    if asked == THREAD:
        if need is not None:
            raise OptionError(
                f"--clients thread cannot run these clients: {need}, and a thread cannot "
                "be frozen, killed or run by another Python alone; give --clients process "
                "or auto"
            )
        return ClientMode(THREAD, "asked")
    if not target.local and not target.offer(opts).threads:
        return ClientMode(
            PROCESS, f"auto: {opts.workload} on {target.name} is not measured with threads yet"
        )
    if need is not None:
        return ClientMode(PROCESS, f"auto: {need}")
    return ClientMode(THREAD, f"auto: {target.name}, no client fault")
