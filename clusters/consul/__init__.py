"""Consul: Raft servers; ``cluster`` runs them, ``image`` says how their image is built."""
