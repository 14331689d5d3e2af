"""The watch checkers on fake histories: delivery per mechanism, compactions, final
values, unknown outcomes, latency."""

from __future__ import annotations

from typing import Any

from checkers import watch_delivery, watch_latency
from checkers.record import RunRecord
from core.history import History
from core.ops import Op

S = 1_000_000_000


class Run:
    """A history built op by op: writes and one collect per notification batch."""

    def __init__(self) -> None:
        self.ops: list[Op] = []
        self.events: list[dict[str, Any]] = []

    def _op(self, t: float, p: int, type_: str, f: str, value: Any, key: Any = None) -> None:
        self.ops.append(Op(len(self.ops), int(t * S), p, type_, f, value, key))  # type: ignore[arg-type]

    def write(self, t: float, key: str, value: int, rev: int | None, ok: bool = True) -> None:
        p = 100 + value  # a writer process per write: one that ended info never invokes again
        self._op(t, p, "invoke", "write", value, key)
        if ok:
            self._op(t + 0.01, p, "ok", "write", {"value": value, "revision": rev}, key)
        else:
            self._op(t + 0.01, p, "info", "write", value, key)

    def collect(self, t: float, p: int, notes: list[dict[str, Any]]) -> None:
        self._op(t, p, "invoke", "collect", 0.5)
        stamped = [{"time": int((t + 0.001) * S), **n} for n in notes]
        self._op(t + 0.002, p, "ok", "collect", stamped)

    def record(self) -> RunRecord:
        return RunRecord(
            History(sorted(self.ops, key=lambda o: (o.time, o.index))), events=self.events
        )


def sub(delivery: str = "every-change", rereads: bool = False) -> dict[str, Any]:
    return {"kind": "subscribed", "delivery": delivery, "rereads": rereads}


def snap(key: str, value: Any, rev: int) -> dict[str, Any]:
    return {"kind": "snapshot", "key": key, "value": value, "revision": rev}


def change(key: str, value: Any, rev: int) -> dict[str, Any]:
    return {"kind": "change", "key": key, "value": value, "revision": rev}


def base(delivery: str = "every-change", rereads: bool = False) -> Run:
    r = Run()
    r.collect(0.0, 0, [sub(delivery, rereads), snap("0", None, 0)])
    return r


def watcher(result: Any, n: int = 0) -> dict[str, Any]:
    return result.details["watchers"][n]


def test_every_change_delivered_in_order_is_valid() -> None:
    r = base()
    for i in range(1, 4):
        r.write(i, "0", i, i)
        r.collect(i + 0.02, 0, [change("0", i, i)])
    r.collect(6, 0, [])
    res = watch_delivery.check_record(r.record())
    assert res.valid is True, res.summary
    assert watcher(res)["delivered"] == 3 and watcher(res)["settled"]


def test_a_gap_is_a_violation() -> None:
    r = base()
    r.write(1, "0", 1, 1)
    r.write(2, "0", 2, 2)
    r.collect(2.1, 0, [change("0", 2, 2)])
    r.collect(6, 0, [])
    res = watch_delivery.check_record(r.record())
    assert res.valid is False
    assert "Not blamed on the service" in res.summary, "no service bug without its records"
    assert "never delivered" in res.summary and watcher(res)["missed"] == 1


def test_a_duplicate_across_a_reconnect_is_a_violation() -> None:
    r = base()
    r.write(1, "0", 1, 1)
    r.collect(1.1, 0, [change("0", 1, 1), {"kind": "resumed", "revision": 1}, change("0", 1, 1)])
    r.collect(6, 0, [])
    res = watch_delivery.check_record(r.record())
    assert res.valid is False and watcher(res)["duplicates"] == 1


def test_out_of_order_is_a_violation() -> None:
    r = base()
    r.write(1, "0", 1, 1)
    r.write(1.5, "0", 2, 2)
    r.collect(2, 0, [change("0", 2, 2), change("0", 1, 1)])
    r.collect(6, 0, [])
    res = watch_delivery.check_record(r.record())
    assert res.valid is False and watcher(res)["out_of_order"] == 1


def test_a_compaction_followed_by_a_reread_is_handled() -> None:
    r = base()
    r.write(1, "0", 1, 1)
    r.write(1.5, "0", 2, 2)
    r.write(1.7, "0", 3, 3)
    r.collect(2, 0, [{"kind": "compacted", "revision": 3}, snap("0", 3, 3)])
    r.write(3, "0", 4, 4)
    r.collect(3.1, 0, [change("0", 4, 4)])
    r.collect(6, 0, [])
    res = watch_delivery.check_record(r.record())
    assert res.valid is True, res.summary
    w = watcher(res)
    assert (w["compactions"], w["handled"], w["excused"], w["missed"]) == (1, 1, 2, 0)
    assert "1 compaction hit a watcher, 1 handled" in res.summary


def test_a_compaction_not_followed_by_a_reread_is_a_violation() -> None:
    r = base()
    r.write(1, "0", 1, 1)
    r.collect(2, 0, [{"kind": "compacted", "revision": 1}])
    r.collect(6, 0, [])
    res = watch_delivery.check_record(r.record())
    assert res.valid is False
    assert watcher(res)["compactions"] == 1 and watcher(res)["handled"] == 0


def one_shot(rereads: bool) -> Run:
    """Three writes; the watcher learns only the first and settles on it."""
    r = base("latest", rereads)
    r.write(1, "0", 1, 1)
    r.write(1.02, "0", 2, 2)
    r.write(1.04, "0", 3, 3)
    r.collect(1.1, 0, [change("0", 1, 1)])
    r.collect(6, 0, [])
    return r


def test_payload_mode_stale_final_value_is_shown_as_expected() -> None:
    res = watch_delivery.check_record(one_shot(rereads=False).record())
    assert res.valid is True, res.summary
    w = watcher(res)
    assert w["missed"] == 2 and w["stale_final"] == {"0": [1, [3]]}
    assert "stale value (expected" in res.summary


def test_rereading_watcher_on_a_stale_final_value_is_a_violation() -> None:
    res = watch_delivery.check_record(one_shot(rereads=True).record())
    assert res.valid is False
    assert watcher(res)["stale_final"] == {"0": [1, [3]]}


def test_missed_changes_of_a_coalescing_watch_are_counted_not_blamed() -> None:
    r = base("latest", True)
    r.write(1, "0", 1, 1)
    r.write(1.02, "0", 2, 2)
    r.collect(1.1, 0, [change("0", 2, 2)])
    r.collect(6, 0, [])
    res = watch_delivery.check_record(r.record())
    assert res.valid is True and watcher(res)["missed"] == 1


def test_unknown_writes_are_owed_only_when_someone_saw_them() -> None:
    r = base()
    r.write(1, "0", 1, None, ok=False)  # nobody saw it: may never have happened
    r.write(2, "0", 2, 2)
    r.collect(2.1, 0, [change("0", 2, 2)])
    r.collect(6, 0, [])
    assert watch_delivery.check_record(r.record()).valid is True
    r = base()
    r.collect(0.5, 1, [sub(), snap("0", None, 0)])
    r.write(1, "0", 1, None, ok=False)  # watcher 1 saw it: it happened, watcher 0 owes it
    r.write(2, "0", 2, 2)
    r.collect(2.1, 0, [change("0", 2, 2)])
    r.collect(2.1, 1, [change("0", 1, 1), change("0", 2, 2)])
    r.collect(6, 0, [])
    r.collect(6, 1, [])
    res = watch_delivery.check_record(r.record())
    assert res.valid is False and watcher(res, 0)["missed"] == 1 and watcher(res, 1)["missed"] == 0


def test_a_late_completion_of_an_abandoned_watcher_counts() -> None:
    r = base()
    r.write(1, "0", 1, 1)
    r.collect(6, 0, [])
    r.events.append(
        {"event": "late-completion", "process": 0, "f": "collect", "type": "ok",
         "value": [{"time": int(1.2 * S), **change("0", 1, 1)}]}
    )  # fmt: skip
    res = watch_delivery.check_record(r.record())
    assert res.valid is True and watcher(res)["delivered"] == 1


def test_no_watcher_or_no_one_left_at_the_end_is_unknown() -> None:
    r = Run()
    r.write(1, "0", 1, 1)
    assert watch_delivery.check_record(r.record()).valid == "unknown"
    r = base()
    r.write(1, "0", 1, 1)
    r.collect(1.02, 0, [change("0", 1, 1)])
    res = watch_delivery.check_record(r.record())
    assert res.valid == "unknown" and "final values" in res.summary


def test_latency_quantiles_from_the_writes_ok() -> None:
    r = base()
    for i in range(1, 11):
        r.write(i, "0", i, i)
        r.collect(i + 0.01 + i / 1000, 0, [change("0", i, i)])
    res = watch_latency.check_record(r.record())
    assert res.valid is True and res.details["count"] == 10
    assert res.details["p50"] == 6.0 and res.details["p100"] == 11.0
    assert res.details["watchers"]["0"]["count"] == 10
