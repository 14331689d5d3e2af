"""Redis: one primary (``redis``) or five independent servers (``redlock``)."""
