"""Fault names are owned by the faults (issue 31): ``core.faults`` lists each kind once (its
name, what it aims at), each fault module in ``nemesis/faults/`` registers its behaviour
against its kind, and no module above the ground floor spells a fault's name itself: the
checkers, workloads, targets and the application read the names from core. A module that
wrote ``"client-kill"`` again would name a fault that a rename in core leaves behind."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_cli import run

from checkers.windows import KIND_EFFECTS, WORDS
from core.faults import CLIENTS, KINDS, NETWORK, FaultKind
from nemesis.fault_registry import FAULTS

ROOT = Path(__file__).resolve().parents[2]
ABOVE_CORE = ("checkers", "workloads", "clusters", "nemesis", "harness")
"""The packages that must read fault names from ``core.faults``."""
NAMING = frozenset({"name", "kind", "fault", "default_fault", "built_by"})
"""Keyword arguments whose string value is a fault's name wherever it is one."""


def test_every_fault_module_registers_against_its_core_kind() -> None:
    assert set(FAULTS) == set(KINDS)
    for name, spec in FAULTS.items():
        assert spec.kind is KINDS[name], name
        assert spec.name == name
        assert (spec.start, spec.stop) == (f"start-{name}", f"stop-{name}")


@pytest.mark.parametrize("name", sorted(KINDS))
def test_a_fault_aims_where_its_kind_says(name: str) -> None:
    """A client fault never takes node names; a fault of servers or of the network that is
    aimed at all may be aimed at named nodes."""
    kind, aim = KINDS[name], FAULTS[name].aim
    if kind.client:
        assert not aim.node_names
        assert set(aim.targets) <= {"holder", "all"}
    elif aim.targets:
        assert aim.node_names


def test_the_checkers_words_for_older_runs_name_core_kinds() -> None:
    assert set(WORDS) <= set(KINDS)
    assert set(KIND_EFFECTS) <= set(KINDS)
    assert {k.name for k in KINDS.values() if k.client} == {
        "client-pause",
        "client-kill",
        "client-clock",
    }
    assert {k.name for k in KINDS.values() if k.aims_at == NETWORK} == {"partition", "loss"}


def test_a_kind_aiming_at_nothing_known_is_refused() -> None:
    with pytest.raises(ValueError, match="aims at 'the moon'"):
        FaultKind("flood", "the moon")
    assert FaultKind("flood", CLIENTS).client


def _named(expr: ast.expr) -> Iterator[ast.Constant]:
    """The string literals ``expr`` is, or holds as a tuple's, list's or set's items."""
    items = expr.elts if isinstance(expr, (ast.Tuple, ast.List, ast.Set)) else [expr]
    yield from (e for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str))


def _places(node: ast.AST) -> list[ast.expr]:
    """The expressions of ``node`` where a fault's name would go: a naming keyword's value,
    an assigned value, the sides of a comparison."""
    if isinstance(node, ast.keyword) and node.arg in NAMING:
        return [node.value]
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
        return [node.value]
    if isinstance(node, ast.Compare):
        return [node.left, *node.comparators]
    return []


def _spelled_names(path: Path) -> Iterator[tuple[int, str]]:
    """Where ``path`` spells a fault's name as a string literal in a place a fault's name
    goes: a hyphenated name anywhere (``"client-pause"``: nothing else is called that), a
    one-word name (``"kill"``, ``"partition"``: words with other uses too) as a naming
    keyword's value, a constant's value or one side of a comparison (or their items)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    places: list[ast.expr] = []
    for node in ast.walk(tree):
        places.extend(_places(node))
        if isinstance(node, ast.Constant) and node.value in KINDS and "-" in node.value:
            yield node.lineno, node.value
    for place in places:
        for c in _named(place):
            if c.value in KINDS and "-" not in c.value:  # hyphenated: found above
                yield c.lineno, c.value


def test_no_module_above_core_spells_a_fault_name() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {name!r}"
        for package in ABOVE_CORE
        for path in sorted((ROOT / package).rglob("*.py"))
        for line, name in _spelled_names(path)
    ]
    assert found == [], "read fault names from core.faults:\n" + "\n".join(found)


def test_the_scan_finds_what_the_faults_spelled_before(tmp_path: Path) -> None:
    """The shapes the names were spelled in before core owned them are found."""
    module = tmp_path / "old.py"
    module.write_text(
        'KILL: Final = "kill"\n'
        'FAULT = FaultSpec(name="client-kill", help="")\n'
        'W = Workload(default_fault="client-pause")\n'
        'if f == "partition":\n    pass\n'
        'RESULT = {"partition": 1}\n'  # a dict key of another meaning: not a fault's place
    )
    assert sorted(_spelled_names(module)) == [
        (1, "kill"),
        (2, "client-kill"),
        (3, "client-pause"),
        (4, "partition"),
    ]


def test_the_command_line_offers_every_core_kind(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--nemesis`` takes the kinds' names, read from the faults registered against them:
    a name that is no kind gets one line listing every kind."""
    code, _, err = run(capsys, "run", "--nemesis", "flood", "-o", str(tmp_path))
    assert code != 0
    assert len(err.strip().splitlines()) == 1, err
    for name in KINDS:
        assert name in err
