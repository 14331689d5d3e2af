"""Issue 32: a violation of a lock library's run names the library, its version and the
promise it broke (``checkers.blame``), and a release of another holder's lock is found,
caused (``released-another's-lock``) and measured (``checkers.foreign_release``).

Recorded histories made small: a TTL of 10 s (``test_mutex_records``), the library's
record as test.json keeps it (``lock_library`` with its ``promises``)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from test_cli import run
from test_mutex_records import (
    by_time,
    fault,
    history,
    holding,
    lease_events,
    ns,
    service_grant,
    service_lease,
    write,
)

from checkers import mutex
from checkers.attribution import LibraryRecord, attribution_line
from checkers.classify import CRASH, PAUSED, RELEASED_OTHER, SERVICE_BUG, UNEXPLAINED
from checkers.record import RunRecord
from core.history import History
from harness.analysis import verdict_line
from workloads.libraries.library_registry import LIBRARIES


def record(
    resource: list[dict[str, Any]],
    events: list[Any],
    client_events: list[dict[str, Any]],
    library: str | None = "redis-py",
    service: list[dict[str, Any]] | None = None,
) -> RunRecord:
    """A lock run's records; ``library``: the run's lock library (None: a recipe)."""
    test: dict[str, Any] = {"options": {}}
    if library is not None:
        lib = LIBRARIES[library]
        promises = lib.promises.record() if lib.promises else {}
        test["lock_library"] = {"library": lib.name, "version": lib.version, "promises": promises}
    return RunRecord(history(*events), resource, client_events, test, service or [])


def mutex_of(r: RunRecord) -> dict[str, Any]:
    return mutex.judged(r).to_dict()


def first(details: dict[str, Any]) -> dict[str, Any]:
    """The first overlap group's classification."""
    return dict(details["overlap_groups"][0]["classification"])


def said_held(process: int, lease: int, asked: float) -> dict[str, Any]:
    """The client event of a library asked at ``asked`` whether it still held: yes."""
    return {
        "time": ns(asked + 0.01),
        "sent": ns(asked),
        "process": process,
        "event": "still-held",
        "lease": lease,
        "lock": "lock",
        "held": True,
    }


PAUSE = fault("client-pause", 1.0, 13.0, {"processes": [1]})


def paused_stale_write(said_held_at: float | None, library: str = "redis-py") -> RunRecord:
    """Process 1 granted at 0.1 s, paused 1-13 s; process 2 granted at 11 s; process 1
    writes at 13.5 s unfenced, accepted; ``said_held_at``: its library, asked then, said
    it still held."""
    events = [
        *holding(1, 0.0, 0.1, None, 11, release=14.0),
        *holding(2, 10.5, 11.0, None, 22, release=16.0),
        *PAUSE,
    ]
    client = lease_events(1, 11, [0.1]) + lease_events(2, 22, [11.0])
    if said_held_at is not None:
        client.append(said_held(1, 11, said_held_at))
    writes = [write(13.5, 1, None, None, True), write(15.0, 2, None, None, True)]
    return record(writes, events, by_time(client), library)


def test_a_paused_holder_of_a_library_without_fencing_is_the_documented_design() -> None:
    d = mutex_of(paused_stale_write(None))
    c = first(d)
    assert c["cause"] == PAUSED
    a = c["attribution"]
    assert (a["party"], a["library"], a["version"]) == ("design", "redis-py", "8.2.0")
    assert a["evidence"].startswith("behaves as documented: redis-py 8.2.0's lock gives no")
    assert "pause past the TTL lets two hold" in a["evidence"]
    assert a["promise"].startswith("no fencing token") and "redis.readthedocs.io" in a["promise"]
    assert d["named_anomalies"][0]["attribution"] == a


def test_a_library_that_said_it_held_after_another_was_granted_broke_its_word() -> None:
    """etcd3gw's is_acquired() reads the key: a yes after another's grant is its doing."""
    a = first(mutex_of(paused_stale_write(13.2, "etcd3gw")))["attribution"]
    assert (a["party"], a["library"]) == ("library", "etcd3gw")
    assert "answered that process 1 still held lock when asked at 13.200 s" in a["evidence"]
    assert "2.200 s after the service had granted it to another at 11.000 s" in a["evidence"]
    assert "reads the key" in a["promise"]


def test_a_yes_from_a_library_s_own_belief_is_its_documented_design() -> None:
    """kazoo's is_acquired is its own flag (its documentation says to watch the session's
    state): the same yes is what it documents, not a broken promise."""
    a = first(mutex_of(paused_stale_write(13.2, "kazoo")))["attribution"]
    assert (a["party"], a["library"], a["version"]) == ("design", "kazoo", "2.11.0")
    assert a["evidence"].startswith("behaves as documented: kazoo 2.11.0 answered that")
    assert "its own belief" in a["evidence"]
    assert "is_acquired" in a["promise"] and "kazoo.readthedocs.io" in a["promise"]


def test_a_yes_asked_before_the_grant_is_no_evidence_against_the_library() -> None:
    a = first(mutex_of(paused_stale_write(10.9, "kazoo")))["attribution"]
    assert a["party"] == "design"


def test_a_recipe_run_names_no_party() -> None:
    c = first(mutex_of(record(*_paused_parts(), library=None)))
    assert c["cause"] == PAUSED and "attribution" not in c


def _paused_parts() -> tuple[list[dict[str, Any]], list[Any], list[dict[str, Any]]]:
    r = paused_stale_write(None)
    events = [
        *holding(1, 0.0, 0.1, None, 11, release=14.0),
        *holding(2, 10.5, 11.0, None, 22, release=16.0),
        *PAUSE,
    ]
    return r.resource_log, events, r.events


def test_a_server_killed_during_the_holding_is_the_harness_s_doing() -> None:
    events = [
        *holding(1, 0.0, 0.1, None, 11, release=8.0),
        *holding(2, 4.5, 5.0, None, 22, release=9.0),
        *fault("kill", 2.0, 3.0, {"nodes": ["n1"]}),
    ]
    client = by_time(lease_events(1, 11, [0.1]), lease_events(2, 22, [5.0]))
    c = first(mutex_of(record([], events, client, "pottery-redlock")))
    assert c["cause"] == CRASH
    a = c["attribution"]
    assert (a["party"], a["library"], a["promise"]) == ("harness", "pottery-redlock", None)
    assert a["evidence"].startswith("the harness's own doing, not pottery-redlock 3.0.1's: ")


def test_a_grant_within_the_library_s_own_lease_is_not_blamed_on_the_service() -> None:
    """No fault, no foreign release: the only record of the lease is the library's own
    grant, so the service is not blamed: unexplained, unattributed."""
    events = [
        *holding(1, 0.0, 0.1, None, 11, release=8.0),
        *holding(2, 4.5, 5.0, None, 22, release=9.0),
    ]
    client = by_time(lease_events(1, 11, [0.1]), lease_events(2, 22, [5.0]))
    c = first(mutex_of(record([], events, client)))
    assert c["cause"] == UNEXPLAINED and "bug in the service" not in c["label"] + c["fix"]
    assert "nothing the service recorded rules the library out" in c["evidence"]
    assert c["attribution"]["party"] == "unattributed"
    with_log = record([], events, client, service=by_time(service_lease(11, 0.1)))
    c = first(mutex_of(with_log))
    assert (c["cause"], c["attribution"]["party"]) == (SERVICE_BUG, "service")


def released_by_another(
    answer: str = "ok", ask_after: float | None = None, again: int = 3
) -> RunRecord:
    """Process 1 granted at 0.1 s, paused 1-13 s (its lease, 10 s, ends at 10.1 s);
    process 2 granted at 11 s, holding to 16 s; process 1 resumes and releases at 13.5 s
    (``answer``); process ``again`` is granted at 13.6 s; ``ask_after``: process 2's
    library said it still held when asked then."""
    events = [
        *holding(1, 0.0, 0.1, None, 11, release=13.5, released=answer),
        *holding(2, 10.5, 11.0, None, 22, release=16.0),
        *PAUSE,
    ]
    if answer == "fail":
        events += [(13.55, 3, "invoke", "acquire", {"name": "lock"})]
        events += [(14.0, 3, "fail", "acquire", None)]
    else:
        events += holding(again, 13.52, 13.6, None, 33, release=17.0)
    client = lease_events(1, 11, [0.1]) + lease_events(2, 22, [11.0])
    client += lease_events(again, 33, [13.6])
    if ask_after is not None:
        client.append(said_held(2, 22, ask_after))
    r = record([], events, by_time(client), "python-redis-lock")
    return replace(r, history=refused(r.history))


def refused(h: History) -> History:
    """``h`` with each failed acquire refused as the clients say it: not granted."""
    said = "not granted: lock held by another for 1 s"
    return History.from_events(
        {
            "time": op.time,
            "process": op.process,
            "type": op.type,
            "f": op.f,
            "value": op.value,
            **({"error": said} if (op.type, op.f) == ("fail", "acquire") else {}),
        }
        for op in h
    )


def test_a_release_that_freed_another_s_lock_is_the_library_s_doing() -> None:
    d = mutex_of(released_by_another())
    groups = {g["process"]: g["classification"] for g in d["overlap_groups"]}
    c = groups[2]
    assert c["cause"] == RELEASED_OTHER and c["expected"] is False
    assert (
        "process 1, whose holding of lock from 0.100 s had been taken over, called"
        in (c["evidence"])
    )
    assert (
        "release at 13.500 s (answered ok at 13.510 s), after process 2 was granted"
        in (c["evidence"])
    )
    a = c["attribution"]
    assert (a["party"], a["library"], a["version"]) == ("library", "python-redis-lock", "4.0.1")
    assert a["promise"].startswith("release() raises NotAcquired")
    assert d["released_another"]["releases"] == "yes"
    case = d["released_another"]["cases"][0]
    assert (case["releaser"], case["holder"], case["outcome"]) == (1, 2, "yes")


def test_a_release_that_freed_another_s_lock_for_its_own_caller_is_measured_yes() -> None:
    """Under load the careless releaser was the next one granted the lock it had freed
    (process 1 again, not a third): measured "not measured" while the overlap's cause
    said ``released-another's-lock``."""
    d = mutex_of(released_by_another(again=1))
    assert groups_of(d)[2]["cause"] == RELEASED_OTHER
    case = d["released_another"]["cases"][0]
    assert (case["releaser"], case["holder"], case["outcome"]) == (1, 2, "yes"), case
    assert (
        "process 1 was granted it at 13.600 s while process 2 (granted at 11.000 s)"
        in (case["evidence"])
    )
    assert d["released_another"]["releases"] == "yes"


@pytest.mark.parametrize(
    ("answer", "ask_after", "said"),
    [
        ("fail", None, "process 3's acquire, waiting from 13.550 s, was refused at 14.000 s"),
        ("fail", 13.8, "process 2's library said it still held at 13.800 s"),
    ],
)
def test_a_release_that_left_the_holder_s_lock_alone_is_measured_no(
    answer: str, ask_after: float | None, said: str
) -> None:
    d = mutex_of(released_by_another(answer, ask_after))["released_another"]
    assert (d["releases"], d["foreign_releases"], d["freed"], d["kept"]) == ("no", 1, 0, 1)
    assert said in d["cases"][0]["evidence"]


def test_a_release_of_one_s_own_lock_in_flight_at_the_next_grant_is_not_foreign() -> None:
    """Process 1 releases its own live lock at 3 s; process 2, waiting, is granted it
    before that release is answered: a handover, not a release of another's lock."""
    events = [
        *holding(1, 0.0, 0.1, None, 11, release=3.0),
        (2.0, 2, "invoke", "acquire", {"name": "lock"}),
        (3.005, 2, "ok", "acquire", {"lease": 22, "name": "lock"}),
    ]
    client = by_time(lease_events(1, 11, [0.1]), lease_events(2, 22, [3.005]))
    d = mutex_of(record([], events, client))
    assert d["released_another"] == {
        "releases": "not measured",
        "foreign_releases": 0,
        "freed": 0,
        "kept": 0,
        "cases": [],
    }


KEYED = "harness-4cae76/lock"
"""The lock's name as the service logs it: a lock of one's own asks for it under the
run's key prefix (``workloads.lock.own``)."""


def freed(t: float, lease: int, token: int, reason: str = "released") -> dict[str, Any]:
    """The sim server's log line of a lock freed: at a release's request, or its lease's
    end (``reason``)."""
    return {
        "time": ns(t),
        "event": "lock-released",
        "lock": KEYED,
        "lease": lease,
        "token": token,
        "reason": reason,
    }


def careless(released_by_0: bool = True) -> RunRecord:
    """A loaded careless run (TTL 2 s), as recorded: process 0, granted at 3.1 s, calls
    release at 4.099 s, 2 ms before its lease ends by the service's log (4.101 s), which
    grants the lock to process 1 (4.1013 s); process 0's release, answered at 4.125 s,
    frees process 1's lock by the service's log at 4.12 s, and the service grants it to
    process 2 at 4.1201 s. ``released_by_0``: False, process 0 called no release (its
    holding ended when it noticed its lease lost): no release in the history explains
    the one the service logged."""
    events = [
        *holding(0, 2.1, 3.1, 2, 20),
        *holding(1, 3.15, 4.102, 3, 30, release=5.11),
        *holding(2, 4.11, 4.126, 4, 40, release=5.5),
    ]
    if released_by_0:
        events += [(4.099, 0, "invoke", "release", {"name": "lock"})]
        events += [(4.125, 0, "ok", "release", None)]
    holders = [
        Keyed(0, 20, 2, 2.1, 3.1, 3.1, expired=4.1, lost=None if released_by_0 else 4.2),
        Keyed(1, 30, 3, 3.15, 4.1013, 4.102),
        Keyed(2, 40, 4, 4.11, 4.1201, 4.126),
    ]
    return keyed_run(events, holders, [freed(4.1012, 20, 2, "lease-expired"), freed(4.12, 30, 3)])


class Keyed(NamedTuple):
    """One holder of a careless run (TTL 2 s): its lease granted at ``leased``, the lock
    at ``granted`` with ``token`` by the service's log (the lock named under the run's key
    prefix), the grant answered at ``answered``; ``expired``: its lease's deadline, which
    passed; ``lost``: when its holder noticed the lease lost."""

    process: int
    lease: int
    token: int
    leased: float
    granted: float
    answered: float
    expired: float | None = None
    lost: float | None = None


def keyed_run(events: list[Any], holders: list[Keyed], frees: list[dict[str, Any]]) -> RunRecord:
    """A careless run's records: the history ``events``, each holder's client events and
    the service's log of its lease and grant, and the locks the service logged freed."""
    client = by_time(
        *(lease_events(h.process, h.lease, [h.answered], h.lost, ttl=2.0) for h in holders)
    )
    service = by_time(
        *(service_lease(h.lease, h.leased, expired=h.expired, ttl=2.0) for h in holders),
        *(service_grant(h.granted, h.lease, h.token, KEYED) for h in holders),
        *frees,
    )
    return record([], events, client, "careless", service)


def groups_of(d: dict[str, Any]) -> dict[Any, dict[str, Any]]:
    """Each overlap group's classification, by its earlier holder's process."""
    return {g["process"]: g["classification"] for g in d["overlap_groups"]}


@pytest.fixture
def careless_library(monkeypatch: pytest.MonkeyPatch) -> None:
    """``careless_sim_lock``'s declared promises, as the run records them."""
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    from careless_sim_lock import PROMISES

    lib = replace(LIBRARIES["redis-py"], name="careless", version=None, promises=PROMISES)
    monkeypatch.setitem(LIBRARIES, "careless", lib)


@pytest.mark.usefixtures("careless_library")
def test_a_release_in_flight_that_the_service_logs_freeing_another_s_lock_is_the_library_s() -> (
    None
):
    """Under load, process 0's release was called 2 ms before its lease ended and
    process 1 was granted: by times alone it may have freed only its own, and the grant
    to process 2 was once put on the service. The service's log says whose lock that
    release freed: process 1's, during process 0's release."""
    d = mutex_of(careless())
    c = groups_of(d)[1]
    assert c["cause"] == RELEASED_OTHER, c
    assert (
        "called release at 4.099 s (answered ok at 4.125 s), in flight when, by the "
        in c["evidence"]
    )
    assert (
        "a release freed the lock of process 1 (granted it at 4.101 s) at 4.120 s"
        in (c["evidence"])
    )
    assert c["attribution"]["party"] == "library"
    assert SERVICE_BUG not in {g["cause"] for g in groups_of(d).values()}
    assert d["named_anomalies"][0]["attribution"]["party"] == "library"


@pytest.mark.usefixtures("careless_library")
def test_a_release_the_service_logs_that_no_release_in_the_history_explains_blames_no_one() -> None:
    d = mutex_of(careless(released_by_0=False))
    c = groups_of(d)[1]
    assert (c["cause"], c["attribution"]["party"]) == (UNEXPLAINED, "unattributed"), c
    assert (
        "by the service's own log, a release freed process 1's lock at 4.120 s" in (c["evidence"])
    )
    assert "the records do not say whose release it was" in c["evidence"]


@pytest.mark.usefixtures("careless_library")
def test_a_grant_answered_after_a_later_one_is_ordered_by_the_service_s_log() -> None:
    """Under load, process 2's grant (token 3, 4.0515 s) was answered at 4.128 s, after
    process 1's (token 4, granted 4.1065 s, answered 4.109 s): in the order of the answers
    it read as a grant to process 2 while process 1 held, put on the service, because the
    service names the lock under the run's key prefix and its grants were not matched. In
    the service's order, process 0's release freed process 2's lock before process 1's
    grant."""
    events = [
        *holding(0, 2.0, 2.05, 2, 20),
        (4.105, 0, "invoke", "release", {"name": "lock"}),
        (4.108, 0, "ok", "release", None),
        *holding(2, 4.0, 4.128, 3, 30, release=4.132),
        *holding(1, 4.06, 4.109, 4, 40, release=5.0),
    ]
    holders = [
        Keyed(0, 20, 2, 2.05, 2.05, 2.05, expired=4.05),
        Keyed(2, 30, 3, 4.0, 4.0515, 4.128),
        Keyed(1, 40, 4, 4.06, 4.1065, 4.109),
    ]
    frees = [freed(4.0512, 20, 2, "lease-expired"), freed(4.106, 30, 3), freed(4.135, 40, 4)]
    d = mutex_of(keyed_run(events, holders, frees))
    granted = {h["process"]: h["holding"]["granted"] for h in d["overlap_groups"]}
    assert granted[2] == ns(4.0515)
    c = groups_of(d)[2]
    assert c["cause"] == RELEASED_OTHER, c
    assert "process 0, whose holding of lock from 2.050 s had been taken over" in c["evidence"]
    assert c["attribution"]["party"] == "library"
    assert SERVICE_BUG not in {g["cause"] for g in groups_of(d).values()}


def test_the_verdict_line_names_the_party_library_and_version() -> None:
    blamed = {
        "party": "design",
        "library": "tooz-etcd3gw",
        "version": "9.1.0",
        "promise": "no fencing token: ... [https://docs.openstack.org/tooz/]",
        "evidence": "behaves as documented: no fencing token [x]",
    }
    line = verdict_line({"valid": False, "verdict": "invalid", "attribution": blamed})
    assert line.endswith(
        "INVALID[/] - design (tooz-etcd3gw 9.1.0): behaves as documented: no fencing token \\[x]"
    )
    assert attribution_line(blamed).startswith("design (tooz-etcd3gw 9.1.0): behaves")


def test_every_library_records_each_promise_with_its_page() -> None:
    for lib in LIBRARIES.values():
        assert lib.promises is not None, lib.name
        said = LibraryRecord.of({"lock_library": {"library": lib.name, **_rec(lib.name)}})
        assert said is not None
        for name in ("fencing", "renewal", "lost_release", "still_held"):
            assert said.value(name), (lib.name, name)
            assert "[https://" in (said.says(name) or ""), (lib.name, name)


def _rec(name: str) -> dict[str, Any]:
    promises = LIBRARIES[name].promises
    assert promises is not None
    return {"version": LIBRARIES[name].version, "promises": promises.record()}


def test_a_careless_release_is_found_caused_and_attributed_from_the_command_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sim run of a lock of one's own whose release frees whoever holds the lock
    (``careless_sim_lock``), while its declared ``PROMISES`` say it raises: the holder
    paused past the TTL resumes and releases, and the run is invalid, caused
    ``released-another's-lock``, attributed to the lock, on the verdict line.

    The work (2.5 s) outlasts the lease, which the lock never renews (2 s from its
    acquire call): every holder's lease lapses before its release, the lock goes to a
    waiter, and the release frees the waiter's lock. With a work of 1 s the lapse came
    about when the release was called (the acquire's wait, up to 1 s, and the work: the
    TTL), and under load (load average 13.5) 1 run of 30 had no release of another's held
    lock: none lapsed first, the pause ended as the next holder was releasing anyway, and
    the run was valid."""
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    code, out, err = run(
        capsys,
        "run",
        "--lock",
        "careless_sim_lock:make",
        "--nemesis",
        "client-pause",
        "--lease-ttl",
        "2",
        "--work-time",
        "2.5",
        "--acquire-wait",
        "1",
        "--time-limit",
        "12",
        "--recovery-time",
        "1",
        "--seed",
        "7",
        "-o",
        str(tmp_path),
    )
    assert code == 1, out + err
    (run_dir,) = tmp_path.glob("sim-lock-*/2*")
    results = json.loads((run_dir / "results.json").read_text())
    m = results["checkers"]["mutex"]
    causes = {g["classification"]["cause"] for g in m["overlap_groups"]}
    assert RELEASED_OTHER in causes, causes
    # the sim's own log says whose lock each release freed: no overlap is the service's
    assert SERVICE_BUG not in causes, (run_dir, causes)
    assert m["released_another"]["releases"] == "yes"
    assert results["attribution"]["party"] == "library"
    assert results["attribution"]["library"] == "careless_sim_lock:make"
    assert "verdict: INVALID - library (careless_sim_lock:make): " in out
    page = (run_dir / "report.html").read_text()
    assert "Whose: library (careless_sim_lock:make): careless_sim_lock:make" in page
    assert "Its documentation: release() raises when the lock is no longer its own" in page
    code, out, err = run(capsys, "compare", str(run_dir))
    assert code == 0, out + err
    assert "whose: library (careless_sim_lock:make)" in out
    code, out, err = run(capsys, "check", str(run_dir))
    assert "whose: library (careless_sim_lock:make): careless_sim_lock:make's release" in out
