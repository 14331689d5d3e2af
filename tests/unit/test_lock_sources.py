"""``--lock`` naming what is no target's own recipe (issue 32): a ``module:attribute``, an
entry point of the ``coordination_harness.locks`` group, a library installed into an
environment of its own; loaded, refused in one line, and recorded in test.json."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest
from test_cli import run

from clusters.target_registry import TARGETS
from core.errors import EXIT_BAD_INPUT
from core.option_checks import safe_word
from workloads.libraries import library_registry
from workloads.libraries.env import CACHE_VARIABLE, InstallError, ensure
from workloads.libraries.library_registry import Library

SHORT = ("--time-limit", "2", "--recovery-time", "0", "--nemesis", "none")


@pytest.mark.parametrize(
    ("lock", "said"),
    [
        ("no_such_module:make", "ModuleNotFoundError: No module named 'no_such_module'"),
        ("own_sim_lock:no_such", "AttributeError"),
        ("own_sim_lock:__doc__", "TypeError: own_sim_lock:__doc__ is a str, not a callable"),
    ],
)
def test_a_lock_of_ones_own_that_cannot_be_loaded_is_one_line_naming_the_targets(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, lock: str, said: str
) -> None:
    code, out, err = run(capsys, "run", "--lock", lock, *SHORT, "-o", str(tmp_path))
    assert code == EXIT_BAD_INPUT, out + err
    line = err.strip()
    assert "\n" not in line and said in line, line
    assert "runs on sim, etcd, zookeeper, consul, redis, redlock, postgres" in line
    assert not list(tmp_path.iterdir())  # nothing started


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (("--lock", "redis-py"), "--lock redis-py runs on redis, not sim: use --target redis"),
        (
            ("--lock", "python-redis-lock", "--target", "redis", "--lease-ttl", "2.5"),
            "python-redis-lock counts in whole seconds, not --lease-ttl 2.5",
        ),
        (("--lib-version", "4.0.0"), "--lib-version picks the version of a lock library"),
        (("--lock", "set-xn", "--target", "redis"), "did you mean 'set-nx'?"),
        (
            ("--lock", "tooz-zookeeper", "--target", "etcd"),
            "--lock tooz-zookeeper runs on zookeeper, not etcd: use --target zookeeper",
        ),
        (("--lock", "kazoo"), "--lock kazoo runs on zookeeper, not sim: use --target zookeeper"),
        (
            ("--lock", "etcd3gw", "--target", "etcd", "--lease-ttl", "2.5"),
            "etcd3gw counts in whole seconds, not --lease-ttl 2.5",
        ),
        (
            ("--lock", "tooz-redis", "--target", "redis", "--acquire-wait", "0.5"),
            "tooz-redis counts in whole seconds, not --acquire-wait 0.5",
        ),
    ],
)
def test_a_library_where_it_cannot_run_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: tuple[str, ...], said: str
) -> None:
    code, out, err = run(capsys, "run", *argv, *SHORT, "-o", str(tmp_path))
    assert code == EXIT_BAD_INPUT, out + err
    assert said in err and err.strip().count("\n") == 0, err


def test_safe_word_keeps_a_variant_one_folder_name() -> None:
    assert safe_word("pkg.mod:make") == "pkg.mod-make"
    assert safe_word("../x/y:z") == "x-y-z"


@pytest.mark.slow
def test_a_module_attribute_lock_runs_and_is_recorded(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(capsys, "run", "--lock", "own_sim_lock:make", *SHORT, "-o", str(tmp_path))
    assert code == 0, out + err
    (run_dir,) = (tmp_path / "sim-lock-own_sim_lock-make-no-fault").glob("2*")
    test = json.loads((run_dir / "test.json").read_text())
    assert test["lock_library"] == {
        "name": "own_sim_lock:make",
        "variant": "own_sim_lock-make",
        "origin": "module",
        "make": "own_sim_lock:make",
    }
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    granted = [e for e in events if e["event"] == "lease-granted"]
    assert granted and all(e["by"] == "library" and e["token"] for e in granted)
    assert any(e["event"] == "still-held" and e["held"] is True for e in events)
    assert "mutex: valid" in out and "fencing: valid" in out


def _entry_point(folder: Path, name: str, ref: str) -> Path:
    """A distribution registering ``name = ref`` in the locks group, found on ``folder``."""
    info = folder / "sim_locks-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sim-locks\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[coordination_harness.locks]\n{name} = {ref}\n")
    return folder


@pytest.mark.slow
def test_an_entry_point_names_a_lock(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(
        str(_entry_point(tmp_path / "site", "simlock", "own_sim_lock:make"))
    )
    code, out, err = run(capsys, "run", "--lock", "simlock", *SHORT, "-o", str(tmp_path / "o"))
    assert code == 0, out + err
    (run_dir,) = (tmp_path / "o" / "sim-lock-simlock-no-fault").glob("2*")
    said = json.loads((run_dir / "test.json").read_text())["lock_library"]
    assert (said["origin"], said["make"]) == ("entry point", "own_sim_lock:make")
    _, _, err = run(capsys, "run", "--lock", "simlocks", *SHORT, "-o", str(tmp_path / "o"))
    assert "has no lock implementation 'simlocks'" in err


def _wheel(folder: Path, name: str, version: str, files: dict[str, str]) -> Path:
    """A pure-Python wheel of ``files`` (module path -> source), made by hand: pip
    installs it with no index and no build backend."""
    info = f"{name}-{version}.dist-info"
    contents = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = []
    for path, text in contents.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for path, text in contents.items():
            z.writestr(path, text)
        z.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return wheel


LIBRARY_MODULE = """
import sys
from own_sim_lock import SimLock

def make(endpoints, settings):
    if "simlib-1.0" not in sys.executable:
        raise RuntimeError(f"the worker runs {sys.executable}, not the library's Python")
    return SimLock(endpoints, settings)
"""


@pytest.mark.slow
def test_a_library_runs_from_its_own_environment_and_is_recorded(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    wheel = _wheel(tmp_path, "simlib", "1.0", {"simlib.py": LIBRARY_MODULE})
    env = ensure("simlib", "1.0", requirement=str(wheel), root=cache)
    assert env.version == "1.0" and Path(env.interpreter).parent.parent == cache / "simlib-1.0"
    assert (Path(env.site_packages[0]) / "simlib.py").is_file()
    assert ensure("simlib", "1.0", root=cache) == env  # cached: nothing installed again
    monkeypatch.setenv(CACHE_VARIABLE, str(cache))
    lib = Library("simlib", "simlib", "1.0", "simlib:make", fencing=True,
                  loss_on_release=True, renewal="no renewal")  # fmt: skip
    monkeypatch.setitem(library_registry.LIBRARIES, "simlib", lib)
    sim = TARGETS["sim"].offers["lock"]
    monkeypatch.setitem(sim.variants, "simlib", library_registry.OWN_LOCKS_REF)  # type: ignore[index]
    code, out, err = run(capsys, "run", "--lock", "simlib", *SHORT, "-o", str(tmp_path / "o"))
    assert code == 0, out + err
    (run_dir,) = (tmp_path / "o" / "sim-lock-simlib-no-fault").glob("2*")
    test = json.loads((run_dir / "test.json").read_text())
    said = test["lock_library"]
    assert (said["library"], said["package"], said["version"]) == ("simlib", "simlib", "1.0")
    assert said["interpreter"] == env.interpreter and test["versions"]["simlib library"] == "1.0"
    history = [json.loads(line) for line in (run_dir / "history.jsonl").read_text().splitlines()]
    acquired = [op for op in history if op["f"] == "acquire" and op["type"] == "ok"]
    assert acquired and not [op for op in history if op["type"] == "info"]
    assert "mutex: valid" in out


def test_a_failed_install_is_one_line_and_leaves_nothing_cached(tmp_path: Path) -> None:
    def pip(argv: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        if "pip" in argv:
            err = "Collecting x\nERROR: No matching distribution found for redis==0.0.0\n"
            return subprocess.CompletedProcess(argv, 1, "", err)
        return subprocess.run(argv, **kw)

    with pytest.raises(InstallError) as e:
        ensure("redis", "0.0.0", root=tmp_path, run=pip)
    said = str(e.value)
    assert "\n" not in said and "No matching distribution found for redis==0.0.0" in said
    assert "--lib-version" in said and "retry" in said
    assert [p.name for p in tmp_path.iterdir()] == []


def test_each_library_is_a_lock_variant_of_the_targets_it_runs_on() -> None:
    offered = {v for t in TARGETS.values() for v in t.offers["lock"].variants}
    assert set(library_registry.LIBRARIES) <= offered
    for t in TARGETS.values():
        lock = t.offers["lock"]
        libraries = [v for v in lock.variants if v in library_registry.LIBRARIES]
        assert all(lock.variants[v] == library_registry.OWN_LOCKS_REF for v in libraries), t.name
