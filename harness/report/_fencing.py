"""The fencing switch: the run's recorded writes replayed against the resource's rule with
fencing on and with fencing off, for the time cursor of a lock report.

The replay is the protected resource's own rule (``workloads.common.resource.FencedStore``, the
store the run wrote through) fed the resource log in order of arrival: the same writes at
the same moments, so the two endings differ only by what the resource accepted. The mode
the run had must give back what the log recorded (``agrees``), else the switch is not
offered: a replay that cannot reproduce the run proves nothing about the other ending.
"""

from __future__ import annotations

from typing import Any

from checkers.words import article
from core.run_clock import RunClock
from workloads.common.resource import FencedStore

MODES = {"on": True, "off": False}


def replay(log: list[dict[str, Any]], fencing: Any, number: str = "token") -> dict[str, Any] | None:
    """Per write (in order of arrival, as the timeline's ``writes``): accepted (1/0) and
    the resource's highest token after it, under each mode; the run's mode (``ran``),
    whether replaying it gives back the log (``agrees``) and each mode's ending in a
    sentence that calls the fencing number ``number`` (token, epoch). None without writes."""
    writes = sorted(log, key=lambda w: int(w.get("time", 0)))
    if not writes:
        return None
    out: dict[str, Any] = {}
    for mode, fencing_on in MODES.items():
        store = FencedStore(fencing_on, RunClock())
        acc, high, stale = [], [], []
        for w in writes:
            resource, token = str(w.get("resource")), w.get("token")
            r = store.write(w.get("writer"), resource, token, w.get("value"))
            acc.append(1 if r["accepted"] else 0)
            high.append(store.read(resource)["highest"])
            before = r["highest_before"]
            if isinstance(token, int) and isinstance(before, int) and token < before:
                stale.append((w, before, r["accepted"]))
        out[mode] = {"acc": acc, "high": high, "ending": _ending(stale, fencing_on, number)}
    ran = "on" if fencing in (True, "on") else "off" if fencing in (False, "off") else None
    out["ran"] = ran
    recorded = [1 if w.get("accepted") else 0 for w in writes]
    out["agrees"] = ran is not None and out[ran]["acc"] == recorded
    return out


def _ending(stale: list[tuple[dict[str, Any], int, bool]], fencing_on: bool, number: str) -> str:
    """What the resource did with the stale writes (``(write, highest number seen before
    it, accepted)``: a number below the highest), in a sentence."""
    mode = "With fencing on" if fencing_on else "With fencing off"
    accepted = [(w, top) for w, top, a in stale if a]
    if accepted:
        w, top = accepted[0]
        more = f" ({len(accepted)} stale writes accepted)" if len(accepted) > 1 else ""
        return (
            f"{mode}, process {w.get('writer')}'s stale write with {number} {w.get('token')} is "
            f"accepted over {number} {top}: a newer holder's data is overwritten{more}."
        )
    if stale:
        w, top, _ = stale[0]
        return (
            f"{mode}, process {w.get('writer')}'s stale write with {number} {w.get('token')} is "
            f"rejected (the resource had seen {top}): the newer holder's data is safe."
        )
    return f"{mode}, no write arrives with {article(number)} below one the resource had seen."
