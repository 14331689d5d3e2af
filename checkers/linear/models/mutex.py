"""An owner-aware mutex (a lock, or a leadership held by one process at a time).

The state is the process holding it, or nil when free. ``acquire`` by p is legal only when
free and makes p the holder; ``release`` by p is legal only while p holds it and frees it.
Releasing a lock you do not hold is illegal, as is acquiring a held one (re-entrant
acquisition included). ``campaign``/``resign`` (elections) and ``lock``/``unlock`` are
read as acquire/release. A ``fail`` did not happen; an ``info`` may take effect at any
time after invocation, or never. Histories with keys (several locks) are checked per key.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Final

from checkers.linear.model import Call, Hint, by_key, outcome, unknown_op
from core.history import History
from core.ops import Op

ALIASES: Final = {
    "acquire": "acquire",
    "lock": "acquire",
    "campaign": "acquire",
    "release": "release",
    "unlock": "release",
    "resign": "release",
}


class MutexModel:
    """A lock whose state is its holder's process id (None when free)."""

    name: str = "mutex"

    def init(self) -> Hashable:
        return None

    def call(self, invoke: Op, completion: Op | None) -> Call | None:
        f = ALIASES.get(invoke.f)
        if f is None:
            raise unknown_op(self.name, invoke, "acquire and release")
        kind = outcome(completion)
        if kind == "fail":
            return None
        return Call((f, invoke.process), None, kind == "ok")

    def step(self, state: Any, input: Any, output: Any) -> tuple[bool, Hashable]:
        f, process = input
        if f == "acquire":
            return state is None, process
        return state == process, None

    def partition(self, history: History) -> list[tuple[Any, History]]:
        return by_key(history)

    def hint(self, call: Call) -> Hint:
        inp: tuple[str, Any] = call.input  # type: ignore[assignment]
        f, process = inp
        if f == "acquire":
            return Hint(False, None, process)
        return Hint(False, process, None)

    def describe_call(self, call: Call) -> str:
        return str(call.input[0])  # type: ignore[index]

    def describe_state(self, state: Any) -> str:
        return "free" if state is None else f"held by process {state}"


MUTEX = MutexModel()
