"""The linearizability checker's parts: models, preparation, search, counterexamples.

The public entry point is ``checkers.linearizability``; see its docstring. The search's
hot modules run compiled when a build of the current sources exists
(``core.compiled``).
"""

from core.compiled import extend_path

__path__ = extend_path(__name__, __path__)
