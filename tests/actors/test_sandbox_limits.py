"""The sandbox's limits, planted code, and an apply that holds: a command that exhausts a
limit leaves the host running and returns within its timeout + 2 s with nothing of it
applied; code the host may run later asks; an approval applies exactly what was
observed, all or nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from artoo.actors.tools import ConfirmationNeeded, Sandbox, ToolRegistry, _cgroup, probe
from artoo.actors.tools._apply import ApplyFailed, apply
from artoo.actors.tools._observe import _line_counts, hazard_of
from artoo.actors.tools._sandbox import Limits
from artoo.schemas import ToolsConfig

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")
DEFAULT_TIMEOUT = ToolsConfig().shell_timeout_s


class _Operator:
    def __init__(self, answer: bool, before: object = None) -> None:
        self.answer = answer
        self.before = before
        self.requests: list[ConfirmationNeeded] = []

    def __call__(self, request: ConfirmationNeeded) -> bool:
        self.requests.append(request)
        if callable(self.before):
            self.before()
        return self.answer


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    assert probe() is None
    return Sandbox()


def _ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    return ws


def _listing(ws: Path) -> list[str]:
    return sorted(str(p.relative_to(ws)) for p in ws.rglob("*"))


def _timed(tools: ToolRegistry, command: str) -> tuple[float, object]:
    start = time.monotonic()
    outcome = tools.call("shell", {"command": command})
    return time.monotonic() - start, outcome


def _host_runs() -> bool:
    return subprocess.run(["true"], timeout=5).returncode == 0


# --------------------------------------------------------------------------- limits
@pytest.mark.slow
def test_a_fork_bomb_is_contained_and_nothing_of_it_applied(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    ws = _ws(tmp_path)
    tools = ToolRegistry(ws, tmp_path / "spill", sandbox=sandbox, shell_timeout_s=3)
    bomb = (
        "echo x > made.txt; python3 -c 'import os\nwhile True:\n try: os.fork()\n"
        " except OSError: pass'"
    )
    took, outcome = _timed(tools, bomb)
    assert took < 3 + 2
    assert not outcome.call.ok and "discarded" in outcome.output  # type: ignore[attr-defined]
    assert _listing(ws) == ["a.txt"] and _host_runs()


@pytest.mark.slow
def test_a_memory_bomb_stops_at_the_limit(sandbox: Sandbox, tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    tools = ToolRegistry(ws, tmp_path / "spill", sandbox=sandbox, shell_timeout_s=DEFAULT_TIMEOUT)
    took, outcome = _timed(
        tools,
        "head -c 2G /dev/zero > /dev/shm/fill; ls -s /dev/shm/fill; "
        "python3 -c 'a = []\nwhile True: a.append(bytearray(10**8))'",
    )
    assert took < DEFAULT_TIMEOUT + 2
    output = outcome.output  # type: ignore[attr-defined]
    assert "MemoryError" in output or "killed by a limit (SIGKILL)" in output  # rlimit, cgroup
    assert "No space left on device" in output
    assert _listing(ws) == ["a.txt"] and _host_runs()


@pytest.mark.skipif(
    not any("memory" in c for _, _, c in _cgroup.usable()),
    reason="no memory cgroup this process may make children in",
)
def test_processes_together_stay_under_the_memory_limit(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    box = Sandbox(limits=Limits(memory_bytes=512 << 20))
    run = box.run(
        "for i in 1 2 3; do python3 -c 'a = bytearray(3 * 10**8); import time; "
        'time.sleep(1); print("alive")\' & done; wait',
        ws,
        10.0,
        10_000,
        {"PATH": "/usr/bin:/bin"},
    )
    run.discard()
    assert run.run.stdout.count("alive") < 3 and "Killed" in run.run.stderr


@pytest.mark.slow
def test_a_3_gb_file_is_cut_at_the_limit_and_asks(sandbox: Sandbox, tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    operator = _Operator(False)
    tools = ToolRegistry(
        ws, tmp_path / "spill", confirm=operator, sandbox=sandbox, shell_timeout_s=DEFAULT_TIMEOUT
    )
    took, _ = _timed(tools, "head -c 3G /dev/zero > big")
    assert took < DEFAULT_TIMEOUT + 2
    [request] = operator.requests
    assert [e.hazard for e in request.effects if e.hazard] == ["volume"]
    assert _listing(ws) == ["a.txt"] and _host_runs()


@pytest.mark.slow
def test_100000_files_ask_and_are_not_applied_when_denied(sandbox: Sandbox, tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    operator = _Operator(False)
    tools = ToolRegistry(
        ws, tmp_path / "spill", confirm=operator, sandbox=sandbox, shell_timeout_s=DEFAULT_TIMEOUT
    )
    took, outcome = _timed(tools, "mkdir d && cd d && seq 100000 | xargs touch")
    assert took < DEFAULT_TIMEOUT + 2
    [request] = operator.requests
    assert request.effects[-1].hazard == "volume"
    assert request.effects[-1].summary.startswith("100,001 paths")
    assert outcome.call.refusal == "law1_denied"  # type: ignore[attr-defined]
    assert _listing(ws) == ["a.txt"]


def test_a_command_killed_by_its_timeout_has_nothing_applied(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    ws = _ws(tmp_path)
    tools = ToolRegistry(ws, tmp_path / "spill", sandbox=sandbox, shell_timeout_s=1)
    took, outcome = _timed(tools, "echo x > new.txt; mkdir made; sleep 30")
    assert took < 1 + 2
    assert "killed by its timeout; its changes were discarded" in outcome.output  # type: ignore[attr-defined]
    assert _listing(ws) == ["a.txt"]


# --------------------------------------------------------------------------- planted code
@pytest.mark.parametrize(
    ("command", "path", "hazard"),
    [
        (
            "mkdir -p .git/hooks && printf '#!/bin/sh\\necho hi\\n' > .git/hooks/pre-commit "
            "&& chmod 755 .git/hooks/pre-commit",
            ".git/hooks/pre-commit",
            "hook",
        ),
        ("echo 'echo hi' > .envrc", ".envrc", "startup"),
        ("echo 'import os' > sitecustomize.py", "sitecustomize.py", "startup"),
        ("echo 'import os' > evil.pth", "evil.pth", "startup"),
        ("mkdir .vscode && echo '{}' > .vscode/tasks.json", ".vscode/tasks.json", "editor"),
        ("mkdir .vscode && echo '{}' > .vscode/settings.json", ".vscode/settings.json", "editor"),
        (
            "mkdir -p .github/workflows && echo 'on: push' > .github/workflows/x.yml",
            ".github/workflows/x.yml",
            "ci",
        ),
        ("echo 'echo hi' > run.sh && chmod +x run.sh", "run.sh", "executable"),
        ("chmod +x a.txt", "a.txt", "executable"),
        ("echo 'echo hi' >> .bashrc", ".bashrc", "startup"),
        ("git init -q . && git config core.fsmonitor 'touch x'", ".git/config", "hook"),
        ("ln -s /etc/passwd p", "p", "link"),
    ],
)
def test_planted_code_asks_with_its_hazard(
    sandbox: Sandbox, tmp_path: Path, command: str, path: str, hazard: str
) -> None:
    ws = _ws(tmp_path)
    operator = _Operator(False)
    tools = ToolRegistry(ws, tmp_path / "spill", confirm=operator, sandbox=sandbox)
    outcome = tools.call("shell", {"command": command})
    assert outcome.call.refusal == "law1_denied", outcome.content
    [request] = operator.requests
    hazards = {(e.path, e.hazard) for e in request.effects if e.hazard}
    if path.startswith(".git/"):  # everything in the new .git directory asks, itself first
        assert (path, hazard) in hazards and {h for _, h in hazards} == {hazard}
        assert request.target == ".git" and "in a .git directory" in request.reason
    else:
        assert hazards == {(path, hazard)}
        assert request.target == path and path in request.reason
    assert _listing(ws) == ["a.txt"] and not os.access(ws / "a.txt", os.X_OK)


def test_project_files_are_only_creations_and_a_new_repository_asks(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """A Makefile, a conftest.py: run only when someone runs the project's build or
    tests, like any of its source; they do not ask. A ``git init`` does: everything in a
    ``.git`` directory is git's to read and run (its configuration, its hooks)."""
    ws = _ws(tmp_path)
    operator = _Operator(False)
    tools = ToolRegistry(ws, tmp_path / "spill", confirm=operator, sandbox=sandbox)
    outcome = tools.call(
        "shell", {"command": "printf 'all:\\n\\ttrue\\n' > Makefile; echo x > conftest.py"}
    )
    assert outcome.call.ok and operator.requests == [], outcome.content
    assert (ws / "Makefile").exists()
    outcome = tools.call("shell", {"command": "git init -q ."})
    assert outcome.call.refusal == "law1_denied"
    [request] = operator.requests
    assert request.target == ".git" and "in a .git directory" in request.reason
    assert not (ws / ".git").exists()


def test_hazards_are_read_from_the_path_and_mode() -> None:
    assert hazard_of(".git/hooks/post-checkout") == "hook"
    assert hazard_of("sub/.git/hooks/pre-push.sample", 0o100755) == "hook"
    assert hazard_of("pkg/usercustomize.py") == "startup"
    assert hazard_of(".idea/workspace.xml") == "editor"
    assert hazard_of("src/app.py", 0o100644) is None
    assert hazard_of("src/app.py", 0o100700) == "executable"
    assert hazard_of("Makefile") is None
    assert hazard_of(".ssh/authorized_keys") == "startup"
    assert hazard_of(".config/autostart/x.desktop") == "startup"


# --------------------------------------------------------------------------- apply
def test_an_approved_rm_rf_does_not_delete_a_file_added_while_deciding(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    ws = _ws(tmp_path)
    (ws / "d" / "sub").mkdir(parents=True)
    (ws / "d" / "sub" / "old.txt").write_text("old\n")
    operator = _Operator(True, before=lambda: (ws / "d" / "sub" / "new.txt").write_text("new\n"))
    tools = ToolRegistry(ws, tmp_path / "spill", confirm=operator, sandbox=sandbox)
    outcome = tools.call("shell", {"command": "rm -rf d"})
    assert not outcome.call.ok and "changed since the command ran" in outcome.content
    assert (ws / "d" / "sub" / "new.txt").read_text() == "new\n"
    assert (ws / "d" / "sub" / "old.txt").read_text() == "old\n"


def test_an_apply_that_fails_midway_leaves_the_workspace_as_it_was(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    ws = _ws(tmp_path)
    (ws / "b").mkdir()
    (ws / "b" / "keep.txt").write_text("keep\n")
    (tmp_path / "elsewhere").mkdir()

    def swap() -> None:  # the directory becomes a symlink while the operator decides
        (ws / "b").rename(tmp_path / "b-moved")
        (ws / "b").symlink_to(tmp_path / "elsewhere")

    operator = _Operator(True, before=swap)
    tools = ToolRegistry(ws, tmp_path / "spill", confirm=operator, sandbox=sandbox)
    outcome = tools.call("shell", {"command": "rm a.txt; echo new > b/x.txt"})
    assert not outcome.call.ok
    assert "nothing applied" in outcome.content
    assert (ws / "a.txt").read_text() == "a\n"  # removed first, then restored
    assert not (tmp_path / "elsewhere" / "x.txt").exists()
    assert sorted(p.name for p in ws.iterdir()) == ["a.txt", "b"]


def test_an_approved_command_reports_and_applies_exactly_its_effects(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    ws = _ws(tmp_path)
    tools = ToolRegistry(ws, tmp_path / "spill", confirm=_Operator(True), sandbox=sandbox)
    outcome = tools.call("shell", {"command": "echo b > a.txt; mkdir n; echo c > n/c.txt"})
    assert outcome.call.ok
    assert [(e.path, e.change) for e in outcome.call.effects] == [
        ("a.txt", "modified"),
        ("n", "created"),
        ("n/c.txt", "created"),
    ]
    assert (ws / "a.txt").read_text() == "b\n" and (ws / "n" / "c.txt").read_text() == "c\n"
    assert not [p for p in ws.iterdir() if ".artoo-" in p.name]  # nothing set aside is left


def test_an_approval_given_after_the_deadline_is_still_applied(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    ws = _ws(tmp_path)
    box = sandbox.run("echo b > a.txt", ws, 5.0, 10_000, {"PATH": os.defpath})
    try:
        box.deadline = time.monotonic() - 60  # the operator took a minute to decide
        assert box.apply(confirmed=True) == ("a.txt",)
    finally:
        box.discard()
    assert (ws / "a.txt").read_text() == "b\n"


def test_an_apply_past_its_deadline_undoes_everything(sandbox: Sandbox, tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    box = sandbox.run("rm a.txt; echo n > new.txt", ws, 5.0, 10_000, {"PATH": os.defpath})
    try:
        with pytest.raises(ApplyFailed, match="nothing applied"):
            apply(box.observed, ws, deadline=time.monotonic() - 1)
    finally:
        box.discard()
    assert _listing(ws) == ["a.txt"]


# --------------------------------------------------------------------------- diff summary
def test_one_changed_line_in_a_long_file_is_one_line_and_quick(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    ws = _ws(tmp_path)
    (ws / "long.txt").write_text("a\n" * 12_000)  # 24 KB
    operator = _Operator(False)
    tools = ToolRegistry(
        ws, tmp_path / "spill", confirm=operator, sandbox=sandbox, shell_timeout_s=2
    )
    took, _ = _timed(tools, "sed -i 6000s/a/b/ long.txt")
    [request] = operator.requests
    assert request.effects[0].summary == "+1 -1 lines, 24,000 -> 24,000 bytes"
    assert took < 2


def test_a_large_shuffled_middle_is_counted_in_linear_time() -> None:
    old = [f"line {i}" for i in range(40_000)]
    new = list(reversed(old))
    start = time.monotonic()
    assert _line_counts("\n".join(old).encode(), "\n".join(new).encode()) == "+0 -0 lines"
    assert time.monotonic() - start < 2


@given(st.lists(st.sampled_from("abc"), max_size=30), st.lists(st.sampled_from("abc"), max_size=30))
def test_line_counts_account_for_every_line(old: list[str], new: list[str]) -> None:
    counts = _line_counts("\n".join(old).encode(), "\n".join(new).encode())
    assert counts is not None
    plus, minus = counts.removesuffix(" lines").split()
    added, removed = int(plus), -int(minus)
    assert added - removed == len(new) - len(old)
    assert 0 <= added <= len(new) and 0 <= removed <= len(old)
    assert (added == removed == 0) == (old == new)


# --------------------------------------------------------------------------- edges
def test_a_file_name_that_is_not_utf8_is_logged_escaped_and_applied(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    ws = _ws(tmp_path)
    tools = ToolRegistry(ws, tmp_path / "spill", sandbox=sandbox)
    outcome = tools.call("shell", {"command": "touch $'bad\\xff.txt'"})
    assert outcome.call.ok, outcome.content
    assert [e.path for e in outcome.call.effects] == ["bad\\xff.txt"]
    assert os.path.exists(os.fsencode(ws) + b"/bad\xff.txt")
    msgspec.msgpack.encode(outcome.call)  # the record can be logged


def test_a_600_level_deep_tree_is_observed_and_applied(sandbox: Sandbox, tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    tools = ToolRegistry(ws, tmp_path / "spill", sandbox=sandbox)
    outcome = tools.call(
        "shell", {"command": "mkdir -p $(printf 'd/%.0s' $(seq 600)) && echo made"}
    )
    assert outcome.call.ok and "made" in outcome.output, outcome.content
    assert (ws / Path(*["d"] * 600)).is_dir()


@pytest.mark.skipif(os.getuid() != 0, reason="only root drops to UID_BASE before bwrap")
def test_a_bwrap_the_dropped_id_cannot_reach_is_run_from_a_copy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from artoo.actors.tools import _sandbox as sandbox_module

    monkeypatch.setattr(sandbox_module, "_searchable", lambda path: False)
    copy = sandbox_module.bwrap_for.__wrapped__(0)
    assert copy != sandbox_module.bwrap_path()
    ids = str(sandbox_module.UID_BASE)
    version = subprocess.run(
        ["setpriv", f"--reuid={ids}", f"--regid={ids}", "--clear-groups", copy, "--version"],
        capture_output=True,
        text=True,
    )
    assert version.stdout.startswith("bubblewrap "), version.stderr
