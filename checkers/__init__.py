"""Checkers: pure functions from a run's records to a result. No Docker, no network.

``checkers.result`` holds the result type and its composition rule
(invalid > unknown > valid).
"""
