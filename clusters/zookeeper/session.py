"""ZooKeeper sessions as leases: one ``kazoo`` session per holding.

A ZooKeeper lock or leadership is an ephemeral node, alive exactly as long as the session
that created it, so the session is the lease: ``grant_lease(ttl)`` opens a new session
whose timeout is the TTL (the ensemble accepts 1-60 s, see ``clusters.zookeeper.server``)
and returns its id, ``revoke`` closes it (the server deletes its ephemeral nodes at once).
Two threads keep it alive, both frozen by a SIGSTOP of the worker: ``kazoo``'s connection
thread pings the server on its own schedule (every third of the timeout or so), and the
holder's keeper calls ``keepalive`` every ``--keepalive`` s, a real round trip (``exists``)
on the same session. Its answer comes from the one server the client is connected to,
which answers reads from its own state even when cut off from the leader (the only one
that expires sessions): so it shows the session alive at that server, not at the
service's leader, and the events say so (``LocalRenewals``).
The keeper must share the connection (the session is the connection's), hence
``SharedConnection``; ``kazoo`` clients are thread-safe.

The lease is lost when ``kazoo`` reports the session ``LOST`` (expired), or when the
session id has changed (``kazoo`` reconnected with a new session after expiry). A session
outlives its connection: when the server it is connected to dies or is cut off from its
ensemble, ``kazoo`` reconnects to another server within the timeout and the session (and
its ephemeral nodes) lives on. A reconnection is reported with the node the connection is
to now and the one it was to (``CONNECTED``, ``server`` and ``was``): a session that moved
is in the records, for the checkers to name (``checkers.membership``).

Operations outside any holding (the register workload, observing an election) use one
long-lived session instead (``LongSession``), as an application would.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kazoo.client import KazooClient, KazooState

from clusters.zookeeper.errors import classified
from workloads.common.lease import LeaseBackend, LeaseNotFound
from workloads.errors import OpFailed, OpUnknown


def new_client(addresses: Sequence[str], session_timeout: float) -> KazooClient:
    """A client of the ensemble trying ``addresses`` in order (its own node first)."""
    return KazooClient(hosts=",".join(addresses), timeout=session_timeout, randomize_hosts=False)


SESSION_TIMEOUT = 10.0
"""Seconds: the timeout of a ``LongSession`` (ZooKeeper's usual default)."""


class LongSession:
    """One session for a worker's operations outside holdings, started on first use."""

    def __init__(
        self, addresses: Sequence[str], *, timeout: float = 5.0, prefix: str = "harness"
    ) -> None:
        self.addresses = list(addresses)
        self.timeout = timeout
        self.root = "/" + prefix.strip("/")
        self._long: KazooClient | None = None

    def path(self, *parts: str) -> str:
        return "/".join((self.root, *parts))

    def observer(self) -> KazooClient:
        """The long-lived client (``OpFailed`` when it cannot connect)."""
        if self._long is None:
            zk = new_client(self.addresses, SESSION_TIMEOUT)
            try:
                with classified(f"session to {self.addresses[0]}", connecting=True):
                    zk.start(timeout=self.timeout)
            except (OpFailed, OpUnknown):
                zk.stop()
                zk.close()
                raise
            self._long = zk
        return self._long

    def close(self) -> None:
        zk, self._long = self._long, None
        if zk is not None:
            zk.stop()
            zk.close()


class ZkSession(LongSession):
    """A ``LeaseBackend`` whose leases are sessions; a ``SharedConnection``. ``names``:
    server IP -> node name, to name the server a session's connection is to (without it,
    its IP)."""

    def __init__(
        self,
        addresses: Sequence[str],
        *,
        timeout: float = 5.0,
        prefix: str = "harness",
        names: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(addresses, timeout=timeout, prefix=prefix)
        self.zk: KazooClient | None = None
        self._expired = False
        self._report: Callable[[Any, str, Mapping[str, str]], None] | None = None
        self._names = dict(names or {})
        self._was: str | None = None  # the node of the session's last connection

    # --- LeaseBackend ------------------------------------------------------------------

    def grant_lease(self, ttl: float) -> int:
        """Open a new session with timeout ``ttl``; its id."""
        self._drop()
        zk = new_client(self.addresses, ttl)
        try:
            with classified(f"session to {self.addresses[0]}", connecting=True):
                zk.start(timeout=self.timeout)
        except (OpFailed, OpUnknown):
            zk.stop()
            zk.close()
            raise
        self._expired = False
        lease = int(zk._session_id)
        zk.add_listener(lambda state: self._on_state(lease, state))
        self.zk = zk
        self._was = self._server(zk)
        return lease

    def renewals_are_local(self) -> bool:
        """``workloads.common.lease.LocalRenewals``: a renewal is a read (``exists``), which the
        server the client is connected to answers from its own state, even when it is cut
        off from the leader that alone expires sessions."""
        return True

    def on_state(self, report: Callable[[Any, str, Mapping[str, str]], None]) -> None:
        """``workloads.common.lease.ReportsState``: report kazoo's state changes of the sessions
        granted from now on (``SUSPENDED``, ``CONNECTED`` with the node its connection is
        to and the one it was to, ``LOST``)."""
        self._report = report

    def _on_state(self, lease: int, state: str) -> None:
        if state == KazooState.LOST:
            self._expired = True
        zk = self.zk
        if zk is None or int(zk._session_id or 0) != lease:
            return  # a session this client closed itself (``_drop``): not news
        if self._report is not None:
            try:
                self._report(lease, str(state), self._where(zk, state))
            except Exception:  # a listener must never break kazoo's thread
                pass

    def _where(self, zk: KazooClient, state: str) -> dict[str, str]:
        """For a reconnection: the node the connection is to now (``server``) and the one
        it was to (``was``), as far as known; nothing for another state."""
        if state != KazooState.CONNECTED:
            return {}
        server, was = self._server(zk), self._was
        self._was = server or was
        return {k: v for k, v in (("server", server), ("was", was)) if v is not None}

    def _server(self, zk: KazooClient) -> str | None:
        """The node the client's connection is to now (the peer of kazoo's socket: after
        a reconnection, the new server), by name when known; None when not connected."""
        try:
            ip = str(zk._connection._socket.getpeername()[0])
        except (OSError, IndexError, AttributeError):
            return None
        return self._names.get(ip, ip)

    def client(self, lease: int) -> KazooClient:
        """The live client of session ``lease``; ``LeaseNotFound`` when it is gone."""
        zk = self.zk
        if zk is None or self._expired or zk._session_id != lease:
            raise LeaseNotFound(f"session {lease:x} is gone (expired or closed)")
        return zk

    def keepalive(self, lease: int) -> float:
        """One round trip on session ``lease``; its timeout (s)."""
        zk = self.client(lease)
        if zk.state == KazooState.SUSPENDED:
            raise OpUnknown(f"session {lease:x}: connection suspended")
        with classified(f"keepalive of session {lease:x}", session_bound=True):
            zk.exists_async("/").get(timeout=self.timeout)
        self.client(lease)  # answered on the same session, not on a new one
        return zk._session_timeout / 1000.0

    def revoke(self, lease: int) -> None:
        """Close session ``lease`` (its ephemeral nodes go with it)."""
        if self.zk is not None and self.zk._session_id == lease:
            self._drop()

    def shared(self) -> LeaseBackend:
        return _Shared(self)

    def close(self) -> None:
        self._drop()
        super().close()

    def _drop(self) -> None:
        zk, self.zk = self.zk, None
        if zk is not None:
            zk.stop()
            zk.close()


class _Shared:
    """The keeper's handle on a ``ZkSession``: the same session, a ``close`` that does
    nothing (the holder closes the session)."""

    def __init__(self, session: ZkSession) -> None:
        self._session = session

    def grant_lease(self, ttl: float) -> int:
        raise OpFailed("the keeper's handle grants no leases")

    def keepalive(self, lease: int) -> float:
        return self._session.keepalive(lease)

    def revoke(self, lease: Any) -> None:
        self._session.revoke(lease)

    def close(self) -> None:
        pass
