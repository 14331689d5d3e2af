"""The unique-key workload: its ``Workload`` (``workload.py``), the lock-free work of
``workloads.guarded`` on jobs and their idempotency keys; imported by the registry alone."""
