"""The Kubernetes manifest of docs/kubernetes.md is valid for Kubernetes' own schemas
(strict: a misspelt field is an error), and its Jobs run what the harness offers: pod
I-1 of the Indexed Job shard I of N, the final Job the merge of every shard's folder."""

from __future__ import annotations

import io
import json
import os
import re
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "docs" / "kubernetes.yaml"
VERSIONS = ("1.30.0", "1.37.0")
"""The oldest Kubernetes with the fields the manifest uses in their stable form, and the
newest whose schemas the validator ships."""

if os.environ.get("CI"):  # CI installs the dev extra: missing there is a failure
    import kubernetes_validate as kv
    import yaml
else:
    kv = pytest.importorskip("kubernetes_validate", reason="pip install -e '.[dev]'")
    yaml = pytest.importorskip("yaml")


def _objects(text: str | None = None) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = list(
        yaml.safe_load_all(MANIFEST.read_text() if text is None else text)
    )
    return found


@pytest.mark.parametrize("version", VERSIONS)
def test_the_manifest_is_valid_for_kubernetes(version: str) -> None:
    objects = _objects()
    assert [o["kind"] for o in objects] == ["PersistentVolumeClaim", "Job", "Job"]
    for o in objects:
        kv.validate(o, version, strict=True)


def test_a_misspelt_field_is_refused() -> None:
    """The check can fail."""
    text = MANIFEST.read_text().replace("completionMode:", "completionMod:")
    with pytest.raises(kv.ValidationError, match="completionMod"):
        kv.validate(_objects(text)[1], VERSIONS[0], strict=True)


def _env(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e.get("value", "") for e in container.get("env", ())}


def test_each_pod_runs_one_shard_and_the_last_job_merges_them() -> None:
    _, shards, merge = _objects()
    spec = shards["spec"]
    (shard,) = spec["template"]["spec"]["containers"]
    n = int(_env(shard)["SHARDS"])
    assert spec["completionMode"] == "Indexed" and spec["completions"] == n
    assert spec["parallelism"] == n and spec["maxFailedIndexes"] <= n
    script = shard["args"][0]
    assert "shard=$((JOB_COMPLETION_INDEX + 1))" in script
    run = re.search(r'harness suite run "\$SUITE" --shard "\$shard/\$SHARDS" -o "(\S+)"', script)
    assert run is not None and run.group(1) == "/results/shard-$shard"
    (merger,) = merge["spec"]["template"]["spec"]["containers"]
    assert merger["args"] == ["harness merge /results/shard-* --out /results/merged"]
    # the indexes the Job runs are those the plan names
    out = io.StringIO()
    suite = _env(shard)["SUITE"]
    with redirect_stdout(out):
        assert main(["suite", "plan", suite, "--shards", str(n), "--format", "json"]) == 0
    plan = json.loads(out.getvalue())
    assert plan["completions"] == n and plan["indexes"] == list(range(n))


def test_the_doc_says_it_was_not_run_on_a_real_cluster() -> None:
    doc = (ROOT / "docs" / "kubernetes.md").read_text()
    assert "**Not run on a real cluster.**" in doc and "docs/kubernetes.yaml" in doc
