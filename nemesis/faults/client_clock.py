"""The client clock fault: every client process's wall clock stepped by
``--client-clock-delta`` seconds (libfaketime in the clients, never the machine's clock),
taking turns with the other faults; for ids made from the clock (Snowflake)."""

from __future__ import annotations

import os

from checkers.windows import MOVES_CLOCK
from core.cluster import Cluster
from core.faults import CLIENT_CLOCK
from core.option_checks import OptionError
from core.options import RunOptions
from nemesis.base import Nemesis
from nemesis.client_skew import ClientClock
from nemesis.spec import FaultSpec
from workloads.wall_clock import FAKETIME_LIB

PACKAGES = ("libfaketime",)
"""What the clients' clock needs on the machine that runs them: Debian's and Ubuntu's
libfaketime installs ``FAKETIME_LIB``."""


def _build(cluster: Cluster, target: str, seed: int, opts: RunOptions) -> Nemesis:
    return ClientClock(opts.faults.client_clock_delta)


def _check(opts: RunOptions) -> None:
    """The clients read their clock through libfaketime: it must be installed here; a
    step of less than a millisecond moves nothing."""
    if not os.path.exists(FAKETIME_LIB):
        raise OptionError(
            f"--nemesis client-clock needs libfaketime on this machine ({FAKETIME_LIB}): "
            f"apt-get install {' '.join(PACKAGES)}"
        )
    if round(opts.faults.client_clock_delta) == 0:
        raise OptionError(
            "--client-clock-delta rounds to 0 s: give whole seconds, e.g. -5 (back) or 5"
        )


FAULT = FaultSpec(
    kind=CLIENT_CLOCK,
    help="step the wall clock of every client process (libfaketime), by a set delta",
    build=_build,
    describe="the clients' wall clock stepped ({jumps}) {when}",
    effects=frozenset({MOVES_CLOCK}),
    options=("client_clock_delta",),
    packages=PACKAGES,
    check=_check,
)
