"""The herd workload, whole: ``--concurrency`` waiters on one lock, waiting by a recipe.

``workload.py`` is its ``Workload`` (generator, checkers, holder, the recipe as the
variant a target offers), ``client.py`` its client, its options record (``HerdOptions``)
and the backend protocol a target implements (``HerdBackend``). This face hands on the
client's names, what a target and a worker import; the workload itself (its checkers) is
imported by the registry alone."""

from workloads.herd.client import (
    NAIVE,
    QUEUE,
    RECIPES,
    CountsRequests,
    HerdBackend,
    HerdClient,
    HerdClients,
    HerdOptions,
    QueueHerdClient,
    Tally,
    herd_clients,
)

__all__ = [
    "NAIVE",
    "QUEUE",
    "RECIPES",
    "CountsRequests",
    "HerdBackend",
    "HerdClient",
    "HerdClients",
    "HerdOptions",
    "QueueHerdClient",
    "Tally",
    "herd_clients",
]
