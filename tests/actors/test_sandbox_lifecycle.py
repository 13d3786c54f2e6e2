"""A sandboxed command ends when everything it started has ended (issue 41): the
scenarios of ``sandbox_lifecycle`` as the user running the tests and as an unprivileged
user; the cgroup layouts the sandbox meets (v2, v1, hybrid, none) read and used."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from artoo.actors.tools import Sandbox, _cgroup, probe
from artoo.actors.tools._sandbox import Limits

from . import sandbox_lifecycle
from .unprivileged import as_nobody

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")

SCENARIOS = [
    "survivors",
    "environment",
    "neighbour_of_a_fork_bomb",
    "init_memory",
    "host_killed",
    "server_killed",
]


@pytest.mark.slow
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_as_the_user_running_the_tests(scenario: str, tmp_path: Path) -> None:
    assert probe() is None
    run: Callable[[Path], dict[str, object]] = getattr(sandbox_lifecycle, scenario)
    assert run(tmp_path)["failures"] == []


@pytest.mark.slow
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_as_an_unprivileged_user(scenario: str) -> None:
    result = as_nobody(f"sandbox_lifecycle:{scenario}")
    assert isinstance(result, dict)
    assert result["failures"] == []


# --------------------------------------------------------------------------- layouts
HYBRID_MOUNTS = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
HYBRID_MEMBERSHIP = """\
9:name=systemd:/
8:pids:/
6:freezer:/
4:memory:/process_api/32ed
2:cpu,cpuacct:/
0::/
"""
V2_MOUNTS = "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n"
V2_SCOPE = "/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope"
V2_MEMBERSHIP = f"0::{V2_SCOPE}\n"


def test_a_hybrid_layout_names_the_v2_group_and_each_v1_hierarchy_used() -> None:
    assert _cgroup.places(HYBRID_MOUNTS, HYBRID_MEMBERSHIP) == [
        (1, "/sys/fs/cgroup/pids/", frozenset({"pids"})),
        (1, "/sys/fs/cgroup/freezer/", frozenset({"freezer"})),
        (1, "/sys/fs/cgroup/memory/process_api/32ed", frozenset({"memory"})),
        (2, "/sys/fs/cgroup/unified/", frozenset()),
    ]


def test_a_pure_v2_layout_is_the_process_own_cgroup_where_it_is_mounted() -> None:
    assert _cgroup.places(V2_MOUNTS, V2_MEMBERSHIP) == [
        (2, f"/sys/fs/cgroup{V2_SCOPE}", frozenset())
    ]


def test_a_namespaced_mount_root_and_a_missing_hierarchy_are_read_right() -> None:
    mounts = "50 40 0:26 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n"
    assert _cgroup.places(mounts, "0::/docker/abc/inner\n") == [
        (2, "/sys/fs/cgroup/inner", frozenset())
    ]
    assert _cgroup.places(mounts, "0::/elsewhere\n") == []
    assert _cgroup.places("", HYBRID_MEMBERSHIP) == []


def _usable_as_root(versions: set[int]) -> list[tuple[int, str, frozenset[str]]]:
    if os.getuid() != 0:
        pytest.skip("making cgroups needs root here (no delegation)")
    found = [p for p in _cgroup.usable() if p[0] in versions]
    if not found:
        pytest.skip(f"no writable cgroup v{versions} here")
    return found


@pytest.fixture
def layout(request: pytest.FixtureRequest) -> Iterator[str]:
    """The sandbox as it runs where the host offers only one layout of cgroups."""
    versions = {"v2 only": {2}, "v1 only": {1}, "none": set()}[request.param]
    if versions:
        _usable_as_root(versions)
    saved = _cgroup.usable()
    _cgroup._discovered = [p for p in saved if p[0] in versions]
    try:
        yield request.param
    finally:
        _cgroup._discovered = saved


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["v2 only", "v1 only", "none"], indirect=True)
def test_each_cgroup_layout_ends_every_process_and_limits_the_count(
    layout: str, tmp_path: Path
) -> None:
    assert sandbox_lifecycle.survivors(tmp_path / "s")["failures"] == []
    ws = tmp_path / "ws"
    ws.mkdir()
    bomb = (
        "python3 -c 'import os, time\nn = 0\nwhile True:\n try:\n  if os.fork() == 0:\n"
        "   time.sleep(30)\n   os._exit(0)\n  n += 1\n except OSError:\n  break\nprint(n)'"
    )
    run = Sandbox(limits=Limits(processes=16)).run(bomb, ws, 20.0, 10_000, {"PATH": "/usr/bin"})
    run.discard()
    assert 5 < int(run.run.stdout) <= 16
    assert sandbox_lifecycle.cgroups_of(os.getpid()) == []


def _tree_in(group: str) -> subprocess.Popen[bytes]:
    """A shell with two children of its own, started in ``group``."""

    def join() -> None:
        with open(os.path.join(group, "cgroup.procs"), "w") as f:
            f.write("0")

    return subprocess.Popen(
        ["sh", "-c", "sleep 300 & sleep 300 & wait"], preexec_fn=join, start_new_session=True
    )


@pytest.mark.parametrize("version", [2, 1])
def test_ending_a_group_kills_every_member_and_removes_it(version: int) -> None:
    places = _usable_as_root({version})
    groups = [
        os.path.join(parent, f"{_cgroup.PREFIX}{os.getpid()}-test-{version}")
        for _, parent, controllers in places
        if version == 2 or "freezer" in controllers
    ][:1]
    if not groups:
        pytest.skip("no freezer hierarchy to make a v1 group in")
    os.mkdir(groups[0])
    try:
        tree = _tree_in(groups[0])
        assert sandbox_lifecycle._until(lambda: len(_cgroup._procs(groups[0])) == 3, 10)
        assert _cgroup.end_group(groups, time.monotonic() + 5.0)
        assert tree.wait(timeout=5) == -9
        assert _cgroup._procs(groups[0]) == []
    finally:
        assert _cgroup.remove_groups(groups) == []


def test_an_orphaned_group_is_swept_and_a_live_owner_is_left_alone() -> None:
    places = _usable_as_root({1, 2})
    parent = places[0][1]
    dead = os.path.join(parent, f"{_cgroup.PREFIX}{2**22 + 1}-0-deadbeef")  # over pid_max
    me = f"{os.getpid()}-{_cgroup.start_time(os.getpid())}"
    live = os.path.join(parent, f"{_cgroup.PREFIX}{me}-x")
    os.mkdir(dead)
    os.mkdir(live)
    try:
        _cgroup.sweep(parent)
        assert not os.path.exists(dead)
        assert os.path.exists(live)
    finally:
        _cgroup.remove_groups([dead, live])
