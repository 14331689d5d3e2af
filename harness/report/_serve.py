"""``harness serve``: browse a results folder over HTTP, on the loopback interface by default.

A static file server (the standard library's) over the results folder, plus two things
a static folder cannot do: ``/`` (and ``/index.html``) is the index as the folder is at
each request, so a run that just finished is listed (rendered again only when the folder
changed: ``FreshIndex``); and a run's ``report.html`` that
was never written (or is older than its ``results.json``) is rendered for the answer.
The server never writes: both are made in memory, nothing is written to the folder.

It serves only what is inside the results folder once every symlink is resolved (a link
to /etc in results/ does not serve /etc/passwd), only regular files and folders (a FIFO
would hang the thread), answers a bad path (a NUL byte, ``..`` out of the folder) with
400 or 404 and never a traceback, and serves history (``.jsonl``), logs, EDN, the nodes'
configuration files and any other file that reads as UTF-8 text as text so browsers show
them instead of downloading them. A report is rendered only from a run whose files are
all inside the results folder (a run's history linked to a file elsewhere is not shown).

A fixed pool of threads (``WORKERS``: a browser's connections and a few tools') answers
the connections, which wait their turn in a listen backlog of ``BACKLOG`` (the standard
library's 5 made a burst of connections wait for the kernel's retry, a second and more);
a connection that says nothing for ``IDLE_S`` seconds is closed, so idle ones cannot hold
the pool.
"""

from __future__ import annotations

import codecs
import ipaddress
import os
import queue
import stat
import sys
import threading
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote, urlsplit

from core.errors import HarnessError
from core.store import RESULTS_FILE, TEST_FILE
from harness.report._index import INDEX_FILE, render_index
from harness.report._page import REPORT_FILE, render_report
from harness.report._runs import is_run_dir

TEXT = "text/plain; charset=utf-8"
WORKERS: Final = 16
"""Threads answering requests: a browser opens up to six connections, tools a few more."""
BACKLOG: Final = 128
"""Connections the kernel holds while every worker is busy."""
IDLE_S: Final = 10.0
"""Seconds a connection may stay silent before it is closed (it would hold a worker)."""


class ResultsHandler(SimpleHTTPRequestHandler):
    """Serves the results folder; the index and missing reports are generated."""

    root: Path
    timeout = IDLE_S
    extensions_map = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".jsonl": TEXT,
        ".log": TEXT,
        ".edn": TEXT,
        ".txt": TEXT,
        ".out": TEXT,
        ".err": TEXT,
        ".cfg": TEXT,
        ".conf": TEXT,
        ".hcl": TEXT,
        ".yml": TEXT,
        ".yaml": TEXT,
        ".toml": TEXT,
        ".properties": TEXT,
        ".json": "application/json",
    }

    def __init__(self, *args: Any, root: Path, index: FreshIndex, **kwargs: Any) -> None:
        self.root = root
        self.index = index
        super().__init__(*args, directory=str(root), **kwargs)

    def guess_type(self, path: str | os.PathLike[str]) -> str:
        """The type by extension; a file of no known type that reads as UTF-8 text (a
        node's ``myid``, a log without an extension) is text, not a download."""
        kind = super().guess_type(path)
        if kind == "application/octet-stream" and _is_text(Path(path)):
            return TEXT
        return kind

    def _bad_path(self) -> bool:
        """Answer 400 to a path no file can have (a NUL byte); True when it did."""
        if "\x00" in unquote(urlsplit(self.path).path):
            self.send_error(HTTPStatus.BAD_REQUEST, "bad path")
            return True
        return False

    def do_GET(self) -> None:
        if self._bad_path():
            return
        path = unquote(urlsplit(self.path).path)
        if path in ("/", f"/{INDEX_FILE}"):
            self._send_html(self.index.text())
            return
        if path.endswith(f"/{REPORT_FILE}") and self._send_rendered(
            Path(self.translate_path(path)).parent
        ):
            return
        super().do_GET()

    def do_HEAD(self) -> None:
        if not self._bad_path():
            super().do_HEAD()

    def send_head(self) -> Any:
        """The standard answer, for files inside the results folder only."""
        if self.inside(Path(self.translate_path(self.path))) is None:
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        return super().send_head()

    def inside(self, path: Path) -> Path | None:
        """``path`` resolved, when it is a regular file or a folder inside the root
        (in strings: every request asks, and pathlib's parsing would be most of it)."""
        root = str(self.root)
        try:
            real = os.path.realpath(path)
            mode = os.stat(real).st_mode
        except (OSError, ValueError):
            return None
        ok = real == root or real.startswith(root.rstrip(os.sep) + os.sep)
        return Path(real) if ok and (stat.S_ISREG(mode) or stat.S_ISDIR(mode)) else None

    def _send_rendered(self, run_dir: Path) -> bool:
        """Answer with a run's report rendered now, when its ``report.html`` is missing
        or older than its results (a report that is a link is served as any file is);
        True when it did. A report that cannot be rendered is a 404 naming the command
        that writes it."""
        real = self.inside(run_dir)  # results/latest/report.html: the run it names
        if real is None or not self._wants_render(real):
            return False
        run_dir = real
        try:
            text = render_report(run_dir)
        except (HarnessError, OSError, ValueError) as e:
            self.log_error("cannot render the report of %s: %s", run_dir, e)
            self.send_error(
                HTTPStatus.NOT_FOUND,
                "No report",
                f"this run has no report: harness report {run_dir} writes it",
            )
            return True
        self._send_html(text)
        return True

    def _wants_render(self, run_dir: Path) -> bool:
        """Whether the folder ``run_dir`` (resolved, inside the root) is a run whose files
        are all inside the root too, and whose report is missing or older than its
        results."""
        if not is_run_dir(run_dir):
            return False
        try:
            report = os.stat(run_dir / REPORT_FILE, follow_symlinks=False)
        except FileNotFoundError:
            report = None
        except OSError:
            return False
        if report is not None:
            try:
                newer = os.stat(run_dir / RESULTS_FILE).st_mtime > report.st_mtime
            except OSError:
                return False
            if not (newer and stat.S_ISREG(report.st_mode)):
                return False
        return self._all_inside(run_dir)

    def _all_inside(self, run_dir: Path) -> bool:
        """Whether every link below ``run_dir`` leads inside the root: a report shows
        what its run's files hold, which must not come from elsewhere."""
        for top, dirs, files in os.walk(run_dir):
            for name in (*dirs, *files):
                p = Path(top) / name
                if p.is_symlink() and self.inside(p) is None:
                    return False
        return True

    def copyfile(self, source: Any, outputfile: Any) -> None:
        """A file's body sent by the kernel (``sendfile``): one call, not a read and a
        send per 64 KiB in Python."""
        self.connection.sendfile(source)

    def _send_html(self, text: str) -> None:
        body = text.encode("utf-8")
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)


class FreshIndex:
    """The index page of ``root`` as each request finds the folder, rendered again only
    when the folder changed since the last rendering: when a folder's time or a run's
    test.json, results.json or report.html time is not what it was (the harness writes
    every file by a rename, which changes its folder's time). A burst of requests costs
    one rendering, and a run that just finished is listed at the next request."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._page = ""
        self._seen: list[tuple[str, int | None]] | None = None

    def text(self) -> str:
        seen = self._times()
        with self._lock:  # one rendering at a time, after the look: never older than it
            if seen != self._seen:
                self._page = render_index(self.root, reports_on_demand=True)
                self._seen = seen
            return self._page

    def _times(self) -> list[tuple[str, int | None]]:
        """The times the index depends on, walked as ``find_run_dirs`` walks."""
        out: list[tuple[str, int | None]] = []
        for top, dirs, files in os.walk(self.root):
            out.append((top, _mtime(top)))
            if TEST_FILE in files:  # a run directory: its records, nothing below it
                out += [(f, _mtime(os.path.join(top, f))) for f in _INDEXED]
                dirs[:] = []
            else:
                dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(top, d)))
        return out


_INDEXED: Final = (TEST_FILE, RESULTS_FILE, REPORT_FILE)
"""A run's files the index reads, or links to when they exist."""


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _is_text(path: Path, probe: int = 4096) -> bool:
    """Whether a file's first ``probe`` bytes are UTF-8 text without NUL bytes (a
    character cut at the end of the probe is not held against it)."""
    try:
        with path.open("rb") as f:
            head = f.read(probe)
    except OSError:
        return False
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return False
    return b"\0" not in head


def make_server(
    results_root: Path, host: str = "127.0.0.1", port: int = 8080
) -> ThreadingHTTPServer:
    """A server for ``results_root`` (not yet serving; port 0 picks a free one)."""
    root = Path(results_root).resolve()
    if not root.is_dir():
        raise HarnessError(
            f"{results_root} is not a folder: pass the results folder (default: results)"
        )
    try:
        return _Server((host, port), partial(ResultsHandler, root=root, index=FreshIndex(root)))
    except (OSError, OverflowError, UnicodeError) as e:  # UnicodeError: no DNS name
        raise HarnessError(
            f"cannot listen on {host:.60}:{port} ({getattr(e, 'strerror', None) or e})"
            ": pick another --port or --host"
        ) from None


class _Server(ThreadingHTTPServer):
    """The results server: ``WORKERS`` threads take the accepted connections in turn
    (not a thread each: a burst would start hundreds), the rest wait in the queue and
    the listen backlog. A request that fails is one line in the log, never a traceback."""

    daemon_threads = True
    request_queue_size = BACKLOG

    def __init__(self, address: tuple[str, int], handler: Any) -> None:
        self._waiting: queue.SimpleQueue[tuple[Any, Any] | None] = queue.SimpleQueue()
        self._workers: list[threading.Thread] = []  # none yet if binding fails
        super().__init__(address, handler)
        self._workers = [
            threading.Thread(target=self._work, name=f"serve-{n}", daemon=True)
            for n in range(WORKERS)
        ]
        for t in self._workers:
            t.start()

    def process_request(self, request: Any, client_address: Any) -> None:
        self._waiting.put((request, client_address))

    def _work(self) -> None:
        while (job := self._waiting.get()) is not None:
            self.process_request_thread(*job)

    def server_close(self) -> None:
        super().server_close()
        for _ in self._workers:
            self._waiting.put(None)

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        print(
            f"harness serve: request from {client_address[0]} failed: {type(exc).__name__}: {exc}",
            file=sys.stderr,
        )


def serve(results_root: Path, host: str = "127.0.0.1", port: int = 8080) -> None:
    """Serve ``results_root`` until interrupted (Ctrl-C). Binding another address than
    the loopback exposes every run's files to that network: it is said on stderr."""
    server = make_server(results_root, host, port)
    if not _is_loopback(host):
        print(
            f"harness serve: listening on {host}, not only on this machine: anyone who "
            "reaches it can read every run",
            file=sys.stderr,
        )
    bound_host, bound_port = server.server_address[:2]
    print(
        f"serving {Path(results_root).resolve()} at http://{bound_host!s}:{bound_port}/ "
        "(Ctrl-C stops)",
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
