"""The unique-ids workload: every client asks for new ids, one ``generate`` after another,
from the id generator of ``--id-generator`` (``workloads.ids``'s client and a target's
backend: a counter, a revision, sequential nodes, INCR, or Snowflake ids made in the
client). Its runs are checked for duplicates, per-client monotonicity, global order and
gaps (``checkers.ids``), and statistics.
"""

from __future__ import annotations

from checkers import ids, stats
from core import gen
from workloads.ids.client import GENERATE, IdsOptions, check_id_options
from workloads.workload import Variant, Workload

WORKLOAD = Workload(
    name="unique-ids",
    help="every client asks for new ids from --id-generator; checked for duplicates",
    generator=lambda opts, seed: gen.repeat({"f": GENERATE}),
    needs_resource=False,
    holds=False,
    default_fault="none",
    checkers=(ids.check_record, stats.check_record),
    options=(
        "id_generator",
        "snowflake_defence",
        "snowflake_workers",
        "segment_size",
        "segment_prefetch",
    ),
    check=check_id_options,
    variant=Variant("id_generator", "id generator", decided=True),
    records=(IdsOptions,),
    sections=("workloads.ids.report:section",),
)
