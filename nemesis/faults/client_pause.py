"""The client pause: a client's worker process frozen (SIGSTOP), like a GC pause; at
``--pause-at`` for ``--pause-for`` seconds, else taking turns with the other faults."""

from __future__ import annotations

from checkers.windows import CLIENT_PAUSE, FREEZES_CLIENT, WORDS
from core.cluster import Cluster
from core.options import RunOptions
from nemesis.base import Nemesis
from nemesis.client_pause import ClientPause
from nemesis.spec import Aim, FaultSpec


def _build(cluster: Cluster, target: str, seed: int, opts: RunOptions) -> Nemesis:
    # Frozen into the critical section's work, not at its start (``ClientPause``).
    return ClientPause(seed, settle=opts.work_time / 2)


FAULT = FaultSpec(
    name=CLIENT_PAUSE,
    help="freeze a client process (SIGSTOP, like a GC pause), at --pause-at for --pause-for",
    build=_build,
    describe=WORDS[CLIENT_PAUSE],
    effects=frozenset({FREEZES_CLIENT}),
    aim=Aim(("holder", "all"), "holder"),
    options=("pause_at", "pause_for"),
)
