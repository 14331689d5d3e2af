"""The client machinery every workload shares, apart from any one workload: the JSON-lines
wire of the sim and the resource (``wire``, ``service``), the protected resource
(``resource``), the pickable client factories a target's builders make (``factories``), a
lease kept alive by a background thread (``lease``), a lease-backed holding with a
fencing number (``holder``), a holder's critical section (``critical``: work, then a fenced
write) and the clients' backoff (``backoff``)."""
