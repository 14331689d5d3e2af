"""The build hook: a (non-editable) install compiles the search with mypyc where it can.

pyproject.toml says everything else. Here: where a C compiler and Python's headers exist
and mypyc imports (mypy is a build requirement), the wheel carries the search's hot
modules (``core.compiled.MODULES``) as C extensions beside their sources, and
Python imports them instead (``core.compiled.active()`` says so, as does the
``search`` field of ``harness check --json``). Anywhere else, and when the build fails,
the wheel is plain Python and the plain search runs: the same verdicts, about half the
speed. An editable install (``make setup``) builds nothing here: there the compiled
modules live in ``.cache/mypyc``, rebuilt when the sources change
(``scripts/compile_checker.py``), as a build beside the sources would go stale at the
first edit. ``HARNESS_PURE_PYTHON=1`` at install time skips the build.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import sysconfig
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent


def _modules() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The compiled modules' paths, and those of the modules written in C, read from
    ``core/compiled.py`` alone (not through the package, whose ``__init__``
    looks for a build)."""
    spec = importlib.util.spec_from_file_location("_compiled", HERE / "core/compiled.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return tuple(module.MODULES), tuple(module.C_MODULES)


def _why_not() -> str | None:
    """Why the search is not compiled here, or None when it can be."""
    if os.environ.get("HARNESS_PURE_PYTHON"):
        return "HARNESS_PURE_PYTHON is set"
    if not any(cmd in sys.argv for cmd in ("bdist_wheel", "build", "build_ext", "install")):
        return "not a wheel build"  # editable installs use .cache/mypyc (see above)
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if not shutil.which(os.environ.get("CC", compiler).split()[0]):
        return f"no C compiler ({compiler})"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        return "no Python headers (Python.h)"
    if importlib.util.find_spec("mypyc") is None:
        return "mypyc is not installed"
    return None


class OptionalBuildExt(build_ext):
    """build_ext that falls back to the plain modules when compiling fails: the wheel
    then holds no extension at all (never some modules compiled and some not)."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as e:  # CompileError, LinkError, a mypyc error: all mean "plain"
            for out in self.get_outputs():
                Path(out).unlink(missing_ok=True)
            self.extensions = []
            print(f"harness: the search is not compiled ({e}); the plain one will run")


def _ext_modules() -> list[Any]:
    why = _why_not()
    if why is not None:
        print(f"harness: the search is not compiled: {why}; the plain one will run")
        return []
    from mypyc.build import mypycify
    from setuptools import Extension

    modules, c_modules = _modules()
    c = [
        Extension(rel.removesuffix(".c").replace("/", "."), [rel], extra_compile_args=["-O2"])
        for rel in c_modules
    ]
    try:
        return list(mypycify(list(modules), opt_level="3")) + c
    except (Exception, SystemExit) as e:  # mypyc exits on a type error
        print(f"harness: the search is not compiled (mypyc: {e}); the plain one will run")
        return []


setup(ext_modules=_ext_modules(), cmdclass={"build_ext": OptionalBuildExt})
