"""Log records of the worker processes (the client libraries': kazoo, etcd, redis) go to
the run's harness.log, never to the console."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from core.client import Invocation, WorkerContext
from core.run_clock import RunClock
from harness.logs import log_files, log_to
from harness.worker import Worker
from tests.support.chatty import LINE, ChattyFactory


def _one_op(process: int) -> str:
    worker = Worker.spawn(process, ChattyFactory(), WorkerContext(process, RunClock()))
    try:
        worker.send(Invocation("write", 1))
        assert worker.conn.poll(30), "the worker did not answer"
        return str(worker.recv().type)
    finally:
        worker.stop()


def test_a_workers_library_warning_goes_to_harness_log_not_the_console(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "harness.log"
    handler = log_to(log)
    try:
        assert str(log) in log_files()
        assert _one_op(7) == "ok"
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()
    out, err = capfd.readouterr()
    assert LINE not in out and LINE not in err
    assert f"WARNING kazoo.client [process 7]: {LINE}" in log.read_text()


def test_without_a_log_file_a_worker_prints_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    assert _one_op(8) == "ok"
    out, err = capfd.readouterr()
    assert LINE not in out and LINE not in err
