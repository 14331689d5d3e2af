"""What a run directory's JSON records must hold for the harness to read them: the type
of each field of test.json (``FIELDS``, each option of its ``options`` table by
``core.options.check_recorded``) and of results.json (``RESULT_FIELDS``). Run
directories are copied between machines and edited; a field of another type is one line
naming the file, the field and what it must be (``RUN/test.json: 'options' must be a
table, not a string``), never a traceback from whatever read it first. Fields it does not
know are left alone (older and newer runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from core.errors import HarnessError
from core.option_checks import OptionError
from core.options import check_recorded

NONE: Final = type(None)
FIELDS: Final[dict[str, tuple[type, ...]]] = {
    "name": (str,),
    "options": (dict,),
    "faults": (dict,),
    "seed": (int, NONE),
    "clients": (dict,),
    "linearizable_locks": (bool,),
    "holder": (dict, NONE),
    "service_rules": (list,),
    "service_log": (str, NONE),
    "versions": (dict,),
    "clock_origin_ns": (int,),
    "started": (str,),
    "ended_at": (str,),
    "argv": (list,),
    "status": (str,),
    "command": (str,),
    "nodes": (list,),
    "workload_start_ns": (int,),
    "replay_of": (str,),
    "replay": (dict,),
    "repeat": (dict,),
    "live_anomaly": (dict,),
    "interrupted": (dict,),
    "crashed": (dict, str),
    "load": (dict,),
}
"""test.json's fields (``harness.orchestrate`` writes them) and the JSON types each may have."""
RESULT_FIELDS: Final[dict[str, tuple[type, ...]]] = {
    "valid": (bool, str, NONE),
    "verdict": (str,),
    "checked_valid": (bool, str, NONE),
    "test": (str, NONE),
    "status": (str, NONE),
    "ops": (int,),
    "checkers": (dict,),
    "interrupted": (dict, NONE),
    "load": (dict,),
}
"""results.json's fields (``harness.analysis`` writes them) and the JSON types of each;
every checker's entry in ``checkers`` is a table."""

WORDS: Final[dict[type, str]] = {
    dict: "a table",
    list: "a list",
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    NONE: "null",
}


class TestJsonError(HarnessError):
    """A test.json or results.json that is not one a run wrote: the message names the
    file and field."""

    __test__ = False  # not a test class, whatever pytest's collector thinks of its name


def kind_word(value: object) -> str:
    """What a JSON value is, in words (``a string``, ``a table``...)."""
    return WORDS.get(type(value), type(value).__name__)


def check_test(test: Any, path: Path) -> dict[str, Any]:
    """``test`` (read from ``path``) when it is a JSON object whose known fields and
    options have their types; TestJsonError (one line) otherwise."""
    _check_fields(test, path, FIELDS)
    try:
        check_recorded(test.get("options", {}))
    except OptionError as e:
        raise TestJsonError(f"{path}: 'options': {e}; fix it or leave out that run") from None
    return test


def check_results(results: Any, path: Path) -> dict[str, Any]:
    """``results`` (read from ``path``) when it is a JSON object whose known fields have
    their types and whose checkers are each a table; TestJsonError (one line) otherwise."""
    _check_fields(results, path, RESULT_FIELDS)
    for name, result in results.get("checkers", {}).items():
        if not isinstance(result, dict):
            raise TestJsonError(
                f"{path}: checker {name!r} must be a table, not {kind_word(result)}; "
                "check the run again (harness check RUN)"
            )
    return results


def _check_fields(record: Any, path: Path, fields: dict[str, tuple[type, ...]]) -> None:
    """TestJsonError unless ``record`` is a JSON object whose ``fields`` have their types."""
    if not isinstance(record, dict):
        raise TestJsonError(f"{path}: not a JSON object but {kind_word(record)}; is it a run's?")
    for name, kinds in fields.items():
        value = record.get(name)
        if name in record and not _is(value, kinds):
            must = " or ".join(WORDS[k] for k in kinds)
            raise TestJsonError(
                f"{path}: {name!r} must be {must}, not {kind_word(value)}; "
                "fix it or leave out that run"
            )


def _is(value: object, kinds: tuple[type, ...]) -> bool:
    """Whether ``value`` has one of the JSON ``kinds`` (a bool is no integer)."""
    if isinstance(value, bool):
        return bool in kinds
    return isinstance(value, kinds)
