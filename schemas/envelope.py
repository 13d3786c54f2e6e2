"""The Envelope around every bus message, and its binary codec (msgpack)."""

from __future__ import annotations

import typing
from typing import Any

import msgspec

from .messages import AnyMessage, Message, UnknownMessage

__all__ = ["CorruptRecord", "Envelope", "decode_body", "decode_envelope", "encode_envelope"]

if typing.TYPE_CHECKING:
    _Body = Any  # for type checkers: any Message, or an UnknownMessage
else:
    _Body = AnyMessage  # for msgspec: decoding an Envelope types its body in the same pass


class Envelope(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """One message on the bus: who sent what, when, for which task, in answer to what.

    ``seq`` is the global sequence number the bus assigned (1, 2, 3, … with no gap);
    ``ts`` the clock time of the commit; ``to`` an addressed instance (for example one
    Executor–Validator pair); ``cause`` the seq of the message this one answers.
    """

    seq: int
    ts: float
    task_id: str | None
    sender: str
    to: str | None
    cause: int | None
    body: _Body  # Message | UnknownMessage (decoded typed; an unknown tag: see decode_envelope)

    @property
    def kind(self) -> str:
        """The body's tag (class name), also for an UnknownMessage."""
        body = self.body
        return body.tag if isinstance(body, UnknownMessage) else type(body).__name__


class _Wire(msgspec.Struct, array_like=True):
    seq: int
    ts: float
    task_id: str | None
    sender: str
    to: str | None
    cause: int | None
    body: msgspec.Raw


class CorruptRecord(ValueError):
    """A stored record that cannot be decoded (names the seq when known)."""


_encoder = msgspec.msgpack.Encoder()
_wire_decoder = msgspec.msgpack.Decoder(_Wire)
_body_decoder = msgspec.msgpack.Decoder(AnyMessage)
_typed_decoder = msgspec.msgpack.Decoder(Envelope)  # the body typed by its tag
_known_tags = {cls.__name__ for cls in typing.get_args(AnyMessage)}


def encode_envelope(envelope: Envelope) -> bytes:
    """Encode an envelope to msgpack bytes (one pass)."""
    body = envelope.body
    if isinstance(body, UnknownMessage):
        envelope = msgspec.structs.replace(envelope, body=msgspec.Raw(body.raw))
    return _encoder.encode(envelope)


def decode_body(raw: bytes | memoryview, *, seq: int | None = None) -> Message | UnknownMessage:
    """Decode a message body; an unknown tag gives an UnknownMessage with the raw bytes."""
    try:
        return _body_decoder.decode(raw)
    except msgspec.ValidationError as exc:
        tag = _tag_of(raw)
        if tag is not None and tag not in _known_tags:
            return UnknownMessage(tag=tag, raw=bytes(raw))
        where = f"seq {seq}" if seq is not None else "record"
        raise CorruptRecord(f"cannot decode message body of {where}: {exc}") from exc
    except msgspec.DecodeError as exc:
        where = f"seq {seq}" if seq is not None else "record"
        raise CorruptRecord(f"cannot decode message body of {where}: {exc}") from exc


def decode_envelope(data: bytes | memoryview, *, seq: int | None = None) -> Envelope:
    """Decode an envelope; raises CorruptRecord naming the seq when it cannot."""
    try:  # one pass when the body is a known message (the common case)
        return _typed_decoder.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError):
        pass  # an unknown tag (UnknownMessage) or a damaged record: the two-step path says
    try:
        w = _wire_decoder.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        where = f"seq {seq}" if seq is not None else "record"
        raise CorruptRecord(f"cannot decode envelope of {where}: {exc}") from exc
    body = decode_body(w.body, seq=w.seq if seq is None else seq)
    return Envelope(w.seq, w.ts, w.task_id, w.sender, w.to, w.cause, body)


def _tag_of(raw: bytes | memoryview) -> str | None:
    try:
        obj = msgspec.msgpack.decode(raw)
    except msgspec.DecodeError:
        return None
    if isinstance(obj, dict):
        tag = obj.get("type")
        return tag if isinstance(tag, str) else None
    return None
