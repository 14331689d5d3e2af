"""tests/support/vmhost without booting anything: subnet checks, the accelerator choice, the
image's cache key."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from core.cluster import ClusterError
from tests.support.vmhost import image, vm

NET = ipaddress.IPv4Network(vm.DEFAULT_SUBNET)


def test_a_subnet_is_in_use_when_a_route_or_an_address_overlaps_it() -> None:
    routes = [
        {"dst": "default", "dev": "eth0"},
        {"dst": "10.77.1.0/24", "dev": "br-1"},
        {"type": "local", "dst": "192.0.2.2", "dev": "eth0"},
    ]
    assert vm.overlapping_route(routes, NET) is None
    assert (
        vm.overlapping_route([*routes, {"dst": "10.213.0.0/16", "dev": "wg0"}], NET)
        == "10.213.0.0/16 dev wg0"
    )
    assert (
        vm.overlapping_route([{"type": "local", "dst": "10.213.7.1", "dev": "x"}], NET)
        == "10.213.7.1 dev x"
    )


def test_the_accelerator_can_be_chosen_and_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_VM_ACCEL", "tcg")
    assert vm.accelerator() == "tcg"
    monkeypatch.setenv("HARNESS_VM_ACCEL", "xen")
    with pytest.raises(ClusterError, match="choose kvm or tcg"):
        vm.accelerator()
    monkeypatch.delenv("HARNESS_VM_ACCEL")
    assert vm.accelerator() in vm.ACCEL_ARGS


def test_the_image_is_keyed_by_its_recipe(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    key = image.recipe_hash()
    assert key == image.recipe_hash()
    monkeypatch.setattr(image, "PACKAGES", (*image.PACKAGES, "chrony"))
    assert image.recipe_hash() != key
    monkeypatch.setenv("HARNESS_VM_CACHE", str(tmp_path))
    assert image.cache_root() == tmp_path


def test_guests_are_named_as_the_cli_takes_hosts(tmp_path: Path) -> None:
    guests = [vm.Guest(i, str(NET[10 + i]), "m", tmp_path / "c") for i in (1, 2)]
    lab = vm.VmLab(
        image.VmImage(tmp_path), "tcg", "hvm-x", str(NET[1]), guests, tmp_path / "known_hosts"
    )
    assert lab.hosts() == ["harness@10.213.7.11", "harness@10.213.7.12"]
