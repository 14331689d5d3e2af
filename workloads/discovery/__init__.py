"""The registry workload (service registration), whole: instances register and keep alive,
discovery clients list the live ones.

``workload.py`` is its ``Workload``, ``gen.py`` its schedule, ``client.py`` its clients,
its options record (``DiscoveryOptions``) and the backend protocol a target implements.
This face hands on the client's names, what a target and a worker import; the workload
itself (its checkers) is imported by the registry alone."""

from workloads.discovery.client import (
    DiscoveryOptions,
    InstanceClient,
    RegistryFactory,
    registry_clients,
)

__all__ = [
    "DiscoveryOptions",
    "InstanceClient",
    "RegistryFactory",
    "registry_clients",
]
