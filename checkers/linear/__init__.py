"""The linearizability checker's parts: models, preparation, search, counterexamples.

The public entry point is ``checkers.linearizability``; see its docstring.
"""
