"""Headless Chromium driven over the Chrome DevTools Protocol, for report tests and benchmarks.

No dependency: Chromium's ``--remote-debugging-pipe`` reads protocol messages from its fd
3 and writes them to its fd 4, each a JSON text ended by a NUL byte. ``load_page`` opens a
fresh browser (its own temporary profile), loads one URL, and returns what a test must
judge: every network request the page made, its console errors and uncaught exceptions,
the first-view marker (``<html data-rendered>``), timings and a screenshot.

Only Debian's ``chromium`` package is used (``apt-get install chromium``); nothing is
downloaded. The browser and its children run in their own process group, ended by its id.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

CHROMIUM = "/usr/bin/chromium"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--mute-audio",
)


class BrowserError(RuntimeError):
    """Chromium did not start, answered with an error, or took too long."""


def chromium_path() -> str | None:
    """The Chromium binary, or None when the package is not installed."""
    if os.access(CHROMIUM, os.X_OK):
        return CHROMIUM
    return shutil.which("chromium")


@dataclass
class PageLoad:
    """What happened when a page was loaded: ``rendered`` is the value of
    ``<html data-rendered>`` (None: never set before the timeout), ``render_ms`` the page's
    own ``data-render-ms`` (milliseconds from navigation start to the first view drawn),
    ``wall_s`` the seconds from the navigation command to the marker seen."""

    url: str
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    rendered: str | None = None
    render_ms: float | None = None
    wall_s: float | None = None
    screenshot: bytes | None = None
    values: dict[str, Any] = field(default_factory=dict)


class _Pipe:
    """The protocol over the two pipes: numbered commands, replies and events."""

    def __init__(self, to_browser: int, from_browser: int) -> None:
        self._out = os.fdopen(to_browser, "wb", buffering=0)
        self._in = os.fdopen(from_browser, "rb", buffering=0)
        self._next = 0
        self._messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.events: list[dict[str, Any]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buf = b""
        while True:
            try:
                chunk = self._in.read(65536)
            except (OSError, ValueError):
                chunk = b""
            if not chunk:
                self._messages.put(None)
                return
            buf += chunk
            *messages, buf = buf.split(b"\0")
            for m in messages:
                self._messages.put(json.loads(m))

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        session: str | None = None,
        timeout: float = 30.0,
    ) -> dict[str, Any]:
        """Send a command and wait for its reply; events seen meanwhile are kept."""
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self._out.write(json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError(f"no answer to {method} within {timeout:g} s")
            try:
                reply = self._messages.get(timeout=left)
            except queue.Empty:
                continue
            if reply is None:
                raise BrowserError(f"Chromium closed the DevTools pipe during {method}")
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error'].get('message')}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            if "method" in reply:
                self.events.append(reply)

    def close(self) -> None:
        for f in (self._out, self._in):
            with contextlib.suppress(OSError):
                f.close()


@contextlib.contextmanager
def browser(width: int = 1400, height: int = 1000) -> Iterator[tuple[_Pipe, str]]:
    """A fresh headless Chromium with one blank page: yields the pipe and the page's
    session id. Raises BrowserError when Chromium is not installed or does not start."""
    binary = chromium_path()
    if binary is None:
        raise BrowserError("Chromium is not installed: apt-get install -y chromium")
    profile = tempfile.mkdtemp(prefix="harness-chromium-")
    cmd_r, cmd_w = _high_pipe()
    out_r, out_w = _high_pipe()

    def wire_fds() -> None:  # in the child, before exec: fd 3 in, fd 4 out
        os.dup2(cmd_r, 3)
        os.dup2(out_w, 4)

    args = [
        binary,
        *FLAGS,
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
        "--remote-debugging-pipe",
        "about:blank",
    ]
    proc = subprocess.Popen(
        args,
        preexec_fn=wire_fds,
        close_fds=False,
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(cmd_r)
    os.close(out_w)
    pipe = _Pipe(cmd_w, out_r)
    try:
        target = pipe.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        pipe.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session,
        )
        yield pipe, session
    finally:
        with contextlib.suppress(BrowserError, OSError):
            pipe.call("Browser.close", timeout=5)
        pipe.close()
        _end(proc)
        shutil.rmtree(profile, ignore_errors=True)


def load_page(
    url: str,
    *,
    timeout: float = 60.0,
    width: int = 1400,
    height: int = 1000,
    screenshot: bool = True,
    evaluate: dict[str, str] | None = None,
) -> PageLoad:
    """Load ``url`` in a fresh headless Chromium and wait for ``<html data-rendered>``.

    ``evaluate`` maps names to JavaScript expressions read after the first view (their
    JSON values land in ``PageLoad.values``).
    """
    out = PageLoad(url)
    with browser(width, height) as (pipe, session):
        for domain in ("Network", "Runtime", "Log", "Page"):
            pipe.call(f"{domain}.enable", session=session)
        started = time.monotonic()
        nav = pipe.call("Page.navigate", {"url": url}, session)
        if nav.get("errorText"):
            raise BrowserError(f"cannot load {url}: {nav['errorText']}")
        deadline = started + timeout
        while time.monotonic() < deadline:
            try:  # the old document may still be there, or be going away
                out.rendered = _eval(pipe, session, _MARKER)
            except BrowserError:
                out.rendered = None
            if out.rendered:
                out.wall_s = time.monotonic() - started
                break
            time.sleep(0.02)
        ms = _eval(pipe, session, "document.documentElement.dataset.renderMs")
        out.render_ms = float(ms) if ms else None
        for name, expr in (evaluate or {}).items():
            out.values[name] = _eval(pipe, session, f"JSON.stringify({expr})")
            if out.values[name] is not None:
                out.values[name] = json.loads(out.values[name])
        if screenshot:
            shot = pipe.call("Page.captureScreenshot", {"format": "png"}, session)
            out.screenshot = base64.b64decode(shot["data"])
        pipe.call("Runtime.evaluate", {"expression": "1"}, session)  # flush pending events
    out.requests, out.errors = _requests(pipe.events), _errors(pipe.events)
    return out


_MARKER = "document.documentElement && document.documentElement.dataset.rendered || null"


def _eval(pipe: _Pipe, session: str, expr: str) -> Any:
    r = pipe.call("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session)
    if "exceptionDetails" in r:
        raise BrowserError(f"{expr}: {r['exceptionDetails'].get('text')}")
    return r.get("result", {}).get("value")


def _requests(events: list[dict[str, Any]]) -> list[str]:
    return [
        e["params"]["request"]["url"]
        for e in events
        if e.get("method") == "Network.requestWillBeSent"
    ]


def _errors(events: list[dict[str, Any]]) -> list[str]:
    out = []
    for e in events:
        method, p = e.get("method"), e.get("params", {})
        if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p["args"]))
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            out.append(str(d.get("exception", {}).get("description") or d.get("text")))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            out.append(str(p["entry"].get("text")))
    return out


def _high_pipe() -> tuple[int, int]:
    """A pipe whose ends are above fd 4, so wiring them to 3 and 4 in the child cannot
    overwrite one with the other."""
    r, w = os.pipe()
    hi = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (r, w)]
    os.close(r)
    os.close(w)
    return hi[0], hi[1]


def _end(proc: subprocess.Popen[bytes]) -> None:
    """Wait for Chromium to exit; end its process group (by its id) if it does not."""
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # helpers left behind by the browser, if any
