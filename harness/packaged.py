"""The suites and documents shipped inside the package: found by name from any directory
of an installed copy (``harness suite run smoke``, ``harness docs ssh``).

In the checkout ``harness/suites`` and ``harness/docs`` are links to the top-level
``suites/`` and ``docs/``; a built wheel holds their files (``pyproject.toml``'s package
data).
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

SUITE_SUFFIX = ".toml"
DOC_SUFFIX = ".md"


def _folder(name: str) -> Traversable:
    return files("harness") / name


def _names(folder: str, suffix: str) -> tuple[str, ...]:
    where = _folder(folder)
    if not where.is_dir():
        return ()
    return tuple(
        sorted(f.name.removesuffix(suffix) for f in where.iterdir() if f.name.endswith(suffix))
    )


def suite_names() -> tuple[str, ...]:
    """The suites shipped with the package, by name (``smoke``, ``locks``...)."""
    return _names("suites", SUITE_SUFFIX)


def doc_names() -> tuple[str, ...]:
    """The documents shipped with the package, by name (``ssh``, ``linearizability``)."""
    return _names("docs", DOC_SUFFIX)


def suite_file(name_or_path: str) -> Path:
    """A suite file: ``name_or_path`` itself when it names an existing file or looks like
    a path (a folder in it, or the ``.toml`` suffix), else the shipped suite of that name
    (a path that does not exist either way, for the caller's one-line error)."""
    given = Path(name_or_path)
    if given.exists() or "/" in name_or_path or name_or_path.endswith(SUITE_SUFFIX):
        return given
    shipped = _folder("suites") / f"{name_or_path}{SUITE_SUFFIX}"
    return Path(str(shipped)) if shipped.is_file() else given


def doc_file(name: str) -> Path | None:
    """The path of a shipped document, or None."""
    found = _folder("docs") / f"{name.removesuffix(DOC_SUFFIX)}{DOC_SUFFIX}"
    return Path(str(found)) if found.is_file() else None


def suite_summary(path: Path) -> str:
    """What a suite is for: the first sentence of the comment it opens with."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return ""
    words: list[str] = []
    for line in lines:
        if not line.startswith("#"):
            break
        words.append(line.lstrip("# ").strip())
    text = " ".join(words)
    return text.split(". ")[0].rstrip(".")
