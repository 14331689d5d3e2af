"""The version-cas workload: its ``Workload`` (``workload.py``), the lock-free work of
``workloads.guarded`` on a row and its version; imported by the registry alone."""
