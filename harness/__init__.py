"""The harness core: operations and histories, the run store, generators, runner and CLI.

Kept free of heavy imports: import the submodule you need (``harness.ops``,
``harness.history``, ``harness.store``...).
"""
