"""Support code for the tests, benchmarks and fuzzers, kept out of the product packages:
``synthetic`` (run directories built in memory, checked by the real checkers),
``chromium`` (headless Chromium over the DevTools protocol, for the report's browser tests
and benchmark), a scripted ``Remote`` (``fake``), a container as a ``Remote``
(``docker_remote``), the ``sshhost`` image of stand-in SSH hosts and disposable VMs whose
clocks may really be set (``vmhost``). Importable as ``tests.support`` from the
repository's root: pytest puts it on the path (``pythonpath`` in pyproject.toml), the
scripts put it there themselves."""
