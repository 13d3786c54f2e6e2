"""Who gets what: a subscriber's filter (kinds, address) and picking a group's envelopes
for it. Used by the Bus for role subscriptions, replays and taps."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from artoo.schemas import MESSAGE_TYPES, Envelope, UnknownMessage

__all__ = ["Receiver", "Subscription", "kind_set", "select"]

_KNOWN_TYPES: tuple[type, ...] = (*MESSAGE_TYPES, UnknownMessage)


class Receiver(Protocol):
    """What a subscriber must offer: a non-blocking ``tell`` (a pykka ActorRef does)."""

    def tell(self, message: Any) -> None: ...


@dataclass(frozen=True, slots=True, eq=False)
class Subscription:
    """A subscriber's filter: message ``kinds`` (None = all) and address ``to`` (None = any).

    With ``addressed`` (a role's subscription), ``kinds`` are taken whatever their address
    and ``addressed`` kinds only when addressed ``to`` this subscriber.
    """

    kinds: frozenset[type] | None
    to: str | None
    ref: Receiver
    addressed: frozenset[type] | None = None


def kind_set(kinds: Iterable[type] | None) -> frozenset[type] | None:
    """The exact body types a kinds filter admits (a base class admits its known subclasses)."""
    if kinds is None:
        return None
    wanted = tuple(kinds)
    for kind in wanted:
        if not isinstance(kind, type):
            raise TypeError(f"kinds must be message classes, not {kind!r}")
    return frozenset(wanted) | {t for t in _KNOWN_TYPES if issubclass(t, wanted)}


def select(
    envelopes: tuple[Envelope, ...],
    kinds: frozenset[type] | None,
    to: str | None,
    addressed: frozenset[type] | None = None,
) -> tuple[Envelope, ...]:
    """The envelopes whose body type is in ``kinds`` and whose ``to`` matches, in order
    (with ``addressed``: also those of ``addressed`` kinds sent ``to``; see Subscription)."""
    if addressed:
        return _pick_addressed(envelopes, _Kinds(envelopes), kinds or frozenset(), addressed, to)
    return _pick(envelopes, _Kinds(envelopes), kinds, to)


class _Kinds:
    """The body types of one group, computed once (on first use) for every receiver."""

    __slots__ = ("_envelopes", "_present", "_types")

    def __init__(self, envelopes: tuple[Envelope, ...]) -> None:
        self._envelopes = envelopes
        self._types: list[type] | None = None
        self._present: frozenset[type] = frozenset()

    def types(self) -> tuple[list[type], frozenset[type]]:
        """Each envelope's body type, in order, and the set of them."""
        if self._types is None:
            self._types = [type(e.body) for e in self._envelopes]
            self._present = frozenset(self._types)
        return self._types, self._present


def _pick(
    envelopes: tuple[Envelope, ...], group: _Kinds, kinds: frozenset[type] | None, to: str | None
) -> tuple[Envelope, ...]:
    """``select`` over a group whose body types are known: a receiver that wants every kind
    in the group (or none of them) costs no per-envelope check."""
    types: list[type] = []
    if kinds is not None:
        types, present = group.types()
        if present.isdisjoint(kinds):
            return ()
        if present <= kinds:
            kinds = None
    if kinds is None:
        if to is None:
            return envelopes
        return tuple([e for e in envelopes if e.to == to])
    if to is None:
        return tuple([e for e, t in zip(envelopes, types, strict=True) if t in kinds])
    return tuple([e for e, t in zip(envelopes, types, strict=True) if t in kinds and e.to == to])


def _pick_addressed(
    envelopes: tuple[Envelope, ...],
    group: _Kinds,
    kinds: frozenset[type],
    addressed: frozenset[type],
    to: str | None,
) -> tuple[Envelope, ...]:
    """A role's one subscription: broadcast ``kinds`` plus ``addressed`` kinds sent ``to``."""
    types, present = group.types()
    if present.isdisjoint(kinds) and present.isdisjoint(addressed):
        return ()
    return tuple(
        [
            e
            for e, t in zip(envelopes, types, strict=True)
            if t in kinds or (t in addressed and e.to == to)
        ]
    )
