"""What a sandboxed command is judged by is what is applied (issue 41): the upper layer
read as the sandbox's user with no link followed, one hazard check for every tool (git's
layout by place, never by words), symlinks judged by where they resolve, blocked targets
checked on every path, host-side work bounded by the call's deadline, and the
before-images an apply makes available. The same attempts run as an unprivileged user in
``test_sandbox_escapes.py`` (``sandbox_corpus.APPLY_ATTACKS``, ``run_swaps``,
``run_probes``)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

from artoo.actors.tools import (
    Changes,
    ConfirmationNeeded,
    Sandbox,
    ToolRegistry,
    probe,
)
from artoo.actors.tools._apply import ApplyFailed, settle
from artoo.actors.tools._fs import open_dir, remove_at
from artoo.actors.tools._observe import INDEX_LIMIT, observe
from artoo.actors.tools._sandbox import UID_BASE

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")
REPO = Path(__file__).resolve().parents[2]
MISSING = "tests/actors/test_missing_command.py"


class _Operator:
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.requests: list[ConfirmationNeeded] = []

    def __call__(self, request: ConfirmationNeeded) -> bool:
        self.requests.append(request)
        return self.answer


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    assert probe() is None
    return Sandbox()


def _snapshot(root: Path) -> dict[str, tuple[str, int, bytes]]:
    out: dict[str, tuple[str, int, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            full = Path(dirpath) / name
            st = os.lstat(full)
            rel = str(full.relative_to(root))
            if full.is_symlink():
                out[rel] = ("link", 0, os.readlink(full).encode())
            elif full.is_dir():
                out[rel] = ("dir", st.st_mode & 0o7777, b"")
            else:
                out[rel] = ("file", st.st_mode & 0o7777, full.read_bytes())
    return out


def _git_ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=ws, check=True)
    subprocess.run([*git, "add", "-A"], cwd=ws, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=ws, check=True)
    return ws


def _timed(tools: ToolRegistry, name: str, args: dict[str, object]) -> tuple[float, object]:
    start = time.monotonic()
    outcome = tools.call(name, args)
    return time.monotonic() - start, outcome


# =========================================================================== one gate
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@needs_git
@pytest.mark.parametrize(
    ("path", "content", "why"),
    [
        (".git/config", "[diff]\n\texternal = touch pwned\n", "in a .git directory"),
        (".git/config.worktree", "[core]\n\tpager = touch pwned\n", "in a .git directory"),
        (".git/info/attributes", "* diff=x\n", "in a .git directory"),
        (".gitattributes", "* filter=x\n", "git attributes"),
        (".gitmodules", '[submodule "x"]\n\tpath = x\n', "git submodules"),
        ("sub/.git", "gitdir: /elsewhere\n", "a .git that is not a directory"),
        (".Git/config", "[core]\n\tfsmonitor = x\n", "in a .git directory"),
    ],
)
def test_write_file_of_git_s_files_asks_with_the_reason(
    tmp_path: Path, path: str, content: str, why: str
) -> None:
    ws = _git_ws(tmp_path)
    before = _snapshot(ws)
    operator = _Operator(False)
    outcome = ToolRegistry(ws, tmp_path / "spill", confirm=operator).call(
        "write_file", {"path": path, "content": content}
    )
    assert outcome.call.refusal == "law1_denied"
    [request] = operator.requests
    assert request.target == path and why in request.reason
    assert outcome.call.law1[0].ask and why in outcome.call.law1[0].reason
    assert _snapshot(ws) == before


@needs_git
def test_write_file_into_a_directory_laid_out_as_a_repository_asks(tmp_path: Path) -> None:
    ws = _git_ws(tmp_path)
    for sub in ("bare/refs", "bare/objects"):
        (ws / sub).mkdir(parents=True)
    operator = _Operator(False)
    tools = ToolRegistry(ws, tmp_path / "spill", confirm=operator)
    outcome = tools.call("write_file", {"path": "bare/HEAD", "content": "ref: refs/heads/x\n"})
    assert outcome.call.refusal == "law1_denied"
    assert "laid out as a git repository" in operator.requests[0].reason
    assert tools.call("write_file", {"path": "notes/plain.txt", "content": "x"}).call.ok


@needs_git
@pytest.mark.parametrize(
    ("command", "path", "why"),
    [
        ("git config diff.external 'touch pwned'", ".git/config", "in a .git directory"),
        (
            "git config extensions.worktreeConfig true && "
            "git config --worktree core.pager 'touch pwned'",
            ".git/config",
            "in a .git directory",
        ),
        ("mkdir sub && echo 'gitdir: /tmp/x' > sub/.git", "sub/.git", "not a directory"),
        ("echo '* filter=evil' > .gitattributes", ".gitattributes", "git attributes"),
        ("echo '[submodule \"x\"]' > .gitmodules", ".gitmodules", "git submodules"),
        (
            "mkdir -p bare/refs bare/objects && echo 'ref: refs/heads/x' > bare/HEAD "
            "&& echo '[core]' > bare/config",
            "bare/config",
            "laid out as a git repository",
        ),
        ("mkfifo .git/hooks/pre-commit", ".git/hooks/pre-commit", "in a .git directory"),
    ],
)
def test_a_command_that_changes_git_s_layout_asks_with_the_reason(
    sandbox: Sandbox, tmp_path: Path, command: str, path: str, why: str
) -> None:
    ws = _git_ws(tmp_path)
    before = _snapshot(ws)
    operator = _Operator(False)
    outcome = ToolRegistry(ws, tmp_path / "spill", confirm=operator, sandbox=sandbox).call(
        "shell", {"command": command}
    )
    assert outcome.call.refusal == "law1_denied", outcome.content
    [request] = operator.requests
    flagged = {e.path: e for e in request.effects if e.hazard == "hook"}
    assert path in flagged and why in flagged[path].summary
    assert _snapshot(ws) == before


def test_a_host_tool_naming_a_hazardous_path_asks(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    done: list[str] = []

    def touch(path: str) -> str:
        """Touch a file.

        Args:
            path: the file.
        """
        done.append(path)
        return "ok"

    operator = _Operator(False)
    tools = ToolRegistry(ws, tmp_path / "spill", confirm=operator)
    tools.register(touch)
    refused = tools.call("touch", {"path": ".git/hooks/pre-commit"})
    assert refused.call.refusal == "law1_denied" and done == []
    assert "named by the host tool touch" in operator.requests[0].reason
    assert tools.call("touch", {"path": "notes.txt"}).call.ok and done == ["notes.txt"]


# =========================================================================== symlinks
def test_links_are_judged_by_where_they_resolve_chained(sandbox: Sandbox, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    operator = _Operator(False)
    tools = ToolRegistry(ws, tmp_path / "spill", confirm=operator, sandbox=sandbox)
    outcome = tools.call("shell", {"command": "ln -s . s && ln -s s/.. up"})
    assert outcome.call.refusal == "law1_denied"
    hazards = {e.path: e.summary for e in operator.requests[0].effects if e.hazard == "link"}
    assert "leads out of the workspace" in hazards["up"]  # lexically "s/.." is "."
    assert "a directory that holds it" in hazards["s"]
    assert sorted(os.listdir(ws)) == []


def test_a_link_through_an_existing_link_is_resolved_with_it(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "s").symlink_to(".")  # already there (the user's)
    operator = _Operator(False)
    tools = ToolRegistry(ws, tmp_path / "spill", confirm=operator, sandbox=sandbox)
    assert tools.call("shell", {"command": "ln -s s/.. up"}).call.refusal == "law1_denied"
    assert not (ws / "up").is_symlink()
    inside = f"mkdir -p d e && echo x > d/t && ln -s {ws}/d/t abs && ln -s ../d/t e/rel"
    ok = tools.call("shell", {"command": inside})
    assert ok.call.ok and operator.requests[1:] == [], ok.content  # inside: applied unasked
    assert os.readlink(ws / "abs") == f"{ws}/d/t" and (ws / "e" / "rel").read_text() == "x\n"


def test_a_file_tool_does_not_tell_whether_a_host_file_exists(tmp_path: Path) -> None:
    from .sandbox_corpus import run_probes

    assert run_probes(tmp_path)["failures"] == []


# =========================================================================== blocked targets
def test_a_blocked_target_written_after_1000_other_effects_is_refused(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    tools = ToolRegistry(ws, tmp_path / "spill", sandbox=sandbox, blocked_targets=("zz",))
    outcome = tools.call(
        "shell", {"command": "touch f{0001..1100}; d=z; mkdir $d$d && echo x > $d$d/secret"}
    )
    assert outcome.call.refusal == "blocked_target", outcome.content
    assert "zz" in (outcome.call.error or "")
    assert os.listdir(ws) == []


# =========================================================================== bounds
@needs_git
def test_a_256_mib_git_index_asks_within_the_timeout_and_is_not_parsed(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    ws = _git_ws(tmp_path)
    before = _snapshot(ws)
    operator = _Operator(False)
    tools = ToolRegistry(
        ws, tmp_path / "spill", confirm=operator, sandbox=sandbox, shell_timeout_s=10
    )
    script = (
        "f = open('.git/index', 'r+b'); f.seek(8); f.write((9999999).to_bytes(4, 'big'));"
        " f.truncate(256 << 20)"
    )
    took, outcome = _timed(tools, "shell", {"command": f'python3 -c "{script}"'})
    assert took <= 10 + 2  # the contract: the call ends within its timeout + 2 s
    assert outcome.call.refusal == "law1_denied"  # type: ignore[attr-defined]
    [index] = [e for e in operator.requests[0].effects if e.path == ".git/index"]
    assert index.hazard == "hook" and f"over {INDEX_LIMIT >> 20} MiB" in index.summary
    assert _snapshot(ws) == before


def test_observing_a_256_mib_index_keeps_memory_bounded(tmp_path: Path) -> None:
    """In a fresh process: the index is hashed in pieces, not parsed whole (it was +560
    MiB)."""
    code = (
        "import json, os, resource, sys\n"
        f"sys.path.insert(0, {str(REPO)!r})\n"
        "from pathlib import Path\n"
        "from artoo.actors.tools._observe import observe\n"
        f"base = Path({str(tmp_path)!r})\n"
        "for side in ('lower', 'upper'):\n"
        "    (base / side / '.git').mkdir(parents=True)\n"
        "(base / 'lower' / '.git' / 'index').write_bytes(b'DIRC' + bytes(8))\n"
        "with open(base / 'upper' / '.git' / 'index', 'wb') as f:\n"
        "    f.write(b'DIRC' + (2).to_bytes(4, 'big') + (9999999).to_bytes(4, 'big'))\n"
        "    f.truncate(256 << 20)\n"
        "start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "seen = observe(base / 'upper', base / 'lower')\n"
        "grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - start\n"
        "print(json.dumps([grew, [(e.path, e.hazard) for e in seen.effects]]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    grew_kib, effects = json.loads(result.stdout)
    assert effects == [[".git/index", "hook"]]
    assert grew_kib < 64 * 1024  # far below the index's 256 MiB


def test_1900_nested_directories_apply_within_the_timeout(sandbox: Sandbox, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    tools = ToolRegistry(ws, tmp_path / "spill", sandbox=sandbox, shell_timeout_s=5)
    deep = "dddddddddd/" * 1900  # 20,900 bytes: five times PATH_MAX
    took, outcome = _timed(tools, "shell", {"command": f"mkdir -p {deep}"})
    assert took <= 5 + 2
    assert outcome.call.ok, outcome.content  # type: ignore[attr-defined]
    fd = os.open(ws, os.O_RDONLY)
    for _ in range(1900):
        fd, old = os.open("dddddddddd", os.O_RDONLY, dir_fd=fd), fd
        os.close(old)
    assert os.listdir(fd) == []
    os.close(fd)
    root = open_dir(ws)
    try:  # pytest's own clean-up of old temporary directories recurses: not this deep
        remove_at(root, "dddddddddd")
    finally:
        os.close(root)


def test_a_deep_apply_that_fails_at_its_end_is_undone_within_the_timeout(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "keep.txt").write_text("keep\n")
    before = _snapshot(ws)
    start = time.monotonic()
    box = sandbox.run(
        f"rm keep.txt; mkdir -p {'d/' * 1900} && echo judged > {'d/' * 1900}z",
        ws,
        5.0,
        10_000,
        {"PATH": "/usr/bin:/bin"},
    )
    try:
        deep = Path(f"/proc/self/fd/{box._fd}/upper")
        fd = os.open(deep, os.O_RDONLY)
        for _ in range(1900):
            fd, old = os.open("d", os.O_RDONLY, dir_fd=fd), fd
            os.close(old)
        with open(os.open("z", os.O_WRONLY | os.O_TRUNC, dir_fd=fd), "wb") as f:
            f.write(b"planted")  # the same size: only the bytes tell
        with pytest.raises(ApplyFailed, match=r"changed after it was observed.*nothing applied"):
            box.apply()
    finally:
        box.discard()
    assert time.monotonic() - start <= 5 + 2
    assert settle(60)  # what was undone is removed, in the call or just after it
    assert _snapshot(ws) == before


@pytest.mark.parametrize("length", [240, 255])
def test_a_long_file_name_applies(sandbox: Sandbox, tmp_path: Path, length: int) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ("o" * length)).write_text("old\n")
    tools = ToolRegistry(ws, tmp_path / "spill", sandbox=sandbox, confirm=_Operator(True))
    name = "n" * length
    outcome = tools.call("shell", {"command": f"echo new > {name}; echo changed > {'o' * length}"})
    assert outcome.call.ok, outcome.content
    assert (ws / name).read_text() == "new\n"
    assert (ws / ("o" * length)).read_text() == "changed\n"
    assert sorted(os.listdir(ws)) == sorted([name, "o" * length])


# =========================================================================== reading
@pytest.mark.skipif(os.getuid() != 0, reason="only root reads through a dropped id")
def test_the_upper_layer_is_read_as_the_sandbox_user_never_as_root(tmp_path: Path) -> None:
    """A hard link in a hand-made upper layer to a root-only file: the reader, as the
    sandbox's host user, cannot open it, so its bytes never reach an effect."""
    from artoo.actors.tools._upper import UpperLayer

    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "secret").write_text("s3cret\n")
    os.chmod(private / "secret", 0o600)
    lower, upper = tmp_path / "lower", tmp_path / "upper"
    lower.mkdir()
    upper.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chown(upper, UID_BASE, UID_BASE)
    os.link(private / "secret", upper / "leak.txt")
    with pytest.raises(OSError, match="Permission denied"):
        observe(UpperLayer.at(upper, uid=UID_BASE), lower)
    assert [e.path for e in observe(upper, lower).effects] == ["leak.txt"]  # as root: read


def test_a_file_the_command_made_unreadable_to_itself_is_still_observed(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    operator = _Operator(True)
    tools = ToolRegistry(ws, tmp_path / "spill", confirm=operator, sandbox=sandbox)
    outcome = tools.call(
        "shell", {"command": "chmod 0 a.txt; mkdir d; echo x > d/f; chmod 0 d/f d"}
    )
    assert outcome.call.ok, outcome.content
    assert [(e.path, e.change) for e in operator.requests[0].effects] == [
        ("a.txt", "metadata"),
        ("d", "created"),
        ("d/f", "created"),
    ]
    assert os.stat(ws / "a.txt").st_mode & 0o777 == 0 and os.stat(ws / "d").st_mode & 0o777 == 0


# =========================================================================== the seam
def test_an_apply_gives_the_exact_before_images_and_after_hashes(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    (ws / "tree" / "sub").mkdir(parents=True)
    (ws / "tree" / "sub" / "deep.txt").write_bytes(b"deep\x00bytes")
    (ws / "tree" / "ln").symlink_to("sub")
    (ws / "mod.txt").write_text("before\n")
    (ws / "mode.txt").write_text("m\n")
    os.chmod(ws / "mode.txt", 0o644)
    (ws / "link").symlink_to("mod.txt")
    seen: list[Changes] = []
    read: dict[str, bytes] = {}

    def record(changes: Changes) -> None:
        seen.append(changes)
        for image in changes.before:  # readable now, while the callback runs
            for one in (image, *image.tree):
                if one.kind == "file":
                    read[one.path] = one.read()

    tools = ToolRegistry(
        ws, tmp_path / "spill", confirm=_Operator(True), sandbox=sandbox, record=record
    )
    outcome = tools.call(
        "shell",
        {
            "command": "rm -rf tree; echo after > mod.txt; chmod 600 mode.txt; "
            "ln -sfn mode.txt link; echo new > new.txt",
            "timeout_s": 20,
        },
    )
    assert outcome.call.ok, outcome.content
    [changes] = seen
    assert (changes.tool, changes.subtask_id) == ("shell", "")
    before = {b.path: b for b in changes.before}
    assert before["mod.txt"].kind == "file" and before["mod.txt"].size == 7
    assert before["mode.txt"].mode == 0o644
    assert read == {
        "mod.txt": b"before\n",
        "mode.txt": b"m\n",
        "tree/sub/deep.txt": b"deep\x00bytes",
    }
    assert before["link"].kind == "symlink" and before["link"].target == "mod.txt"
    assert before["tree"].kind == "dir"
    tree = {t.path: t for t in before["tree"].tree}
    assert tree["tree/ln"].target == "sub" and tree["tree/sub/deep.txt"].size == 10
    after = {a.path: a for a in changes.after}
    assert after["mod.txt"].sha256 == hashlib.sha256(b"after\n").hexdigest()
    assert after["new.txt"].sha256 == hashlib.sha256(b"new\n").hexdigest()
    assert after["link"].target == "mode.txt" and after["mode.txt"].mode == 0o600
    with pytest.raises(OSError, match="read it in the callback"):
        before["mod.txt"].read()  # gone with the set-aside copy


def test_a_record_that_fails_cancels_the_change(sandbox: Sandbox, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    before = _snapshot(ws)

    def record(changes: Changes) -> None:
        raise RuntimeError("the undo log is full")

    tools = ToolRegistry(
        ws, tmp_path / "spill", confirm=_Operator(True), sandbox=sandbox, record=record
    )
    shell = tools.call("shell", {"command": "rm a.txt; echo n > n.txt"})
    assert not shell.call.ok and "recording the changes failed" in shell.content
    assert "nothing applied" in shell.content
    written = tools.call("write_file", {"path": "a.txt", "content": "b\n"})
    assert not written.call.ok and "recording it failed" in written.content
    fresh = tools.call("write_file", {"path": "new.txt", "content": "b\n"})
    assert not fresh.call.ok
    assert _snapshot(ws) == before


def test_write_file_gives_its_before_image(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("old\n")
    seen: list[Changes] = []
    tools = ToolRegistry(ws, tmp_path / "spill", confirm=_Operator(True), record=seen.append)
    assert tools.call("write_file", {"path": "a.txt", "content": "new\n"}).call.ok
    assert tools.call("write_file", {"path": "b.txt", "content": "b\n"}).call.ok
    first, second = seen
    assert first.tool == "write_file" and first.before[0].read() == b"old\n"
    assert first.after[0].sha256 is not None and first.after[0].size == 4
    assert second.before == () and second.after[0].path == "b.txt"


# =========================================================================== shows
def test_a_link_is_visible_only_where_the_link_itself_is(tmp_path: Path) -> None:
    """A virtualenv made from the system's python: its ``bin/python`` is a link into
    ``/usr``, but the virtualenv is not in the sandbox."""
    target = Path(os.path.realpath(shutil.which("sh") or "/bin/sh"))
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").symlink_to(target)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "tool").symlink_to(target)
    box = Sandbox()
    assert not box.shows(venv / "python", ws)
    assert box.shows(target, ws) and box.shows(ws / "tool", ws)
    assert box.shows(Path("/bin/sh"), ws)  # /bin may be a link to usr/bin: shown as one
    assert not box.shows(ws / "missing", ws)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/usr/bin/python3").exists(), reason="no /usr/bin/python3")
def test_the_missing_command_tests_pass_in_a_venv_of_the_system_python(tmp_path: Path) -> None:
    """``test_missing_command.py`` run by a virtualenv made from ``/usr/bin/python3``,
    with this environment's packages (its ``python`` links into ``/usr``)."""
    venv = tmp_path / "venv"
    made = subprocess.run(
        ["/usr/bin/python3", "-m", "venv", "--without-pip", str(venv)], capture_output=True
    )
    if made.returncode != 0:
        pytest.skip(f"no venv from /usr/bin/python3: {made.stderr.decode()[-200:]}")
    python = venv / "bin" / "python"
    version = subprocess.run(
        [python, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True
    )
    if version.stdout.strip() != str(sys.version_info[:2]):
        pytest.skip("/usr/bin/python3 is another version than this environment's")
    paths = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    pth = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    lines = [f"import site; site.addsitedir({p!r})" for p in dict.fromkeys(paths)]
    (pth / "artoo-test.pth").write_text("\n".join(lines) + "\n")  # its .pth files too
    env = {**os.environ, "PATH": f"{venv / 'bin'}:{os.environ.get('PATH', os.defpath)}"}
    result = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", MISSING],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert "skipped" not in result.stdout.splitlines()[-1], result.stdout[-1000:]
