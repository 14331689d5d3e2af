"""Issue 28, "Help": ``harness run --help`` fits a screen and shows examples; the whole
option reference is ``harness docs options [TOPIC]``, written from the same parser; every
help text is about its own option.

Reproduced first: ``COLUMNS=80 harness run --help`` was 266 lines without an example, and
``--read-mode``'s help printed every target's lock implementations.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

import pytest

from clusters.spec import Offer
from clusters.target_registry import TARGETS
from harness.commands.docs import run_parser
from harness.option_help import topics

WIDTH = 80


def _printed(*argv: str) -> str:
    """What ``harness ARGV`` prints in a terminal 80 columns wide (``COLUMNS=80``)."""
    out = subprocess.run(
        [sys.executable, "-m", "harness.cli", *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": str(WIDTH)},
        timeout=60,
        check=True,
    )
    return out.stdout


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return [a.option_strings[0] for a in parser._actions if a.option_strings][1:]  # not -h


def test_run_help_fits_a_screen_with_three_examples() -> None:
    text = _printed("run", "--help")
    lines = text.splitlines()
    assert len(lines) <= 100, len(lines)
    assert max(map(len, lines)) <= WIDTH
    examples = lines[lines.index("examples:") :]
    assert sum(line.startswith("  harness run") for line in examples) == 3
    assert "`harness docs options [TOPIC]`" in text


def test_run_help_names_every_option() -> None:
    """The common ones with their help, the others by name under their topic."""
    text = _printed("run", "--help")
    for flag in _options(run_parser()):
        assert re.search(rf"\s{re.escape(flag)}(\s|,|$)", text, re.MULTILINE), flag


def test_the_reference_has_every_option_by_topic() -> None:
    parser = run_parser()
    text = _printed("docs", "options")
    assert max(map(len, text.splitlines())) <= WIDTH
    for flag in _options(parser):
        assert f"  {flag}" in text, flag
    for topic in topics(parser):
        assert f"\n{topic}" in text, topic
    faults = _printed("docs", "options", "faults")
    assert "  --pause-at" in faults and "  --lease-ttl" not in faults
    assert "client-pause: holder, all (default holder)" in " ".join(faults.split())


def test_every_help_text_is_about_its_own_option() -> None:
    """``--read-mode`` no longer lists lock implementations, nor ``--lock`` read modes;
    each table is the option's own, in the reference."""
    parser = run_parser()
    shown = {a.option_strings[0]: a for a in parser._actions if a.option_strings}
    formatter = parser._get_formatter()

    def own(flag: str) -> str:
        return " ".join(formatter._format_action(shown[flag]).split())

    locks = {lock for t in TARGETS.values() for lock in t.offers["lock"].variants}
    modes = {m for t in TARGETS.values() for m in t.offers.get("cas-register", Offer()).variants}
    assert not any(lock in own("--read-mode").split() for lock in locks - modes)
    assert not any(f"{m}," in own("--lock") for m in modes - locks)
    reference = " ".join(_printed("docs", "options", "cas-register").split())
    assert "etcd: linearizable, serializable" in reference and "lease-lock" not in reference


@pytest.mark.parametrize("topic", ["faults", "locks", "ssh"])
def test_the_docs_list_names_the_reference(topic: str) -> None:
    listing = _printed("docs")
    assert "options" in listing and topic in listing
