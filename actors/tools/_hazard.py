"""The one hazard check every tool's effects pass (``shell``'s observed effects,
``write_file``'s computed one, the path a host tool names): a new or changed workspace
path the host may later run, or read as instructions, without anyone choosing to.

Decided by a path's place, never by reading what it says: git's own layout — anything
in a ``.git`` directory or in a directory laid out as a repository (``HEAD`` beside
``refs``, ``objects`` or ``commondir``, what git itself checks), a ``.git`` that is not
a directory (a pointer to a repository elsewhere), ``.gitattributes`` (filters, diff
drivers) and ``.gitmodules`` — read as git reads names (case folded, trailing dots and
spaces dropped); shell and interpreter start-up files, editor tasks, CI workflows; and
anything made executable. A symlink's hazard is where it leads (:mod:`._resolve`).
"""

from __future__ import annotations

import stat
from collections.abc import Callable

from artoo.schemas import Hazard

_STARTUP_NAMES = frozenset(
    {
        ".envrc",
        "sitecustomize.py",
        "usercustomize.py",
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".profile",
        ".zshrc",
        ".zshenv",
        ".zprofile",
        ".zlogin",
        ".inputrc",
        ".pythonrc",
        ".pythonstartup",
        ".xprofile",
        ".xinitrc",
        ".xsessionrc",
        ".gitconfig",
        ".npmrc",
        ".hgrc",
        "config.fish",
    }
)
_STARTUP_DIRS = frozenset({".ssh", ".bashrc.d"})
"""Directories whose files a login, a desktop session or ssh reads (a workspace that is a
home directory)."""
_EDITOR_FILES = frozenset({"settings.json", "tasks.json", "launch.json", "extensions.json"})
GIT_DIR_MARKS = ("refs", "objects", "commondir")
"""Beside a ``HEAD``, any of these makes git take a directory for a repository."""

HAZARD_TEXT: dict[str, str] = {
    "executable": "an executable file",
    "hook": "a file of git's own, which the host's git reads and may run commands from",
    "startup": "a file run when a shell or interpreter starts",
    "editor": "editor configuration that runs commands",
    "ci": "a CI workflow",
    "link": "a symbolic link out of the workspace",
}
_GIT_WHY = {
    ".git": "a .git that is not a directory: git takes the repository from where it points",
    ".gitattributes": "git attributes: they choose the filters and diff drivers git runs",
    ".gitmodules": "git submodules: they name what git fetches and checks out",
}


def git_name(name: str) -> str:
    """``name`` as git compares it on any file system: case folded, trailing dots and
    spaces dropped (``.GIT.`` is ``.git``)."""
    return name.casefold().rstrip(". ")


def is_git_dir(names: set[str]) -> bool:
    """Whether a directory holding ``names`` is laid out as a git repository."""
    folded = {git_name(n) for n in names}
    return "head" in folded and any(m in folded for m in GIT_DIR_MARKS)


def _never(rel: str) -> bool:
    return False


def git_hazard(
    rel: str, *, directory: bool = False, git_dirs: Callable[[str], bool] = _never
) -> str | None:
    """Why the workspace path ``rel`` (a directory when ``directory``) is part of git's
    layout, or None. ``git_dirs(d)`` says whether the directory ``d`` (``""``: the
    workspace) is laid out as a repository."""
    parts = [p for p in rel.split("/") if p]
    if not parts:
        return None
    folded = [git_name(p) for p in parts]
    if ".git" in folded[:-1] or (folded[-1] == ".git" and directory):
        return "in a .git directory: git's own configuration, hooks and state"
    if folded[-1] in _GIT_WHY:
        return _GIT_WHY[folded[-1]]
    if git_dirs is not _never:
        prefix = ""
        for part in parts:  # the workspace and every directory above rel
            if git_dirs(prefix):
                return "in a directory laid out as a git repository: git reads it as one"
            prefix = f"{prefix}/{part}" if prefix else part
    return None


def plain_hazard(rel: str, mode: int | None = None) -> tuple[Hazard, str] | None:
    """The hazard of a new or changed path ``rel`` of ``mode`` outside git's layout:
    files a tool runs on its own — shell and interpreter start-up files, direnv's
    ``.envrc``, editor configuration that runs tasks, CI workflows — and anything made
    executable; a directory has none. Not: a ``Makefile``, ``conftest.py``,
    ``package.json`` or any other project file, which runs only when someone runs that
    project (as any of its source does)."""
    if mode is not None and stat.S_ISDIR(mode):
        return None
    parts = rel.split("/")
    name = parts[-1]
    folders = set(parts[:-1])
    session = ".config" in folders and bool({"autostart", "systemd"} & folders)
    if name in _STARTUP_NAMES or name.endswith(".pth") or _STARTUP_DIRS & folders or session:
        return "startup", HAZARD_TEXT["startup"]
    if (".vscode" in folders and name in _EDITOR_FILES) or ".idea" in folders:
        return "editor", HAZARD_TEXT["editor"]
    if (".github" in parts and "workflows" in parts) or name == ".gitlab-ci.yml":
        return "ci", HAZARD_TEXT["ci"]
    if mode is not None and stat.S_ISREG(mode) and mode & 0o111:
        return "executable", HAZARD_TEXT["executable"]
    return None


def path_hazard(
    rel: str, mode: int | None = None, *, git_dirs: Callable[[str], bool] = _never
) -> tuple[Hazard, str] | None:
    """The one check: the hazard of a new or changed workspace path ``rel`` of ``mode``
    (None: not known) and why, for a person — git's layout (:func:`git_hazard`, with
    ``git_dirs``) first, then :func:`plain_hazard` — or None."""
    why = git_hazard(rel, directory=mode is not None and stat.S_ISDIR(mode), git_dirs=git_dirs)
    if why is not None:
        return "hook", why
    return plain_hazard(rel, mode)


def hazard_of(
    rel: str, mode: int | None = None, *, git_dirs: Callable[[str], bool] = _never
) -> Hazard | None:
    """The hazard of :func:`path_hazard`, without its reason."""
    found = path_hazard(rel, mode, git_dirs=git_dirs)
    return found[0] if found else None
