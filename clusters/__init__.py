"""Targets: one small subpackage per coordination service (image, lifecycle, clients).

``core.cluster`` holds the narrow protocols; ``clusters.target_registry`` maps target names to
their implementations, imported lazily so that ``sim`` works without Docker.
"""
