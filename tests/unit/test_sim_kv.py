"""The sim's watch primitive: revisions, long polls, compaction (also while waiting)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from clusters.sim.kv import KvStore
from clusters.sim.wal import WriteAheadLog
from workloads.common.wire import RequestError


def test_puts_get_revisions_and_a_watch_returns_changes_from_a_revision() -> None:
    async def go() -> None:
        kv = KvStore()
        assert kv.put("a", 1) == {"revision": 1}
        kv.put("b", 2)
        kv.put("a", 3)
        assert kv.get(["a", "c"]) == {"revision": 3, "kvs": {"a": [3, 3], "c": [None, 0]}}
        got = await kv.watch(["a"], 2, 0.01)
        assert got["events"] == [["a", 3, 3]]
        assert (await kv.watch(["a"], 4, 0.01))["events"] == []

    asyncio.run(go())


def test_a_waiting_watch_wakes_on_a_put() -> None:
    async def go() -> None:
        kv = KvStore()
        waiting = asyncio.create_task(kv.watch(["a"], 1, 5))
        await asyncio.sleep(0.01)
        kv.put("a", "x")
        assert (await asyncio.wait_for(waiting, 1))["events"] == [["a", "x", 1]]

    asyncio.run(go())


def test_a_compaction_refuses_older_watches_even_one_already_waiting() -> None:
    async def go() -> None:
        kv = KvStore()
        kv.put("a", 1)
        waiting = asyncio.create_task(kv.watch(["b"], 2, 5))
        await asyncio.sleep(0.01)
        kv.put("a", 2)
        kv.put("a", 3)
        assert kv.compact() == {"revision": 3}
        with pytest.raises(RequestError, match="compacted: 3"):
            await asyncio.wait_for(waiting, 1)
        assert (await kv.watch(["a"], 3, 0.01))["events"] == [["a", 3, 3]]

    asyncio.run(go())


def test_the_store_survives_a_restart_through_its_log(tmp_path: Path) -> None:
    wal = WriteAheadLog(tmp_path / "wal")
    kv = KvStore(wal)
    kv.put("a", 1)
    kv.put("a", 2)
    kv.compact()
    wal.close()
    again = KvStore(WriteAheadLog(tmp_path / "wal"))
    assert (again.revision, again.compacted, again.get(["a"])["kvs"]) == (2, 2, {"a": [2, 2]})
