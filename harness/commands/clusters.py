"""``harness clusters down|heal``: what a crashed run left behind, undone."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from harness.commands.args import (
    UsageError,
    add_ssh_login_options,
)

if TYPE_CHECKING:
    from harness.terminal import Terminal


def cmd_clusters(args: argparse.Namespace, term: Terminal) -> int:
    from harness.maintenance import clean_ssh_hosts, clusters_down, clusters_heal

    if args.ssh or args.nodes is not None or args.nodes_file is not None:
        from clusters.remote.hosts import hosts_from
        from clusters.ssh.factory import SshClusterOptions, check_login_options
        from core.cluster import ClusterError

        if not args.ssh:
            raise UsageError(
                "--nodes and --nodes-file name SSH hosts: add --ssh (without it, "
                f"`harness clusters {args.action}` cleans Docker)"
            )
        options = SshClusterOptions(
            user=args.ssh_user,
            port=args.ssh_port,
            key=args.ssh_key,
            strict=args.ssh_strict,
            known_hosts=args.ssh_known_hosts,
        )
        try:
            hosts = hosts_from(args.nodes, args.nodes_file)
            check_login_options(options)
        except ClusterError as e:
            raise UsageError(str(e)) from None
        return clean_ssh_hosts(args.action, hosts, options, term.out)
    if args.action == "down":
        return clusters_down(term.out)
    return clusters_heal(term.out)


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to ``sub`` (``harness.cli.build_parser``)."""
    cl = sub.add_parser(
        "clusters",
        help="clean up what a crashed run left behind",
        description="Undo what runs that could not clean up after themselves "
        "(killed, say) left: in Docker, or with --ssh on the hosts "
        "named (and no others). Exit 1 when something could not "
        "be undone.",
    )
    cl.add_argument(
        "action",
        choices=("down", "heal"),
        help="down: remove the harness's containers and networks (--ssh: heal, "
        "then kill the harness's servers, purge the packages runs recorded "
        "as installed, remove /var/lib/harness/<run id>); heal: clear faults "
        "(rules, stopped processes, clock offsets) and leave servers running",
    )
    ssh = cl.add_argument_group("real hosts over SSH (`harness docs ssh`)")
    ssh.add_argument(
        "--ssh",
        action="store_true",
        help="clean the hosts named by --nodes and --nodes-file instead of Docker",
    )
    ssh.add_argument(
        "--nodes", default=None, help="the hosts: host1,user@host2:2222,... (default: none: Docker)"
    )
    add_ssh_login_options(ssh)
    cl.set_defaults(fn=cmd_clusters)
