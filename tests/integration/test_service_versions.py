"""Issue 32's done-when for service versions: the same short lock scenario on two Debian
releases of etcd (bookworm's 3.4, trixie's 3.5), side by side in ``harness compare`` with
the exact version each node reported. The bookworm image is built (or reloaded from the
cache) by ``.ci/docker-setup.sh``, so the test pays two short runs (~13 s each)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.docker]

SCENARIO = [
    "--target", "etcd", "--workload", "lock", "--nemesis", "none", "--nodes", "1",
    "--time-limit", "3", "--recovery-time", "1",
]  # fmt: skip


def _harness(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True, timeout=600
    )


def test_two_versions_of_etcd_side_by_side(tmp_path: Path) -> None:
    runs = []
    for release in ("bookworm", "trixie"):
        done = _harness(
            "run", *SCENARIO, "--server-version", release, "-o", str(tmp_path / release)
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        run_dir = (tmp_path / release / "latest").resolve()
        versions = json.loads((run_dir / "test.json").read_text())["versions"]
        assert versions["release"] == release
        runs.append(run_dir)
    compared = _harness("compare", *map(str, runs), "--json")
    assert compared.returncode == 0, compared.stderr
    cells = {c["row"]: c for c in json.loads(compared.stdout)["cells"]}
    old, new = cells["etcd · lock · bookworm"], cells["etcd · lock"]
    assert old["servers"] == ["etcd-server 3.4.23-4+b4 (bookworm)"], old
    assert len(new["servers"]) == 1 and new["servers"][0].startswith("etcd-server 3.5."), new
    assert new["servers"][0].endswith(" (trixie)") and old["verdict"] == new["verdict"] == "valid"
    table = _harness("compare", *map(str, runs))
    flat = " ".join(table.stdout.split())
    assert "etcd-server 3.4.23-4+b4 (bookworm)" in flat and "(trixie)" in flat, table.stdout
