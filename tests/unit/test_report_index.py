"""The results index and `harness serve`: every run listed, the index fresh on each `/`,
missing reports rendered on demand (never written), loopback by default, nothing outside
the results folder."""

from __future__ import annotations

import html as html_text
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.analysis import check_run
from harness.report import write_index
from harness.report._index import WHY_CHARS
from harness.report._serve import make_server
from tests.support.synthetic import demo_runs, lock_run


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("results")
    runs = demo_runs(root)
    (root / "latest").symlink_to(runs["cas-valid"].relative_to(root))
    return root


def test_the_index_lists_every_run_once_newest_first(results: Path) -> None:
    html = write_index(results).read_text()
    assert "4 runs in" in html and "2 invalid, 2 valid" in html
    rows = html.split("<tbody>")[1].split("</tr>")[:-1]
    assert len(rows) == 4  # `latest` is a symlink: not a fifth run
    names = [r.split('href="')[1].split("/")[0] for r in rows]
    assert names == ["cas-stale-read", "cas-valid", "lock-unfenced", "lock-fenced"]
    assert 'class="invalid"' in rows[0] and "stale read" in rows[0]


def test_index_links_are_relative_and_reports_optional(results: Path) -> None:
    html = write_index(results).read_text()
    assert 'href="lock-fenced/20260101T000000/"' in html  # no report yet: the folder
    assert 'href="lock-fenced/20260101T000000/history.jsonl"' in html
    assert str(results) not in html.split("<main>")[1]  # links never absolute


@pytest.fixture
def server(results: Path) -> Iterator[str]:
    srv = make_server(results, port=0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    host, port = srv.server_address[:2]
    try:
        yield f"http://{host!s}:{port}"
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(5)


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, ""


def test_serve_binds_the_loopback_by_default(results: Path) -> None:
    srv = make_server(results, port=0)
    try:
        assert srv.server_address[0] == "127.0.0.1"
    finally:
        srv.server_close()


def test_the_served_index_is_regenerated_on_each_request(
    results: Path, server: str, tmp_path: Path
) -> None:
    status, first = _get(server + "/")
    assert status == 200 and "4 runs in" in first
    new = lock_run(results / "extra" / "20260102T000000")
    try:
        status, second = _get(server + "/")
        assert "5 runs in" in second and "extra/20260102T000000/report.html" in second
    finally:
        import shutil

        shutil.rmtree(new.parent)


def test_the_index_follows_a_run_checked_again_and_its_report_written(
    tmp_path: Path,
) -> None:
    """The index is rendered again only when the folder changed: a results.json
    rewritten (by a rename, or in place) and a report written are such changes."""
    from harness.report import write_report
    from harness.report._serve import FreshIndex

    run = lock_run(tmp_path / "t" / "20260101T000000Z", fencing=False)
    index = FreshIndex(tmp_path)
    assert "1 runs in" in index.text() and "NOT CHECKED" in index.text()
    results = check_run(run)
    assert "1 invalid" in index.text()
    (run / "results.json").write_text(json.dumps({**results, "valid": True}))  # in place
    assert "1 valid" in index.text()
    assert 'href="t/20260101T000000Z/report.html"' in index.text()  # rendered on demand
    write_report(run)
    page = index.text()
    assert page == index.text() and "1 valid" in page


def test_a_missing_report_is_rendered_when_asked_for_and_not_written(
    results: Path, server: str
) -> None:
    report = results / "lock-unfenced" / "20260101T000001" / "report.html"
    report.unlink(missing_ok=True)
    status, html = _get(server + "/lock-unfenced/20260101T000001/report.html")
    assert status == 200 and "FAIL" in html and not report.exists()
    status, html = _get(server + "/latest/report.html")  # a link inside: the run it names
    assert status == 200 and "cas-valid" in html
    assert not (results / "cas-valid" / "20260101T000002" / "report.html").exists()


def test_nothing_outside_the_results_folder_is_served(server: str) -> None:
    status, body = _get(server + "/../../../../etc/passwd")
    assert status == 404 or "root:" not in body


def test_the_why_column_names_the_checker_and_keeps_to_a_readable_length(results: Path) -> None:
    html = write_index(results).read_text()
    rows = html.split("<tbody>")[1].split("</tr>")[:-1]
    whys = [r.split('class="why">')[1].split("</div>")[0] for r in rows]
    stale_read, _, unfenced, _ = whys
    assert stale_read.startswith("<b>linearizability</b> <span")
    assert unfenced.startswith("<b>mutex</b>") and "stale write accepted" in unfenced
    for why in whys:
        assert "Invalid:" not in why and "Valid:" not in why  # the verdict column says it
        shown = html_text.unescape(why.split(">", 3)[-1].split("</span>")[0])
        assert len(shown) <= WHY_CHARS + 2
    cut = [w for w in whys if "title=" in w]
    assert cut, "the demo's stale read sentence is longer than the column shows"
    assert all(w.count("…") == 1 for w in cut)
