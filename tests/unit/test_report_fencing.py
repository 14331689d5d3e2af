"""The fencing switch's replay: the recorded writes through the resource's own rule, with
fencing on and off; the run's own mode must give back the log."""

from __future__ import annotations

import json
import re
from pathlib import Path

from core.store import RESOURCE_FILE
from harness.report import write_report
from harness.report._fencing import replay
from tests.support.synthetic import lock_run


def _write(t: int, writer: int, token: int, accepted: bool, before: int | None) -> dict:
    return {
        "time": t,
        "writer": writer,
        "resource": "r",
        "token": token,
        "value": writer,
        "accepted": accepted,
        "highest_before": before,
    }


# p1 writes with token 1, p2 with 2, then p1 wakes and writes with its old token 1, and
# p3 with 3; recorded with fencing on (the stale write rejected). Out of order in the log.
LOG = [
    _write(40, 3, 3, True, 2),
    _write(10, 1, 1, True, None),
    _write(20, 2, 2, True, 1),
    _write(30, 1, 1, False, 2),
]


def test_both_endings_of_the_same_writes() -> None:
    r = replay(LOG, True)
    assert r is not None and r["ran"] == "on" and r["agrees"] is True
    assert r["on"]["acc"] == [1, 1, 0, 1] and r["off"]["acc"] == [1, 1, 1, 1]
    assert r["on"]["high"] == r["off"]["high"] == [1, 2, 2, 3]
    assert "token 1 is rejected (the resource had seen 2)" in r["on"]["ending"]
    assert "token 1 is accepted over token 2" in r["off"]["ending"]


def test_a_replay_that_cannot_give_back_the_log_is_not_offered() -> None:
    r = replay(LOG, False)  # the log says rejected: not what fencing off does
    assert r is not None and r["ran"] == "off" and r["agrees"] is False
    r = replay(LOG, None)  # the run did not say
    assert r is not None and r["ran"] is None and r["agrees"] is False
    assert replay([], True) is None
    no_stale = replay([_write(10, 1, 1, True, None)], True)
    assert (
        no_stale is not None and "no write arrives with a token below" in no_stale["on"]["ending"]
    )


def _data(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.S)
    assert m
    return json.loads(m.group(1))


def test_a_lock_report_carries_the_replay_and_the_cursor_panel(tmp_path: Path) -> None:
    run = lock_run(tmp_path / "r", fencing=False)
    html = write_report(run).read_text()
    f = _data(html)["timeline"]["fencing"]
    assert f["ran"] == "off" and f["agrees"] is True
    assert sum(f["off"]["acc"]) == len(f["off"]["acc"]) > sum(f["on"]["acc"])
    assert 'id="cursor-panel"' in html and 'id="fencing-switch"' in html
    log = [json.loads(line) for line in (run / RESOURCE_FILE).read_text().splitlines()]
    for w in log:  # a log the rule cannot give back: no cursor, and the page says why
        w["accepted"] = not w["accepted"]
    (run / RESOURCE_FILE).write_text("".join(json.dumps(w) + "\n" for w in log))
    html = write_report(run).read_text()
    assert 'id="cursor-panel"' not in html and "No time cursor" in html


def test_an_election_s_endings_speak_of_epochs() -> None:
    r = replay(LOG, True, "epoch")
    assert r is not None
    assert "epoch 1 is rejected (the resource had seen 2)" in r["on"]["ending"]
    assert "epoch 1 is accepted over epoch 2" in r["off"]["ending"]
    assert "token" not in r["on"]["ending"] + r["off"]["ending"]
