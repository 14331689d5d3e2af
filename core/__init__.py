"""The ground floor: the plain types every layer shares (ops and histories, the run clock,
the run store and history formats, generators, the client protocol, errors and options).
It imports nothing else of the project."""
