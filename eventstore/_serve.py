"""Live reads of a held LevelDB log: the holder serves its committed records read-only on a
Unix socket inside the store (``<store>/events.sock``), and a reader that finds the store
held reads through it (:class:`SocketEventLog`, an :class:`EventLogBackend` for reading).

LevelDB admits one process per directory, and copying its files while they are written is
not a consistent snapshot; asking the holder is. The socket is a file in the store, so who
may read it is who may read the store (its mode follows the directory's permissions).

Frames are a 4-byte big-endian length, then msgpack. A request is one frame:
``["meta"]`` → ``[last_seq, log_id]``; ``["read", from_seq, to_seq]`` and
``["task", task_id]`` → one frame ``[seq, record]`` per envelope (the record's bytes as the
log keeps them), then an empty frame. Only committed envelopes are served (those up to the
holder's ``last_seq`` when the request came): what a reader sees, the bus delivered or will.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import msgspec

from artoo.schemas import Envelope

from .eventlog import EventLog, decode_record

__all__ = ["SOCKET_NAME", "LogServer", "SocketEventLog"]

_log = logging.getLogger("artoo.eventstore")

SOCKET_NAME = "events.sock"
"""The socket's name inside the store directory."""

_LEN = struct.Struct(">I")
_MAX_PATH = 107  # sun_path holds 108 bytes with its NUL
_encode = msgspec.msgpack.Encoder().encode
_decode = msgspec.msgpack.Decoder().decode


def _send(sock: socket.socket, payload: bytes) -> None:
    sock.sendall(_LEN.pack(len(payload)) + payload)


def _recv_exact(stream: Any, n: int) -> bytes:
    data = stream.read(n)
    if len(data) != n:
        raise ConnectionError("the store's holder closed the connection mid-answer")
    return bytes(data)


def _recv(stream: Any) -> bytes:
    (n,) = _LEN.unpack(_recv_exact(stream, _LEN.size))
    return _recv_exact(stream, n) if n else b""


class LogServer:
    """Serves ``log`` read-only on ``socket_path`` from daemon threads until :meth:`close`.

    A path too long for a Unix socket is logged and not served (``serving`` is False).
    """

    def __init__(self, log: EventLog, socket_path: Path) -> None:
        self._log = log
        self._path = socket_path
        self._stop = threading.Event()
        self._sock: socket.socket | None = None
        if len(os.fsencode(socket_path)) > _MAX_PATH:
            _log.warning("store path too long for %s: live reads are not served", SOCKET_NAME)
            return
        with contextlib.suppress(FileNotFoundError):
            socket_path.unlink()  # a stale socket of a killed holder (we hold the store)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(socket_path))
        sock.listen(16)
        self._sock = sock
        threading.Thread(target=self._accept, name="artoo-log-server", daemon=True).start()

    @property
    def serving(self) -> bool:
        """True while the socket is open."""
        return self._sock is not None and not self._stop.is_set()

    def _accept(self) -> None:
        assert self._sock is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(
                target=self._serve, args=(conn,), name="artoo-log-reader", daemon=True
            ).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rb") as stream:
            try:
                while not self._stop.is_set():
                    try:
                        request = _decode(_recv(stream))
                    except ConnectionError:
                        return
                    self._answer(conn, request)
            except (OSError, ValueError, msgspec.DecodeError) as exc:
                _log.debug("a live reader's connection ended: %s", exc)

    def _answer(self, conn: socket.socket, request: list[Any]) -> None:
        log = self._log
        last = log.last_seq
        if request[0] == "meta":
            _send(conn, _encode([last, log.log_id]))
            return
        if request[0] == "read":
            to_seq = last if request[2] is None else min(int(request[2]), last)
            records = log.read_records(int(request[1]), to_seq)
        elif request[0] == "task":
            records = (r for r in log.read_task_records(str(request[1])) if r[0] <= last)
        else:
            raise ValueError(f"unknown request {request[0]!r}")
        for seq, record in records:
            _send(conn, _encode([seq, msgspec.msgpack.Ext(0, record)]))
        _send(conn, b"")

    def close(self) -> None:
        """Stop serving and remove the socket (idempotent)."""
        if self._sock is None or self._stop.is_set():
            return
        self._stop.set()
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        with contextlib.suppress(FileNotFoundError):
            self._path.unlink()


class SocketEventLog:
    """A held store's log, read through its holder's socket (see the module docstring).

    Reading only: ``append`` raises RuntimeError. ``last_seq`` is the holder's when this
    reader connected (:meth:`refresh` asks again).
    """

    durability = "none"

    def __init__(self, socket_path: Path, *, timeout: float = 30.0) -> None:
        """Connect; ConnectionError (an OSError) when nobody serves ``socket_path``."""
        self._path = socket_path
        self._lock = threading.Lock()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout)
        try:
            self._sock.connect(str(socket_path))
        except OSError:
            self._sock.close()
            raise
        self._stream = self._sock.makefile("rb")
        self._closed = False
        self._last_seq, self._log_id = 0, ""
        self.refresh()

    def refresh(self) -> int:
        """Ask the holder for its last committed seq."""
        with self._lock:
            _send(self._sock, _encode(["meta"]))
            self._last_seq, self._log_id = _decode(_recv(self._stream))
        return self._last_seq

    @property
    def last_seq(self) -> int:
        """The holder's last committed seq (when connected, or at the last refresh)."""
        return self._last_seq

    @property
    def log_id(self) -> str:
        """The log's identity."""
        return self._log_id

    @property
    def closed(self) -> bool:
        """True once closed."""
        return self._closed

    def append(self, envelopes: object) -> list[int]:
        """Refused: a live reader cannot write."""
        raise RuntimeError(f"{self._path} is a read-only view of a held store")

    def append_encoded(self, *args: object) -> None:
        """Refused: a live reader cannot write."""
        raise RuntimeError(f"{self._path} is a read-only view of a held store")

    def _records(self, request: list[Any]) -> Iterator[Envelope]:
        with self._lock:  # the whole answer is read before the next request is sent
            _send(self._sock, _encode(request))
            rows: list[tuple[int, bytes]] = []
            while frame := _recv(self._stream):
                seq, ext = _decode(frame)
                rows.append((seq, ext.data))
        for seq, record in rows:
            yield decode_record(seq, record)

    def read(self, from_seq: int = 1, to_seq: int | None = None) -> Iterator[Envelope]:
        """Committed envelopes ``from_seq``…``to_seq`` (to the holder's last when None)."""
        if to_seq is not None and to_seq < from_seq:
            return iter(())
        return self._records(["read", max(from_seq, 1), to_seq])

    def read_task(self, task_id: str) -> Iterator[Envelope]:
        """The committed envelopes of one task, in seq order."""
        return self._records(["task", task_id])

    def close(self) -> None:
        """Close the connection (idempotent)."""
        if not self._closed:
            self._closed = True
            self._stream.close()
            self._sock.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
