from __future__ import annotations

from pathlib import Path

from lens.tune import places

from .conftest import put


def test_sysctl_files_split_around_lens_drop_in_with_sysctl_conf_last(host: Path) -> None:
    put(host, "usr/lib/sysctl.d/10-default.conf", "")
    put(host, "usr/lib/sysctl.d/50-hidden.conf", "")
    put(host, "etc/sysctl.d/50-hidden.conf", "")  # hides the /usr/lib one
    put(host, "run/sysctl.d/99-zz.conf", "")
    put(host, "etc/sysctl.conf", "")
    files = places.sysctl_files(host)
    assert files.before == (
        host / "usr/lib/sysctl.d/10-default.conf",
        host / "etc/sysctl.d/50-hidden.conf",
    )
    assert files.own == host / "etc/sysctl.d/99-lens.conf"
    assert files.after == (host / "run/sysctl.d/99-zz.conf", host / "etc/sysctl.conf")
    assert files.all == files.others  # Lens's file does not exist yet
    put(host, "etc/sysctl.d/99-lens.conf", "")
    assert files.all == (*files.before, files.own, *files.after)


def test_nofile_places_start_with_their_main_file(host: Path) -> None:
    put(host, "etc/security/limits.conf", "")
    put(host, "etc/security/limits.d/20-nproc.conf", "")
    put(host, "etc/systemd/system.conf", "")
    limits = places.limits_files(host)
    assert limits.before == (
        host / "etc/security/limits.conf",
        host / "etc/security/limits.d/20-nproc.conf",
    )
    assert limits.own == host / "etc/security/limits.d/99-lens.conf"
    systemd = places.systemd_files(host)
    assert systemd.before == (host / "etc/systemd/system.conf",)
    assert systemd.own == host / "etc/systemd/system.conf.d/99-lens.conf"


def test_containerd_is_its_unit_systemd_picks_and_none_without_one(host: Path) -> None:
    assert places.containerd_files(host) is None
    put(host, "lib/systemd/system/containerd.service", "")
    put(host, "etc/systemd/system/containerd.service", "")
    put(host, "lib/systemd/system/containerd.service.d/10-a.conf", "")
    files = places.containerd_files(host)
    assert files is not None
    assert files.before == (
        host / "etc/systemd/system/containerd.service",
        host / "lib/systemd/system/containerd.service.d/10-a.conf",
    )
    assert files.own == host / "etc/systemd/system/containerd.service.d/99-lens.conf"


def test_the_watched_folders_hold_every_file_a_place_reads(host: Path) -> None:
    for relative in (
        "usr/lib/sysctl.d/10-a.conf",
        "etc/sysctl.conf",
        "etc/security/limits.d/10-a.conf",
        "etc/systemd/system.conf.d/10-a.conf",
        "etc/systemd/system.conf",
        "lib/systemd/system/containerd.service",
        "lib/systemd/system/containerd.service.d/10-a.conf",
    ):
        put(host, relative, "")
    containerd = places.containerd_files(host)
    assert containerd is not None
    read = [
        *places.sysctl_files(host).all,
        *places.limits_files(host).all,
        *places.systemd_files(host).all,
        *containerd.all,
    ]
    folders = set(places.watched_folders(host))
    assert {path.parent for path in read} <= folders
    assert {own.parent for own in (places.sysctl_files(host).own, containerd.own)} <= folders
