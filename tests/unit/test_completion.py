"""Shell completion: bash runs the script ``harness completion bash`` prints and offers
the commands, options and values the parser has."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from clusters.registry import TARGETS
from harness.cli import build_parser
from harness.completion import script
from harness.packaged import suite_names

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="no bash here")

SCRIPT = script("bash", build_parser(), suite_names())


def offered(*words: str, text: str = SCRIPT) -> list[str]:
    """What bash's completion offers for the command line ``words`` (the last word is the
    one being completed)."""
    quoted = " ".join(f"'{w}'" for w in words)
    probe = (
        f"COMP_WORDS=({quoted}); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 )); "
        'COMPREPLY=(); _harness_complete; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    out = subprocess.run(
        ["bash", "--norc", "-c", text + "\n" + probe],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return [w for w in out.stdout.splitlines() if w]


def test_commands_and_their_options() -> None:
    top = offered("harness", "")
    assert {"run", "check", "suite", "completion", "docs", "--version"} <= set(top)
    assert offered("harness", "ru") == ["run"]
    assert offered("harness", "run", "--nemesis-t") == ["--nemesis-target"]
    assert set(offered("harness", "suite", "")) >= {"run", "list"}


def test_the_values_of_an_option() -> None:
    assert offered("harness", "run", "--target", "") == list(TARGETS)
    assert offered("harness", "run", "--target", "etcd", "--fencing", "o") == ["on", "off"]
    assert offered("harness", "run", "--workload", "c") == ["cas-register"]
    assert offered("harness", "completion", "") == ["bash", "zsh", "-h", "--help"]


def test_an_option_value_is_skipped_when_finding_the_command() -> None:
    """``--out-dir run`` is a value, not the ``run`` command."""
    assert offered("harness", "suite", "run", "-o", "run", "--on") == ["--only"]


def test_suites_by_name() -> None:
    assert "smoke" in offered("harness", "suite", "run", "sm")
    assert set(suite_names()) >= {"smoke", "sim", "locks", "nightly"}


def test_zsh_loads_the_bash_script_through_bashcompinit() -> None:
    """zsh runs the function as its bashcompinit does: through its ``compgen -F``, in sh
    emulation (arrays from 0). zsh's own matching then keeps what fits the word."""
    text = script("zsh", build_parser(), suite_names())
    assert text.startswith("# zsh") and "bashcompinit" in text and SCRIPT in text
    if shutil.which("zsh") is None:
        pytest.skip("no zsh here")
    probe = (
        'probe() { local -a words COMP_WORDS; local CURRENT COMP_CWORD; words=("$@"); '
        'CURRENT=$#; COMP_CWORD=$((CURRENT-1)); COMP_WORDS=("${words[@]}"); '
        'compgen -F _harness_complete -- "${words[-1]}" | tr "\\n" " "; echo; }\n'
        'probe harness run --target ""\nprobe harness run --fencing o\nprobe harness ru\n'
    )
    out = subprocess.run(
        ["zsh", "-f", "-c", "autoload -U +X compinit && compinit -u\n" + text + probe],
        capture_output=True,
        text=True,
        timeout=30,
    )
    targets, fencing, top = out.stdout.splitlines()
    assert targets.split() == list(TARGETS)
    assert fencing.split() == ["on", "off"]
    assert "run" in top.split() and "--version" in top.split()
