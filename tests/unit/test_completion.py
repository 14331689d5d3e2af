"""Shell completion: bash runs the script ``harness completion bash`` prints and offers
the commands, options and values the parser has (issue 28: every enumerated option's
values, comma lists, ``docs`` topics), and zsh does the same through bashcompinit."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from checkers.linear.models import MODELS
from clusters.target_registry import TARGETS
from harness.cli import build_parser, main
from harness.completion import script
from harness.packaged import doc_names, suite_names
from harness.validate import sim_bugs
from nemesis.fault_registry import nemesis_names

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="no bash here")

SCRIPT = script("bash", build_parser())


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


def test_the_command_prints_the_script(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", "bash"]) == 0
    assert capsys.readouterr().out == SCRIPT


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


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (("run", "--nemesis", ""), set(nemesis_names())),
        (("run", "--lock", "lease"), {"lease-lock"}),
        (("run", "--sim-bug", ""), set(sim_bugs())),
        (("run", "--sim-bug", "st"), {"stale-read"}),
        (("run", "--nemesis-target", "maj"), {"majority", "majorities-ring"}),
        (("run", "--read-mode", "lin"), {"linearizable"}),
        (("run", "--id-generator", "snow"), {"snowflake"}),
        (("run", "--recipe", ""), {"naive", "queue"}),
        (("check", "--model", ""), set(MODELS)),
        (("check", "--model", "mu"), {"mutex", "multi-register"}),
    ],
)
def test_issue_28_options_that_offered_file_names_offer_their_values(
    words: tuple[str, ...], expected: set[str]
) -> None:
    """They offered file names before (no ``choices``): now the registries' values."""
    assert set(offered("harness", *words)) == expected


def test_a_comma_list_completes_its_last_name() -> None:
    assert offered("harness", "run", "--nemesis", "kill,pa") == ["kill,pause", "kill,partition"]
    assert offered("harness", "run", "--nemesis", "client-pause,client-") == [
        "client-pause,client-pause",
        "client-pause,client-kill",
        "client-pause,client-clock",
    ]


def test_docs_offers_its_documents_then_the_option_topics() -> None:
    names = offered("harness", "docs", "")
    assert set(doc_names()) | {"options"} <= set(names)
    assert offered("harness", "docs", "opt") == ["options"]
    topics = offered("harness", "docs", "options", "")
    assert {"faults", "locks", "ssh", "targets"} <= set(topics)
    assert offered("harness", "docs", "options", "fa") == ["faults"]


def test_an_option_value_is_skipped_when_finding_the_command() -> None:
    """``--out-dir run`` is a value, not the ``run`` command."""
    assert offered("harness", "suite", "run", "-o", "run", "--on") == ["--only"]


def test_suites_by_name() -> None:
    assert "smoke" in offered("harness", "suite", "run", "sm")
    assert set(suite_names()) >= {"smoke", "sim", "locks", "nightly"}


def _zsh(probes: list[tuple[str, ...]]) -> list[list[str]]:
    """What zsh offers for each command line of ``probes`` (the last word the one being
    completed), running the script as its bashcompinit does: through its ``compgen -F``,
    in sh emulation (arrays from 0). zsh's own matching then keeps what fits the word."""
    text = script("zsh", build_parser())
    assert text.startswith("# zsh") and "bashcompinit" in text and SCRIPT in text
    if shutil.which("zsh") is None:
        pytest.skip("no zsh here")
    lines = "".join(
        "probe " + " ".join(f"'{w}'" for w in ("harness", *words)) + "\n" for words in probes
    )
    probe = (
        'probe() { local -a words COMP_WORDS; local CURRENT COMP_CWORD; words=("$@"); '
        'CURRENT=$#; COMP_CWORD=$((CURRENT-1)); COMP_WORDS=("${words[@]}"); '
        'compgen -F _harness_complete -- "${words[-1]}" | tr "\\n" " "; echo; }\n'
    )
    out = subprocess.run(
        ["zsh", "-f", "-c", "autoload -U +X compinit && compinit -u\n" + text + probe + lines],
        capture_output=True,
        text=True,
        timeout=30,
    )
    return [line.split() for line in out.stdout.splitlines()]


def test_zsh_loads_the_bash_script_through_bashcompinit() -> None:
    targets, fencing, top, bugs, nemesis, topics = _zsh(
        [
            ("run", "--target", ""),
            ("run", "--fencing", "o"),
            ("ru",),
            ("run", "--sim-bug", ""),
            ("run", "--nemesis", "kill,pa"),
            ("docs", "options", ""),
        ]
    )
    assert targets == list(TARGETS)
    assert fencing == ["on", "off"]
    assert "run" in top and "--version" in top
    assert set(bugs) == set(sim_bugs())
    # zsh's compgen -P leaves the matching to zsh, which keeps what fits the word
    assert all(w.startswith("kill,") for w in nemesis)
    assert [w for w in nemesis if w.startswith("kill,pa")] == ["kill,pause", "kill,partition"]
    assert {"faults", "locks", "ssh"} <= set(topics)
