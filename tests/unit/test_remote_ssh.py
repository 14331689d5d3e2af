"""SshRemote against an in-process SSH server on loopback (paramiko's server side).

The server accepts one public key, runs each exec request with ``sh -c`` on this machine
(the commands are the tests' own: echo, sleep, exit codes), answers ``id -u`` with 1000 so
the client believes it is not root, and strips a leading ``sudo -n --`` after recording it.
That covers what the protocol promises over a real SSH transport: exit codes and separate
streams, sudo wrapping, one transport per host with a channel per command, timeouts and
connection errors as one line naming host and command, strict host key checking and its
lab override. File transfers need sshd's SFTP: tests/integration/test_ssh_etcd.py.
"""

from __future__ import annotations

import contextlib
import shlex
import socket
import subprocess
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import paramiko
import pytest

from clusters.remote.base import Remote, RemoteError, RemoteTimeout
from clusters.remote.hosts import HostSpec
from clusters.remote.ssh import (
    SAFE_PATH,
    InsecureHostKeyWarning,
    SshOptions,
    SshRemote,
    fingerprint,
    remote_command,
)

SUDO = "sudo -n -- "


class _Handler(paramiko.ServerInterface):
    def __init__(self, server: LoopbackSshd) -> None:
        self.server = server

    def check_channel_request(self, kind: str, chanid: int) -> int:
        return (
            paramiko.OPEN_SUCCEEDED
            if kind == "session"
            else paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED
        )

    def get_allowed_auths(self, username: str) -> str:
        return "publickey"

    def check_auth_publickey(self, username: str, key: paramiko.PKey) -> int:
        ok = key == self.server.client_key
        return paramiko.AUTH_SUCCESSFUL if ok else paramiko.AUTH_FAILED

    def check_channel_exec_request(self, channel: paramiko.Channel, command: bytes) -> bool:
        # paramiko acknowledges the request after this returns: answering before that
        # would close the channel under the client's feet (sshd never does).
        timer = threading.Timer(0.02, self.server.execute, args=(channel, command.decode()))
        timer.daemon = True
        timer.start()
        return True


class LoopbackSshd:
    """A minimal SSH server on 127.0.0.1 running commands with ``sh -c``."""

    def __init__(self) -> None:
        self.host_key = paramiko.ECDSAKey.generate()
        self.client_key = paramiko.ECDSAKey.generate()
        self.commands: list[str] = []
        self.transports: list[paramiko.Transport] = []
        self.procs: list[subprocess.Popen[bytes]] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            t = paramiko.Transport(conn)
            t.add_server_key(self.host_key)
            self.transports.append(t)
            try:
                t.start_server(server=_Handler(self))
            except (paramiko.SSHException, EOFError, OSError):
                continue

    def execute(self, channel: paramiko.Channel, command: str) -> None:
        self.commands.append(command)
        if command == "id -u":
            channel.sendall(b"1000\n")
            channel.send_exit_status(0)
            channel.close()
            return
        if "late-output" in command:  # as sshd may do: the exit status first
            channel.send_exit_status(0)
            time.sleep(0.1)
            with contextlib.suppress(OSError, EOFError, paramiko.SSHException):
                channel.sendall(b"late\n")  # (no one listens if the client stopped early)
            channel.close()
            return
        command = command.removeprefix(SUDO)
        proc = subprocess.Popen(
            ["sh", "-c", command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.procs.append(proc)
        out, err = proc.communicate()
        try:
            channel.sendall(out)
            channel.sendall_stderr(err)
            # A shell reports a command killed by signal N as 128 + N, as sshd does.
            code = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
            channel.send_exit_status(code)
            channel.close()
        except (OSError, EOFError, paramiko.SSHException):
            pass  # the client gave up (a timeout test)

    def known_hosts(self, path: Path, key: paramiko.PKey | None = None) -> Path:
        key = key or self.host_key
        path.write_text(f"[127.0.0.1]:{self.port} {key.get_name()} {key.get_base64()}\n")
        return path

    def close(self) -> None:
        self.sock.close()
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for t in self.transports:
            t.close()


@pytest.fixture
def sshd() -> Iterator[LoopbackSshd]:
    server = LoopbackSshd()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def key_file(sshd: LoopbackSshd, tmp_path: Path) -> str:
    path = tmp_path / "id_ecdsa"
    sshd.client_key.write_private_key_file(str(path))
    return str(path)


def remote(sshd: LoopbackSshd, tmp_path: Path, key_file: str, **kw: object) -> SshRemote:
    known = sshd.known_hosts(tmp_path / "known_hosts")
    opts = SshOptions(key=key_file, known_hosts=str(known), connect_timeout=5, **kw)  # type: ignore[arg-type]
    return SshRemote(HostSpec("127.0.0.1", "tester", sshd.port), opts)


# -- pure parts ---------------------------------------------------------------------------


def test_commands_run_under_sh_with_sbin_on_path_and_sudo_only_when_asked() -> None:
    plain = remote_command(["echo", "a b"], sudo=False)
    assert shlex.split(plain) == ["sh", "-c", f"PATH={SAFE_PATH}; export PATH; echo 'a b'"]
    assert remote_command("iptables -S", sudo=True).startswith(SUDO + "sh -c ")


def test_defaults_fill_what_a_spec_leaves_out() -> None:
    r = SshRemote(HostSpec("n1"), SshOptions(user="ops", port=2222))
    assert (r.user, r.port, r.host) == ("ops", 2222, "ops@n1:2222")
    r = SshRemote(HostSpec("n1", "root", 22), SshOptions(user="ops", port=2222))
    assert r.host == "root@n1:22"


def test_fingerprints_look_like_openssh_s() -> None:
    key = paramiko.ECDSAKey.generate()
    text = fingerprint(key)
    assert text.startswith("ecdsa-sha2-nistp256 SHA256:") and not text.endswith("=")


# -- over SSH ---------------------------------------------------------------------------


def test_exit_code_and_streams(sshd: LoopbackSshd, tmp_path: Path, key_file: str) -> None:
    r = remote(sshd, tmp_path, key_file)
    assert isinstance(r, Remote)
    result = r.run("echo out; echo err >&2; exit 3")
    assert (result.exit, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert r.run("echo $PATH").stdout.strip() == SAFE_PATH


def test_output_that_arrives_after_the_exit_status_is_kept(
    sshd: LoopbackSshd, tmp_path: Path, key_file: str
) -> None:
    assert remote(sshd, tmp_path, key_file).run("late-output").stdout == "late\n"


def test_sudo_only_when_the_login_is_not_root(
    sshd: LoopbackSshd, tmp_path: Path, key_file: str
) -> None:
    r = remote(sshd, tmp_path, key_file)
    r.run("true", sudo=True)
    r.run("true")
    assert not r.is_root()
    ran = [c for c in sshd.commands if c != "id -u"]
    assert ran[0].startswith(SUDO) and not ran[1].startswith("sudo")


def test_one_transport_per_host_and_a_channel_per_command(
    sshd: LoopbackSshd, tmp_path: Path, key_file: str
) -> None:
    r = remote(sshd, tmp_path, key_file)
    threads = [threading.Thread(target=r.run, args=(f"echo {i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert r.signal(999_999_999, "CONT") is False  # no such pid: kill fails, no error
    assert len(sshd.transports) == 1
    r.close()
    assert r.run("echo again").stdout == "again\n"
    assert len(sshd.transports) == 2


def test_a_background_command_does_not_hold_the_call(
    sshd: LoopbackSshd, tmp_path: Path, key_file: str
) -> None:
    r = remote(sshd, tmp_path, key_file)
    started = time.monotonic()
    assert r.run("sleep 3 </dev/null >/dev/null 2>&1 &").ok
    assert time.monotonic() - started < 2


def test_a_timeout_is_one_line_naming_host_and_command(
    sshd: LoopbackSshd, tmp_path: Path, key_file: str
) -> None:
    r = remote(sshd, tmp_path, key_file)
    started = time.monotonic()
    with pytest.raises(RemoteTimeout) as e:
        r.run(["sleep", "5"], timeout=0.3)
    assert time.monotonic() - started < 2
    assert str(e.value) == f"tester@127.0.0.1:{sshd.port}: `sleep 5` did not finish within 0.3s"
    assert r.run("echo still usable").ok


def test_an_unknown_host_key_is_refused_with_its_fingerprint(
    sshd: LoopbackSshd, tmp_path: Path, key_file: str
) -> None:
    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    r = SshRemote(
        HostSpec("127.0.0.1", "tester", sshd.port), SshOptions(key=key_file, known_hosts=str(empty))
    )
    with pytest.raises(RemoteError) as e:
        r.run("true")
    msg = str(e.value)
    assert "\n" not in msg
    assert fingerprint(sshd.host_key) in msg
    assert f"ssh-keyscan -p {sshd.port} 127.0.0.1 >> ~/.ssh/known_hosts" in msg
    assert "--ssh-no-strict" in msg
    assert sshd.commands == []


def test_a_changed_host_key_is_refused(sshd: LoopbackSshd, tmp_path: Path, key_file: str) -> None:
    other = paramiko.ECDSAKey.generate()
    known = sshd.known_hosts(tmp_path / "kh", key=other)
    r = SshRemote(
        HostSpec("127.0.0.1", "tester", sshd.port), SshOptions(key=key_file, known_hosts=str(known))
    )
    with pytest.raises(RemoteError, match="host key CHANGED") as e:
        r.run("true")
    assert "ssh-keygen -R 127.0.0.1" in str(e.value)


def test_no_strict_accepts_any_key_with_a_warning(
    sshd: LoopbackSshd, tmp_path: Path, key_file: str
) -> None:
    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    r = SshRemote(
        HostSpec("127.0.0.1", "tester", sshd.port),
        SshOptions(key=key_file, known_hosts=str(empty), strict=False),
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert r.run("echo ok").stdout == "ok\n"
    assert any(issubclass(w.category, InsecureHostKeyWarning) for w in caught)
    assert empty.read_text() == "", "nothing is ever written to known_hosts"


def test_a_refused_key_says_which_user_and_key(sshd: LoopbackSshd, tmp_path: Path) -> None:
    wrong = tmp_path / "wrong"
    paramiko.ECDSAKey.generate().write_private_key_file(str(wrong))
    r = SshRemote(
        HostSpec("127.0.0.1", "tester", sshd.port),
        SshOptions(key=str(wrong), known_hosts=str(sshd.known_hosts(tmp_path / "k"))),
    )
    with pytest.raises(RemoteError, match=f"login as tester refused \\(tried key {wrong}\\)"):
        r.run("true")


def test_unreachable_hosts_say_why(tmp_path: Path) -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    r = SshRemote(HostSpec("127.0.0.1", "tester", port), SshOptions(connect_timeout=2))
    with pytest.raises(RemoteError, match=f"connection refused on port {port}"):
        r.run("true")
    missing = SshRemote(HostSpec("127.0.0.1"), SshOptions(known_hosts=str(tmp_path / "nope")))
    with pytest.raises(RemoteError, match="does not exist"):
        missing.run("true")
