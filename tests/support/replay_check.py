"""What the replay tests compare: two runs' invocation schedules, per thread."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from core.gen.replay import Recorded
from harness.replay import load_recording


def schedule(run_dir: Path) -> dict[object, list[Recorded]]:
    """A run's invocations per thread (client slots and the nemesis), in order, their
    times counted from its first invocation; each fault start aimed at the nodes it hit."""
    rec = load_recording(run_dir)
    ops = sorted(rec.clients + rec.aimed, key=lambda r: r.at)
    per: dict[object, list[Recorded]] = {}
    for r in ops:
        per.setdefault(r.thread, []).append(replace(r, at=r.at - ops[0].at))
    return per


def differences(original: Path, replayed: Path, tolerance_ms: float = 50) -> list[str]:
    """How the replayed run's schedule differs from the original's: an op missing, out of
    order or different on a thread, or started more than ``tolerance_ms`` apart."""
    a, b = schedule(original), schedule(replayed)
    found = []
    for thread in sorted(set(a) | set(b), key=str):
        ours, theirs = a.get(thread, []), b.get(thread, [])
        if len(ours) != len(theirs):
            found.append(f"thread {thread}: {len(ours)} ops recorded, {len(theirs)} replayed")
        for i, (x, y) in enumerate(zip(ours, theirs, strict=False)):
            if (x.f, x.value, x.key) != (y.f, y.value, y.key):
                found.append(f"thread {thread} op {i}: {x} recorded, {y} replayed")
            elif abs(x.at - y.at) > tolerance_ms * 1e6:
                found.append(f"thread {thread} op {i} ({x.f}): {(y.at - x.at) / 1e6:+.1f} ms late")
    return found
