"""The power-loss layer: a FUSE file system that loses what was not fsynced (``disk``:
the bookkeeping, ``mount``: the FUSE glue and its control, run inside a node)."""
