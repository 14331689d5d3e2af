"""The power-loss fault through the real ``harness run`` (issue 34): a short Redis run,
every power cut in the history with its proof and what it discarded, and a short
ZooKeeper run under its default ``forceSync=yes`` whose verdict the recorded rule decides.

The matrices (everysec against always, force-sync against no-force-sync, several seeds)
are in the nightly suite; these are the representatives CI runs: about 35 s and 30 s,
the images with the layer built.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.docker, pytest.mark.slow]

RUN = (
    "--target redis --workload lock --persistence aof-everysec --nemesis power-loss "
    "--nemesis-interval 1 --time-limit 10 --recovery-time 1 --lease-ttl 10 --keepalive 5 "
    "--work-time 4 --op-timeout 8 --seed 1"
)
"""Down 1 s in every 2 while holders work 4 s: the nightly run's shape, shorter."""


def _run(args: str, out: Path) -> subprocess.CompletedProcess[str]:
    """``harness run ARGS -o OUT`` as a person runs it."""
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", *args.split(), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=150,
    )


def test_every_power_cut_is_in_the_history_with_the_bytes_it_discarded(tmp_path: Path) -> None:
    proc = _run(RUN, tmp_path)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    run_dir = tmp_path / "latest"
    ops = [json.loads(line) for line in (run_dir / "history.jsonl").read_text().splitlines()]
    cuts = [op for op in ops if op["f"] == "start-power-loss" and op["type"] != "invoke"]
    assert cuts, "the run cut the power at least once"
    for cut in cuts:
        assert cut["type"] == "ok", cut
        nodes = cut["value"]["nodes"]
        assert cut["value"]["proof"] == {n: True for n in nodes}
        discarded = cut["value"]["discarded"]
        assert set(discarded) == set(nodes)
        assert all(isinstance(b, int) and b >= 0 for d in discarded.values() for b in d.values())
    cluster = json.loads((run_dir / "cluster.json").read_text())
    assert cluster["power_loss"] is True
    assert (run_dir / "nodes" / "n1" / "powerfs.log").exists()


ZOOKEEPER = (
    "--target zookeeper --workload lock --nemesis power-loss --nemesis-target all "
    "--nemesis-interval 2 --time-limit 15 --recovery-time 1 --concurrency 3 --lease-ttl 10 "
    "--keepalive 3 --work-time 4 --op-timeout 8 --seed 1"
)
"""Every server's power cut at once (a quorum lost) for 2 s in every 4, holders working
4 s across the cuts: what forceSync=yes acknowledged must survive each."""


def test_zookeeper_with_force_sync_keeps_every_grant_across_power_cuts(tmp_path: Path) -> None:
    proc = _run(ZOOKEEPER, tmp_path)
    assert proc.returncode in (0, 2), proc.stdout + proc.stderr
    assert "zookeeper: forceSync yes: every server fsyncs its transaction log" in proc.stdout
    run_dir = tmp_path / "latest"
    test = json.loads((run_dir / "test.json").read_text())
    [rule] = [r for r in test["service_rules"] if r.get("lost_within_s") is not None]
    assert (rule["setting"], rule["value"], rule["lost_within_s"]) == ("forceSync", "yes", 0.0)
    checkers = json.loads((run_dir / "results.json").read_text())["checkers"]
    assert checkers["mutex"]["valid"] is True and checkers["fencing"]["valid"] is True
    assert checkers["faults"]["valid"] is True, checkers["faults"]
    ops = [json.loads(line) for line in (run_dir / "history.jsonl").read_text().splitlines()]
    cuts = [op for op in ops if op["f"] == "start-power-loss" and op["type"] == "ok"]
    assert cuts and all(set(c["value"]["discarded"]) == {"n1", "n2", "n3"} for c in cuts)
