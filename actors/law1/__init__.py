"""Law 1 — never harm the user's environment without explicit confirmation.

The paper's Law 1 (§9): the system must not take irreversible actions on user data or
environment without explicit authorization for that specific action. Irreversible
actions are file deletion, overwriting existing data, sending messages and modifying
system configuration.

This module decides, by **parsing** a shell command (never by string prefix), whether
running it would be irreversible. The Executor's tool registry asks for a human's
confirmation when it is (docs/design.md C8).

How a command is read:

* A small POSIX-shell lexer splits it into simple commands at ``;``, ``&&``, ``||``,
  ``|``, ``|&``, ``&``, newlines and parentheses; it honours single and double quotes,
  backslash escapes, ``$'…'``, heredocs, comments, and collects the text of every
  ``$(…)``, backtick and ``<(…)``/``>(…)`` substitution (also inside double quotes and
  unquoted heredocs), which is classified as a command of its own.
* Unquoted brace expressions are expanded as bash does (``{rm,f}`` is ``rm f``; ``{1..3}``),
  up to 4,096 words per word (more is irreversible), except in ``for``/``case`` headers. A
  program named by a glob (``/bin/r? f``) is each program the glob matches.
* Shell keywords (``if``, ``then``, ``do``, ``!``, ``{`` …) and leading ``NAME=value``
  assignments are skipped. Wrappers are unwrapped: ``sudo``, ``doas``, ``env``,
  ``nice``, ``ionice``, ``time``, ``command``, ``builtin``, ``exec``, ``nohup``,
  ``setsid``, ``stdbuf``, ``unbuffer``, ``timeout N``, ``chroot DIR``, ``busybox``,
  ``flock``, ``strace``, ``xargs [opts]``, ``parallel``, ``watch``. The program is the
  basename of the first word, so ``/bin/rm``, ``./rm``, ``\\rm`` and ``"rm"`` are all rm.
* ``sh -c``/``bash -c``/``su -c``/``eval``/``ssh host CMD``/``env -S`` strings are parsed
  recursively (and :func:`parse_commands` lists their commands, so blocked targets are
  found inside them); a program whose name is only known at run time (``$CMD``) is
  irreversible.
* A line is read in order. After ``cd``/``pushd DIR`` relative paths are checked in DIR and
  in every directory the line was in before (a subshell's ``cd`` ends with it); a ``cd`` to a
  place known only at run time, or more than four directories, make relative targets
  unknown. A name that an earlier ``ln``, ``mv`` or ``cp -l|-s|-a|-d|-P`` points at existing
  data counts as an existing file for a later overwrite (``ln f h; : > h``). ``trap ACTION``
  and ``alias NAME=TEXT`` are read as commands (an alias's arguments are only known at run
  time, so ``alias x=rm`` is rm).
* Code kept elsewhere is read where it can be (see ``_scripts``): a script run by a shell or
  ``source``/``.`` is classified as commands; a Python, Perl, Ruby, JavaScript, PHP or Lua
  script is scanned for calls that delete, move, truncate or write files (``os.remove``,
  ``rmtree``, ``open(…, 'w')``, ``unlinkSync`` …), run programs (``subprocess``,
  ``system``, ``eval``) or change a database; only the script's own text is read, not what
  it imports. A script that cannot be read is irreversible; one that does not exist cannot
  run, unless an earlier command of the line may create it. ``make`` reads the recipes of
  the targets asked for and their prerequisites, with the Makefile's variables substituted
  (an ``include`` makes it irreversible; ``-n``/``-q`` are safe); ``npm``/``pnpm``/``yarn``
  ``run`` read the package.json script with its pre/post scripts. ``npx``, ``bunx``,
  ``pnpm dlx`` and ``npm exec`` run a package's code and are irreversible, as are the
  editors ``ed``, ``ex``, ``vi``, ``vim`` and ``nvim`` (without a terminal they take commands
  from stdin) and ``emacs --batch``/``--eval``.
* Overwrites are checked against the file system relative to ``cwd``: a redirection
  ``>``/``>|``/``&>`` onto an existing file, ``tee`` without ``-a``, ``mv``/``cp``/
  ``install``/``ln -f`` onto an existing destination (``-n``, ``--no-clobber``,
  ``--update=none`` and ``--backup`` make them safe), ``sort -o``, ``curl -o``,
  ``wget -O``, ``tar -cf`` onto an existing archive; ``tar -x`` of a member whose name
  exists (the archive's member list is read; an archive that cannot be read, such as
  stdin, counts when the destination is not empty; ``-k``/``--skip-old-files``/``-O`` are
  safe); ``rsync`` onto existing files (the source tree is compared with the destination;
  ``-n``, ``-b``, ``--ignore-existing`` are safe; a remote destination always counts);
  ``patch`` (edits in place, unless ``--dry-run`` or ``-b``); ``uniq IN OUT``, ``shuf -o``,
  ``iconv -o``; a sed script's ``w``/``W`` commands and ``s///w`` flag (its ``e`` command and
  ``s///e`` run shell commands); ``7z x -y``/``-aoa`` and ``unrar -o+``/``-y`` (they overwrite
  without asking), ``7z d``. ``>>`` appends are allowed and
  ``/dev/null`` (and the other standard devices) never counts. A destination that is
  only known at run time (``xargs``, ``find -exec``, ``$VAR``) counts as existing.
* Other people's data: SQL clients (``sqlite3``, ``psql``, ``mysql``) running DROP, DELETE,
  TRUNCATE, UPDATE, ALTER, REPLACE, GRANT or REVOKE, or SQL from a file or stdin; ``scp``
  to another host or onto an existing file; ``gh``/``aws``/``gcloud``/``az`` subcommands
  that delete, remove, terminate or destroy; ``git apply`` and ``git tag -d``/``-f``; an
  ``awk`` program that prints into a file with ``>`` (a ``>`` inside parentheses or a string
  is a comparison or text; ``/dev/stdout``/``/dev/stderr`` are allowed); ``openssl -out``,
  ``ffmpeg -y`` and ``convert`` onto an existing file. A SQL ``replace(…)`` is a function,
  not the REPLACE statement. ``redis-cli`` with any command but the reads (GET, KEYS, SCAN,
  INFO, PING, TTL, HGETALL, LRANGE …), a Lua script, ``--pipe`` or stdin; ``mongo``/
  ``mongosh`` (``--eval``, a script, or stdin); ``dropdb``, ``dropuser``, ``mysqladmin drop``;
  ``helm uninstall``/``rollback``; ``rclone`` purge/delete/sync/move/copy…; ``s3cmd``
  del/rm/rb, ``gsutil`` rm/rb/``rsync -d``; ``rimraf``.
* Commands given as option values are read as commands: tar's ``--checkpoint-action=exec=``,
  ``--to-command``, ``-I``/``--use-compress-program`` …; ``git -c`` aliases (``!cmd`` or a
  git command line) and keys whose value git runs (``core.pager``, ``core.sshCommand``,
  ``*.program`` …; ``core.hooksPath`` and ``include.*`` are irreversible). Perl's ``-e`` is
  found in any bundle (``-le``, ``-0777e``).
* Any write — append included — to system locations (``/etc``, ``/usr``, ``/boot`` …) or
  to a dotfile in the home directory outside ``cwd`` modifies system configuration.

Unparseable commands (an unbalanced quote or substitution, a redirection without a
target) are irreversible with the reason ``"cannot parse: …"``.
"""

from __future__ import annotations

from ._classify import (
    ALLOWED,
    MAX_COMMAND_CHARS,
    Law1Verdict,
    ShellCommand,
    ShellSyntaxError,
    classify_shell,
    classify_write,
    parse_commands,
    program_names,
)
from ._decide import decide_command, decide_effects, decide_remote, describe_effects
from ._remote import REMOTE_PROGRAMS, classify_remote
from ._reversible import (
    OUTSIDE_TARGETS,
    QUESTION_REFUSAL,
    REVERSIBLE_CHANGES,
    Scope,
    decide_by_effect,
    in_scope,
    reversible,
)

__all__ = [
    "ALLOWED",
    "MAX_COMMAND_CHARS",
    "OUTSIDE_TARGETS",
    "QUESTION_REFUSAL",
    "REMOTE_PROGRAMS",
    "REVERSIBLE_CHANGES",
    "Law1Verdict",
    "Scope",
    "ShellCommand",
    "ShellSyntaxError",
    "classify_remote",
    "classify_shell",
    "classify_write",
    "decide_by_effect",
    "decide_command",
    "decide_effects",
    "decide_remote",
    "describe_effects",
    "in_scope",
    "parse_commands",
    "program_names",
    "reversible",
]
