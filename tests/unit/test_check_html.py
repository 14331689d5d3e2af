"""``harness check FILE --html OUT`` for every format the checker reads, and Jepsen store
directories (``history.edn``, ``results.edn``) for ``check`` and ``report``: the page is
written where asked, holds the verdict, the timeline per key, the longest partial
linearization and the counterexample, and Jepsen's verdict is said beside ours."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness.cli import EXIT_BAD_ARGS, main
from tests.support.synthetic import cas_register_run

HERE = Path(__file__).parent / "histories"
STORE = HERE / "jepsen-store-cas"
STALE = HERE / "sim-stale-read.jsonl"
SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "histories"
needs_shared = pytest.mark.skipif(
    not (SHARED / "MANIFEST.tsv").is_file(),
    reason=f"reference histories not found at {SHARED} (CI always has them)",
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def data_of(page: Path) -> dict[str, Any]:
    """The JSON the page's scripts read."""
    m = re.search(r'<script type="application/json" id="data">(.*?)</script>', page.read_text())
    assert m, "no data in the page"
    found: dict[str, Any] = json.loads(m.group(1))
    return found


def text_of(page: Path) -> str:
    """The page's text without tags (what a reader reads), unescaped."""
    body = page.read_text().split("<body>", 1)[1].split('<script type="application/json"')[0]
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


@needs_shared
@pytest.mark.parametrize(
    ("name", "fmt", "model", "first_lane"),
    [
        ("porcupine/kv/c01-bad.txt", "porcupine-kv", "kv", "key 7 · p0"),
        ("knossos/cas-register/bad/cas-failure.edn", "edn", "cas-register", "p70"),
        ("porcupine/jepsen/etcd_000.log", "porcupine-etcd", "etcd", "p0"),
    ],
)
def test_an_invalid_reference_file_gets_its_report(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    name: str,
    fmt: str,
    model: str,
    first_lane: str,
) -> None:
    out = tmp_path / "page.html"
    code, stdout, err = run(capsys, "check", str(SHARED / name), "--html", str(out))
    assert (code, err) == (1, "")
    assert f"    report: {out}\n" in stdout
    page = out.read_text()
    assert "http://" not in page and "https://" not in page  # nothing fetched
    words = text_of(out)
    assert "FAIL" in words and f"{fmt} · model {model}" in words
    assert "cannot be linearized" in words and "state before" in words
    timeline = data_of(out)["timeline"]
    assert timeline["unit"] == "event"  # these files record only the order of events
    assert "order of events" in page  # events.js, inlined
    assert timeline["lanes"][1]["label"] == first_lane  # the counterexample's key first
    lin = timeline["lin"]["lins"][0]
    assert lin["length"] >= 1 and len(lin["pos"]) == len(lin["at"]) >= 1
    assert timeline["culprit"] >= 0 and timeline["focus"]["auto"] is True
    # the points, in ticks, are the events the counterexample's table says
    steps = re.findall(r"event (\d+)</td>", page.split('id="lin-steps"')[1].split("</table>")[0])
    assert [int(s) for s in steps] == lin["at"][-len(steps) :]


@needs_shared
def test_a_valid_file_gets_a_page_without_a_counterexample(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "ok.html"
    good = SHARED / "knossos/cas-register/good/memstress3-20.edn"
    code, _, _ = run(capsys, "check", str(good), "--html", str(out))
    assert code == 0
    assert "PASS" in text_of(out) and 'id="counterexample"' not in out.read_text()
    assert data_of(out)["timeline"]["lin"] is None


def test_a_jsonl_history_gets_lanes_per_key_in_run_time(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "stale.html"
    code, _, _ = run(capsys, "check", "--model", "cas-register", str(STALE), "--html", str(out))
    assert code == 1
    timeline = data_of(out)["timeline"]
    assert timeline["unit"] == "us" and "order of events" not in out.read_text()
    labels = [lane["label"] for lane in timeline["lanes"]]
    assert labels[0] == "faults" and labels[1].startswith("key 1 · p")  # its key first
    assert {label.split(" · ")[0] for label in labels[1:]} == {"key 0", "key 1", "key 2"}
    # every op is on a lane of its own key
    keys, ops = timeline["keys"], timeline["ops"]
    for k, lane in zip(ops["k"], ops["lane"], strict=True):
        assert labels[lane].startswith(f"key {keys[k]} · ")
    assert "Keys (3)" in text_of(out)


@needs_shared
def test_several_files_get_one_page_each_in_the_directory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "pages"
    files = [
        SHARED / "porcupine/kv/c01-bad.txt",
        SHARED / "knossos/cas-register/bad/cas-failure.edn",
    ]
    code, stdout, _ = run(capsys, "check", *map(str, files), "--html", str(out))
    assert code == 1
    assert sorted(p.name for p in out.iterdir()) == ["c01-bad.txt.html", "cas-failure.edn.html"]
    assert f"report: {out / 'c01-bad.txt.html'}" in stdout


def test_an_out_whose_directory_is_missing_is_refused_before_any_check(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "missing" / "page.html"
    code, stdout, err = run(capsys, "check", str(STALE), "--html", str(out))
    assert (code, stdout) == (EXIT_BAD_ARGS, "")
    assert err == (
        f"harness: --html {out}: its directory {out.parent} does not exist; make it first "
        "or name another place\n"
    )


def test_a_page_that_cannot_be_written_is_said_and_exits_254(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "sim-stale-read.jsonl.html").symlink_to(victim)
    argv = ["check", "--model", "cas-register", str(STALE), str(STORE)]
    code, stdout, err = run(capsys, *argv, "--html", str(tmp_path / "pages"))
    assert code == EXIT_BAD_ARGS
    assert victim.read_text() == "keep"
    assert "invalid" in stdout and "1 file(s) not written" in stdout
    assert "report not written" in err and "a symbolic link" in err
    assert (tmp_path / "pages" / f"{STORE.name}.html").is_file()  # the other one is


def test_a_jepsen_store_is_checked_and_jepsen_said_beside_ours(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, stdout, err = run(capsys, "check", str(STORE))
    assert (code, err) == (1, "")
    assert stdout.startswith(f"{STORE}: invalid (")
    assert "stale read" in stdout and "    jepsen said valid? false\n" in stdout


def test_a_jepsen_store_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    _, stdout, _ = run(capsys, "check", "--json", str(STORE))
    line = json.loads(stdout.splitlines()[0])
    assert line["file"] == str(STORE) and line["model"] == "cas-register"
    assert line["jepsen"] == {"valid": False, "said": "jepsen said valid? false"}


def test_a_jepsen_store_report_shows_both_verdicts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "store.html"
    code, _, _ = run(capsys, "check", str(STORE), "--html", str(out))
    assert code == 1
    words = text_of(out)
    assert "jepsen said valid? false (perf: true, timeline: true, linear: false)" in words
    assert "Ours: invalid" in words and "stale read" in words
    assert data_of(out)["timeline"]["unit"] == "us"  # history.edn has :time


@pytest.mark.parametrize(
    ("results", "said"),
    [
        ("{:valid? :unknown, :linear {:valid? :unknown}}", "jepsen said valid? :unknown"),
        ("{:valid? true}", "jepsen said valid? true"),
        (None, "jepsen said nothing: no results.edn"),
        ("{:valid? tr", "jepsen's verdict unread: "),
        ("[1 2]", "has no top-level :valid?"),
    ],
)
def test_what_jepsen_said_whatever_results_edn_holds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, results: str | None, said: str
) -> None:
    store = tmp_path / "store"
    store.mkdir()
    shutil.copy(STORE / "history.edn", store)
    if results is not None:
        (store / "results.edn").write_text(results)
    code, stdout, _ = run(capsys, "check", str(store))
    assert code == 1  # ours is the verdict, whatever Jepsen's
    assert said in stdout


def test_report_of_a_jepsen_store_writes_report_html_into_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = tmp_path / "store"
    shutil.copytree(STORE, store)
    code, stdout, _ = run(capsys, "report", str(store), "--model", "register")
    assert code == 1
    assert f"report: {store / 'report.html'}" in stdout and "jepsen said valid? false" in stdout
    assert "model register" in text_of(store / "report.html")
    assert sorted(p.name for p in store.iterdir()) == ["history.edn", "report.html", "results.edn"]


def test_report_refuses_a_model_for_a_run_directory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run_dir = cas_register_run(tmp_path / "run", ops=60)
    code, _, err = run(capsys, "report", str(run_dir), "--model", "register")
    assert code == EXIT_BAD_ARGS and "--model is for a Jepsen store directory" in err


def test_a_directory_of_neither_kind_says_what_is_expected(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run(capsys, "check", str(tmp_path))
    assert code == EXIT_BAD_ARGS
    assert "pass a run directory, or a Jepsen store directory (history.edn)" in err


def test_a_run_directory_with_html_gets_its_run_report_with_the_fresh_results(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run_dir = cas_register_run(tmp_path / "run", ops=300, stale_read=True)
    out = tmp_path / "run.html"
    code, stdout, _ = run(
        capsys, "check", str(run_dir), "--out", str(tmp_path / "res"), "--html", str(out)
    )
    assert code == 1 and f"report: {out}" in stdout
    assert not (run_dir / "results.json").exists()  # the page did not need it
    assert "FAIL" in text_of(out) and data_of(out)["timeline"]["lin"] is not None
