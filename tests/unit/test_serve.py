"""`harness serve` on hostile paths (issue 16): only files inside the results folder once
symlinks are resolved, 400/404 for bad paths and no traceback in the log, JSONL, logs and
the nodes' files as text (a binary one as a download), and a bad --port is one line."""

from __future__ import annotations

import contextlib
import http.client
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.cli import EXIT_BAD_ARGS, main
from harness.report._serve import make_server


@pytest.fixture
def results(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    run = root / "t" / "20260101T000000"
    run.mkdir(parents=True)
    (run / "history.jsonl").write_text('{"index": 0}\n')
    (run / "harness.log").write_text("a log line\n")
    conf = run / "nodes" / "n1" / "conf"
    conf.mkdir(parents=True)
    (conf / "myid").write_text("1\n")
    (conf / "zoo.cfg").write_text("tickTime=2000\n")
    (conf / "etcd.yml").write_text("name: n1\n")
    (run / "nodes" / "n1" / "journal").write_text("ünïcode log without an extension\n")
    (run / "nodes" / "n1" / "core").write_bytes(b"\x7fELF\x00\x01\x02")
    (root / "etc").symlink_to("/etc")
    (root / "passwd").symlink_to("/etc/passwd")
    (root / "inside").symlink_to(run / "history.jsonl")
    os.mkfifo(root / "fifo")
    return root


@contextlib.contextmanager
def serving(root: Path) -> Iterator[tuple[str, int]]:
    """A server of ``root`` on a free port, serving in a thread meanwhile."""
    srv = make_server(root, port=0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    host, port = srv.server_address[:2]
    try:
        yield str(host), int(port)
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(5)


@pytest.fixture
def server(results: Path) -> Iterator[tuple[str, int]]:
    with serving(results) as where:
        yield where


def get(server: tuple[str, int], path: str) -> tuple[int, str, bytes]:
    conn = http.client.HTTPConnection(*server, timeout=10)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.getheader("Content-Type") or "", r.read()
    finally:
        conn.close()


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd",
        "/passwd",
        "/etc/",
        "/fifo",
        "/../../../../etc/passwd",
        "/%2e%2e/%2e%2e/etc/passwd",
    ],
)
def test_nothing_outside_the_results_folder_and_no_special_file_is_served(
    server: tuple[str, int], path: str
) -> None:
    status, _, body = get(server, path)
    assert status == 404 and b"root:" not in body


def test_a_link_inside_the_results_folder_is_served(server: tuple[str, int]) -> None:
    status, _, body = get(server, "/inside")
    assert status == 200 and body == b'{"index": 0}\n'


def test_a_nul_byte_is_400_without_a_traceback(
    server: tuple[str, int], capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, _ = get(server, "/t/%00/history.jsonl")
    assert status == 400
    head = http.client.HTTPConnection(*server, timeout=10)
    head.request("HEAD", "/x%00y")
    assert head.getresponse().status == 400
    head.close()
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize(
    "name",
    [
        "history.jsonl",
        "harness.log",
        "nodes/n1/conf/myid",
        "nodes/n1/conf/zoo.cfg",
        "nodes/n1/conf/etcd.yml",
        "nodes/n1/journal",
    ],
)
def test_histories_logs_and_node_files_are_text(server: tuple[str, int], name: str) -> None:
    status, ctype, _ = get(server, f"/t/20260101T000000/{name}")
    assert status == 200 and ctype == "text/plain; charset=utf-8"


def test_a_binary_file_stays_a_download(server: tuple[str, int]) -> None:
    status, ctype, _ = get(server, "/t/20260101T000000/nodes/n1/core")
    assert status == 200 and ctype == "application/octet-stream"


@pytest.mark.parametrize("port", ["-1", "70000", "x"])
def test_a_bad_port_is_one_line(
    capsys: pytest.CaptureFixture[str], results: Path, port: str
) -> None:
    try:
        code = main(["serve", str(results), "--port", port])
    except SystemExit as e:
        code = int(e.code or 0)
    err = capsys.readouterr().err
    assert code == EXIT_BAD_ARGS and len(err.strip().splitlines()) == 1
    assert "argument --port" in err and "Traceback" not in err


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """A results folder of real runs: one without a report, one whose report is older
    than its results, one whose report.html is a link to a file outside the folder; a
    link to a run outside the folder; and the outside tree itself."""
    from harness.report import write_report
    from tests.support.synthetic import lock_run

    root = tmp_path / "results"
    lock_run(root / "fresh" / "20260101T000000Z")
    stale = lock_run(root / "stale" / "20260101T000000Z")
    write_report(stale)
    os.utime(stale / "report.html", (1, 1))
    linked = lock_run(root / "linked" / "20260101T000000Z")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.html").write_text("precious\n")
    (linked / "report.html").symlink_to(outside / "victim.html")
    (root / "elsewhere").symlink_to(lock_run(outside / "run" / "20260101T000000Z").parent)
    return root


def test_serve_writes_nothing_and_renders_missing_reports_in_memory(
    tmp_path: Path, runs: Path
) -> None:
    """Issue 29: a GET of report.html re-rendered the report and wrote it, through a link
    to a file outside the results (the answer was a 404)."""
    from test_writes_links import snapshot

    before = snapshot(tmp_path)
    with serving(runs) as server:
        status, _, body = get(server, "/")
        assert status == 200 and b"3 runs in" in body  # the one elsewhere is not listed
        for name in ("fresh", "stale"):
            status, ctype, body = get(server, f"/{name}/20260101T000000Z/report.html")
            assert status == 200 and ctype.startswith("text/html") and b"<html" in body
        status, _, body = get(server, "/linked/20260101T000000Z/report.html")
        assert status == 404 and b"precious" not in body
        status, _, _ = get(server, "/elsewhere/20260101T000000Z/report.html")
        assert status == 404
    assert snapshot(tmp_path) == before, "harness serve wrote something"


def test_a_report_is_not_rendered_from_records_outside_the_results(
    tmp_path: Path, runs: Path
) -> None:
    """A run whose history links to a file elsewhere: its report would show that file."""
    run = runs / "fresh" / "20260101T000000Z"
    secret = tmp_path / "outside" / "history.jsonl"
    (run / "history.jsonl").rename(secret)
    (run / "history.jsonl").symlink_to(secret)
    with serving(runs) as server:
        status, _, _ = get(server, "/fresh/20260101T000000Z/report.html")
    assert status == 404


def test_a_burst_of_connections_is_all_answered_by_a_bounded_pool(
    server: tuple[str, int],
) -> None:
    """Issue 29: 50 connections at once waited in a listen backlog of 5 (p99 2.5 s), and
    each connection had a thread of its own. Here 500 GETs from 50 threads are every one
    answered, by the pool's threads alone (the timing is scripts/bench_serve.py's)."""
    from harness.report._serve import BACKLOG, WORKERS

    paths = ["/", "/t/20260101T000000/history.jsonl", "/t/20260101T000000/harness.log"]
    statuses: list[int] = []
    threads_seen: list[int] = []
    lock = threading.Lock()
    before = threading.active_count()

    def client(n: int) -> None:
        for i in range(10):
            status, _, _ = get(server, paths[(n + i) % len(paths)])
            with lock:
                statuses.append(status)
                threads_seen.append(threading.active_count())

    clients = [threading.Thread(target=client, args=(n,)) for n in range(50)]
    for t in clients:
        t.start()
    for t in clients:
        t.join(60)
    assert len(statuses) == 500 and set(statuses) == {200}
    assert max(threads_seen) <= before + len(clients)  # the pool's threads are in before
    assert sum(t.name.startswith("serve-") for t in threading.enumerate()) == WORKERS
    assert len(clients) <= BACKLOG


def test_serve_says_where_and_writes_no_index(tmp_path: Path, runs: Path) -> None:
    """``harness serve`` wrote index.html into the results before serving."""
    import subprocess
    import sys

    harness = Path(sys.executable).parent / "harness"
    proc = subprocess.Popen(
        [str(harness), "serve", str(runs), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith(f"serving {runs} at http://127.0.0.1:")
    finally:
        proc.terminate()
        proc.wait(10)
    assert not (runs / "index.html").exists()
