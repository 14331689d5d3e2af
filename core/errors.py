"""User-facing errors: the CLI prints their message as one line (exit 254), no traceback.

Subclass ``HarnessError`` for anything a user can fix (bad input, missing Docker, a cluster
that never became healthy); say what is wrong and what to do.
"""


class HarnessError(Exception):
    """An error the user can act on; its message says how."""


class CrashReported(Exception):
    """A crash of the harness already accounted for where it happened (what it left and
    where its traceback went): the CLI prints the message as one line, exit 255."""


EXIT_BAD_INPUT = 254
"""Exit code of bad arguments or input (Jepsen's)."""
EXIT_CRASH = 255
"""Exit code of a crash of the harness itself, out of memory included."""
