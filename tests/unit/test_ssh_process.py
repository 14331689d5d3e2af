"""A background server on a host: its launcher, start, state from pidfile and /proc."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from clusters.remote.base import Command, CommandResult, command_text
from clusters.server import Launch
from clusters.ssh.process import Layout, RemoteProcess
from tests.support.fake import FakeRemote


def proc(remote: FakeRemote) -> RemoteProcess:
    return RemoteProcess(remote, "etcd", Layout.for_run("r1"), "etcd n1 on h1")


def test_layout_is_under_one_run_directory() -> None:
    lay = Layout.for_run("r1")
    assert lay.root == "/var/lib/harness/r1"
    for path in (lay.conf, lay.data, lay.log, lay.pidfile, lay.launcher):
        assert path.startswith(lay.root + "/")


def test_launcher_logs_writes_its_pid_then_execs_the_server(tmp_path: Path) -> None:
    script = proc(FakeRemote()).launcher(Launch(("etcd", "--name", "n 1"), env={"GOMAXPROCS": "2"}))
    lines = script.splitlines()
    assert lines[0] == "#!/bin/sh"
    assert "exec >>/var/lib/harness/r1/log/server.log 2>&1 </dev/null" in lines
    assert lines[-2] == "echo $$ > /var/lib/harness/r1/server.pid"
    assert lines[-1] == "exec etcd --name 'n 1'"
    assert "export GOMAXPROCS=2" in lines
    # It is valid sh.
    assert subprocess.run(["sh", "-n"], input=script, text=True).returncode == 0


def test_install_writes_an_executable_launcher_and_start_detaches_it() -> None:
    r = FakeRemote()
    p = proc(r)
    p.install(Launch(("etcd",)))
    assert r.modes["/var/lib/harness/r1/start.sh"] == 0o755
    p.start()
    start = r.calls[-1]
    assert start.sudo
    assert start.text == ("nohup setsid /var/lib/harness/r1/start.sh </dev/null >/dev/null 2>&1 &")


def test_state_comes_from_the_pidfile_checked_against_proc() -> None:
    r = FakeRemote().on("server.pid", stdout="4242 S\n")
    st = proc(r).state()
    assert st is not None and (st.pid, st.paused) == (4242, False)
    script = r.commands()[0]
    assert "/proc/$pid/comm" in script and "= etcd" in script
    assert shlex.split(script)  # quoting is balanced
    assert proc(FakeRemote().on("server.pid", stdout="4242 T\n")).state().paused  # type: ignore[union-attr]
    assert proc(FakeRemote().on("server.pid", stdout="4242 Z\n")).state() is None
    assert proc(FakeRemote().on("server.pid", stdout="")).state() is None


def test_signals_go_to_the_pid_of_the_server() -> None:
    r = FakeRemote().on("server.pid", stdout="4242 S\n")
    assert proc(r).signal("STOP")
    assert r.commands()[-1] == "kill -STOP 4242"
    idle = FakeRemote()
    assert not proc(idle).signal("KILL")
    assert not idle.ran("^kill")


def test_the_state_script_works_in_sh_against_this_process(tmp_path: Path) -> None:
    # Read-only: the script reads a pidfile and /proc. Point it at this very test process.
    import os

    lay = Layout(str(tmp_path))
    Path(lay.pidfile).write_text(f"{os.getpid()}\n")
    comm = Path(f"/proc/{os.getpid()}/comm").read_text().strip()

    class Local(FakeRemote):
        def run(
            self, cmd: Command, *, timeout: float | None = None, sudo: bool = False
        ) -> CommandResult:
            out = subprocess.run(["sh", "-c", command_text(cmd)], capture_output=True, text=True)
            return CommandResult(out.returncode, out.stdout, out.stderr)

    st = RemoteProcess(Local(), comm, lay, "me").state()
    assert st is not None and st.pid == os.getpid() and st.state in "RS"
    assert RemoteProcess(Local(), "not-this-one", lay, "me").state() is None
