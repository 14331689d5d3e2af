"""Remote control of machines: run commands, copy files, signal processes.

One small protocol (``base.Remote``) with two implementations: ``ssh.SshRemote`` (a real
host over SSH, through paramiko) and ``docker_remote.DockerRemote`` (a container through
the docker SDK). Code above this layer (``clusters/ssh/``, ``nemesis/host_clock.py``) only
ever sees a ``Remote``. ``hosts`` parses host lists and nodes files, ``identity`` tells
whether a host is the machine the harness runs on, ``clock`` reads and shifts a host's
clock and pauses its NTP service, ``fake`` is a scripted ``Remote`` for tests.

Nothing here imports paramiko or docker at import time.
"""
