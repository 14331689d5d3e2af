"""ZooKeeper: a ZAB ensemble; ``cluster`` runs it, ``image`` says how its image is built."""
