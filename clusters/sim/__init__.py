"""The ``sim`` target: a small coordination service run as a local OS process, no Docker.

- ``service``: the state machine (leases, locks with fencing tokens, CAS registers,
  elections) and its injectable known bugs;
- ``server``: ``python -m clusters.sim.server``, the service on newline-delimited JSON/TCP;
- ``wal``: the write-ahead log that keeps the service's state across kill -9 and restart;
- ``local``: ``SimServer``, its ``ServerSpec``, which the local-process backend
  (``clusters._local``) runs for a run: one node, Pausable and Killable;
- ``client``: ``SimClient``, the blocking driver, with explicit error classification;
- ``clients``: the shared client factories over a connection to it.
"""
