"""The power-loss fault on Redis, through the real ``harness run`` (issue 34): one short
run, every power cut in the history with its proof and what it discarded.

The matrices (everysec against always, several seeds) are in the nightly suite; this is
the one representative CI runs: about 35 s, the Redis image with the layer built.
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


def test_every_power_cut_is_in_the_history_with_the_bytes_it_discarded(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", *RUN.split(), "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=150,
    )
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
