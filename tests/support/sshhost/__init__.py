"""sshhost: a plain Debian machine with sshd, for the SSH targets' integration tests."""
