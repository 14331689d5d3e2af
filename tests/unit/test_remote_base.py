"""The remote-control protocol's shared pieces: commands, signals, errors, text files.

Every test runs against ``FakeRemote``: no machine is touched.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from clusters.remote.base import (
    CommandResult,
    Remote,
    RemoteError,
    command_text,
    get_text,
    must,
    put_text,
    short,
    signal_command,
    signal_name,
    tail,
)
from tests.support.fake import FakeRemote


def test_an_argv_is_quoted_and_a_string_is_taken_as_it_is() -> None:
    assert command_text(["echo", "a b", "$HOME"]) == "echo 'a b' '$HOME'"
    assert command_text("echo $HOME | wc -c") == "echo $HOME | wc -c"


def test_short_commands_fit_on_one_line() -> None:
    assert short("a\n  b") == "a b"
    assert len(short("x" * 500)) == 80 and short("x" * 500).endswith("...")


@pytest.mark.parametrize(
    ("sig", "name"),
    [(9, "KILL"), ("KILL", "KILL"), ("sigstop", "STOP"), ("19", "STOP"), ("CONT", "CONT")],
)
def test_signals_are_named_as_kill_spells_them(sig: int | str, name: str) -> None:
    assert signal_name(sig) == name


def test_an_unknown_signal_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown signal"):
        signal_name("NOPE")


def test_a_pid_is_signalled_with_kill_and_a_name_with_pkill_exact() -> None:
    assert signal_command(1234, "STOP") == ["kill", "-STOP", "1234"]
    assert signal_command("1234", 9) == ["kill", "-KILL", "1234"]
    assert signal_command("etcd", "CONT") == ["pkill", "-CONT", "-x", "etcd"]


def test_the_fake_is_a_remote_and_answers_by_the_latest_matching_rule() -> None:
    r = FakeRemote("h1").on("^echo", stdout="first\n").on("^echo b", stdout="second\n")
    assert isinstance(r, Remote)
    assert r.run(["echo", "a"]).stdout == "first\n"
    assert r.run("echo b").stdout == "second\n"
    assert r.run("true") == CommandResult(0, "", "")
    assert r.commands() == ["echo a", "echo b", "true"]


def test_signal_goes_through_run_as_root() -> None:
    r = FakeRemote().on("^kill -STOP 42$", exit=1)
    assert r.signal("etcd", "STOP")
    assert not r.signal(42, "STOP")
    assert r.commands(sudo=True) == ["pkill -STOP -x etcd", "kill -STOP 42"]


def test_must_turns_a_failure_into_one_line_naming_host_command_and_output() -> None:
    r = FakeRemote("root@h1:22").on("mkdir", exit=1, stderr="mkdir: Permission denied\n")
    with pytest.raises(RemoteError) as e:
        must(r, ["mkdir", "/x"], "creating /x")
    msg = str(e.value)
    assert "\n" not in msg
    assert msg == (
        "root@h1:22: creating /x failed (exit 1 from `mkdir /x`): mkdir: Permission denied"
    )


def test_tail_keeps_the_last_lines() -> None:
    assert tail("a\n\nb\nc\nd\n") == "b | c | d"
    assert tail("") == "no output"


def test_text_files_round_trip_through_upload_and_download(tmp_path: Path) -> None:
    r = FakeRemote()
    put_text(r, "/etc/x.conf", "a=1\n", 0o600)
    assert r.files["/etc/x.conf"] == b"a=1\n" and r.modes["/etc/x.conf"] == 0o600
    assert get_text(r, "/etc/x.conf") == "a=1\n"
    with pytest.raises(RemoteError, match="does not exist"):
        get_text(r, "/nope")


def test_output_is_stdout_then_stderr() -> None:
    assert CommandResult(1, "out\n", "err\n").output == "out\nerr\n"
    assert not CommandResult(1, "", "").ok
