"""Law 1 by observed effect: shell commands run in the sandbox (namespaces + overlay),
their effects observed, then applied, or discarded when denied."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest

from artoo.actors.tools import ConfirmationNeeded, Sandbox, ToolRegistry, probe
from artoo.actors.tools._sandbox import observe

from .sandbox_corpus import DESTRUCTIVE, EVERYDAY, make_workspace

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")


def _missing(programs: tuple[str, ...]) -> bool:
    return any(shutil.which(p) is None for p in programs)


def _snapshot(root: Path) -> dict[str, tuple[str, int, bytes]]:
    """Every path beneath ``root``: its kind, mode and content (link target for links)."""
    out: dict[str, tuple[str, int, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            full = Path(dirpath) / name
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out[str(full.relative_to(root))] = ("link", 0, os.readlink(full).encode())
            elif stat.S_ISDIR(st.st_mode):
                out[str(full.relative_to(root))] = ("dir", stat.S_IMODE(st.st_mode), b"")
            else:
                data = full.read_bytes()
                out[str(full.relative_to(root))] = ("file", stat.S_IMODE(st.st_mode), data)
    return out


class _Operator:
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.requests: list[ConfirmationNeeded] = []

    def __call__(self, request: ConfirmationNeeded) -> bool:
        self.requests.append(request)
        return self.answer


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    why = probe()
    assert why is None, f"no sandbox on this machine: {why}"
    return Sandbox()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_workspace(tmp_path_factory.mktemp("corpus") / "ws")


def _copy(template: Path, dest: Path) -> Path:
    shutil.copytree(template, dest, symlinks=True)
    return dest


def _registry(ws: Path, spill: Path, sandbox: Sandbox, confirm: _Operator) -> ToolRegistry:
    return ToolRegistry(ws, spill, confirm=confirm, sandbox=sandbox, shell_timeout_s=20)


# --------------------------------------------------------------------------- the corpus
@pytest.mark.slow
def test_every_destructive_command_is_denied_and_leaves_every_file_byte_identical(
    sandbox: Sandbox, template: Path, tmp_path: Path
) -> None:
    ws = _copy(template, tmp_path / "ws")
    before = _snapshot(ws)
    operator = _Operator(answer=False)  # no operator: every irreversible action denied
    tools = _registry(ws, tmp_path / "spill", sandbox, operator)
    ran, failures = 0, []
    for command, needs in DESTRUCTIVE:
        if _missing(needs):
            continue
        ran += 1
        outcome = tools.call("shell", {"command": command})
        after = _snapshot(ws)
        if outcome.call.refusal != "law1_denied" or after != before:
            changed = sorted(
                k for k in before.keys() | after.keys() if before.get(k) != after.get(k)
            )
            failures.append((command, outcome.call.refusal, outcome.content[:200], changed))
            shutil.rmtree(ws)
            _copy(template, ws)
    assert ran >= 150
    assert failures == []


@pytest.mark.slow
def test_everyday_commands_run_without_a_confirmation_and_give_their_output(
    sandbox: Sandbox, template: Path, tmp_path: Path
) -> None:
    ws = _copy(template, tmp_path / "ws")
    operator = _Operator(answer=False)
    tools = _registry(ws, tmp_path / "spill", sandbox, operator)
    ran, failures = 0, []
    for command, needs, expected in EVERYDAY:
        if _missing(needs):
            continue
        ran += 1
        asked = len(operator.requests)
        outcome = tools.call("shell", {"command": command})
        if (
            len(operator.requests) != asked
            or outcome.call.refusal
            or expected not in outcome.output
        ):
            failures.append((command, outcome.content[:300]))
    assert ran >= 100
    assert failures == []
    assert (ws / "new.txt").read_text() == "new\n"  # created files were applied
    assert (ws / "out").is_dir() and (ws / "made.txt").read_text() == "x"


# --------------------------------------------------------------------------- approving
def test_an_approved_command_has_exactly_the_effect_computed_in_the_sandbox(
    sandbox: Sandbox, template: Path, tmp_path: Path
) -> None:
    command = (
        "rm notes.txt; sed -i 's/task/TASK/' todo.txt; rm -rf archive; mkdir -p new/deep; "
        "echo x > new/deep/f; chmod 600 data.csv; ln -s todo.txt link; mv docs manual; "
        "rm -rf src && mkdir src && echo 'print(1)' > src/main.py"
    )
    plain = _copy(template, tmp_path / "plain")  # the same command, run for real
    subprocess.run(["bash", "-c", command], cwd=plain, check=True)
    ws = _copy(template, tmp_path / "ws")
    operator = _Operator(answer=True)
    outcome = _registry(ws, tmp_path / "spill", sandbox, operator).call(
        "shell", {"command": command}
    )
    assert outcome.call.ok, outcome.content
    assert _snapshot(ws) == _snapshot(plain)
    [request] = operator.requests
    listed = {(e.path, e.change) for e in request.effects}
    assert {
        ("notes.txt", "deleted"),
        ("todo.txt", "modified"),
        ("archive/old.log", "deleted"),
        ("data.csv", "metadata"),
        ("docs/guide.md", "deleted"),
        ("manual/guide.md", "created"),
        ("new/deep/f", "created"),
        ("src/app.py", "deleted"),
        ("src/main.py", "created"),
    } <= listed
    todo = next(e for e in request.effects if e.path == "todo.txt")
    assert todo.summary == "+7 -7 lines, 49 -> 49 bytes"
    assert "delete notes.txt (29 bytes)" in request.reason
    assert outcome.call.sandboxed and outcome.call.effects == request.effects


def test_a_denied_command_is_discarded_and_its_record_says_what_it_would_have_done(
    sandbox: Sandbox, template: Path, tmp_path: Path
) -> None:
    ws = _copy(template, tmp_path / "ws")
    before = _snapshot(ws)
    outcome = _registry(ws, tmp_path / "spill", sandbox, _Operator(False)).call(
        "shell", {"command": "echo gone > notes.txt; echo new > added.txt"}
    )
    assert outcome.call.refusal == "law1_denied"
    assert outcome.content.startswith("error: [LAW1] denied: would overwrite notes.txt")
    assert _snapshot(ws) == before  # the new file is not applied either
    assert [(e.path, e.change) for e in outcome.call.effects] == [
        ("added.txt", "created"),
        ("notes.txt", "modified"),
    ]


def test_a_workspace_changed_while_waiting_for_the_operator_is_not_overwritten(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f").write_text("one\n")

    def approve_after_a_change(request: ConfirmationNeeded) -> bool:
        (ws / "f").write_text("someone else's edit\n")
        return True

    tools = ToolRegistry(ws, tmp_path / "spill", confirm=approve_after_a_change, sandbox=sandbox)
    outcome = tools.call("shell", {"command": "echo two > f"})
    assert not outcome.call.ok and "changed since the command ran" in outcome.content
    assert (ws / "f").read_text() == "someone else's edit\n"


# --------------------------------------------------------------------------- confinement
def test_outside_the_workspace_is_read_only_and_tmp_is_private(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside.txt"  # beside the workspace, under the host's /tmp
    outside.write_text("host data\n")
    marker = f"artoo-{uuid.uuid4().hex}"
    tools = ToolRegistry(ws, tmp_path / "spill", sandbox=sandbox)
    outcome = tools.call(
        "shell",
        {
            "command": f"touch /etc/{marker}; touch {Path.home()}/{marker}; rm -f {outside}; "
            f"echo y > /tmp/{marker}; cat /tmp/{marker}"
        },
    )
    assert outcome.output.count("Read-only file system") == 1  # /etc; the home is a tmpfs
    assert "--- stdout ---\ny\n" in outcome.output
    assert outside.read_text() == "host data\n"  # the sandbox's /tmp is its own
    assert not Path("/tmp", marker).exists()
    assert not Path("/etc", marker).exists() and not Path.home().joinpath(marker).exists()


def test_no_process_of_the_command_outlives_it(sandbox: Sandbox, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    seconds = f"{100 + uuid.uuid4().int % 1000}.{uuid.uuid4().int % 97}"
    tools = ToolRegistry(ws, tmp_path / "spill", sandbox=sandbox)
    outcome = tools.call(
        "shell", {"command": f"sleep {seconds} & setsid sleep {seconds} & disown; echo started"}
    )
    assert "started" in outcome.output
    left = subprocess.run(["pgrep", "-f", f"sleep {seconds}"], capture_output=True, text=True)
    assert left.stdout == ""


def _listener() -> tuple[socket.socket, int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    return server, server.getsockname()[1]


def test_no_network_unless_the_configuration_allows_it(tmp_path: Path) -> None:
    assert probe(network=True) is None
    ws = tmp_path / "ws"
    ws.mkdir()
    server, port = _listener()
    threading.Thread(target=lambda: server.accept()[0].close(), daemon=True).start()
    connect = (
        f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2); "
        "print('connected')\""
    )
    try:
        closed = ToolRegistry(ws, tmp_path / "s1", sandbox=Sandbox()).call(
            "shell", {"command": connect}
        )
        opened = ToolRegistry(ws, tmp_path / "s2", sandbox=Sandbox(network=True)).call(
            "shell", {"command": connect}
        )
    finally:
        server.close()
    assert "connected" not in closed.output
    assert "connected" in opened.output


def test_remote_effects_are_still_read_with_the_network_allowed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    operator = _Operator(False)
    tools = ToolRegistry(ws, tmp_path / "spill", confirm=operator, sandbox=Sandbox(network=True))
    outcome = tools.call("shell", {"command": "curl -X DELETE https://example.com/x"})
    assert outcome.call.refusal == "law1_denied"
    assert operator.requests[0].reason == "curl: sends a DELETE request"
    assert operator.requests[0].effects == ()


def test_a_blocked_target_is_not_in_the_sandbox_whatever_names_it(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """Decided on resolved paths: the sandbox shows a blocked directory empty and
    read-only, so a glob, a variable or a script reaches nothing of it."""
    ws = tmp_path / "ws"
    (ws / "keep").mkdir(parents=True)
    (ws / "keep" / "secret.txt").write_text("s3cret\n")
    tools = ToolRegistry(ws, tmp_path / "spill", sandbox=sandbox, blocked_targets=("keep",))
    outcome = tools.call("shell", {"command": "cd k* && echo x > new.txt"})
    assert not outcome.call.ok and "Read-only file system" in outcome.output
    assert not (ws / "keep" / "new.txt").exists()
    for command in (
        "cat k*/s*",
        "D=ke; cat ${D}ep/*.txt",
        "python3 -c \"print(open('ke'+'ep/secret.txt').read())\"",
    ):
        outcome = tools.call("shell", {"command": command})
        assert "s3cret" not in outcome.output, command


# --------------------------------------------------------------------------- observing
def test_observe_reads_an_upper_layer(tmp_path: Path) -> None:
    """The rules on a hand-made upper layer: a whiteout deletes, a new file is created,
    the same content with a new mode is a metadata change."""
    lower, upper = tmp_path / "lower", tmp_path / "upper"
    (lower / "d").mkdir(parents=True)
    (lower / "d" / "a").write_text("a\n")
    (lower / "b").write_text("b\n")
    (lower / "c").write_text("c\n")
    upper.mkdir()
    try:
        os.mknod(upper / "b", stat.S_IFCHR | 0o600, os.makedev(0, 0))
    except PermissionError:
        pytest.skip("making a whiteout needs CAP_MKNOD")
    (upper / "n").write_text("new\n")
    (upper / "c").write_text("c\n")
    os.chmod(upper / "c", 0o600)
    observed = observe(upper, lower)
    assert [(e.path, e.change) for e in observed.effects] == [
        ("b", "deleted"),
        ("c", "metadata"),
        ("n", "created"),
    ]
    assert [e.path for e in observed.irreversible] == ["b", "c"]


def test_a_double_star_spans_directories_in_and_out_of_the_sandbox(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """bash runs with globstar: ``src/**/*.py`` means what the glob tool and count_matches
    mean by it (a small model writes it and expects every depth)."""
    ws = tmp_path / "ws"
    (ws / "src" / "models").mkdir(parents=True)
    for name in ("src/a.py", "src/b.py", "src/models/c.py"):
        (ws / name).write_text("x\n")
    for box in (sandbox, None):
        tools = ToolRegistry(ws, tmp_path / f"spill-{box is None}", sandbox=box)
        outcome = tools.call("shell", {"command": "ls src/**/*.py | wc -l"})
        assert outcome.call.ok and outcome.content.endswith("\n3"), outcome.content
