"""``harness serve``: browse a results folder over HTTP, on the loopback interface by default.

A static file server (the standard library's) over the results folder, plus two things
a static folder cannot do: ``/`` (and ``/index.html``) is the index rendered afresh on
every request, so a run that just finished is listed; and a run's ``report.html`` that
was never written is written when first asked for.
"""

from __future__ import annotations

import ipaddress
import sys
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from harness.errors import HarnessError
from harness.report._index import INDEX_FILE, render_index
from harness.report._page import REPORT_FILE, write_report
from harness.report._runs import is_run_dir


class ResultsHandler(SimpleHTTPRequestHandler):
    """Serves the results folder; the index and missing reports are generated."""

    root: Path

    def __init__(self, *args: Any, root: Path, **kwargs: Any) -> None:
        self.root = root
        super().__init__(*args, directory=str(root), **kwargs)

    def do_GET(self) -> None:
        path = unquote(urlsplit(self.path).path)
        if path in ("/", f"/{INDEX_FILE}"):
            self._send_html(render_index(self.root, reports_on_demand=True))
            return
        if path.endswith(f"/{REPORT_FILE}"):
            self._ensure_report(Path(self.translate_path(path)).parent)
        super().do_GET()

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
            run_dir.resolve().is_relative_to(self.root)
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


def make_server(
    results_root: Path, host: str = "127.0.0.1", port: int = 8080
) -> ThreadingHTTPServer:
    """A server for ``results_root`` (not yet serving; port 0 picks a free one)."""
    root = Path(results_root).resolve()
    if not root.is_dir():
        raise HarnessError(
            f"{results_root} is not a folder: pass the results folder (default: results)"
        )
    return ThreadingHTTPServer((host, port), partial(ResultsHandler, root=root))


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
