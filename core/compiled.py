"""The hot modules compiled (the search's with mypyc, and a few written in C): built on
request, used only while they match the sources.

The checker is plain Python and runs as such everywhere. mypyc (part of mypy, a dev
dependency) compiles the same typed sources to a C extension, which runs the search about
twice as fast. ``scripts/compile_checker.py`` (``make setup`` runs it) builds ``MODULES``
into ``.cache/mypyc/<digest>/`` beside the packages, ``digest`` naming the sources they
were built from (and the ones whose types they rely on) and the Python ABI (mypyc puts
its runtime into the build: a build outlives the mypy that made it), and ``C_MODULES``
with it. At import, ``checkers.linear``, ``checkers.linear.models`` and ``core.formats``
put that directory first on their ``__path__`` when it exists for the current digest:
an edited source makes the build stale, and the plain modules are used until the next
build, never a compiled copy of older code. ``HARNESS_PURE_PYTHON=1`` forces the plain modules.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from types import ModuleType
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pathlib import Path

PACKAGES_ROOT: Final = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
"""The directory holding the ``checkers`` and ``harness`` packages. What every start-up
runs here (finding the build: ``extend_path``) goes by ``os.path``: ``pathlib`` costs a
small check's start-up 3 ms (with ``urllib.parse``, which it imports), and is imported
only by what is not run at every start (building, pruning, ``--version``)."""
MODULES: Final = (
    "checkers/linear/bits.py",
    "checkers/linear/partition.py",
    "checkers/linear/prepare.py",
    "checkers/linear/schedule.py",
    "checkers/linear/tables.py",
    "checkers/linear/eager.py",
    "checkers/linear/lazy.py",
    "checkers/linear/prune.py",
    "checkers/linear/search.py",
    "checkers/linear/solve.py",
    "checkers/linear/registers.py",
    "checkers/linear/models/kv.py",
    "checkers/linear/models/register.py",
    "core/formats/edn.py",
)
"""The compiled modules: the search's hot path, the models of the reference histories, and
the EDN reader (Jepsen's and Knossos' histories)."""
C_MODULES: Final = (
    "checkers/linear/_registers.c",
    "core/formats/_scan.c",
    "core/formats/_edn.c",
)
"""Modules written in C, built with them: the register path's reading and search, the
checks of big JSONL histories' ops, and EDN histories read into ops."""
C_HEADERS: Final = ("core/struct_slots.h",)
"""The headers the C modules include (by a path relative to theirs)."""
TYPES_FROM: Final = (
    "checkers/linear/model.py",
    "checkers/linear/values.py",
    "core/ops.py",
    "core/history.py",
    "core/formats/budget.py",
    "core/formats/edn_text.py",
)
"""Plain modules whose types the compiled ones are built against."""
SOURCES: Final = MODULES + C_MODULES + C_HEADERS + TYPES_FROM
"""Every file a build depends on."""
DONE: Final = "complete"
"""The marker written last in a finished build's directory."""
STAMP: Final = "stamp"
"""The file of a build's directory holding the ``stamp`` of the sources it was built from."""


def digest(root: str | os.PathLike[str] = PACKAGES_ROOT) -> str:
    """What a build depends on: the sources under ``root`` and the Python ABI."""
    import hashlib  # here: a start-up on unchanged sources finds its build by ``stamp``
    import sysconfig

    h = hashlib.sha256()
    h.update(str(sysconfig.get_config_var("EXT_SUFFIX")).encode())
    for rel in SOURCES:
        h.update(rel.encode())
        with open(os.path.join(root, rel), "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


def cache_root() -> Path:
    """The folder of the builds, one folder each (``HARNESS_COMPILED_DIR`` where set)."""
    from pathlib import Path

    return Path(_cache_dir())


def _cache_dir() -> str:
    return os.environ.get("HARNESS_COMPILED_DIR") or os.path.join(PACKAGES_ROOT, ".cache", "mypyc")


def stamp(root: str | os.PathLike[str] = PACKAGES_ROOT) -> str:
    """The sources' sizes and modification times, and the ABI: a build records the stamp
    of the sources it was built from (``STAMP``), so that a process starting on unchanged
    files finds its build without reading and hashing them (hashing costs a few ms of
    every start-up); any change to a file changes the stamp, and the digest decides."""
    parts = [EXTENSION_SUFFIXES[0]]
    for rel in SOURCES:
        st = os.stat(os.path.join(root, rel))
        parts.append(f"{rel} {st.st_size} {st.st_mtime_ns}")
    return "\n".join(parts) + "\n"


@functools.cache
def _current() -> str:
    """The digest of the sources this process runs (read once: both packages that may
    take the build, ``checkers.linear`` and its ``models``, ask at import): that of the
    build whose stamp matches the files', else computed from their contents."""
    now = stamp()
    root = _cache_dir()
    try:
        builds = [d for d in os.listdir(root) if not d.startswith("mypyc-")]
    except OSError:
        builds = []
    for d in builds:
        try:
            with open(os.path.join(root, d, STAMP)) as f:
                if f.read() == now:
                    return d
        except OSError:
            continue
    found = digest()
    if os.path.exists(os.path.join(root, found, DONE)):
        _restamp(os.path.join(root, found, STAMP), now)
    return found


def _restamp(path: str, now: str) -> None:
    """Record ``now`` as the stamp of a finished build its digest found: one made before
    stamps, or one whose sources were touched since without being changed (a checkout or
    a merge sets their times), is found by its stamp from the next start on, instead of
    every start hashing every source (about 5 ms of each) until the next build. Never
    through a link; where it cannot be written, the digest keeps finding the build."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    except OSError:
        return
    with os.fdopen(fd, "w") as f:
        f.write(now)


def build_dir() -> Path:
    """Where the build for the current sources lives (whether it exists or not)."""
    return cache_root() / _current()


def _build_dir() -> str:
    """``build_dir()``, as the start-up looks for it (``PACKAGES_ROOT``)."""
    return os.path.join(_cache_dir(), _current())


def extend_path(package: str, path: list[str]) -> list[str]:
    """A package's ``__path__`` with the compiled build's directory first, when a finished
    build matches the sources and ``HARNESS_PURE_PYTHON`` is not set; else ``path``."""
    if os.environ.get("HARNESS_PURE_PYTHON"):
        return path
    try:
        where = _build_dir()
    except OSError:
        return path
    if not os.path.exists(os.path.join(where, DONE)):
        return path
    _load_shared(where)
    return [os.path.join(where, *package.split(".")), *path]


def _load_shared(where: str) -> None:
    """Load the build's shared library (the compiled code of every module; each module's
    own extension is a small shim importing it by its top-level name): the files named
    ``*__mypyc*``, as a glob finds them (none hidden)."""
    libs = sorted(n for n in os.listdir(where) if "__mypyc" in n and not n.startswith("."))
    for lib in (os.path.join(where, n) for n in libs):
        name = os.path.basename(lib).split(".")[0]
        if name in sys.modules:
            return
        spec = importlib.util.spec_from_file_location(name, lib)
        if spec is None or spec.loader is None:
            return
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)


@functools.cache
def loaded(name: str) -> ModuleType | None:
    """The compiled module ``name`` (one of ``C_MODULES``, dotted) where it is built and
    loads, else None: its caller then takes its plain path."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def active() -> bool:
    """Whether this process runs the compiled modules (all are built, and loaded, together:
    the JSONL checks' module stands for them)."""
    return _scan_origin() is not None


def location() -> Path:
    """Where the compiled modules are: a build under ``.cache/mypyc`` (a checkout's ``make
    setup``) or the installed packages (a wheel compiled by ``setup.py``)."""
    from pathlib import Path

    origin = _scan_origin()
    return Path(origin).parents[2] if origin is not None else Path(PACKAGES_ROOT)


@functools.cache
def _scan_origin() -> str | None:
    """Where the compiled JSONL checks' module is (None: not built), looked up once: a
    check of many files asks for every file (``active``), and the search of the path
    stats a file per directory of it."""
    spec = importlib.util.find_spec("core.formats._scan")
    return None if spec is None else spec.origin


def build() -> Path:
    """Compile ``MODULES`` into ``build_dir()`` (nothing to do when it is there). Raises
    RuntimeError with mypyc's or the compiler's last lines when the build fails."""
    import subprocess  # here, not at import: every process that checks imports this module
    import tempfile
    from pathlib import Path

    where = build_dir()
    if (where / DONE).exists():
        return where
    where.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mypyc-", dir=where.parent) as tmp:
        out = Path(tmp) / "out"
        script = (
            "import sys\n"
            "from setuptools import Extension, setup\n"
            "from mypyc.build import mypycify\n"
            f"setup(name='harness-compiled', ext_modules=mypycify({list(MODULES)!r}, "
            f"target_dir={str(Path(tmp) / 'c')!r}, opt_level='3') + {_c_extensions()},\n"
            f"      script_args=['build_ext', '--build-lib', {str(out)!r}, "
            f"'--build-temp', {str(Path(tmp) / 't')!r}])\n"
        )
        proc = subprocess.run(
            [sys.executable, "-c", script],
            cwd=PACKAGES_ROOT,
            capture_output=True,
            text=True,
            env={**os.environ, "MYPY_CACHE_DIR": str(Path(tmp) / "mypy-cache")},
        )
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-8:]
            raise RuntimeError("mypyc build failed:\n" + "\n".join(tail))
        (out / STAMP).write_text(stamp())
        (out / DONE).write_text(_current() + "\n")
        if where.exists():  # built meanwhile by another process
            return where
        out.rename(where)
    return where


def _c_extensions() -> str:
    """The source text of the ``setuptools.Extension`` list building ``C_MODULES``."""
    items = (
        f"Extension({rel.removesuffix('.c').replace('/', '.')!r}, [{rel!r}], "
        "extra_compile_args=['-O2'])"
        for rel in C_MODULES
    )
    return "[" + ", ".join(items) + "]"


def prune() -> list[Path]:
    """Remove the builds of other sources than the current ones; returns them."""
    import shutil

    keep = _current()
    gone = []
    root = cache_root()
    if root.is_dir():
        for d in root.iterdir():
            if d.is_dir() and d.name != keep and not d.name.startswith("mypyc-"):
                shutil.rmtree(d, ignore_errors=True)
                gone.append(d)
    return gone


def main() -> int:
    """Build (``scripts/compile_checker.py``): one line saying what happened. A
    failed build is not an error of the harness (the plain modules run), so the exit
    status is 0 unless ``--require`` is given or ``HARNESS_REQUIRE_COMPILED=1``."""
    import time

    require = "--require" in sys.argv[1:] or os.environ.get("HARNESS_REQUIRE_COMPILED") == "1"
    started = time.monotonic()
    try:
        fresh = not (build_dir() / DONE).exists()
        where = build()
    except (RuntimeError, OSError) as e:
        print(f"checker not compiled (the plain Python one will run): {e}")
        return 1 if require else 0
    prune()
    took = time.monotonic() - started
    if fresh:
        print(f"checker compiled with mypyc: {len(MODULES)} modules in {where} ({took:.0f} s)")
    else:
        print(f"checker compiled with mypyc: up to date ({where.name})")
    return 0
