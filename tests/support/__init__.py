"""What the tests need and the product does not: a scripted ``Remote`` (``fake``), a
container as a ``Remote`` (``docker_remote``), the ``sshhost`` image of stand-in SSH hosts
and disposable VMs whose clocks may really be set (``vmhost``)."""
