"""``harness serve``: browse a results folder over HTTP, on the loopback interface by default.

A static file server (the standard library's) over the results folder, plus two things
a static folder cannot do: ``/`` (and ``/index.html``) is the index rendered afresh on
every request, so a run that just finished is listed; and a run's ``report.html`` that
was never written is written when first asked for.

It serves only what is inside the results folder once every symlink is resolved (a link
to /etc in results/ does not serve /etc/passwd), only regular files and folders (a FIFO
would hang the thread), answers a bad path (a NUL byte, ``..`` out of the folder) with
400 or 404 and never a traceback, and serves history (``.jsonl``), logs, EDN, the nodes'
configuration files and any other file that reads as UTF-8 text as text so browsers show
them instead of downloading them.
"""

from __future__ import annotations

import codecs
import ipaddress
import os
import sys
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from core.errors import HarnessError
from harness.report._index import INDEX_FILE, render_index
from harness.report._page import REPORT_FILE, write_report
from harness.report._runs import is_run_dir

TEXT = "text/plain; charset=utf-8"


class ResultsHandler(SimpleHTTPRequestHandler):
    """Serves the results folder; the index and missing reports are generated."""

    root: Path
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

    def __init__(self, *args: Any, root: Path, **kwargs: Any) -> None:
        self.root = root
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
            self._send_html(render_index(self.root, reports_on_demand=True))
            return
        if path.endswith(f"/{REPORT_FILE}"):
            self._ensure_report(Path(self.translate_path(path)).parent)
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
        """``path`` resolved, when it is a regular file or a folder inside the root."""
        try:
            real = path.resolve()
            ok = real.is_relative_to(self.root) and (real.is_file() or real.is_dir())
        except (OSError, ValueError, RuntimeError):
            return None
        return real if ok else None

    def _ensure_report(self, run_dir: Path) -> None:
        """Write a run's report when it is missing (or older than its results)."""
        report = run_dir / REPORT_FILE
        results = run_dir / "results.json"
        stale = (
            report.exists()
            and results.exists()
            and (results.stat().st_mtime > report.stat().st_mtime)
        )
        if (
            self.inside(run_dir) is not None
            and is_run_dir(run_dir)
            and (stale or not report.exists())
        ):
            try:
                write_report(run_dir)
            except (HarnessError, OSError, ValueError) as e:
                self.log_error("cannot write the report of %s: %s", run_dir, e)

    def _send_html(self, text: str) -> None:
        body = text.encode("utf-8")
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)


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
        return _Server((host, port), partial(ResultsHandler, root=root))
    except (OSError, OverflowError) as e:
        raise HarnessError(
            f"cannot listen on {host}:{port} ({getattr(e, 'strerror', None) or e})"
            ": pick another --port or --host"
        ) from None


class _Server(ThreadingHTTPServer):
    """A request that fails is one line in the log, never a traceback."""

    daemon_threads = True

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
