"""The harness core: operations and histories, the run store, generators, runner and CLI.

Kept free of heavy imports: import the submodule you need (``core.ops``,
``core.history``, ``core.store``...).
"""
