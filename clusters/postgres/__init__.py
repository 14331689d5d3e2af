"""PostgreSQL: a primary with streaming replicas; locks in the database and lock-free
alternatives (version compare-and-set, unique keys)."""
