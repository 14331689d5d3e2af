"""Named anomalies: the closed list of kinds a violation can have, and its record.

Every violation a checker reports carries one ``Anomaly``: a machine-readable ``kind``
from ``KINDS`` (the one table; a new kind is one line here), the processes, operation
indexes and times involved, and ``sentence``, what a person reads first: at most three
sentences, at most ``MAX_SENTENCE`` characters, naming the kind ("stale read: process 3
read 19860 at 32.365 s, but ..."). The full chain of evidence stays in the checker's
other details and in the report.

=========================  =================================================================
kind                       what happened
=========================  =================================================================
``stale-read``             a read returned a value already overwritten by a write or cas
                           acknowledged before the read was invoked
``lost-update``            an acknowledged write or cas vanished: a later cas was applied
                           to the state before it, or reads went on seeing that state and
                           no operation ever saw its value
``non-linearizable``       no legal order exists, and neither story above explains why
``two-holders``            a lock granted while its previous holder's lease was valid
``stale-write-accepted``   the resource accepted a write from a holder that had lost the lock
``token-reused``           a fencing token granted again to another holder
``token-lowered``          a token lower than one granted before it
``lower-token-accepted``   the resource accepted a lower token though fencing was on
``two-leaders``            a leader elected while the previous leader's lease was valid
``deposed-write-accepted`` the resource accepted a write from a deposed leader
``epoch-reused``           an epoch granted again to another leader
``epoch-lowered``          an epoch lower than one granted before it
``duplicate-id``           an id handed out to two operations (unique ids)
``id-not-increasing``      a client handed an id not above its previous one (unique ids)
``dead-instance-listed``   a dead instance still listed past its TTL and the service's grace
                           (service registration)
``other``                  a violation whose checker does not name it (kept, never hidden)
=========================  =================================================================
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Final

import msgspec

from core.ops import Op

KINDS: Final[dict[str, str]] = {
    "stale-read": "stale read",
    "lost-update": "lost update",
    "non-linearizable": "non-linearizable (other)",
    "two-holders": "two holders",
    "stale-write-accepted": "stale write accepted",
    "token-reused": "token reuse",
    "token-lowered": "token lowered",
    "lower-token-accepted": "lower token accepted",
    "two-leaders": "two leaders",
    "deposed-write-accepted": "deposed leader's write accepted",
    "epoch-reused": "epoch reuse",
    "epoch-lowered": "epoch lowered",
    "duplicate-id": "duplicate id",
    "id-not-increasing": "id not increasing",
    "dead-instance-listed": "dead instance still listed",
    "other": "violation",
}
"""Every kind of violation, with the words that name it in sentences."""

KEY: Final = "named_anomalies"
"""Where a checker's ``details`` (and results.json) list its named anomalies, one per
violation, in order (``fencing`` keeps its own ``anomalies``: the raw number records)."""
MAX_SENTENCE: Final = 400
"""Characters of the sentence a person reads first; longer text is cut at a word."""
ELLIPSIS: Final = " …"


class Involved(msgspec.Struct, frozen=True):
    """One operation (or event) in an anomaly: its role, who did it, when.

    ``index`` is the history index of the invocation (None for records that are not
    history operations: a resource write, a service grant); times are on the run clock
    (ns, or event positions for order-only history formats)."""

    role: str
    process: Any
    index: int | None = None
    invoke_time: int | None = None
    complete_time: int | None = None
    what: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "process": self.process,
            "index": self.index,
            "invoke_time": self.invoke_time,
            "complete_time": self.complete_time,
            "what": self.what,
        }


class Anomaly(msgspec.Struct, frozen=True):
    """One named violation; ``sentence`` starts with the kind's words."""

    kind: str
    sentence: str
    involved: tuple[Involved, ...] = ()
    key: Any = None
    extra: dict[str, Any] = msgspec.field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown anomaly kind {self.kind!r}: add it to KINDS")

    @property
    def label(self) -> str:
        return KINDS[self.kind]

    def to_dict(self) -> dict[str, Any]:
        processes: list[Any] = []
        for x in self.involved:
            if x.process is not None and x.process not in processes:
                processes.append(x.process)
        return {
            "kind": self.kind,
            "label": self.label,
            "sentence": self.sentence,
            "key": self.key,
            "processes": processes,
            "ops": [x.index for x in self.involved if x.index is not None],
            "involved": [x.to_dict() for x in self.involved],
            **self.extra,
        }


def named(kind: str, text: str, key: Any = None) -> str:
    """``"<kind words> (key <key>): <text>"``, bounded to ``MAX_SENTENCE`` characters."""
    where = "" if key is None else f" (key {key!r})"
    return bounded(f"{KINDS[kind]}{where}: {text}")


def bounded(text: str, limit: int = MAX_SENTENCE) -> str:
    """``text`` cut at a word to at most ``limit`` characters (marked with an ellipsis)."""
    if len(text) <= limit:
        return text
    cut = text[: limit - len(ELLIPSIS)]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + ELLIPSIS


def first_sentences(text: str, n: int = 3) -> str:
    """The first ``n`` sentences of a paragraph (a period inside a number ends none)."""
    out: list[str] = []
    rest = text.strip()
    while rest and len(out) < n:
        i = _sentence_end(rest)
        out.append(rest[: i + 1] if i >= 0 else rest)
        rest = rest[i + 1 :].lstrip() if i >= 0 else ""
    return " ".join(out)


def _sentence_end(text: str) -> int:
    """The index of the period (or ! ?) that ends the first sentence, or -1."""
    for i, ch in enumerate(text):
        if ch in ".!?" and (
            i + 1 == len(text) or (text[i + 1] == " " and text[i + 2 : i + 3].isupper())
        ):
            return i
    return -1


def lead_with(anomalies: Sequence[Anomaly], paragraphs: Iterable[str]) -> str:
    """A checker's summary: the first anomaly's sentence, when there is one, then the
    paragraphs."""
    lead = [anomalies[0].sentence] if anomalies else []
    return "\n\n".join([*lead, *paragraphs])


def other(checker: str, text: str) -> Anomaly:
    """A violation its checker does not name: the first sentences of its text."""
    return Anomaly("other", named("other", first_sentences(text)), extra={"checker": checker})


class Invocations:
    """History indexes of invocations by (process, time): holdings and grants keep only
    who and when, and an anomaly names its operations by index."""

    def __init__(self, history: Iterable[Op]) -> None:
        self._at = {(op.process, op.time): op.index for op in history if op.type == "invoke"}

    def __call__(self, process: Any, time: int | None) -> int | None:
        return None if time is None else self._at.get((process, time))


NO_INDEX: Final = Invocations(())
"""For callers without a history: every index unknown."""
