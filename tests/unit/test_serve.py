"""`harness serve` on hostile paths (issue 16): only files inside the results folder once
symlinks are resolved, 400/404 for bad paths and no traceback in the log, JSONL, logs and
the nodes' files as text (a binary one as a download), and a bad --port is one line."""

from __future__ import annotations

import http.client
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.cli import EXIT_BAD_ARGS, main
from harness.serve import make_server


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


@pytest.fixture
def server(results: Path) -> Iterator[tuple[str, int]]:
    srv = make_server(results, port=0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    host, port = srv.server_address[:2]
    try:
        yield str(host), int(port)
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(5)


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
