"""``--holder-check off`` (issue 30, item 5): the lock holder as an application that does
not ask its session before writing. Every lock recipe writes through
``workloads.common.critical.fenced_write``; with the check off, a holder whose keeper has
noticed the loss writes anyway, on its belief, as the naive application does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_cli import run

from workloads.common.critical import LEASE_LOST, fenced_write
from workloads.common.resource import WriteResult


class _Lost:
    """A session whose keeper has noticed the lease is gone."""

    lease = "l1"
    lost = True

    def mark_lost(self, reason: str) -> None: ...

    def end(self, why: str = "released") -> None: ...


class _Resource:
    """The protected resource, recording what reached it."""

    def __init__(self) -> None:
        self.writes: list[Any] = []

    def write(self, writer: Any, resource: str, token: int | None, value: Any) -> WriteResult:
        self.writes.append(value)
        return WriteResult(True, None, False)


@pytest.mark.parametrize(("check", "landed"), [(True, 0), (False, 1)])
def test_a_holder_that_does_not_check_writes_after_its_lease_is_lost(
    check: bool, landed: int
) -> None:
    resource = _Resource()
    done = fenced_write(resource, _Lost(), 3, "lock-0", 7, 1, 0.0, check=check)  # type: ignore[arg-type]
    assert len(resource.writes) == landed
    assert (done.type, done.error) == (("fail", LEASE_LOST) if check else ("ok", None))


@pytest.mark.slow
def test_the_holder_check_is_recorded_and_named_from_the_command_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(
        capsys,
        *("run", "--holder-check", "off", "--nemesis", "none", "--time-limit", "2"),
        *("--recovery-time", "0", "-o", str(tmp_path)),
    )
    assert code == 0, out + err
    test = json.loads((tmp_path / "latest" / "test.json").read_text())
    assert test["options"]["holder_check"] is False
    assert test["name"] == "sim-lock-no-fault-noholdercheck"
    assert "sim-lock-no-fault-noholdercheck seed" in err  # the start line
    assert "--holder-check off" in test["command"]
