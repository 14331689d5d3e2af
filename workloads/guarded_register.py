"""The lock-free workloads over any CAS register (``workloads.register.RegisterBackend``):
how a service that offers only compare-and-set, such as the sim, guards a write by its data.

``RegisterVersions`` (version-cas): register ``<name>/version`` holds the version; a write
is ``cas(basis, basis + 1)``. ``RegisterKeys`` (unique-key): job N's effect is register
``<name>/job/<N>``, created once by ``cas(None, effect)``; ``begin`` takes the first job
whose register is still empty (reading on from the last one this client saw done). A
compare that fails (the service's ``mismatch`` refusal) is the data refusing the write.
"""

from __future__ import annotations

from typing import Any

from workloads.register import RegisterBackend


class RegisterVersions:
    """version-cas on a register holding the version (absent: 0)."""

    def __init__(self, register: RegisterBackend, mismatch: type[Exception]) -> None:
        self.register, self.mismatch = register, mismatch

    def begin(self, name: str) -> int:
        version = self.register.read(f"{name}/version")
        return 0 if version is None else int(version)

    def write(self, name: str, basis: int, value: Any) -> str | None:
        try:
            self.register.cas(f"{name}/version", basis or None, basis + 1)
        except self.mismatch:
            return f"{name} is no longer at version {basis}"
        return None

    def close(self) -> None:
        self.register.close()


class RegisterKeys:
    """unique-key on create-once registers, one per job."""

    def __init__(self, register: RegisterBackend, mismatch: type[Exception]) -> None:
        self.register, self.mismatch = register, mismatch
        self.done: dict[str, int] = {}

    def begin(self, name: str) -> int:
        job = self.done.get(name, 0) + 1
        while self.register.read(f"{name}/job/{job}") is not None:
            job += 1
        self.done[name] = job - 1
        return job

    def write(self, name: str, basis: int, value: Any) -> str | None:
        try:
            self.register.cas(f"{name}/job/{basis}", None, value)
        except self.mismatch:
            return f"job {basis} of {name} is already done"
        return None

    def close(self) -> None:
        self.register.close()
