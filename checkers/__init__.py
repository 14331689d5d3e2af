"""Checkers: pure functions from a run's records to a result. No Docker, no network.

``checkers.result`` holds the result type and its composition rule
(invalid > unknown > valid); ``checkers.record`` the records a checker reads and the one
signature of every checker (``Checker``): each module's ``check_record(record)``.

Checkers: ``mutex`` (mutual exclusion), ``fencing`` (numbers that only go up),
``election`` (one leader per epoch), ``mutex_lin`` (lease-aware mutex linearizability),
``linearizability``, ``stats`` (latency, throughput, availability) and ``faults``.
Their building blocks, one job each: ``windows`` (fault windows from nemesis ops),
``leases`` (what was recorded about each lease), ``holdings`` (who held what, when),
``overlaps`` (overlapping holdings, stale writes, handovers), ``classify`` (why each
violation happened) and ``words`` (times and counts in plain words).
"""
