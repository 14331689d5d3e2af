"""Shard results put back together into one suite result (``harness merge``).

Each shard of a suite (``harness suite run NAME --shard I/N``, ``harness.shard``) ran on
a machine of its own and wrote a suite result there: its runs' directories and a
``suite.json`` recording the suite's name and digest, the commit, the entries the suite
chose, and which shard it was. ``merge`` checks that the results given are the N shards
of one split of one suite made by one commit, every entry run by exactly one of them,
and says which shard is missing or which differs; then it copies every run's directory
into the output folder (whole and as it is: a copy, never a link, nothing written
outside the folder, a link found in a shard's folder not followed) and writes what a
whole suite's run writes: ``suite.json``, JUnit, the index and the matrix, and the job
summary ``summary.md`` (``harness.junit_summary``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from core.errors import HarnessError
from core.formats.files import read_bytes
from core.store import read_json
from core.writes import make_dirs, write_bytes, write_text
from harness.suite import Outcome, write_outputs
from harness.terminal import Terminal

RESULT_FILE: Final = "suite.json"
SUMMARY_FILE: Final = "summary.md"
_SAME: Final = ("suite", "digest", "commit", "runs")
"""What every shard of one split records alike."""
_SAID: Final = {
    "suite": "shards of different suites",
    "digest": "shards of different versions of the suite file",
    "commit": "shards made by different commits of the harness",
    "runs": "shards of different selections of the suite's runs (--only)",
}


class MergeError(HarnessError):
    """Shard results that do not make one suite result; the message names the shard."""


@dataclass(frozen=True)
class ShardResult:
    """One shard's suite result: the folder holding its ``suite.json``, and what it says."""

    folder: Path
    record: dict[str, Any]

    @property
    def index(self) -> int:
        return int(self.record["shard"]["index"])

    @property
    def of(self) -> int:
        return int(self.record["shard"]["of"])

    @property
    def label(self) -> str:
        return f"{self.index}/{self.of} ({self.folder})"


def find_result(given: Path) -> Path:
    """The folder of the suite result in ``given``: ``given`` itself when it holds a
    ``suite.json``, else the one ``suite-NAME/STAMP`` below it (``suite run -o``)."""
    if not given.is_dir():
        raise MergeError(f"{given}: no such folder; give the folders the shards wrote")
    if (given / RESULT_FILE).is_file():
        return given
    found = sorted(
        p.parent
        for p in given.glob(f"suite-*/*/{RESULT_FILE}")
        if not (p.parent.is_symlink() or p.parent.parent.is_symlink())
    )
    if len(found) != 1:
        held = f"{len(found)} suite results ({', '.join(map(str, found))})" if found else "none"
        raise MergeError(
            f"{given}: holds {held}; give each shard's own result folder "
            "(the suite-NAME/STAMP folder `suite run --shard I/N` wrote)"
        )
    return found[0]


def read_shard(given: Path) -> ShardResult:
    """The shard result in ``given``; refused in one line when it is not one."""
    folder = find_result(given)
    try:
        record = read_json(folder / RESULT_FILE)
        shard = record["shard"]
        int(shard["index"]), int(shard["of"]), list(shard["runs"]), list(record["outcomes"])
        if record.get("started"):
            datetime.fromisoformat(record["started"])
        missing = [k for k in _SAME if k not in record]
        ran = {str(o["name"]) for o in record["outcomes"]}
    except HarnessError as e:
        raise MergeError(str(e)) from None
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise MergeError(
            f"{folder}: not a shard's result ({type(e).__name__}: {e}); give the folders "
            "`harness suite run NAME --shard I/N` wrote"
        ) from None
    if missing:
        raise MergeError(
            f"{folder}: its {RESULT_FILE} does not record {', '.join(missing)}: made by "
            "an older harness; run the shard again"
        )
    if ran != set(shard["runs"]):
        raise MergeError(
            f"{folder}: its outcomes are not those of its runs (no outcome for "
            f"{', '.join(sorted(set(shard['runs']) - ran)) or 'none'}; an outcome of "
            f"{', '.join(sorted(ran - set(shard['runs']))) or 'none'} it was not given); "
            "run the shard again"
        )
    return ShardResult(folder, record)


def check_split(shards: Sequence[ShardResult]) -> None:
    """The shards are the N of one split of one suite by one commit, each entry run by
    exactly one; else the one line saying which shard is missing or differs."""
    first = shards[0]
    for s in shards[1:]:
        for key in _SAME:
            if s.record[key] != first.record[key]:
                a, b = _shown(first.record[key]), _shown(s.record[key])
                raise MergeError(
                    f"{_SAID[key]}: {a} in {first.folder}, {b} in {s.folder}; merge the "
                    "shards of one run of one suite"
                )
        if s.of != first.of:
            raise MergeError(
                f"shards of different splits: {first.label} and {s.label}; "
                "merge the N shards of one --shard I/N"
            )
    seen: dict[int, ShardResult] = {}
    for s in shards:
        if s.index in seen:
            raise MergeError(
                f"shard {s.index}/{s.of} given twice: {seen[s.index].folder}, {s.folder}"
            )
        seen[s.index] = s
    missing = [i for i in range(1, first.of + 1) if i not in seen]
    if missing:
        names = ", ".join(f"{i}/{first.of}" for i in missing)
        raise MergeError(
            f"shard {names} missing: give the result folder of every shard 1 to {first.of}"
        )
    ran = [name for s in shards for name in s.record["shard"]["runs"]]
    if sorted(ran) != sorted(first.record["runs"]):
        raise MergeError(
            "the shards were split differently (each runs other entries: were they given "
            "different --durations?); run every shard with the same inputs"
        )


def _shown(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 80 else text[:77] + "..."


def merge(dirs: Sequence[Path], out: Path, term: Terminal) -> int:
    """Merge the shard results in ``dirs`` into ``out``; exit 0 when every outcome met its
    expectation, else 1 (as the whole suite's run)."""
    shards = sorted((read_shard(d) for d in dirs), key=lambda s: s.index)
    check_split(shards)
    if os.path.lexists(out / RESULT_FILE):
        raise MergeError(f"{out} already holds a suite result; give a new or empty --out")
    out.mkdir(parents=True, exist_ok=True)  # the folder named: its own links are the user's
    order = {name: i for i, name in enumerate(shards[0].record["runs"])}
    outcomes: list[Outcome] = []
    for s in shards:
        for o in s.record["outcomes"]:
            outcomes.append(_outcome(s, o, out, term))
    outcomes.sort(key=lambda o: order.get(o.run.name, len(order)))
    first = shards[0].record
    starts = [
        datetime.fromisoformat(s.record["started"]) for s in shards if s.record.get("started")
    ]
    record = {
        **{k: first[k] for k in ("digest", "commit", "runs")},
        "started": min(starts).isoformat() if starts else None,
        "merged": [{"shard": f"{s.index}/{s.of}", "from": str(s.folder)} for s in shards],
    }
    write_outputs(
        first["suite"], out, outcomes, term.out, min(starts, default=datetime.now(UTC)), record
    )
    from harness.junit_summary import markdown

    write_text(out / SUMMARY_FILE, markdown([out / "junit.xml"]) + "\n", root=out)
    term.out.print(f"merged {len(shards)} shards of {first['suite']} into {out}")
    return 0 if all(o.met for o in outcomes) else 1


def _outcome(shard: ShardResult, recorded: dict[str, Any], out: Path, term: Terminal) -> Outcome:
    """A shard's outcome with its run directory copied into ``out`` (``STAMP`` below the
    run's test name, where the shard's suite result held it)."""
    run_dir = recorded.get("run_dir")
    moved = None
    if run_dir:
        parts = Path(run_dir).parts[-2:]
        rel = Path(*parts)
        source = shard.folder / rel
        if len(parts) != 2 or any(p in (".", "..", "/") for p in parts):
            raise MergeError(
                f"shard {shard.label}: run {recorded.get('name')!r} names the directory "
                f"{run_dir!r}, not one a suite writes (TEST/STAMP); run the shard again"
            )
        if source.is_symlink() or not source.is_dir():
            raise MergeError(
                f"shard {shard.label}: the directory of run {recorded.get('name')!r} "
                f"({rel}) is missing; give the shard's whole result folder"
            )
        copy_tree(source, out / rel, out, term)
        moved = str(out / rel)
    try:
        return Outcome.from_dict(recorded, moved)
    except (KeyError, TypeError, ValueError) as e:
        raise MergeError(
            f"shard {shard.label}: an outcome of its {RESULT_FILE} is not one "
            f"({type(e).__name__}: {e})"
        ) from None


def copy_tree(source: Path, dest: Path, root: Path, term: Terminal) -> None:
    """Copy the folder ``source`` to ``dest`` below the output root ``root``: folders and
    regular files only, each written whole and never through a link; a link or anything
    else in ``source`` is left out, said on stderr."""
    make_dirs(dest, root=root)
    for top, folders, files in os.walk(source, followlinks=False):
        here = Path(top)
        there = dest / here.relative_to(source)
        for name in folders:
            if not (here / name).is_symlink():
                make_dirs(there / name, root=root)
        for name in files:
            mode = os.lstat(here / name).st_mode
            if not stat.S_ISREG(mode):
                term.err.print(f"not copied (not a regular file): {here / name}")
                continue
            data = read_bytes(here / name, give="give the shard's result folder as it was made")
            write_bytes(there / name, data, root=root)
        for name in [f for f in folders if (here / f).is_symlink()]:
            term.err.print(f"not copied (a link): {here / name}")
