"""Where a command's words go (``harness.terminal``): two real consoles, never wrapped off a
terminal, and outputs whose reader went away."""

from __future__ import annotations

import io
import sys

import pytest
from rich.live import Live
from rich.table import Table

from harness.terminal import Terminal, guard_streams, heading, make_console


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_live_display_enters_the_console_it_is_given() -> None:
    """rich's ``Live`` enters its console with ``with``: the forwarding proxy the CLI
    used to hand out raised TypeError there, in every run typed in a terminal."""
    term = Terminal(stdout=io.StringIO(), stderr=_Tty())
    with Live("x", console=term.err, refresh_per_second=20, redirect_stdout=False):
        pass
    assert "\x1b[?25h" in term.err.file.getvalue()  # type: ignore[attr-defined]


def test_off_a_terminal_nothing_is_wrapped() -> None:
    out = io.StringIO()
    console = make_console(out)
    path = "/results/" + "a-long-folder-name/" * 20 + "report.html"
    console.print(f"report: {path}")
    table = Table("run", "found")
    table.add_row("sim-registry-paused-past-ttl", "x " * 80)
    console.print(table)
    heading(console, "suite smoke: sim-lock-fenced")
    text = out.getvalue()
    assert f"report: {path}\n" in text
    assert "sim-registry-paused-past-ttl" in text and "x " * 80 in text
    assert "== suite smoke: sim-lock-fenced ==\n" in text


def test_with_json_the_words_go_to_stderr_and_stdout_holds_the_answer() -> None:
    out, err = io.StringIO(), io.StringIO()
    term = Terminal(stdout=out, stderr=err, as_json=True)
    term.out.print("verdict: valid")
    term.answer({"verdict": "valid"})
    assert out.getvalue() == '{"verdict": "valid"}\n'
    assert err.getvalue() == "verdict: valid\n"


def test_silent_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    term = Terminal.silent()
    term.out.print("x")
    term.err.print("y")
    term.answer({"x": 1})  # nothing on the real stdout either
    assert capsys.readouterr() == ("", "")


class _Failing(io.StringIO):
    """A stream whose writes fail with ``error`` after ``ok`` writes."""

    def __init__(self, error: OSError, ok: int = 1) -> None:
        super().__init__()
        self.error, self.ok = error, ok

    def write(self, s: str) -> int:
        if self.ok <= 0:
            raise self.error
        self.ok -= 1
        return super().write(s)

    def fileno(self) -> int:
        raise io.UnsupportedOperation("no descriptor")


def _guarded(stream: io.StringIO):
    saved = sys.stdout
    sys.stdout = stream
    try:
        with guard_streams() as outputs:
            print("one")
            print("two")  # fails: the stream's reader is gone, or its disk full
            print("three")  # dropped, quietly
    finally:
        sys.stdout = saved
    return outputs


def test_a_closed_pipe_ends_the_output_quietly() -> None:
    stream = _Failing(BrokenPipeError(32, "Broken pipe"))
    outputs = _guarded(stream)
    assert stream.getvalue() == "one"  # print writes the line and its newline apart
    assert outputs.failure is None  # a closed pipe is the reader's choice, not a failure


def test_a_failed_write_is_remembered_for_the_last_line() -> None:
    outputs = _guarded(_Failing(OSError(28, "No space left on device")))
    assert outputs.failure == "stdout: No space left on device"


def test_a_stream_python_never_opened_drops_everything() -> None:
    saved = sys.stdout
    sys.stdout = None  # type: ignore[assignment]  # what ``>&-`` leaves
    try:
        with guard_streams() as outputs:
            print("nowhere")
            Terminal().out.print("nowhere either")
    finally:
        sys.stdout = saved
    assert outputs.failure is None
