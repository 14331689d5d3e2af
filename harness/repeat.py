"""Repeats: one scenario run N times, and how often it failed.

``harness run --repeat N`` (and a suite entry's ``repeat = N``) runs the same options with
N seeds, ``seed, seed+1, ...`` (or the same seed N times, ``--repeat-seed same``), each run
in its own run directory below ``<out>/repeat-<test>/<UTC timestamp>/``, beside
``repeat.json``: the seeds, each run's verdict and directory, the rate (k of N invalid)
and whether the scenario passed its pass rule. The rule is Scylla's, over the runs'
verdicts (an unknown run is not valid):

- ``all``: the scenario passes when every run was valid (the default: one run's rule);
- ``most``: when more than half of the runs were valid;
- ``any``: when at least one run was valid.

A scenario that passes exits 0; one that does not exits 1 when a run was invalid, else 2
(unknown), Jepsen's codes. With ``--replay RUN`` every run issues the recorded schedule
again, and each run says whether it reproduced the recording's anomaly: a violation of
the same kind (``checkers.anomalies``) as one the recording's check found.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from checkers.anomalies import KEY
from core.errors import HarnessError
from core.option_checks import Bound
from core.store import RESULTS_FILE, read_json, utc_stamp, write_json
from core.writes import make_dirs

if TYPE_CHECKING:
    from harness.orchestrate import RunOutcome
    from harness.replay import Recording
    from harness.terminal import Terminal
    from harness.validate import Checked

PASS_RULES: Final[dict[str, str]] = {
    "all": "every run must be valid",
    "most": "more than half of the runs must be valid",
    "any": "at least one run must be valid",
}
"""Scylla's rules: the scenario passes when all, most or any of its runs were valid."""
DEFAULT_PASS_RULE: Final = "all"
SEED_MODES: Final = ("next", "same")
"""``next``: seed, seed+1, ...; ``same``: the one seed every time."""
REPEATS: Final = Bound("--repeat", 1, 1000, integer=True, unit="runs")
REPEAT_FILE: Final = "repeat.json"


@dataclass(frozen=True, slots=True)
class Repeated:
    """One run of a repeat: its seed, where it is, its verdict and the kinds of anomaly
    its check named; ``error`` when it could not run to its check."""

    seed: int
    valid: Any = None
    run_dir: str | None = None
    kinds: tuple[str, ...] = ()
    error: str | None = None
    reproduced: bool | None = None
    """A replay's: whether it found a kind of anomaly the recording had (None: no replay)."""

    def word(self) -> str:
        if self.error is not None:
            return "error"
        return "valid" if self.valid is True else "invalid" if self.valid is False else "unknown"

    def to_dict(self) -> dict[str, Any]:
        out = {
            "seed": self.seed,
            "verdict": self.word(),
            "run_dir": self.run_dir,
            "anomalies": list(self.kinds),
        }
        if self.error is not None:
            out["error"] = self.error
        if self.reproduced is not None:
            out["reproduced"] = self.reproduced
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: Callable[[str | None], str | None]) -> Repeated:
        """The run ``to_dict`` recorded, its directory now ``where(recorded)`` (``harness
        merge`` copies it); ``KeyError``, ``TypeError`` or ``ValueError`` when ``d`` is
        not one."""
        verdict = d["verdict"]
        if verdict not in ("valid", "invalid", "unknown", "error"):
            raise ValueError(f"a repeated run's verdict {verdict!r}")
        return cls(
            seed=int(d["seed"]),
            valid={"valid": True, "invalid": False}.get(verdict, "unknown"),
            run_dir=where(d.get("run_dir")),
            kinds=tuple(str(k) for k in d.get("anomalies") or ()),
            error=str(d["error"]) if verdict == "error" else None,
            reproduced=d.get("reproduced"),
        )


@dataclass(frozen=True, slots=True)
class Rate:
    """The runs of one repeated scenario, judged by its pass rule."""

    runs: tuple[Repeated, ...]
    asked: int
    pass_rule: str = DEFAULT_PASS_RULE
    wanted: tuple[str, ...] = ()
    """A replay's: the kinds of anomaly the recording showed, to reproduce."""

    @property
    def invalid(self) -> int:
        return sum(r.valid is False and r.error is None for r in self.runs)

    @property
    def valid(self) -> int:
        return sum(r.valid is True and r.error is None for r in self.runs)

    @property
    def reproduced(self) -> int:
        return sum(bool(r.reproduced) for r in self.runs)

    def passed(self) -> bool:
        """Whether the scenario meets its pass rule (a run not made counts as not valid)."""
        n = self.asked
        need = {"all": n, "most": n // 2 + 1, "any": 1}[self.pass_rule]
        return self.valid >= need

    def exit_code(self) -> int:
        """0 when the scenario passed; else 1 with an invalid run, 2 without one."""
        return 0 if self.passed() else 1 if self.invalid else 2

    def first_failing(self) -> Repeated | None:
        return next((r for r in self.runs if r.valid is False and r.error is None), None)

    def rate(self) -> str:
        """``k/N invalid``, N the runs asked for (and how many ran, when fewer did)."""
        ran = "" if len(self.runs) == self.asked else f", {len(self.runs)} ran"
        return f"{self.invalid}/{self.asked} invalid{ran}"

    def lines(self) -> list[str]:
        """What the console says of the repeat, the rate first."""
        word = "passed" if self.passed() else "FAILED"
        out = [
            f"repeat: {self.rate()}; pass rule {self.pass_rule} "
            f"({PASS_RULES[self.pass_rule]}): {word}"
        ]
        if self.wanted:
            out.append(
                f"reproduced: {self.reproduced}/{self.asked} runs found "
                f"{' or '.join(self.wanted)}, the recording's anomaly"
            )
        out.append("seeds: " + ", ".join(f"{r.seed} {r.word()}" for r in self.runs))
        first = self.first_failing()
        if first is not None:
            out.append(f"first failing run: seed {first.seed}, {first.run_dir}")
        out += [f"seed {r.seed} could not run: {r.error}" for r in self.runs if r.error]
        return out

    def to_dict(self) -> dict[str, Any]:
        first = self.first_failing()
        out: dict[str, Any] = {
            "runs_asked": self.asked,
            "runs": [r.to_dict() for r in self.runs],
            "seeds": [r.seed for r in self.runs],
            "invalid": self.invalid,
            "valid": self.valid,
            "rate": self.rate(),
            "pass_rule": self.pass_rule,
            "passed": self.passed(),
            "exit_code": self.exit_code(),
            "first_failing": first.run_dir if first is not None else None,
        }
        if self.wanted:
            out["reproduce"] = list(self.wanted)
            out["reproduced"] = self.reproduced
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: Callable[[str | None], str | None]) -> Rate:
        """The rate ``to_dict`` recorded, each run's directory now ``where(recorded)``."""
        rule = d["pass_rule"]
        if rule not in PASS_RULES:
            raise ValueError(f"pass rule {rule!r}")
        return cls(
            runs=tuple(Repeated.from_dict(r, where) for r in d["runs"]),
            asked=int(d["runs_asked"]),
            pass_rule=rule,
            wanted=tuple(str(k) for k in d.get("reproduce") or ()),
        )


def seeds(first: int, n: int, mode: str = "next") -> list[int]:
    """The seeds of ``n`` runs from ``first``: consecutive, or the one seed again."""
    return [first if mode == "same" else first + i for i in range(n)]


def anomaly_kinds(results: dict[str, Any]) -> tuple[str, ...]:
    """The kinds of anomaly a run's check named (results.json), each once, in order."""
    found: dict[str, None] = {}
    for r in (results.get("checkers") or {}).values():
        for a in (r.get(KEY) or ()) if isinstance(r, dict) else ():
            if isinstance(a, dict) and isinstance(a.get("kind"), str):
                found[a["kind"]] = None
    return tuple(found)


RunOne = Callable[["Checked", dict[str, Any]], "RunOutcome"]
"""Runs one repeat's run (checked once for all of them: only its seed and folder are its
own, ``Checked.placed``), its ``repeat`` facts for test.json (``run_test``)."""


def repeat_dir(out_dir: str | Path, test_name: str) -> Path:
    """A new folder for one repeat's runs and its repeat.json, below ``out_dir``."""
    root = Path(out_dir)
    root.mkdir(parents=True, exist_ok=True)  # the folder named: its own links are the user's
    folder = make_dirs(root / f"repeat-{test_name}", root=root)
    stamp = utc_stamp()
    for n in range(1, 1000):  # a second repeat in the same second: -2, -3...
        try:
            (base := folder / (stamp if n == 1 else f"{stamp}-{n}")).mkdir()
            return base
        except FileExistsError:
            continue
    raise HarnessError(f"{folder}: a thousand repeats this second; wait a second")


def run_repeated(
    checked: Checked,
    n: int,
    run_one: RunOne,
    term: Terminal,
    *,
    pass_rule: str = DEFAULT_PASS_RULE,
    seed_mode: str = "next",
    wanted: Iterable[str] = (),
) -> tuple[Rate, Path]:
    """Run ``checked`` ``n`` times (seeds from ``seeds``) into a new repeat folder,
    writing repeat.json after each run (an interrupted repeat still says what ran); the
    rate and the folder. A run interrupted by a signal ends the repeat there."""
    opts = checked.options
    first = opts.seed if opts.seed is not None else random.randrange(2**31 - n)
    base = repeat_dir(opts.out_dir, opts.test_name())
    wanted = tuple(wanted)
    made: list[Repeated] = []
    rate = Rate((), n, pass_rule, wanted)
    for i, seed in enumerate(seeds(first, n, seed_mode)):
        term.err.print(f"[bold]repeat {i + 1}/{n}[/]: seed {seed}")
        facts = {"index": i + 1, "of": n, "dir": str(base)}
        one, stop = _one(checked.placed(str(base), seed), facts, run_one, wanted)
        made.append(one)
        rate = Rate(tuple(made), n, pass_rule, wanted)
        write_json(base / REPEAT_FILE, {"test": opts.test_name(), **rate.to_dict()})
        if stop:
            term.err.print(f"[yellow]repeat stopped after run {i + 1} of {n}: interrupted[/]")
            break
    return rate, base


def _one(
    checked: Checked, facts: dict[str, Any], run_one: RunOne, wanted: tuple[str, ...]
) -> tuple[Repeated, bool]:
    """One run of a repeat, and whether a signal interrupted it. A run that could not go
    on (a cluster that never came up) is kept as an error, and the repeat goes on."""
    opts = checked.options
    assert opts.seed is not None
    try:
        outcome = run_one(checked, facts)
    except HarnessError as e:
        return Repeated(opts.seed, error=str(e)), False
    results = read_json(outcome.run_dir / RESULTS_FILE)
    kinds = anomaly_kinds(results)
    reproduced = bool(set(kinds) & set(wanted)) if wanted else None
    one = Repeated(opts.seed, results.get("valid"), str(outcome.run_dir), kinds, None, reproduced)
    return one, results.get("status") == "interrupted"


def recorded_kinds(run_dir: Path) -> tuple[str, ...]:
    """The kinds of anomaly a recorded run's check found, for a replay to reproduce; a
    run without any is refused in one line (there is nothing to reproduce)."""
    path = run_dir / RESULTS_FILE
    kinds = anomaly_kinds(read_json(path)) if path.is_file() else ()
    if not kinds:
        raise HarnessError(
            f"{run_dir}: no anomaly to reproduce (its check found none); --replay with "
            "--repeat counts how often a failing run's anomaly comes back: give an "
            "invalid run, or leave out --repeat"
        )
    return kinds


def repeat_command(
    checked: Checked,
    term: Terminal,
    n: int,
    pass_rule: str | None,
    seed_mode: str | None,
    recording: Recording | None = None,
) -> int:
    """``harness run --repeat N``: the runs, then the rate, the seeds and the first
    failing run on stdout (``--json``: repeat.json's object); the exit code the pass rule
    gives. A replay's runs keep the recorded seed unless ``--repeat-seed next``."""
    from harness.orchestrate import run_test

    opts = checked.options
    wanted = recorded_kinds(recording.run_dir) if recording is not None else ()
    mode = seed_mode or ("same" if recording is not None else "next")
    rate, base = run_repeated(
        checked,
        n,
        lambda c, facts: run_test(c, term, recording, facts),
        term,
        pass_rule=pass_rule or DEFAULT_PASS_RULE,
        seed_mode=mode,
        wanted=wanted,
    )
    for line in rate.lines():
        term.out.print(line, markup=False, highlight=False, soft_wrap=True)
    term.out.print(f"repeat results in {base / REPEAT_FILE}", soft_wrap=True)
    if term.as_json:
        term.answer({"dir": str(base), "test": opts.test_name(), **rate.to_dict()})
    return rate.exit_code()
