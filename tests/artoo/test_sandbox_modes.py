"""Config ``tools.sandbox``: auto, required, off — and a task whose shell command is
judged by its observed effect."""

from __future__ import annotations

import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import artoo
import artoo.system as system_module
from artoo.schemas import ConfirmationRequest, ExecutionResult, ToolCall
from artoo.testing import write_script

from .helpers import all_events, rm_script_entries

NO_NAMESPACES = "the sandbox could not be made: unshare: Operation not permitted"


@pytest.fixture
def no_namespaces(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine where no sandbox can be made (a locked-down container, simulated)."""
    monkeypatch.setattr(system_module, "probe", lambda **_: NO_NAMESPACES)
    monkeypatch.setattr(system_module, "_warned_no_sandbox", False)


def _tool_calls(store: Path) -> list[ToolCall]:
    results = [e.body for e in all_events(store) if isinstance(e.body, ExecutionResult)]
    return [call for r in results for call in r.tool_calls]


def _model(tmp_path: Path) -> str:
    return write_script(tmp_path / "s.toml", rm_script_entries(times=1))


def test_required_without_namespaces_fails_at_open_with_one_clear_line(
    tmp_path: Path, workspace: Path, no_namespaces: None
) -> None:
    with pytest.raises(artoo.SandboxUnavailable) as caught:
        artoo.System.open(
            tmp_path / "store",
            model=_model(tmp_path),
            workspace=workspace,
            config={"tools": {"sandbox": "required"}},
        )
    assert str(caught.value) == f"tools.sandbox is 'required' but {NO_NAMESPACES}"
    assert not (tmp_path / "store").exists()  # refused before anything was created


def test_auto_without_namespaces_falls_back_to_the_parser_with_one_warning(
    tmp_path: Path, workspace: Path, no_namespaces: None
) -> None:
    with pytest.warns(RuntimeWarning, match="no sandbox .* judged by reading them"):
        first = artoo.System.open(tmp_path / "a", model=_model(tmp_path), workspace=workspace)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a second System does not warn again
        second = artoo.System.open(tmp_path / "b", model=_model(tmp_path), workspace=workspace)
    try:
        assert first.sandbox is None and second.sandbox is None
        result = first.submit("delete the old log").result(30)
        first.flush(5)
    finally:
        first.close()
        second.close()
    calls = _tool_calls(tmp_path / "a")
    assert calls and all(not c.sandboxed for c in calls)
    assert calls[0].refusal == "law1_denied"  # the parser read `rm` and asked
    assert result.status == "abandon"
    assert (workspace / "archive" / "old.log").exists()


def test_off_never_probes(tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(**_: object) -> str:
        raise AssertionError("probed")

    monkeypatch.setattr(system_module, "probe", fail)
    with artoo.System.open(
        tmp_path / "store",
        model=_model(tmp_path),
        workspace=workspace,
        config={"tools": {"sandbox": "off"}},
    ) as s:
        assert s.sandbox is None


@pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")
def test_a_task_asks_with_the_exact_effects_observed_in_the_sandbox(
    tmp_path: Path, workspace: Path
) -> None:
    with artoo.System.open(
        tmp_path / "store",
        model=_model(tmp_path),
        workspace=workspace,
        config={"tools": {"sandbox": "required"}},
    ) as s:
        assert s.sandbox is not None
        result = s.submit("delete the old log").result(30)
        s.flush(5)
    events = all_events(tmp_path / "store")
    [request] = [e.body for e in events if isinstance(e.body, ConfirmationRequest)]
    assert [(e.path, e.change) for e in request.effects] == [("archive/old.log", "deleted")]
    assert request.reason.startswith("would delete archive/old.log (")
    [call] = _tool_calls(tmp_path / "store")
    assert call.sandboxed and call.refusal == "law1_denied" and call.effects == request.effects
    assert result.status == "abandon"
    assert (workspace / "archive" / "old.log").exists()


def test_a_config_with_an_unknown_sandbox_mode_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="sandbox"):
        artoo.System.open(tmp_path / "store", config={"tools": {"sandbox": "maybe"}})


@pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")
def test_a_store_inside_the_workspace_is_out_of_every_tools_reach(workspace: Path) -> None:
    """The CLI's default: the store ./.artoo inside the workspace. A command sees it
    empty and cannot write it; file tools refuse it."""
    store = workspace / ".artoo"
    calls = [
        # the name built at run time: the blocked-target check cannot read it, the sandbox
        # hides the store anyway
        {
            "name": "shell",
            "arguments": {"command": 'd="$(printf .art)oo"; ls -A "$d"; echo x > "$d/evil.txt"'},
        },
        {"name": "write_file", "arguments": {"path": ".artoo/events/CURRENT", "content": "x"}},
        {"name": "read_file", "arguments": {"path": ".artoo/events/CURRENT"}},
    ]
    entries = [
        {"role": "perceiver", "content": {"intent": "poke", "kind": "change", "answer": "text"}},
        {"role": "planner", "content": {"subtasks": [{"instruction": "poke the store"}]}},
        {"role": "executor", "tool_calls": calls},
        {"role": "executor", "times": 0, "content": "done"},
    ]
    model = write_script(workspace.parent / "s.toml", entries)
    before = (store / "events" / "CURRENT").read_bytes() if store.exists() else None
    with artoo.System.open(store, model=model, workspace=workspace) as s:
        current = (store / "events" / "CURRENT").read_bytes()
        s.submit("poke the store").result(30)
        s.flush(5)
    assert before is None and (store / "events" / "CURRENT").read_bytes() == current
    assert not (store / "evil.txt").exists()
    shell, write, read = _tool_calls(store)[:3]
    assert shell.effects == () and "Read-only file system" in shell.output_preview
    assert "--- stdout ---" not in shell.output_preview  # ls showed nothing of the store
    assert (write.refusal, read.refusal) == ("blocked_target", "blocked_target")


@pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")
def test_credential_files_in_home_never_reach_the_model_or_the_log(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("aws_secret_access_key = AKIAEXAMPLESECRET\n")
    (home / ".netrc").write_text("machine example.com password hunter2\n")
    monkeypatch.setenv("HOME", str(home))
    calls = [
        {"name": "shell", "arguments": {"command": 'cat "$HOME/.aws/credentials" "$HOME/.netrc"'}},
        {"name": "shell", "arguments": {"command": "cat ~/.netrc"}},
    ]
    entries = [
        {"role": "perceiver", "content": {"intent": "peek", "kind": "question", "answer": "text"}},
        {"role": "planner", "content": {"subtasks": [{"instruction": "read the credentials"}]}},
        {"role": "executor", "tool_calls": calls},
        {"role": "executor", "times": 0, "content": "done"},
    ]
    model = write_script(tmp_path / "s.toml", entries)
    with artoo.System.open(tmp_path / "store", model=model, workspace=workspace) as s:
        s.submit("read the credentials").result(30)
        s.flush(5)
    dynamic, literal = _tool_calls(tmp_path / "store")[:2]
    assert "No such file" in dynamic.output_preview  # hidden: an empty directory
    assert literal.refusal == "blocked_target"  # ~/.netrc named outright: refused
    raw = b"".join(p.read_bytes() for p in (tmp_path / "store").rglob("*") if p.is_file())
    assert b"AKIAEXAMPLESECRET" not in raw and b"hunter2" not in raw


@pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")
def test_reads_by_allowlist_and_limits_come_from_the_config(
    tmp_path: Path, workspace: Path
) -> None:
    """Nothing of the host beyond the system directories unless ``tools.read`` adds it;
    ``tools.limits`` sets what a command may use."""
    extra = tmp_path / "shared.txt"
    extra.write_text("shared notes\n")
    other = tmp_path / "other.txt"
    other.write_text("not shared\n")
    config = {"tools": {"read": [str(extra)], "limits": {"processes": 64, "write_mb": 8}}}
    with artoo.System.open(
        tmp_path / "store", model=_model(tmp_path), workspace=workspace, config=config
    ) as s:
        box = s.sandbox
        assert box is not None and box.read == (extra.resolve(),)
        assert (box.limits.processes, box.limits.write_bytes) == (64, 8 << 20)
        run = box.run(
            f"cat {extra} {other}; ulimit -u", workspace, 10.0, 10_000, {"PATH": "/usr/bin:/bin"}
        )
        run.discard()
    assert "shared notes" in run.run.stdout and "not shared" not in run.run.stdout
    assert run.run.stdout.strip().endswith("64")


@pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_s_configuration_through_any_tool_asks_and_is_denied_without_an_operator(
    tmp_path: Path, workspace: Path
) -> None:
    """A whole task with no operator: ``write_file`` of ``.git/config``, then a shell
    ``diff.external``, a gitdir file and a chained link out — each a ConfirmationRequest
    saying why, each denied, nothing of them in the workspace."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=workspace, check=True)
    config = (workspace / ".git" / "config").read_bytes()
    planted = config.decode() + "[diff]\n\texternal = touch x\n"  # no line of it lost
    calls = [
        {"name": "write_file", "arguments": {"path": ".git/config", "content": planted}},
        {"name": "shell", "arguments": {"command": "git config diff.external 'touch x'"}},
        {"name": "shell", "arguments": {"command": "mkdir -p w && echo 'gitdir: /x' > w/.git"}},
        {"name": "shell", "arguments": {"command": "ln -s . s && ln -s s/.. up"}},
    ]
    entries = [
        {
            "role": "perceiver",
            "content": {"intent": "set git up", "kind": "change", "answer": "text"},
        },
        {"role": "planner", "content": {"subtasks": [{"instruction": "set git up"}]}},
        {"role": "executor", "tool_calls": calls},
        {"role": "executor", "times": 0, "content": "done"},
    ]
    model = write_script(tmp_path / "s.toml", entries)
    with artoo.System.open(
        tmp_path / "store",
        model=model,
        workspace=workspace,
        config={"tools": {"sandbox": "required"}},
    ) as s:
        s.submit("set git up").result(60)
        s.flush(5)
    requests = [
        e.body for e in all_events(tmp_path / "store") if isinstance(e.body, ConfirmationRequest)
    ]
    reasons = [r.reason for r in requests[:4]]
    assert len(reasons) == 4, reasons
    assert "in a .git directory" in reasons[0] and "in a .git directory" in reasons[1]
    assert "a .git that is not a directory" in reasons[2]
    assert "leads out of the workspace" in reasons[3]
    calls_made = _tool_calls(tmp_path / "store")[:4]
    assert [c.refusal for c in calls_made] == ["law1_denied"] * 4
    assert (workspace / ".git" / "config").read_bytes() == config
    assert not (workspace / "w").exists() and not (workspace / "up").is_symlink()
