"""The watch workload, whole: writers change keys while watchers follow them by the
target's own mechanism.

``workload.py`` is its ``Workload``, ``gen.py`` its generator, ``factory.py`` the
clients a target builds from its backend, ``client.py`` its client, its options record
(``WatchOptions``) and the backend protocol a target implements. This face hands on the
client's names, what a target and a worker import; the workload itself (its checkers) is
imported by the registry alone."""

from workloads.watch.client import (
    EVERY_CHANGE,
    LATEST,
    Emit,
    WatchClient,
    WatchOptions,
    following,
)

__all__ = [
    "EVERY_CHANGE",
    "Emit",
    "LATEST",
    "WatchClient",
    "WatchOptions",
    "following",
]
