"""etcd: a Raft key-value store; ``cluster`` runs it, ``image`` says how its image is built."""
