"""A real host over SSH (paramiko): the ``Remote`` the SSH targets run on.

One connection (one SSH transport) per host for the whole run, opened on first use and
reopened if it drops; every command is a channel of its own, so threads (the nemesis, the
health probes) run commands side by side. Authentication is by key: ``--ssh-key``, else
the SSH agent and the usual ``~/.ssh/id_*`` keys; passwords are never used.

Host keys are checked by default: the host must already be in the user's
``~/.ssh/known_hosts`` (or ``/etc/ssh/ssh_known_hosts``, or the file given), otherwise the
connection is refused with the host's fingerprint and the command that adds it.
``strict=False`` (``--ssh-no-strict``) accepts any key, for throw-away lab machines, and
warns once per host. Nothing is ever written to a known_hosts file.

When the login is not root, commands run as root go through ``sudo -n`` (passwordless sudo
is required; a password prompt would hang a run). Every command runs under ``sh -c`` with
the sbin directories on ``PATH`` (iptables lives there), whatever the login shell is. A
command that overruns its timeout is abandoned (its channel closed; a process it started
on the host may go on): callers that start long-lived processes detach them themselves.
"""

from __future__ import annotations

import base64
import getpass
import hashlib
import logging
import secrets
import shlex
import socket
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import paramiko

from clusters.remote.base import (
    DEFAULT_TIMEOUT,
    STAGING,
    Command,
    CommandResult,
    RemoteError,
    RemoteTimeout,
    command_text,
    must,
    short,
    signal_command,
)
from clusters.remote.hosts import HostSpec

log = logging.getLogger(__name__)

SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
EOF_GRACE_S = 1.0
"""Seconds to wait, after a command's exit status, for the rest of its output."""


class InsecureHostKeyWarning(UserWarning):
    """A host key was accepted without checking (``--ssh-no-strict``)."""


@dataclass(frozen=True, slots=True)
class SshOptions:
    """How to reach the hosts; a host spec's own user or port wins over these."""

    user: str | None = None
    """Login name (default: the local user name)."""
    port: int = 22
    key: str | None = None
    """A private key file; None: the SSH agent and ~/.ssh/id_* keys."""
    strict: bool = True
    """Check host keys against known_hosts (False: accept any key, with a warning)."""
    known_hosts: str | None = None
    """A known_hosts file to check against (default: ~/.ssh/known_hosts and the system's)."""
    connect_timeout: float = 10.0
    """Seconds to connect, authenticate, or open a channel."""
    timeout: float = DEFAULT_TIMEOUT
    """Seconds a command may take when its caller gives no timeout."""


def remote_command(cmd: Command, sudo: bool) -> str:
    """The exact string sent over SSH: ``cmd`` under ``sh -c`` with a safe PATH, through
    ``sudo -n`` when ``sudo`` (the caller passes False when the login is root)."""
    argv = ["sh", "-c", f"PATH={SAFE_PATH}; export PATH; {command_text(cmd)}"]
    if sudo:
        argv = ["sudo", "-n", "--", *argv]
    return shlex.join(argv)


def fingerprint(key: Any) -> str:
    """OpenSSH's form of a host key's fingerprint: ``ssh-ed25519 SHA256:...``."""
    digest = base64.b64encode(hashlib.sha256(key.asbytes()).digest()).decode().rstrip("=")
    return f"{key.get_name()} SHA256:{digest}"


class SshRemote:
    """One host over SSH; implements ``clusters.remote.base.Remote``."""

    def __init__(self, spec: HostSpec, options: SshOptions | None = None) -> None:
        self.options = options or SshOptions()
        self.address = spec.host
        self.user = spec.user or self.options.user or getpass.getuser()
        self.port = spec.port or self.options.port
        self.host = str(HostSpec(self.address, self.user, self.port))
        self._client: paramiko.SSHClient | None = None
        self._lock = threading.Lock()
        self._is_root: bool | None = None

    def __repr__(self) -> str:
        return f"SshRemote({self.host})"

    # -- Remote ----------------------------------------------------------------------

    def run(
        self, cmd: Command, *, timeout: float | None = None, sudo: bool = False
    ) -> CommandResult:
        """Run ``cmd`` in a new channel; RemoteTimeout after ``timeout`` seconds."""
        limit = self.options.timeout if timeout is None else timeout
        transport = self._transport()
        text = remote_command(cmd, sudo and not self.is_root())
        try:
            return _exec(
                transport, text, limit, f"{self.host}: `{short(cmd)}`", self.options.connect_timeout
            )
        except (paramiko.SSHException, OSError, EOFError) as e:
            self.close()
            raise RemoteError(
                f"{self.host}: lost the SSH connection running `{short(cmd)}`: "
                f"{_reason(e)}; check the host is up"
            ) from None

    def upload(self, local: Path, remote_path: str, mode: int = 0o644) -> None:
        """SFTP to a staging file, then ``install`` it (as root) at ``remote_path``."""
        staged = f"{STAGING}-{secrets.token_hex(6)}"
        self._sftp(lambda sftp: sftp.put(str(local), staged), f"upload {local}")
        must(
            self,
            [
                "sh",
                "-c",
                'install -D -m "$1" "$2" "$3"; rc=$?; rm -f "$2"; exit $rc',
                "install",
                f"{mode:o}",
                staged,
                remote_path,
            ],
            f"installing {remote_path}",
            sudo=True,
        )

    def download(self, remote_path: str, local: Path) -> None:
        """Copy ``remote_path`` to ``local`` (through a readable copy when not root)."""
        local.parent.mkdir(parents=True, exist_ok=True)
        if self.is_root():
            self._sftp(lambda sftp: sftp.get(remote_path, str(local)), f"download {remote_path}")
            return
        staged = f"{STAGING}-{secrets.token_hex(6)}"
        must(
            self, ["install", "-m", "644", remote_path, staged], f"reading {remote_path}", sudo=True
        )
        try:
            self._sftp(lambda sftp: sftp.get(staged, str(local)), f"download {remote_path}")
        finally:
            self.run(["rm", "-f", staged], sudo=True)

    def signal(self, target: int | str, sig: int | str) -> bool:
        """``kill -SIG pid`` or ``pkill -SIG -x name``, as root."""
        return self.run(signal_command(target, sig), sudo=True).ok

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    # -- connection ------------------------------------------------------------------

    def is_root(self) -> bool:
        """Whether the login is root (then nothing goes through sudo)."""
        if self._is_root is None:
            self._transport()
        return bool(self._is_root)

    def _transport(self) -> paramiko.Transport:
        """The host's one transport, (re)connected when needed."""
        with self._lock:
            client = self._client
            transport = client.get_transport() if client is not None else None
            if transport is None or not transport.is_active():
                client = self._connect()
                self._client = client
                transport = client.get_transport()
                assert transport is not None
                if self._is_root is None:
                    self._is_root = (
                        self.user == "root"
                        or _exec(
                            transport,
                            "id -u",
                            self.options.connect_timeout,
                            f"{self.host}: `id -u`",
                        ).stdout.strip()
                        == "0"
                    )
            return transport

    def _connect(self) -> paramiko.SSHClient:
        o = self.options
        client = paramiko.SSHClient()
        self._load_known_hosts(client)
        client.set_missing_host_key_policy(_Reject() if o.strict else _WarnAndAccept())
        try:
            client.connect(
                self.address,
                port=self.port,
                username=self.user,
                key_filename=o.key,
                allow_agent=True,
                look_for_keys=o.key is None,
                timeout=o.connect_timeout,
                banner_timeout=o.connect_timeout,
                auth_timeout=o.connect_timeout,
                channel_timeout=o.connect_timeout,
            )
        except Exception as e:
            # paramiko may report a refused login as the last key file it failed to parse:
            # a transport that is up but not authenticated is what says "login refused".
            t = client.get_transport()
            refused = t is not None and t.is_active() and not t.is_authenticated()
            client.close()
            raise RemoteError(self.connect_error(e, login_refused=refused)) from None
        transport = client.get_transport()
        if transport is not None:
            transport.set_keepalive(15)
        return client

    def _load_known_hosts(self, client: paramiko.SSHClient) -> None:
        if self.options.known_hosts is not None:
            path = Path(self.options.known_hosts).expanduser()
            if not path.is_file():
                raise RemoteError(
                    f"Known hosts file {path} does not exist; pass an existing "
                    "file to --ssh-known-hosts or leave it out"
                )
            client.load_system_host_keys(str(path))
            return
        for path in (Path("/etc/ssh/ssh_known_hosts"), Path("~/.ssh/known_hosts").expanduser()):
            if path.is_file():
                client.load_system_host_keys(str(path))

    def connect_error(self, e: BaseException, login_refused: bool = False) -> str:
        """The one line saying why connecting to this host failed and what to do."""
        where = f"{self.host}"
        if isinstance(e, paramiko.ssh_exception.NoValidConnectionsError):
            causes = list(e.errors.values())
            e = causes[0] if causes and all(type(c) is type(causes[0]) for c in causes) else e
        if isinstance(e, _UnknownHostKey):
            return (
                f"{where}: host key {e.fingerprint} is not in known_hosts, so the host "
                "cannot be trusted; after checking that fingerprint on the host, add it "
                f"with `ssh-keyscan -p {self.port} {self.address} >> ~/.ssh/known_hosts` "
                "(or pass --ssh-no-strict for lab machines)"
            )
        if isinstance(e, paramiko.BadHostKeyException):
            return (
                f"{where}: host key CHANGED: it offers {fingerprint(e.key)} but "
                f"known_hosts has {fingerprint(e.expected_key)}; this may be an attack. If "
                f"the host was reinstalled, remove the old key with `ssh-keygen -R "
                f"{self.address}`"
            )
        if isinstance(e, paramiko.PasswordRequiredException):
            return (
                f"{where}: the key {self.options.key} is encrypted; load it into the "
                "SSH agent (`ssh-add KEY`) and leave --ssh-key out"
            )
        if isinstance(e, paramiko.AuthenticationException) or login_refused:
            keys = f"key {self.options.key}" if self.options.key else "the agent's and ~/.ssh keys"
            return (
                f"{where}: login as {self.user} refused (tried {keys}); check the user "
                "name and that its ~/.ssh/authorized_keys holds your public key"
            )
        if isinstance(e, FileNotFoundError):
            return f"{where}: key file {self.options.key} not found; check --ssh-key"
        if isinstance(e, socket.gaierror):
            return f"{where}: cannot resolve {self.address}: {e.strerror}; check the host name"
        if isinstance(e, ConnectionRefusedError):
            return f"{where}: connection refused on port {self.port}; is sshd running there?"
        if isinstance(e, TimeoutError):
            return (
                f"{where}: no answer within {self.options.connect_timeout:g}s; check the "
                "address, the port and any firewall on the way"
            )
        return f"{where}: SSH connection failed: {_reason(e)}"

    def _sftp(self, action: Any, what: str) -> None:
        transport = self._transport()
        try:
            sftp = paramiko.SFTPClient.from_transport(transport)
            if sftp is None:
                raise paramiko.SSHException("the server refused the SFTP subsystem")
            with sftp:
                sftp.get_channel().settimeout(self.options.timeout)
                action(sftp)
        except (paramiko.SSHException, OSError, EOFError) as e:
            raise RemoteError(
                f"{self.host}: {what} over SFTP failed: {_reason(e)}; sshd "
                "needs its sftp subsystem enabled"
            ) from None


def _exec(
    transport: paramiko.Transport, text: str, limit: float, what: str, open_timeout: float = 10.0
) -> CommandResult:
    """Run ``text`` in a new channel of ``transport`` and collect its output and exit code;
    RemoteTimeout (``what`` did not finish) past ``limit`` seconds."""
    channel = transport.open_session(timeout=open_timeout)
    with channel:
        channel.exec_command(text)
        out, err = bytearray(), bytearray()
        deadline = time.monotonic() + limit

        def drain() -> None:
            while channel.recv_ready():
                out.extend(channel.recv(65536))
            while channel.recv_stderr_ready():
                err.extend(channel.recv_stderr(65536))

        while True:
            drain()
            if channel.exit_status_ready():
                # sshd sends the exit status when it reaps the command, which may be before
                # it has forwarded the last of the output still in the command's pipes:
                # read on until EOF, but briefly, so that a background process keeping
                # the channel open cannot make us wait for it.
                grace = time.monotonic() + EOF_GRACE_S
                while not channel.eof_received and time.monotonic() < grace:
                    drain()
                    time.sleep(0.002)
                drain()
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RemoteTimeout(f"{what} did not finish within {limit:g}s")
            channel.status_event.wait(min(0.01, remaining))
        return CommandResult(
            channel.recv_exit_status(), out.decode(errors="replace"), err.decode(errors="replace")
        )


def _reason(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0]


class _UnknownHostKey(paramiko.SSHException):
    """The host's key is not in known_hosts (raised by ``_Reject``)."""

    def __init__(self, hostname: str, key: paramiko.PKey) -> None:
        super().__init__(f"{hostname} not found in known_hosts")
        self.fingerprint = fingerprint(key)


class _Reject(paramiko.MissingHostKeyPolicy):
    """paramiko's RejectPolicy, raising an error that carries the key's fingerprint."""

    def missing_host_key(self, client: Any, hostname: str, key: paramiko.PKey) -> None:
        raise _UnknownHostKey(hostname, key)


class _WarnAndAccept(paramiko.MissingHostKeyPolicy):
    """paramiko's AutoAddPolicy for this connection only, with a warning."""

    def missing_host_key(self, client: Any, hostname: str, key: paramiko.PKey) -> None:
        message = (
            f"{hostname}: accepting host key {fingerprint(key)} without checking "
            "(--ssh-no-strict); use this only for lab machines"
        )
        log.warning(message)
        warnings.warn(message, InsecureHostKeyWarning, stacklevel=2)
        client.get_host_keys().add(hostname, key.get_name(), key)
