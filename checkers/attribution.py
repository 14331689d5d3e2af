"""Whose doing a violation was: the record of the answer, and the lock library a run used
as test.json recorded it.

An ``Attribution`` names the party a violation is put down to, with what a reader needs
to check it: the library and its version (when the run's lock was one), the promise its
documentation makes that the records hold it to (with the page), and the evidence in
words. The parties:

- ``library``: the library's own answer contradicted the service: it said it still held
  while the service had granted the lock to another, or its release freed another
  holder's lock;
- ``design``: the library behaved as its documentation says, and what it says allows the
  overlap (no fencing token and a holder paused or cut off past the TTL; a validity
  measured on a clock that jumped);
- ``harness``: the harness's own fault took what no promise covers (a server killed
  without persistence, a clock jump, a power cut), or the harness abandoned the holder;
- ``service``: the service's own records rule the harness and the library out;
- ``unattributed``: the records name no one.

``checkers.blame`` decides; this module only holds the record and reads test.json.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Final

LIBRARY: Final = "library"
DESIGN: Final = "design"
HARNESS: Final = "harness"
SERVICE: Final = "service"
NOBODY: Final = "unattributed"
PARTIES: Final = (LIBRARY, DESIGN, HARNESS, SERVICE, NOBODY)


@dataclass(frozen=True, slots=True)
class Attribution:
    """Whose doing a violation was, and why the records say so."""

    party: str
    library: str | None
    version: str | None
    promise: str | None
    """The documented promise in question, with its page (None: none applies)."""
    evidence: str

    def __post_init__(self) -> None:
        if self.party not in PARTIES:
            raise ValueError(f"unknown party {self.party!r}: one of {', '.join(PARTIES)}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def attribution_line(recorded: Mapping[str, Any]) -> str:
    """An attribution as results.json records it, in one line: ``library (kazoo 2.11.0):
    the evidence``."""
    who = " ".join(str(x) for x in (recorded.get("library"), recorded.get("version")) if x)
    head = f"{recorded.get('party')}" + (f" ({who})" if who else "")
    return f"{head}: {recorded.get('evidence')}"


@dataclass(frozen=True, slots=True)
class LibraryRecord:
    """A run's lock library as test.json's ``lock_library`` recorded it."""

    name: str
    version: str | None
    promises: Mapping[str, Mapping[str, str]]

    @classmethod
    def of(cls, test: Mapping[str, Any]) -> LibraryRecord | None:
        """The run's library (None: the lock was no library's, or an older run that
        recorded no promises)."""
        lib = test.get("lock_library")
        if not isinstance(lib, Mapping) or not isinstance(lib.get("promises"), Mapping):
            return None
        name = lib.get("library", lib.get("name"))
        version = lib.get("version")
        return cls(str(name), None if version is None else str(version), lib["promises"])

    def value(self, promise: str) -> str | None:
        """The documented value of ``promise`` (``fencing``: ``token`` or ``none``...)."""
        p = self.promises.get(promise)
        return None if not isinstance(p, Mapping) else p.get("value")

    def says(self, promise: str) -> str | None:
        """``promise`` in words, with its page: ``"no fencing token: ... [URL]"``."""
        p = self.promises.get(promise)
        if not isinstance(p, Mapping):
            return None
        return f"{p.get('says')} [{p.get('source')}]"

    def named(self) -> str:
        """``redis-py 8.2.0``."""
        return " ".join(x for x in (self.name, self.version) if x)

    def attribute(self, party: str, promise: str | None, evidence: str) -> Attribution:
        """An attribution naming this library and the promise ``promise`` (a field)."""
        said = None if promise is None else self.says(promise)
        return Attribution(party, self.name, self.version, said, evidence)
