"""The isolated environment a lock library runs in: one virtual environment per (package,
version), made once and cached, whose interpreter the client workers run with.

It is made with ``python -m venv`` (the harness's own Python, so the harness's compiled
dependencies load in it) and filled by pip (``pip --python``, the harness's pip, from
PyPI); the workers put its site-packages before the harness's code and dependencies
(``workloads.lock.own.OwnLockDriver``), so the library imports its own packages (its
``redis``, not the harness's). The cache is ``$HARNESS_LIB_CACHE``, else
``~/.cache/harness/libs``: ``<package>-<version>/``, complete once its ``installed.json``
(package, the version installed as the environment's metadata says, interpreter,
site-packages) is written; an environment is made under a temporary name and renamed, so
a failed or interrupted install leaves nothing that looks cached.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from core.errors import HarnessError
from core.writes import write_text

CACHE_VARIABLE: Final = "HARNESS_LIB_CACHE"
DONE: Final = "installed.json"
PIP_TIMEOUT_S: Final = 600.0

Run = Callable[..., "subprocess.CompletedProcess[str]"]


class InstallError(HarnessError):
    """A library could not be installed: one line, what and how to retry."""


@dataclass(frozen=True, slots=True)
class LibEnv:
    """An installed library's environment: what test.json records of it."""

    package: str
    version: str
    """The version installed, from the environment's metadata."""
    interpreter: str
    site_packages: tuple[str, ...]
    asked: str
    """What pip was asked to install (``package==version``, or a path)."""

    def record(self) -> dict[str, Any]:
        return {**asdict(self), "site_packages": list(self.site_packages)}


def cache_root() -> Path:
    """Where the environments are kept."""
    said = os.environ.get(CACHE_VARIABLE)
    return Path(said) if said else Path.home() / ".cache" / "harness" / "libs"


def _safe(word: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", word)


def ensure(
    package: str,
    version: str,
    requirement: str | None = None,
    root: Path | None = None,
    run: Run = subprocess.run,
    also: Sequence[str] = (),
) -> LibEnv:
    """The environment of ``package`` at ``version``, made now if it is not cached;
    ``requirement``: what pip installs (default ``package==version``: a local path for a
    package of one's own); ``also``: other requirements installed with it (the drivers a
    library imports only when asked: tooz's), which name an environment of their own.
    InstallError (one line) when it cannot be made."""
    root = cache_root() if root is None else root
    extra = f"+{hashlib.sha256(' '.join(sorted(also)).encode()).hexdigest()[:8]}" if also else ""
    folder = root / f"{_safe(package)}-{_safe(version)}{extra}"
    done = folder / DONE
    if done.is_file():
        return _read(done)
    wanted = [requirement or f"{package}=={version}", *also]
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InstallError(
            f"cannot make the library cache {root} ({e.strerror}); set {CACHE_VARIABLE} "
            "to a folder you can write"
        ) from None
    work = root / f".{folder.name}.{os.getpid()}.tmp"
    shutil.rmtree(work, ignore_errors=True)
    try:
        env = _make(work, folder, package, wanted, run)
        try:
            work.rename(folder)
        except OSError:  # another run made it meanwhile: theirs is as good
            if not done.is_file():
                raise
        else:
            write_text(done, json.dumps(env.record(), indent=1), root=root)
        return _read(done)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _make(work: Path, folder: Path, package: str, wanted: list[str], run: Run) -> LibEnv:
    """A new environment in ``work`` with ``wanted`` installed, described as it will be
    once renamed ``folder``."""
    asked = " ".join(wanted)
    _step(run, [sys.executable, "-m", "venv", "--without-pip", str(work)], f"make {work}", asked)
    python = work / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
    _step(run, [*pip, "--disable-pip-version-check", *wanted], f"pip install {asked}", asked)
    said = _step(
        run,
        [str(python), "-c", _ASK, package],
        f"read the metadata of {package}",
        asked,
    )
    version, site = said.strip().splitlines()[-2:]
    return LibEnv(package, version, str(folder / "bin" / "python"), (str(folder / site),), asked)


_ASK = (
    "import os, sys, sysconfig, importlib.metadata as m; "
    "print(m.version(sys.argv[1])); "
    "print(os.path.relpath(sysconfig.get_path('purelib'), sys.prefix))"
)
"""Run in the new environment: its package's installed version, its site-packages
(relative to the environment)."""


def _step(run: Run, argv: list[str], what: str, asked: str) -> str:
    """Run one step; InstallError naming it and pip's last error line when it fails."""
    try:
        done = run(argv, capture_output=True, text=True, timeout=PIP_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise InstallError(f"could not {what}: {e}; retry, or pick another --lib-version") from None
    if done.returncode != 0:
        lines = [line for line in (done.stderr or "").splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("ERROR")] or lines or ["no output"]
        raise InstallError(
            f"could not {what} (exit {done.returncode}): {errors[-1].strip()[:300]}; check "
            f"the version exists (--lib-version) and that PyPI is reachable, then retry "
            f"(nothing was cached)"
        )
    return str(done.stdout)


def _read(done: Path) -> LibEnv:
    said = json.loads(done.read_text())
    return LibEnv(
        said["package"],
        said["version"],
        said["interpreter"],
        tuple(said["site_packages"]),
        said["asked"],
    )
