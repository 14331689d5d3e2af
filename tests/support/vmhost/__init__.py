"""vmhost: disposable virtual machines as SSH hosts, for the one test that must really set
a host's clock.

The ``sshhost`` containers share this machine's kernel, hence its clock, so the harness
refuses to set their clocks (``clusters.remote.identity``). A qemu guest (KVM or TCG) runs
a kernel of its own with a clock of its own: setting it cannot move this machine's.
``image`` builds (once, cached) a Debian disk image with systemd, sshd and sudo from
Debian's packages; ``vm`` boots guests from it on a private bridge that leads nowhere, and
removes everything it made afterwards. Used by ``tests/integration/test_ssh_clock_vm.py``;
both need root and qemu.
"""
