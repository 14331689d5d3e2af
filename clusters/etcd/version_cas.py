"""version-cas on etcd: a ``workloads.guarded.GuardedStore`` on a key's ``mod_revision``.

``begin`` reads the key ``<prefix>/cells/<name>`` (linearizable) and takes its
``mod_revision`` as the basis (0 while the key does not exist); ``write`` is one
transaction: if the key's ``mod_revision`` is still the basis, put the new value. Any put
to the key since moves its ``mod_revision`` on, so a write on a stale basis finds the
comparison false and changes nothing (a definite refusal). No lease, no lock, no token.
"""

from __future__ import annotations

from typing import Any

from clusters.etcd.gateway import EtcdConnection, b64, encode, revision


class EtcdVersionCas(EtcdConnection):
    """Keys ``<prefix>/cells/<name>`` written only on the revision they were read at."""

    def begin(self, name: str) -> int:
        kv = self.get(self.key("cells", name))
        return 0 if kv is None else revision(kv, "mod_revision")

    def write(self, name: str, basis: int, value: Any) -> str | None:
        key = b64(self.key("cells", name))
        compare = {"key": key, "target": "MOD", "result": "EQUAL", "mod_revision": basis}
        answer = self.txn(
            [compare],
            [{"request_put": {"key": key, "value": encode(value)}}],
            [],
            f"write of {name} on revision {basis}",
        )
        return None if answer.get("succeeded") else f"{name} was written after revision {basis}"
