"""The lock libraries people use, and their own locks, as lock variants (issue 32).

``registry``: the libraries the harness knows (package, pinned version, its ``make``, the
targets it runs on, what it offers); ``env``: the isolated, cached virtual environment each
(package, version) is installed into for the client workers; ``resolve``: what a ``--lock``
name that is no recipe of the target's names (a library, an entry point of the
``coordination_harness.locks`` group, a ``module:attribute``) and its client builder; one
module per library adapter (``redis_py``, ``python_redis_lock``, ``pottery_redlock``), each
using its library as its documentation shows, behind ``workloads.lock.own``'s protocol.
"""
