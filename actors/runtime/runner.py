"""The role runner: starts the declared roles, restarts a crashed one, stops them all.

Equipment of the System and the Supervisor, not a role. The System builds the
:class:`Equipment`, hands the runner the roster (``artoo.actors.roles.roster.ROSTER``) and the
runner starts one actor per singleton role and one per effector pair for pair roles,
each with its one bus subscription. The Supervisor calls :meth:`RoleRunner.restart` when
a role crashed; nothing here calls back into the facade.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pykka

from artoo.schemas import RoleFailed

from ._log import runtime_logger
from .contracts import SYSTEM_SENDERS, Contracts

if TYPE_CHECKING:
    from .role import Equipment, Role

__all__ = ["RoleRunner", "RoleSpec", "Running", "contracts_from"]

_log = runtime_logger(component="runner")


@dataclass(frozen=True)
class RoleSpec:
    """One line of the roster: a role class, singleton or one per effector pair.

    ``audit``: the role is given the Equipment's ``audit`` seat (the Auditor); every other
    role gets Equipment with ``audit=None``, so no role but the Auditor reaches the audit
    log.
    """

    role: type[Role]
    per_pair: bool = False
    audit: bool = False


def contracts_from(roster: Iterable[RoleSpec]) -> Contracts:
    """The boundary table of ``roster`` (plus the System's own senders)."""
    table: dict[str, frozenset[str]] = dict(SYSTEM_SENDERS)
    effectors: set[str] = set()
    for spec in roster:
        kinds = {k.__name__ for k in spec.role.publishes} | {RoleFailed.__name__}
        table[spec.role.name] = frozenset(kinds)
        if spec.per_pair:
            effectors.add(spec.role.name)
    return Contracts(table, frozenset(effectors))


@dataclass
class Running:
    """A started role actor."""

    role: type[Role]
    instance: str | None
    ref: pykka.ActorRef[Any]


class RoleRunner:
    """Starts, restarts and stops the role actors of one System (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[str, Running] = {}
        self._equipment: Equipment | None = None
        self._shared: Equipment | None = None  # without the audit seat
        self._audit_roles: set[type[Role]] = set()
        self._closed = False

    # ------------------------------------------------------------------ starting
    def start_all(
        self, roster: Iterable[RoleSpec], equipment: Equipment, *, defer: Iterable[type[Role]] = ()
    ) -> None:
        """Start every role of ``roster`` with ``equipment`` (pair roles once per pair);
        ``defer``: singleton roles known but not started (:meth:`start` them later)."""
        roster = tuple(roster)
        deferred = frozenset(defer)
        self._equipment = equipment
        self._shared = dataclasses.replace(equipment, audit=None)
        self._audit_roles = {spec.role for spec in roster if spec.audit}
        for spec in roster:
            if spec.role in deferred:
                continue
            if spec.per_pair:
                for pair in equipment.pairs:
                    self.start(spec.role, pair)
            else:
                self.start(spec.role, None)

    def start(self, role: type[Role], instance: str | None, from_seq: int | None = None) -> str:
        """Start one actor of ``role`` and subscribe it; returns its sender name."""
        equipment = self._equipment if role in self._audit_roles else self._shared
        if equipment is None:
            raise RuntimeError("start_all() first: the runner has no equipment")
        ref = role.start(equipment, instance)
        role.subscribe(equipment.bus, ref, instance, from_seq=from_seq)
        sender = role.name if instance is None else f"{role.name}/{instance}"
        with self._lock:
            self._running[sender] = Running(role, instance, ref)
        return sender

    def restart(self, sender: str, from_seq: int, *, wait_s: float = 2.0) -> bool:
        """Start a fresh actor for a crashed ``sender``, resuming at ``from_seq``.

        A crashed actor stops right after publishing RoleFailed; this waits for that (at
        most ``wait_s``) and returns False if the actor is still alive, unknown, or the
        runner is closed.
        """
        with self._lock:
            running = self._running.get(sender)
            if running is None or self._closed:
                return False
        if not running.ref.actor_stopped.wait(wait_s):
            return False
        self.start(running.role, running.instance, from_seq=from_seq)
        _log.warning("role restarted", role=sender, from_seq=from_seq)
        return True

    # ------------------------------------------------------------------ reading
    def ref(self, sender: str | type[Role]) -> pykka.ActorRef[Any]:
        """The running actor of a singleton role, by its class, or of an instance by its
        sender name (``executor/pair-0``); KeyError if none."""
        name = sender if isinstance(sender, str) else sender.name
        with self._lock:
            return self._running[name].ref

    def running(self) -> list[Running]:
        """Every started actor, in start order."""
        with self._lock:
            return list(self._running.values())

    # ------------------------------------------------------------------ stopping
    def stop_all(self, timeout: float) -> list[str]:
        """Ask every actor to stop and wait at most ``timeout`` seconds in all.

        Returns the senders still busy at the bound (a handler blocked in a model call or a
        tool): their daemon threads are left behind and end with the process.
        """
        with self._lock:
            self._closed = True
            running = list(self._running.items())
        futures = []
        for sender, r in running:
            try:
                futures.append((sender, r.ref.stop(block=False)))
            except pykka.ActorDeadError:
                pass
        deadline = time.monotonic() + timeout
        stuck = []
        for sender, future in futures:
            try:
                future.get(timeout=max(0.0, deadline - time.monotonic()))
            except pykka.Timeout:
                stuck.append(sender)
            except pykka.ActorDeadError:
                pass
        if stuck:
            _log.warning("roles still busy at close", roles=stuck)
        return stuck
