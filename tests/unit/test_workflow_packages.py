"""The workflows install what the suites they run need: each job that runs ``harness suite
run NAME`` installs, in one of its ``apt-get install`` commands, every package the suite's
runs need on the machine (``harness.host_packages``). A suite is checked whole before its
first run, so one missing package fails all of it (the nightly's client-clock runs and
libfaketime were the first case)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from harness.host_packages import run_packages, suite_packages
from harness.packaged import suite_file
from harness.suite import SuiteError, load_suite
from nemesis.fault_registry import FAULTS
from nemesis.faults import client_clock

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
SUITE_RUN = re.compile(r"harness suite run\s+([^\s'\"]+)")
JOB = re.compile(r"^  ([A-Za-z0-9_-]+):\s*$")
SHELL_PUNCTUATION = "();<>|&"


def jobs(workflow: str) -> dict[str, list[str]]:
    """Each job of a workflow's text -> its command lines: the lines below ``jobs:`` at the
    job's indentation, comments left out, a line ending in ``\\`` joined to the next."""
    found: dict[str, list[str]] = {}
    lines: list[str] | None = None
    in_jobs = False
    pending = ""
    for raw in workflow.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        if not raw.startswith(" "):
            in_jobs = raw.rstrip() == "jobs:"
            lines = None
            continue
        m = JOB.match(raw)
        if in_jobs and m:
            lines = found.setdefault(m.group(1), [])
            continue
        if lines is None:
            continue
        line = pending + raw.strip()
        pending = line[:-1] + " " if line.endswith("\\") else ""
        if not pending:
            lines.append(line)
    return found


def installed(lines: list[str]) -> set[str]:
    """The packages the ``apt-get install`` commands among ``lines`` name (options and
    shell words such as ``"${missing[@]}"`` left out)."""
    packages: set[str] = set()
    for line in (line for line in lines if "apt-get" in line):
        words = list(shlex.shlex(line, posix=True, punctuation_chars=True))
        for at in (i for i, w in enumerate(words) if w == "apt-get"):
            rest = words[at + 1 :]
            if "install" not in rest:
                continue
            for word in rest[rest.index("install") + 1 :]:
                if word[0] in SHELL_PUNCTUATION:
                    break  # the command ends (; && |) or its output is redirected
                if not word.startswith("-") and "$" not in word:
                    packages.add(word)
    return packages


def suites_run(lines: list[str]) -> list[str]:
    """The suites the job runs (``harness suite run NAME``), by name or path."""
    return [m.group(1) for line in lines for m in SUITE_RUN.finditer(line)]


def missing_packages(workflow: str) -> list[str]:
    """One sentence per package a job's suite needs and no command of the job installs."""
    problems = []
    for job, lines in jobs(workflow).items():
        have = installed(lines)
        for suite in suites_run(lines):
            for package, runs in suite_packages(suite_file(suite)).items():
                if package not in have:
                    problems.append(
                        f"job {job} runs suite {suite}, whose runs {', '.join(runs)} need "
                        f"{package}: no apt-get install of the job installs it"
                    )
    return problems


@pytest.mark.parametrize("name", ["ci.yml"])  # suite-matrix.yml: tests/unit/test_suite_matrix.py
def test_every_suite_a_workflow_runs_has_its_packages_installed(name: str) -> None:
    workflow = (WORKFLOWS / name).read_text()
    assert any(suites_run(lines) for lines in jobs(workflow).values()), name
    problems = missing_packages(workflow)
    assert not problems, f"{name}: " + "; ".join(problems)


NIGHTLY_WITHOUT = """\
name: n
on: push
jobs:
  other:
    runs-on: ubuntu-latest
    steps:
      - run: sudo apt-get install -y libfaketime
  nightly:
    runs-on: ubuntu-latest
    steps:
      # apt-get install libfaketime (a comment installs nothing)
      - name: Packages
        run: |
          sudo apt-get update -qq
          sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap \\
            zstd >/dev/null
      - run: .venv/bin/harness suite run nightly -o results
"""


def test_a_job_that_does_not_install_what_its_suite_needs_is_named() -> None:
    """Installed by another job or named in a comment does not count; an install line
    continued with a backslash does, whatever its options and redirections."""
    problems = missing_packages(NIGHTLY_WITHOUT)
    assert len(problems) == 1 and problems[0].startswith("job nightly runs suite nightly")
    assert "ids-snowflake-clock-back-wait" in problems[0] and "need libfaketime" in problems[0]
    fixed = NIGHTLY_WITHOUT.replace("debootstrap \\", "debootstrap libfaketime \\")
    assert missing_packages(fixed) == []
    assert installed(jobs(fixed)["nightly"]) == {"debootstrap", "libfaketime", "zstd"}


def test_a_suite_needs_what_its_runs_faults_declare(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read as on a machine without the packages (where running the suite is refused),
    its runs are not refused for lacking them; a run that names no fault gets its
    workload's default fault's."""
    monkeypatch.setattr(client_clock, "FAKETIME_LIB", str(tmp_path / "no-libfaketime.so"))
    suite = tmp_path / "s.toml"
    suite.write_text(
        "[[run]]\nname = 'ids'\nworkload = 'unique-ids'\nid_generator = 'snowflake'\n"
        "nemesis = ['client-clock']\n"
        "[[run]]\nname = 'lock'\nworkload = 'lock'\n"
    )
    with pytest.raises(SuiteError, match="needs libfaketime on this machine"):
        load_suite(suite)
    assert suite_packages(suite) == {"libfaketime": ("ids",)}
    lock = load_suite(suite, check=False).runs[1].options
    assert lock.faults.nemesis == ("client-pause",) and run_packages(lock) == ()
    assert suite_packages(suite_file("smoke")) == {}


def test_every_declared_package_is_an_apt_name() -> None:
    declared = {p for f in FAULTS.values() for p in f.packages}
    assert "libfaketime" in declared
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9+.-]+", p) for p in declared), declared
