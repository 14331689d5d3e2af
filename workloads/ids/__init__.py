"""The unique-ids workload, whole: every client asks for new ids from the generator of
``--id-generator``.

``workload.py`` is its ``Workload``, ``client.py`` its client, its options record
(``IdsOptions``) and the backend protocol a target implements, ``factories.py`` the
clients a target builds, ``snowflake.py`` the ids a client makes from its clock. This
face hands on the client's names, what a target and a worker import; the workload itself
(its checkers) is imported by the registry alone."""

from workloads.ids.client import (
    CAS_TRIES,
    GENERATE,
    CasCounter,
    IdBackend,
    IdClient,
    IdsOptions,
    SnowflakeIds,
    check_id_options,
)

__all__ = [
    "CAS_TRIES",
    "CasCounter",
    "GENERATE",
    "IdBackend",
    "IdClient",
    "IdsOptions",
    "SnowflakeIds",
    "check_id_options",
]
