"""The built-in tools: glob, read_file, write_file, shell, load_data."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import hashlib
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

from artoo.actors.law1 import (
    ShellSyntaxError,
    decide_command,
    decide_remote,
    program_names,
)
from artoo.schemas import FileEffect

from ._apply import AfterImage, Changes, Record, memory_image
from ._byeffect import _ByEffect, missing_parents
from ._confine import _globby, _Guards
from ._images import after_of
from ._observe import Observed
from ._resolve import WorkspaceView, glob
from ._sandbox import ApplyFailed, Sandbox, SandboxUnavailable, StaleEffects, write_effect
from ._shell import NOT_FOUND, _format_run, _Run, _run_shell, sibling_notes
from ._types import SPILL_LIMIT, _Call, _Result, _ToolError

MIN_PAGE = 2048
"""The fewest characters a ``read_file`` page holds (a smaller ``limit`` is raised to it)."""

_SKIP_CHUNK = 1 << 20  # characters read (and dropped) at a time to reach an offset


def open_beneath(
    root: Path, relative: str, flags: int, *, mode: int = 0o644, make_dirs: bool = False
) -> int:
    """Open ``relative`` beneath the directory ``root``, race-free: every component is
    opened relative to its parent's file descriptor without following a symlink, so a
    directory swapped for a symlink between a check and the open is refused (ELOOP or
    ENOTDIR), never followed out of the workspace. With ``make_dirs`` missing directories
    are created on the way. Raises OSError; the caller closes the descriptor."""
    parts = [p for p in relative.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise OSError(errno.EINVAL, f"not a path beneath the workspace: {relative!r}")
    dfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in parts[:-1]:
            if make_dirs:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o755, dir_fd=dfd)
            nfd = os.open(
                name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd
            )
            os.close(dfd)
            dfd = nfd
        return os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dfd)
    finally:
        os.close(dfd)


def _open_regular(root: Path, relative: str, flags: int, *, make_dirs: bool = False) -> int:
    """A file descriptor of the workspace file ``relative`` when it is a regular file with
    one name, opened with :func:`open_beneath`.

    Opened without blocking, then checked with ``fstat``: a FIFO, device or socket (a read
    would block or reach outside the workspace), or a file with another hard link (the
    other name may lie outside the workspace), is refused with ``unsafe_file``; so is a
    path a symlink was swapped into.
    """
    try:
        fd = open_beneath(root, relative, flags | os.O_NONBLOCK, make_dirs=make_dirs)
    except OSError as exc:
        raise _ToolError(
            f"cannot open '{relative}': {exc.strerror}", relative, "unsafe_file"
        ) from None
    st = os.fstat(fd)
    why = None
    if not stat.S_ISREG(st.st_mode):
        why = "not a regular file"
    elif st.st_nlink > 1:
        why = f"has {st.st_nlink} hard links (another name may lie outside the workspace)"
    if why is not None:
        os.close(fd)
        raise _ToolError(f"refused '{relative}': {why}", relative, "unsafe_file")
    os.set_blocking(fd, True)
    return fd


class _Builtins(_Guards, _ByEffect):
    """The built-in tools, as methods of ToolRegistry (a mixin: the registry sets the
    attributes below)."""

    spill_dir: Path
    env: dict[str, str]
    _record: Record | None
    sandbox: Sandbox | None
    spill_limit: int
    shell_timeout_s: float
    output_cap: int

    def _glob(self, call: _Call, pattern: str) -> _Result:
        """List the workspace paths that match a glob pattern (directories end in "/"),
        after their count.

        Args:
            pattern: a glob relative to the workspace root, such as "src/**/*.py".
        """
        parts = Path(pattern).parts
        if not parts:
            raise _ToolError("empty pattern")
        first = next((i for i, p in enumerate(parts) if _globby(p)), len(parts) - 1)
        base = str(Path(*parts[:first])) if first else "."
        relative_base, _ = self._file(base, call)
        relative_pattern = os.path.relpath(
            os.path.normpath(self.workspace / self._lexical(pattern)), self.workspace
        )
        if relative_pattern == ".." or relative_pattern.startswith("../"):
            raise _ToolError(f"pattern '{pattern}' escapes the workspace (..)", relative_base)
        view = WorkspaceView(self.workspace)
        try:  # links resolved inside the workspace only: nothing outside is looked at
            matches = glob(view, relative_pattern, self._roots())
        finally:
            view.close()
        lines: list[str] = []  # the paths: what the workspace gave (ToolCall.content)
        hidden = outside = 0
        blocked = [rel for _, rel in self._blocked_rels(call)]
        for match in matches:
            if match.rel is None:  # a link of the workspace out of it: that much is ours
                outside += 1
                continue
            if any(
                r == "." or p == r or p.startswith(r + "/")
                for r in blocked
                for p in (match.shown, match.rel)
            ):
                hidden += 1
                continue
            lines.append(match.shown + "/" if match.is_dir else match.shown)
        paths = "\n".join(lines)
        # the count first: a small model states it instead of counting the lines itself
        lines.insert(0, f"{len(lines)} match(es):" if lines else "(no matches)")
        if hidden:
            lines.append(f"[{hidden} match(es) under blocked targets not shown]")
        if outside:
            lines.append(f"[{outside} match(es) leading outside the workspace not shown]")
        return _Result("\n".join(lines), relative_base, content=paths)

    def _read_file(
        self, call: _Call, path: str, offset: int = 0, limit: int = SPILL_LIMIT
    ) -> _Result:
        """Read a text file of the workspace, a page of characters at a time.

        Args:
            path: the file, relative to the workspace root.
            offset: the first character to read (0 = start of the file).
            limit: how many characters to read at most (0: a whole page; at least 2,048).
        """
        relative, full = self._file(path, call)
        if offset < 0:
            raise _ToolError("offset must be >= 0", relative)
        if limit <= 0:  # a small model fills an optional number with 0: the default page
            limit = SPILL_LIMIT
        # a page is at least MIN_PAGE: a small model asked for 20 or 40 characters of a
        # config file, never read the line it was asked about, and answered from belief
        limit = max(limit, MIN_PAGE)
        if full.is_dir():
            raise _ToolError(f"'{relative}' is a directory; use glob to list it", relative)
        if not full.exists():
            raise _ToolError(f"no such file '{relative}'", relative)
        limit = min(limit, self.output_cap)
        fd = _open_regular(self.workspace, relative, os.O_RDONLY)
        with open(fd, encoding="utf-8", errors="replace", newline="") as f:
            skip = offset
            while skip > 0:  # characters, not bytes: skip in bounded chunks
                got = len(f.read(min(skip, _SKIP_CHUNK)))
                if got == 0:
                    break
                skip -= got
            page = f.read(limit)
            more = bool(f.read(1))
        # the notes below are the tool's, not the file's: the page alone is its content
        if skip > 0:  # a small model guessed an offset: say so, or it reads "" as the file
            return _Result(
                f"[offset {offset} is past the end of '{relative}' ({offset - skip:,} "
                f"characters). Use read_file(path='{relative}', offset=0) to read it.]",
                relative,
                content="",
            )
        shown = page
        if more:
            end = offset + len(page)
            shown += (
                f"\n[characters {offset}–{end} shown; the file continues. "
                f"Use read_file(path='{relative}', offset={end}) to read more.]"
            )
        return _Result(shown, relative, content=page)

    def _write_file(self, call: _Call, path: str, content: str) -> _Result:
        """Create a text file in the workspace, or replace one (asks for confirmation).

        Args:
            path: the file, relative to the workspace root; missing folders are created.
            content: the whole new text of the file.
        """
        relative, full = self._file(path, call)
        if full.is_dir():
            raise _ToolError(f"'{relative}' is a directory", relative)
        before: bytes | None = None
        mode: int | None = None
        if full.exists() or full.is_symlink():  # never write through a FIFO or a hard link
            with open(_open_regular(self.workspace, relative, os.O_RDONLY), "rb") as f:
                before = f.read()
                mode = os.fstat(f.fileno()).st_mode
        data = content.encode("utf-8")
        effect = write_effect(
            relative, before, data, mode, git_dirs=lambda d: self._git_dir(d, also=relative)
        )
        effects: tuple[FileEffect, ...] = ()
        if effect is not None:  # the folders it makes on the way, then the file
            effects = (*missing_parents(self.workspace, relative), effect)
        # the same rule as a sandboxed command's: by effect (before-images kept)
        effects, _ = self._by_effect(
            call,
            "write_file",
            f"write_file {relative}",
            effects,
            lambda e: hashlib.sha256(data).hexdigest(),
        )
        if effect is None:  # the same text: nothing changes
            return _Result(f"{relative} already holds these {len(content):,} characters", relative)
        # checked again on the descriptor written through (it is truncated only after)
        try:
            fd = _open_regular(self.workspace, relative, os.O_WRONLY | os.O_CREAT, make_dirs=True)
        except _ToolError as exc:  # the record keeps what Law 1 judged
            exc.effects = effects
            raise
        try:
            self._record_write(call, relative, before, mode, data, os.fstat(fd).st_mode)
        except Exception as exc:
            os.close(fd)
            if before is None:
                with contextlib.suppress(OSError):
                    os.unlink(self.workspace / relative)
            raise _ToolError(
                f"the change was not made: recording it failed ({type(exc).__name__}: {exc})",
                relative,
                effects=effects,
            ) from None
        os.ftruncate(fd, 0)
        with open(fd, "w", encoding="utf-8", newline="") as f:
            f.write(content)
        return _Result(
            f"wrote {len(content):,} characters to {relative}", relative, effects=effects
        )

    def _shell(self, call: _Call, command: str, timeout_s: float | None = None) -> _Result:
        """Run a shell command (bash, globstar on) in the workspace root; gives the exit
        code, stdout and stderr. Irreversible commands need the user's confirmation.

        Args:
            command: the command line.
            timeout_s: seconds before the command is killed (at most the default; 0 or
                none: the default).
        """
        if not command.strip():
            raise _ToolError("empty command")
        target = self._shell_target(command)
        self._check_shell_blocked(command, call, target)
        timeout = (
            self.shell_timeout_s
            if timeout_s is None or timeout_s <= 0  # a small model's 0 means "no preference"
            else min(timeout_s, self.shell_timeout_s)
        )
        effects: tuple[FileEffect, ...] = ()
        discarded = ""
        if self.sandbox is None:
            self._judge(call, decide_command(command, self.workspace, target), "shell", command)
            run = _run_shell(command, self.workspace, timeout, self.output_cap, self.env)
        else:
            run, effects, discarded = self._sandboxed(call, command, target, timeout)
        text = _format_run(run, timeout, self.output_cap)
        if discarded:
            text += f"\n[{discarded}]"
        if run.timed_out:
            error: str | None = f"timed out after {timeout:g} s"
        elif discarded:
            error = discarded
        elif run.exit_code != 0:
            error = f"exit code {run.exit_code}"
        else:
            error = None
        return _Result(
            text,
            target,
            error is None,
            error,
            run.exit_code,
            effects=effects,
            sandboxed=self.sandbox is not None,
            stdout=run.stdout,
            stderr=run.stderr,
            notes=self._not_found_notes(command) if run.exit_code == NOT_FOUND else (),
        )

    def _sandboxed(
        self, call: _Call, command: str, target: str | None, timeout: float
    ) -> tuple[_Run, tuple[FileEffect, ...], str]:
        """Law 1 by observed effect: run ``command`` in the sandbox, then apply what it
        changed — at once when it only created paths, after the operator's yes when it
        deleted or changed existing ones or planted code (denied: discarded, the workspace
        untouched). What it would do to other systems is read first (the remote-effects
        gate). Also returns why its changes were discarded unasked (killed by its timeout
        or a limit), or ""."""
        assert self.sandbox is not None
        remote = decide_remote(command, self.workspace, network=self.sandbox.network, target=target)
        self._judge(call, remote, "shell", command, sandboxed=True)
        hidden = tuple(root for _, root in self._blocked_roots(call))
        try:
            box = self.sandbox.run(
                command, self.workspace, timeout, self.output_cap, self.env, hide=hidden
            )
        except SandboxUnavailable as exc:  # fail closed: the command did not run
            raise _ToolError(str(exc), target) from None
        try:
            if box.discarded:  # killed by its timeout or a limit: nothing of it applied
                return box.run, (), box.discarded
            effects = box.observed.effects
            self._check_blocked_paths(box.observed.touched, call)  # every one, not the listed
            after = observed_after(box.observed, self.workspace)
            effects, check = self._by_effect(call, "shell", command, effects, after, sandboxed=True)
            try:
                box.apply(confirmed=check.ask, record=self._recorder(call, "shell"))
            except (StaleEffects, ApplyFailed, OSError) as exc:
                raise _ToolError(
                    f"the command's changes were not applied: {exc}",
                    target,
                    effects=effects,
                    sandboxed=True,
                ) from None
            return box.run, effects, ""
        except _ToolError as exc:
            if not exc.effects:
                exc.effects, exc.sandboxed = box.observed.effects, True
            raise
        finally:
            box.discard()

    def _load_data(
        self, call: _Call, filename: str, offset: int = 0, limit: int = SPILL_LIMIT
    ) -> _Result:
        """Read back a saved tool result (a file named in an earlier result), a page of
        characters at a time.

        Args:
            filename: the saved result's file name, such as "shell_3.txt".
            offset: the first character to read.
            limit: how many characters to read at most (0: a whole page; at least 2,048).
        """
        if not filename or "/" in filename or "\\" in filename or filename in (".", ".."):
            raise _ToolError(f"invalid file name {filename!r}: give a name such as 'shell_3.txt'")
        full = self.spill_dir / filename
        if not full.is_file():
            raise _ToolError(f"no saved result named '{filename}'", filename)
        if offset < 0:
            raise _ToolError("offset must be >= 0", filename)
        if limit <= 0:  # as read_file: 0 is the default page
            limit = SPILL_LIMIT
        with open(full, encoding="utf-8", errors="replace", newline="") as f:
            text = f.read()
        capped = limit > self.spill_limit
        page = text[offset : offset + min(limit, self.spill_limit)]
        end = offset + len(page)
        notes: list[str] = []
        if end < len(text):
            notes.append(
                f"[characters {offset}–{end} of {len(text)} shown. Use load_data("
                f"filename='{filename}', offset={end}) to read more.]"
            )
        elif offset >= len(text) and text:
            notes.append(f"[offset {offset} is past the end ({len(text)} characters)]")
        if capped:
            notes.append(
                f"[limit cut to {self.spill_limit} characters; use offset/limit to read smaller "
                "chunks]"
            )
        # its own notes aside; the saved result is as the model was shown it (a command's
        # display, another tool's notes and all)
        return _Result("\n".join([page, *notes]) if notes else page, filename, content=page)

    # ----------------------------------------------------------------- the changes' record
    def _recorder(self, call: _Call, tool: str) -> Callable[[Changes], None] | None:
        """The registry's ``record`` for one call's changes (its tool, subtask, attempt)."""
        record = self._record
        if record is None:
            return None

        def given(changes: Changes) -> None:
            record(
                dataclasses.replace(
                    changes, tool=tool, subtask_id=call.subtask_id, attempt=call.attempt
                )
            )

        return given

    def _record_write(
        self,
        call: _Call,
        relative: str,
        before: bytes | None,
        mode: int | None,
        data: bytes,
        mode_after: int,
    ) -> None:
        """``write_file``'s changes to the registry's ``record``, before they are made."""
        recorder = self._recorder(call, "write_file")
        if recorder is None:
            return
        images = () if before is None else (memory_image(relative, before, mode or 0o100644),)
        after = AfterImage(
            relative,
            "file",
            stat.S_IMODE(mode_after),
            hashlib.sha256(data).hexdigest(),
            len(data),
        )
        recorder(Changes(images, (after,)))

    # ----------------------------------------------------------------- shell helpers
    def _not_found_notes(self, command: str) -> tuple[str, ...]:
        """The notes for a command line that exited 127, command not found
        (:func:`~._shell.sibling_notes`): its program names, as the shell lexer reads
        them, looked up as the shell that ran it does (:meth:`_installed`)."""
        try:
            names = program_names(command)
        except ShellSyntaxError:
            return ()
        return tuple(sibling_notes(names, self._installed))

    def _installed(self, name: str) -> bool:
        """``name`` is a program on the PATH shell commands run with (the tool
        environment's); in the sandbox, only one the sandbox shows where the host has it
        (:meth:`Sandbox.shows`: a file under the host's home, say, is not there)."""
        for entry in self.env.get("PATH", os.defpath).split(os.pathsep):
            if not os.path.isabs(entry):  # relative to a directory a command may leave
                continue
            found = shutil.which(name, path=entry)
            if found is not None and (
                self.sandbox is None or self.sandbox.shows(Path(found), self.workspace)
            ):
                return True
        return False


def observed_after(observed: Observed, workspace: Path) -> Callable[[FileEffect], str]:
    """``FileEffect.after`` of each effect as observation read it (the SHA-256 the apply
    checks the staged bytes against, or of a symlink's target), never a re-read of the
    upper layer by path; a change of mode alone keeps the bytes the workspace holds
    (read beneath it, no link followed); ``""`` for anything else."""
    ops = {op.path: op for op in observed.ops}

    def after(effect: FileEffect) -> str:
        op = ops.get(effect.path)
        if op is not None and op.sha256:
            return op.sha256
        if op is not None and op.target:
            return hashlib.sha256(os.fsencode(op.target)).hexdigest()
        if effect.change == "metadata":
            return after_of(workspace, effect.path)
        return ""

    return after
