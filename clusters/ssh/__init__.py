"""Targets installed and run on plain Debian hosts over SSH (``harness run --ssh``).

``factory.make_ssh_cluster`` is the entry point; ``cluster.SshCluster`` is the lifecycle
the SSH backend: any target's ``ServerSpec`` (``clusters/<target>/server.py``) on hosts
(packages, configuration, a background server with a pidfile and a log, faults, logs,
undoing everything). ``packages`` installs
Debian packages on a host (its own apt, or .debs that ``debs`` downloads on the control
machine and uploads), ``process`` runs one server in the background, ``firewall`` removes
the harness's iptables rules, ``target`` makes a run's target use SSH hosts, ``cleanup``
undoes what a killed run left on its hosts (``harness clusters heal|down --ssh``). See
docs/ssh.md.
"""
