"""The ``sim`` target: a small coordination service run as a local OS process, no Docker.

- ``service``: the state machine (leases, locks with fencing tokens, CAS registers,
  elections) and its injectable known bugs;
- ``server``: ``python -m clusters.sim.server``, the service on newline-delimited JSON/TCP;
- ``wal``: the write-ahead log that keeps the service's state across kill -9 and restart;
- ``cluster``: ``SimCluster``, the ``core.cluster.Cluster`` (also ``Pausable``,
  ``Killable``) that starts it for a run;
- ``client``: ``SimClient``, the blocking driver, with explicit error classification;
- ``factories``: picklable client factories for the lock, register and election workloads.
"""
