"""Remote control of machines: run commands, copy files, signal processes.

One small protocol (``base.Remote``), implemented by ``ssh.SshRemote`` (a real host over
SSH, through paramiko; the tests add a container's and a scripted one in
``tests/support/``). Code above this layer (``clusters/ssh/``, ``nemesis/host_skew.py``) only
ever sees a ``Remote``. ``hosts`` parses host lists and nodes files, ``identity`` tells
whether a host is the machine the harness runs on, ``clock`` reads and shifts a host's
clock and pauses its NTP service.

Nothing here imports paramiko or docker at import time.
"""
