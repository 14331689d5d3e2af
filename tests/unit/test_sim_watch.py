"""The sim's watch backend against its store: a watcher behind a compaction is told so,
re-reads every key and goes on from the read's revision, delivering the rest once."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from clusters.sim.kv import KvStore
from clusters.sim.watch import SimWatch
from workloads.common.wire import Rejected, RequestError


class LocalSim(SimWatch):
    """A ``SimWatch`` whose requests go to an in-process store (the wire left out)."""

    def __init__(self, store: KvStore, on_poll: Any = None) -> None:
        super().__init__("127.0.0.1:1")
        self.store, self.on_poll, self.polls = store, on_poll, 0
        self.loop = asyncio.new_event_loop()  # one loop: the store's events are bound to it

    def call(self, op: str, timeout: float | None = None, **args: Any) -> Any:
        if op == "kv_watch":
            self.polls += 1
            if self.on_poll is not None:
                self.on_poll(self.polls)
        try:
            if op == "kv_watch":
                watch = self.store.watch(args["keys"], args["start"], 0.01)
                return self.loop.run_until_complete(watch)
            if op == "kv_get":
                return self.store.get(args["keys"])
            return self.store.put(args["key"], args["value"])
        except RequestError as e:
            raise Rejected(str(e)) from None


def test_a_watcher_behind_a_compaction_rereads_and_goes_on() -> None:
    store = KvStore()
    store.put("a", 1)
    stop = threading.Event()
    notes: list[dict[str, Any]] = []

    def on_poll(n: int) -> None:
        if n == 2:  # while the watcher is between polls: two writes, then a compaction
            store.put("a", 2)
            store.put("b", 3)
            store.compact()
        if n == 4:
            store.put("a", 4)
        if n == 6:
            stop.set()

    sim = LocalSim(store, on_poll)
    sim.follow(["a", "b"], lambda kind, **f: notes.append({"kind": kind, **f}), stop)
    sim.loop.close()
    kinds = [n["kind"] for n in notes]
    assert kinds == [
        "subscribed",
        "snapshot",
        "snapshot",
        "compacted",
        "snapshot",
        "snapshot",
        "change",
    ]
    assert notes[3]["revision"] == 3
    assert [(n["key"], n["value"], n["revision"]) for n in notes[4:6]] == [("a", 2, 3), ("b", 3, 3)]
    assert (notes[6]["key"], notes[6]["value"], notes[6]["revision"]) == ("a", 4, 4)
