"""The CAS-register workload, whole: read, write and compare-and-set on independent keys.

``workload.py`` is its ``Workload``, ``gen.py`` its generator, ``client.py`` its client,
its options record (``RegisterOptions``) and the backend protocol a target implements
(which the watch workload's writers and the lock-free workloads' sim use too). This face
hands on the client's names, what a target and a worker import; the workload itself (its
checkers) is imported by the registry alone."""

from workloads.register.client import (
    RegisterBackend,
    RegisterClient,
    RegisterOptions,
)

__all__ = [
    "RegisterBackend",
    "RegisterClient",
    "RegisterOptions",
]
