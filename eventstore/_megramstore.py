"""The MegramStore: the paper's LevelDB schema for megrams, with numpy columns in memory
for the queries; every change comes from a memory event (a projection of the log)."""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Self

import msgspec
import numpy as np
import plyvel

from artoo.schemas import (
    Megram,
    MegramDemoted,
    MegramForgotten,
    MegramRecalled,
    MegramRecorded,
    Message,
    SOPPromoted,
    TagPotential,
)

from .eventlog import StoreError, close_leveldb, open_leveldb

if TYPE_CHECKING:
    from plyvel._plyvel import Snapshot, WriteBatch
from ._columns import _COLUMN_TYPES, _LOADED_COLUMNS, MegramColumns, _Rows, _Table
from ._potentials import (
    _LEVEL_CODE,
    ACTIONS,
    ATTENTION_FLOOR,
    C_CODE,
    DECISION_BAND,
    K_CODE,
    LEVELS,
    SCALE,
    _action_codes,
    _clean,
    _rate,
    _slim_decoder,
    action,
    quantized_terms,
    tag_sums,
)

_COMPACT_MIN_DEAD = 4096
_BATCH = 10_000  # events per WriteBatch in apply_many

_M, _X, _L, _R, _C = b"m|", b"x|", b"l|", b"r|", b"c|"
_APPLIED = b"s|applied"
_LOG = b"s|log_id"  # the identity of the event log this memory is a projection of
_SEP = b"|"

_megram_encoder = msgspec.msgpack.Encoder()
_megram_decoder = msgspec.msgpack.Decoder(Megram)
_float_decoder = msgspec.msgpack.Decoder(float)
_int_decoder = msgspec.msgpack.Decoder(int)
_str_decoder = msgspec.msgpack.Decoder(str)


class StoreClosed(StoreError):
    """The MegramStore was used after ``close()``."""


# --------------------------------------------------------------------------- keys
def _escape(part: str) -> bytes:
    return part.replace("%", "%25").replace("|", "%7C").encode()


def _m_key(mid: str) -> bytes:
    return _M + mid.encode()


def _x_key(space: str, entity: str, mid: str) -> bytes:
    return _X + _escape(space) + _SEP + _escape(entity) + _SEP + mid.encode()


def _l_key(level: str, mid: str) -> bytes:
    return _L + level.encode() + _SEP + mid.encode()


def _level_code(level: str) -> int:
    try:
        return _LEVEL_CODE[level]
    except KeyError:
        raise ValueError(f"unknown megram level {level!r}") from None


# --------------------------------------------------------------------------- the store
class MegramStore:
    """The MKCT memory: Megrams in LevelDB, their potentials from numpy columns.

    Open with :meth:`open`; use from one thread at a time (every public method also takes
    an internal lock, so a stray second thread is serialised rather than corrupting).
    """

    def __init__(
        self,
        path: Path,
        db: plyvel.DB,
        attention_floor: float = ATTENTION_FLOOR,
        decision_band: float = DECISION_BAND,
    ) -> None:
        """Private: use :meth:`MegramStore.open`."""
        self.attention_floor = attention_floor
        self.decision_band = decision_band
        self._path = path
        self._db: plyvel.DB | None = db
        self._lock = threading.RLock()
        self._table = _Table()
        self._ids: list[str | None] = []
        self._row_of: dict[str, int] = {}
        self._tags: list[tuple[str, str]] = []
        self._tag_of: dict[tuple[str, str], int] = {}
        self._tag_rows: list[_Rows] = []
        self._dead = 0
        self._applied_seq = 0
        self._pending: dict[str, bytes] = {}  # m| values in the batch not yet written

    # ---- lifecycle
    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        attention_floor: float = ATTENTION_FLOOR,
        decision_band: float = DECISION_BAND,
    ) -> MegramStore:
        """Open (creating if missing) the store at ``path`` and load its columns.

        ``path`` is the LevelDB directory (``<store>/memory``); ``attention_floor`` and
        ``decision_band`` decide the action of a tag's potentials (``Config.memory``, the
        paper's 0.5 and 0.2 by default). Raises
        :class:`~artoo.eventstore.eventlog.StoreLocked` naming the path and holder when
        another process (or another open in this one) holds it.
        """
        directory = Path(path)
        db = open_leveldb(directory)
        store = cls(directory, db, attention_floor, decision_band)
        try:
            store._load()
        except BaseException:
            close_leveldb(db, directory)
            raise
        return store

    def close(self) -> None:
        """Release the directory. Safe to call twice; any later use raises StoreClosed."""
        with self._lock:
            if self._db is not None:
                close_leveldb(self._db, self._path)
                self._db = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def path(self) -> Path:
        """The LevelDB directory."""
        return self._path

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran."""
        return self._db is None

    @property
    def applied_seq(self) -> int:
        """The log seq up to which memory events are applied (0: none); replay resumes after it.

        Advanced by :meth:`apply` / :meth:`apply_many` with a seq, and by :meth:`mark_applied`.
        """
        return self._applied_seq

    def __len__(self) -> int:
        with self._lock:
            return len(self._row_of)

    def __contains__(self, megram_id: object) -> bool:
        with self._lock:
            return megram_id in self._row_of

    def _require_db(self) -> plyvel.DB:
        if self._db is None:
            raise StoreClosed(f"megram store {self._path} is closed", self._path)
        return self._db

    # ---- loading
    def _load(self) -> None:
        db = self._require_db()
        ids, row_of, tag_of = self._ids, self._row_of, self._tag_of
        values: list[tuple[float, ...]] = []
        nan = math.nan
        for key, raw in db.iterator(prefix=_M):
            try:
                m = _slim_decoder.decode(raw)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                message = f"corrupt megram {key!r} in {self._path}: {exc}"
                raise StoreError(message, self._path) from exc
            mid = key[len(_M) :].decode()
            row_of[mid] = len(ids)
            ids.append(mid)
            p = tag_of.get((m.space, m.entity))
            if p is None:
                p = self._tag_index(m.space, m.entity, index_rows=False)
            at = nan if m.last_recalled_at is None else m.last_recalled_at
            values.append((m.f, m.sigma, m.k, m.created_at, at, _level_code(m.level), p))
        table = self._table
        table.reserve(len(values))
        n = table.n = len(values)
        if values:
            columns = np.array(values, dtype=np.float64)
            for j, name in enumerate(_LOADED_COLUMNS):
                table.cols[name][:n] = columns[:, j]
            cols = table.cols
            finite = np.isfinite
            for name in ("f", "sigma"):
                x = cols[name][:n]
                x[:] = np.where(finite(x), np.clip(x, -1.0, 1.0), 0.0)  # as _unit
            k = cols["k"][:n]
            k[:] = np.where(finite(k) & (k > 0.0), k, 0.0)  # as _rate
            created = cols["created"][:n]
            created[:] = np.where(finite(created), created, 0.0)
            recalled = cols["recalled"][:n]
            recalled[:] = np.where(finite(recalled), recalled, nan)
            cols["live"][:n] = True
        for key, value in db.iterator(prefix=_R):
            row = self._row_of.get(key[len(_R) :].decode())
            if row is not None:
                at = _float_decoder.decode(value)
                old = table.cols["recalled"][row]
                if math.isfinite(at) and (math.isnan(old) or at > old):
                    table.cols["recalled"][row] = at
        for key, _ in db.iterator(prefix=_C):
            row = self._row_of.get(key[len(_C) :].decode())
            if row is not None:
                table.cols["consolidated"][row] = True
        created, recalled = table.get("created"), table.get("recalled")
        table.cols["t_ref"][: table.n] = np.fmax(created, recalled)
        self._index_tags()
        raw = db.get(_APPLIED)
        self._applied_seq = 0 if raw is None else _int_decoder.decode(raw)

    def _tag_index(self, space: str, entity: str, *, index_rows: bool = True) -> int:
        key = (space, entity)
        p = self._tag_of.get(key)
        if p is None:
            p = len(self._tags)
            self._tag_of[key] = p
            self._tags.append(key)
            if index_rows:
                self._tag_rows.append(_Rows())
        return p

    def _index_tags(self) -> None:
        """Rebuild the per-tag row index from the tag column (live rows only)."""
        table = self._table
        live = np.flatnonzero(table.get("live"))
        tag = table.get("tag")[live]
        order = np.argsort(tag, kind="stable")
        rows, tag = live[order], tag[order]
        bounds = np.searchsorted(tag, np.arange(len(self._tags) + 1))
        self._tag_rows = [_Rows(rows[bounds[p] : bounds[p + 1]]) for p in range(len(self._tags))]

    # ---- applying events
    @property
    def log_id(self) -> str | None:
        """The identity of the event log this memory follows (None: not yet recorded)."""
        raw = self._require_db().get(_LOG)
        return None if raw is None else raw.decode()

    def follow(self, log_id: str) -> None:
        """Record that this memory is a projection of the log ``log_id``."""
        self._require_db().put(_LOG, log_id.encode(), sync=True)

    def mark_applied(self, seq: int) -> None:
        """Record that the log was read up to ``seq``: every memory event at or below it is in.

        Moves :attr:`applied_seq` forward only (a lower ``seq`` changes nothing), so the next
        catch-up starts after ``seq`` even when that stretch of the log held no memory event.
        """
        with self._lock:
            db = self._require_db()
            if seq > self._applied_seq:
                db.put(_APPLIED, _megram_encoder.encode(seq))
                self._applied_seq = seq

    def apply(self, event: Message, *, seq: int | None = None) -> bool:
        """Fold one memory event into the store; True when it changed anything.

        Other message types are ignored. With ``seq`` (the envelope's), an event at or
        below :attr:`applied_seq` is skipped, so replaying a log over a store is safe.
        Applying is idempotent: recording a known id, recalling earlier than the last
        recall, forgetting an unknown id or re-marking a consolidated source changes
        nothing.
        """
        with self._lock:
            db = self._require_db()
            if seq is not None and seq <= self._applied_seq:
                return False
            batch = db.write_batch()
            try:
                changed = self._apply(event, batch)
                if seq is not None:
                    self._applied_seq = seq
                    batch.put(_APPLIED, _megram_encoder.encode(seq))
                batch.write()
            finally:
                self._pending.clear()
            self._maybe_compact()
            return changed

    def apply_many(
        self, events: Iterable[Message] | Iterable[tuple[int, Message]], *, with_seq: bool = False
    ) -> int:
        """Fold many events in order (one WriteBatch per 10 000); returns how many changed.

        With ``with_seq`` the items are ``(seq, event)`` tags and behave as in
        :meth:`apply`. This is the bulk path (a rebuild, or loading a benchmark).
        """
        changed = 0
        with self._lock:
            db = self._require_db()
            batch = db.write_batch()
            pending = 0
            try:
                for item in events:
                    if with_seq:
                        seq, event = item  # type: ignore[misc]
                        if seq <= self._applied_seq:
                            continue
                    else:
                        seq, event = None, item
                    changed += self._apply(event, batch)
                    if seq is not None:
                        self._applied_seq = seq
                        batch.put(_APPLIED, _megram_encoder.encode(seq))
                    pending += 1
                    if pending >= _BATCH:
                        batch.write()
                        self._pending.clear()
                        batch = db.write_batch()
                        pending = 0
            finally:
                batch.write()
                self._pending.clear()
            self._maybe_compact()
        return changed

    def _apply(self, event: Message, batch: WriteBatch) -> bool:
        if isinstance(event, MegramRecorded):
            return self._record(event.megram, batch)
        if isinstance(event, MegramRecalled):
            return self._recall(event.ids, event.at, batch)
        if isinstance(event, MegramForgotten):
            return self._forget(event.id, batch)
        if isinstance(event, MegramDemoted):
            return self._demote(event.id, event.level, event.k, batch)
        if isinstance(event, SOPPromoted):
            return self._promote(event.megram, event.source_ids, batch)
        return False

    def _record(self, m: Megram, batch: WriteBatch) -> bool:
        if m.id in self._row_of:
            return False
        code = _level_code(m.level)
        table = self._table
        table.reserve(1)
        row = table.n
        f, sigma, k, created, recalled = _clean(m)
        cols = table.cols
        cols["f"][row] = f
        cols["sigma"][row] = sigma
        cols["k"][row] = k
        cols["created"][row] = created
        cols["recalled"][row] = math.nan if recalled is None else recalled
        cols["t_ref"][row] = created if recalled is None else max(created, recalled)
        cols["level"][row] = code
        p = self._tag_index(m.space, m.entity)
        cols["tag"][row] = p
        cols["live"][row] = True
        cols["consolidated"][row] = False
        table.n += 1
        self._tag_rows[p].append(row)
        self._ids.append(m.id)
        self._row_of[m.id] = row
        raw = _megram_encoder.encode(m)
        self._pending[m.id] = raw
        batch.put(_m_key(m.id), raw)
        batch.put(_x_key(m.space, m.entity, m.id), b"")
        batch.put(_l_key(m.level, m.id), b"")
        return True

    def _recall(self, ids: Sequence[str], at: float, batch: WriteBatch) -> bool:
        if not math.isfinite(at):
            return False
        cols = self._table.cols
        changed = False
        for mid in ids:
            row = self._row_of.get(mid)
            if row is None:
                continue
            old = cols["recalled"][row]
            if not math.isnan(old) and old >= at:
                continue
            cols["recalled"][row] = at
            cols["t_ref"][row] = max(cols["created"][row], at)
            batch.put(_R + mid.encode(), _megram_encoder.encode(float(at)))
            changed = True
        return changed

    def _forget(self, mid: str, batch: WriteBatch) -> bool:
        row = self._row_of.pop(mid, None)
        if row is None:
            return False
        cols = self._table.cols
        cols["live"][row] = False
        self._ids[row] = None
        self._pending.pop(mid, None)
        self._dead += 1
        space, entity = self._tags[cols["tag"][row]]
        key = mid.encode()
        batch.delete(_M + key)
        batch.delete(_x_key(space, entity, mid))
        batch.delete(_l_key(LEVELS[cols["level"][row]], mid))
        batch.delete(_R + key)
        batch.delete(_C + key)
        return True

    def _demote(self, mid: str, level: str, k: float, batch: WriteBatch) -> bool:
        row = self._row_of.get(mid)
        if row is None:
            return False
        code = _level_code(level)
        cols = self._table.cols
        old_code = int(cols["level"][row])
        if old_code == code and cols["k"][row] == _rate(k):
            return False
        cols["level"][row] = code
        cols["k"][row] = _rate(k)
        raw = self._pending.get(mid) or self._require_db().get(_m_key(mid))
        m = _megram_decoder.decode(raw)
        raw = _megram_encoder.encode(msgspec.structs.replace(m, level=level, k=k))
        self._pending[mid] = raw
        batch.put(_m_key(mid), raw)
        batch.delete(_l_key(LEVELS[old_code], mid))
        batch.put(_l_key(level, mid), b"")
        return True

    def _promote(self, sop: Megram, source_ids: Sequence[str], batch: WriteBatch) -> bool:
        changed = self._record(sop, batch)
        consolidated = self._table.cols["consolidated"]
        into = _megram_encoder.encode(sop.id)
        for sid in source_ids:
            row = self._row_of.get(sid)
            if row is None or consolidated[row]:
                continue
            consolidated[row] = True
            batch.put(_C + sid.encode(), into)
            changed = True
        return changed

    def _maybe_compact(self) -> None:
        if self._dead >= _COMPACT_MIN_DEAD and 2 * self._dead > self._table.n:
            self._compact()

    def _compact(self) -> None:
        """Drop tombstones and unused tags; renumber rows and tags."""
        old = self._table
        keep = np.flatnonzero(old.get("live"))
        used, tag = np.unique(old.get("tag")[keep], return_inverse=True)
        table = _Table(max(1024, len(keep) + len(keep) // 4))
        table.n = len(keep)
        for name, col in old.cols.items():
            table.cols[name][: table.n] = col[keep]
        table.cols["tag"][: table.n] = tag
        self._table = table
        self._ids = [self._ids[i] for i in keep.tolist()]
        self._row_of = {mid: row for row, mid in enumerate(self._ids)}  # type: ignore[misc]
        self._tags = [self._tags[p] for p in used.tolist()]
        self._tag_of = {key: p for p, key in enumerate(self._tags)}
        self._dead = 0
        self._index_tags()

    # ---- reading
    def get(self, megram_id: str) -> Megram | None:
        """The live Megram with this id (last recall, level and k as now), or None."""
        with self._lock:
            return self._get(megram_id)

    def get_many(self, ids: Iterable[str]) -> list[Megram]:
        """The live Megrams among ``ids``, in the order given (unknown ids skipped).

        Reads in key order through one iterator, which is cheaper than one random read
        per id.
        """
        ids = list(ids)
        with self._lock:
            db = self._require_db()
            wanted = sorted({mid for mid in ids if mid in self._row_of})
            found: dict[str, Megram] = {}
            with db.iterator(prefix=_M) as it:
                for mid in wanted:
                    key = _m_key(mid)
                    it.seek(key)
                    item = next(it, None)
                    if item is not None and item[0] == key:
                        found[mid] = self._with_recall(mid, _megram_decoder.decode(item[1]))
        return [found[mid] for mid in ids if mid in found]

    def _get(self, mid: str) -> Megram | None:
        if mid not in self._row_of:
            return None
        raw = self._require_db().get(_m_key(mid))
        if raw is None:  # pragma: no cover - columns and LevelDB disagree
            raise StoreError(f"megram {mid} missing from {self._path}", self._path)
        return self._with_recall(mid, _megram_decoder.decode(raw))

    def _with_recall(self, mid: str, m: Megram) -> Megram:
        recalled = float(self._table.cols["recalled"][self._row_of[mid]])
        if not math.isnan(recalled) and recalled != m.last_recalled_at:
            m = msgspec.structs.replace(m, last_recalled_at=recalled)
        return m

    def megrams(self) -> Iterator[Megram]:
        """Every live Megram, in id order, as of this call (a LevelDB snapshot, read lazily).

        The store must stay open while the iterator is read.
        """
        with self._lock:
            snapshot = self._require_db().snapshot()
        return _scan(snapshot)

    def tags(self) -> list[tuple[str, str]]:
        """Every (space, entity) tag with at least one live megram, sorted."""
        with self._lock:
            live = self._table.get("live")
            used = np.unique(self._table.get("tag")[live])
            return sorted(self._tags[p] for p in used.tolist())

    def _tag_live_rows(self, space: str, entity: str) -> np.ndarray:
        p = self._tag_of.get((space, entity))
        if p is None:
            return np.empty(0, dtype=np.int64)
        rows = self._tag_rows[p].view()
        return rows[self._table.cols["live"][rows]]

    def query_c(self, space: str, entity: str) -> list[Megram]:
        """The C-level SOPs of a tag, oldest first (a pure read: no recall recorded)."""
        with self._lock:
            self._require_db()
            rows = self._tag_live_rows(space, entity)
            rows = rows[self._table.cols["level"][rows] == C_CODE]
            ids = [self._ids[r] for r in rows.tolist()]
            out = [self._get(mid) for mid in ids if mid is not None]
        found = [m for m in out if m is not None]
        found.sort(key=lambda m: (m.created_at, m.id))
        return found

    def query_mk(self, space: str, entity: str, now: float) -> tuple[float, float, str]:
        """(attention, decision, action) of a tag over its live M and K megrams."""
        with self._lock:
            self._require_db()
            rows = self._tag_live_rows(space, entity)
            cols = self._table.cols
            rows = rows[cols["level"][rows] <= K_CODE]
            att_q, dec_q = quantized_terms(
                cols["f"][rows], cols["sigma"][rows], cols["k"][rows], cols["t_ref"][rows], now
            )
        att = int(att_q.sum()) / SCALE
        dec = int(dec_q.sum()) / SCALE
        return att, dec, action(att, dec, floor=self.attention_floor, band=self.decision_band)

    def potential(self, space: str, entity: str, now: float) -> TagPotential:
        """:meth:`query_mk` of one tag as a TagPotential."""
        att, dec, act = self.query_mk(space, entity, now)
        return TagPotential(space=space, entity=entity, attention=att, decision=dec, action=act)

    def strongest(
        self, space_prefix: str, action: str, limit: int, now: float
    ) -> list[TagPotential]:
        """The ``limit`` tags under ``space_prefix`` whose action is ``action``, by attention.

        Strongest = largest attention over live M/K megrams; ties go by (space, entity).
        Only tags with at least one live M/K megram take part. Example: the strongest
        ``avoid`` tags under ``"tool:"`` for the Planner's MUST NOT set.
        """
        if action not in ACTIONS:
            raise ValueError(f"unknown action {action!r}; expected one of {ACTIONS}")
        if limit <= 0:
            return []
        with self._lock:
            self._require_db()
            table, n_tags = self._table, len(self._tags)
            if n_tags == 0:
                return []
            tag_ok = np.fromiter(
                (space.startswith(space_prefix) for space, _ in self._tags), bool, n_tags
            )
            tag = table.get("tag")
            rows = np.flatnonzero(table.get("live") & (table.get("level") <= K_CODE) & tag_ok[tag])
            att_q, dec_q = quantized_terms(
                table.get("f")[rows],
                table.get("sigma")[rows],
                table.get("k")[rows],
                table.get("t_ref")[rows],
                now,
            )
            att, dec, present = tag_sums(tag[rows], att_q, dec_q, n_tags)
            codes = _action_codes(att, dec, floor=self.attention_floor, band=self.decision_band)
            chosen = np.flatnonzero(present & (codes == ACTIONS.index(action)))
            if len(chosen) > limit:
                kth = np.partition(att[chosen], len(chosen) - limit)[len(chosen) - limit]
                chosen = chosen[att[chosen] >= kth]
            names = self._tags
            found = [
                TagPotential(
                    space=names[p][0],
                    entity=names[p][1],
                    attention=float(att[p]),
                    decision=float(dec[p]),
                    action=action,
                )
                for p in chosen.tolist()
            ]
        found.sort(key=lambda t: (-t.attention, t.space, t.entity))
        return found[:limit]

    def snapshot(self) -> MegramColumns:
        """A copy of every live megram's columns (what the Dreamer plans a pass over)."""
        with self._lock:
            self._require_db()
            table = self._table
            if self._dead:
                keep = np.flatnonzero(table.get("live"))
                ids = [self._ids[i] for i in keep.tolist()]
                cols = {name: table.get(name)[keep] for name in _COLUMN_TYPES}
            else:
                ids = list(self._ids)
                cols = {name: table.get(name).copy() for name in _COLUMN_TYPES}
            return MegramColumns(
                ids=ids,  # type: ignore[arg-type]
                f=cols["f"],
                sigma=cols["sigma"],
                k=cols["k"],
                created=cols["created"],
                recalled=cols["recalled"],
                t_ref=cols["t_ref"],
                level=cols["level"],
                tag=cols["tag"],
                consolidated=cols["consolidated"],
                tags=list(self._tags),
            )

    def consolidated_into(self, megram_id: str) -> str | None:
        """The id of the SOP this megram was consolidated into, or None."""
        with self._lock:
            raw = self._require_db().get(_C + megram_id.encode())
        return None if raw is None else _str_decoder.decode(raw)


def _scan(snapshot: Snapshot) -> Iterator[Megram]:
    """The megrams of a snapshot with their last recall: m| and r| merged by id."""
    try:
        recalls = snapshot.iterator(prefix=_R)
        recall = next(recalls, None)
        for key, raw in snapshot.iterator(prefix=_M):
            mid = key[len(_M) :]
            m = _megram_decoder.decode(raw)
            while recall is not None and recall[0][len(_R) :] < mid:
                recall = next(recalls, None)
            if recall is not None and recall[0][len(_R) :] == mid:
                at = _float_decoder.decode(recall[1])
                if math.isfinite(at) and (m.last_recalled_at is None or at > m.last_recalled_at):
                    m = msgspec.structs.replace(m, last_recalled_at=at)
            yield m
    finally:
        snapshot.close()
