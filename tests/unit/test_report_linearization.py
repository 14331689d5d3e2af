"""Porcupine's view of a counterexample: the checker gives each linearized op's
linearization point and the states around it, the report draws and tabulates them; and no
paragraph of a report is said twice."""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from checkers.linear.linearization import steps
from checkers.linear.models import MODELS
from checkers.linear.prepare import problems
from checkers.linear.schedule import Budget, run_searches
from checkers.linear.search import Search
from checkers.linear.solve import MIN_OPS
from checkers.linearizability import check
from core.history import History
from core.store import RESULTS_FILE
from harness.analysis import check_run
from harness.report import write_report
from tests.support.synthetic import cas_register_run, demo_runs

# p0 and p9 write concurrently (7 then 5 is the only order a read of 5 allows), p3
# reads 5, then p4 reads 7: the longest legal order is w7, w5, r5, leaving 5.
EVENTS = [
    (0, "invoke", "write", 5),
    (9, "invoke", "write", 7),
    (0, "ok", "write", 5),
    (9, "ok", "write", 7),
    (3, "invoke", "read", None),
    (3, "ok", "read", 5),
    (4, "invoke", "read", None),
    (4, "ok", "read", 7),
]


def _history() -> History:
    return History.from_events(
        [{"process": p, "type": t, "f": f, "value": v} for p, t, f, v in EVENTS]
    )


def test_the_counterexample_gives_each_steps_point_and_state() -> None:
    result = check(_history(), "register")
    assert result.valid is False
    (lz,) = result.details["counterexample"]["linearizations"]
    st = lz["steps"]
    assert st["index"] == [1, 0, 4]  # w7, w5, r5 by history index
    assert [st["states"][s] for s in st["state"]] == ["7", "5", "5"]
    assert st["states"][st["before"]] == "nil" and st["first"] == 0
    # each point inside its op's interval (times are positions here), never going back
    spans = {1: (1, 3), 0: (0, 2), 4: (4, 5)}
    for x, at in zip(st["index"], st["at"], strict=True):
        assert spans[x][0] <= at <= spans[x][1]
    assert st["at"] == sorted(st["at"]) == [1, 1, 4]


def test_only_the_last_steps_are_kept_with_the_state_before_them() -> None:
    model = MODELS["register"]
    (prob,) = problems(_history(), model)
    search = Search(prob, model)
    (result,) = run_searches([search], Budget())
    path, _ = result.paths[0]
    st = steps(prob, search.index, path, model, limit=1)
    assert st["first"] == 2 and st["index"] == [4]
    assert st["states"][st["before"]] == "5"  # after w7, w5
    assert [st["states"][s] for s in st["state"]] == ["5"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return demo_runs(tmp_path_factory.mktemp("runs"))


def _data(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.S)
    assert m
    return json.loads(m.group(1))


def test_the_report_draws_the_linearization_and_tabulates_its_last_steps(
    runs: dict[str, Path],
) -> None:
    run = runs["cas-stale-read"]
    html = write_report(run).read_text()
    cx = json.loads((run / RESULTS_FILE).read_text())["checkers"]["linearizability"][
        "counterexample"
    ]
    st = cx["linearizations"][0]["steps"]
    d = _data(html)["timeline"]
    (lin,) = d["lin"]["lins"]
    assert [d["ops"]["x"][p] for p in lin["pos"]] == st["index"]
    assert lin["at"] == [t // 1000 for t in st["at"]]
    for p, at in zip(lin["pos"], lin["at"], strict=True):
        assert d["ops"]["s"][p] <= at <= d["ops"]["e"][p]
    assert lin["prev"][1:] == lin["state"][:-1]  # each state before is the one left before
    table = html.split('id="lin-steps"', 1)[1].split("</table>", 1)[0]
    rows = table.count("<tr>") - 1
    assert rows == len(cx["linearizations"][0]["tail"]) + 1
    assert "cannot be linearized: it needs the state" in table
    assert "linearization point (in order)" in html  # in the legend


class _Blocks(HTMLParser):
    """The text of every paragraph and list item of a page (scripts left out), and the
    blocks each one is inside."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[int, list[str]]] = []
        self.blocks: list[str] = []
        self.inside: list[set[int]] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.skip += tag in ("script", "style")
        if tag in ("p", "li"):
            self.stack.append((len(self.blocks), []))
            self.blocks.append("")
            self.inside.append({n for n, _ in self.stack[:-1]})

    def handle_endtag(self, tag: str) -> None:
        self.skip -= tag in ("script", "style")
        if tag in ("p", "li") and self.stack:
            n, parts = self.stack.pop()
            self.blocks[n] = " ".join("".join(parts).split())
            if self.stack:
                self.stack[-1][1].append(self.blocks[n])

    def handle_data(self, data: str) -> None:
        if not self.skip and self.stack:
            self.stack[-1][1].append(data)


@pytest.mark.parametrize("name", ["lock-fenced", "lock-unfenced", "cas-valid", "cas-stale-read"])
def test_no_sentence_is_said_twice(runs: dict[str, Path], name: str) -> None:
    page = _Blocks()
    page.feed(write_report(runs[name]).read_text())
    for a, text in enumerate(page.blocks):
        for sentence in re.split(r"(?<=[.!?:])\s+", text):
            if len(sentence) < 40:
                continue
            for b, other in enumerate(page.blocks):
                related = a == b or a in page.inside[b] or b in page.inside[a]
                assert related or sentence not in other, f"said twice: {sentence!r}"


def test_a_partition_the_register_path_refutes_is_explained_by_the_search(tmp_path: Path) -> None:
    run = cas_register_run(tmp_path / "r", ops=MIN_OPS + 500, keys=1, faults=0, stale_read=True)
    lin = check_run(run)["checkers"]["linearizability"]
    assert lin["valid"] is False and lin.get("path") == "registers"
    cx = lin["counterexample"]
    assert "method" not in cx  # the search's counterexample, not the fast path's
    assert cx["linearizations"][0]["steps"]["index"]


def test_another_checker_with_a_counterexample_gets_the_same_view(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    run = tmp_path / "run"
    shutil.copytree(runs["cas-stale-read"], run)
    results = json.loads((run / RESULTS_FILE).read_text())
    checkers = results["checkers"]
    checkers["mutex-linearizability"] = checkers.pop("linearizability")
    (run / RESULTS_FILE).write_text(json.dumps(results))
    html = write_report(run).read_text()
    assert 'id="counterexample-mutex-linearizability"' in html
    assert "Linearizability counterexample: mutex-linearizability (key 0)" in html
    assert 'id="lin-steps"' in html
    d = _data(html)["timeline"]
    assert d["lin"]["lins"][0]["pos"] and d["culprit"] >= 0 and d["focus"]["auto"] is True
