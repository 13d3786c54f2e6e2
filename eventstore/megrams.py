"""The MegramStore: the MKCT memory as a projection of memory events (paper §6, docs/design.md C10).

Every memory change is an event on the bus (MegramRecorded, MegramRecalled, MegramForgotten,
MegramDemoted, SOPPromoted); :meth:`MegramStore.apply` folds one into the store, so a store
rebuilt by applying the event list to an empty directory answers every query as the
original does.

Keys (the paper's §6.6 schema, plus ``c|`` and ``s|``)::

    m|<id>                    -> the Megram, msgpack (level and k as last demoted)
    x|<space>|<entity>|<id>   -> b""  inverted index; "%" and "|" inside space and entity
                                       are written %25 and %7C so the key splits uniquely
    l|<level>|<id>            -> b""  level scan
    r|<id>                    -> last recall time, msgpack float (UTC epoch seconds)
    c|<id>                    -> id of the C-level Megram this one was consolidated into
    s|applied                 -> seq of the last event applied with a seq, msgpack int

LevelDB is the durable record. At open the store loads the columns the potentials need
(f, σ, k, the decay reference time, level, tag, consolidated flag) into numpy arrays
with a per-tag row index, and every ``apply`` updates both; a forgotten row is a tombstone
until enough of them pile up to compact the arrays. Writes are not fsynced: the event log
is the source of truth and the store can always be rebuilt from it.

Potentials (paper §6.4, docs/design.md C6)::

    attention = Σ |f|·e^(−kΔt)      decision = Σ σ·f·e^(−kΔt)

with Δt in days from the later of creation and last recall, never negative. Values outside
the paper's ranges are clamped (f and σ to [−1, 1], k to ≥ 0; not finite counts 0). Each
term is rounded to a multiple of :data:`QUANTUM` (10⁻¹², a decimal quantum) and the sums are
exact integer sums (while a tag's attention stays under 2²³ ≈ 8.4 million), so an answer
never depends on the order the megrams were stored in: a reopened or rebuilt store answers
bit for bit as the original, and ``query_mk``, ``strongest`` and the Dreamer agree.

Only one process may open the directory: a second open raises
:class:`~artoo.eventstore.eventlog.StoreLocked` naming the path and the holder.
"""

from __future__ import annotations

from ._columns import MegramColumns
from ._megramstore import MegramStore, StoreClosed
from ._potentials import (
    ACTIONS,
    ATTENTION_FLOOR,
    AVOID,
    C_CODE,
    CAUTION,
    DECISION_BAND,
    EXPLOIT,
    IGNORE,
    K_CODE,
    LEVELS,
    M_CODE,
    QUANTUM,
    SCALE,
    SECONDS_PER_DAY,
    T_CODE,
    action,
    age_days,
    potentials,
    quantized_terms,
    tag_sums,
    to_quanta,
)
from ._projection import MEMORY_EVENTS
from .eventlog import StoreError, StoreLocked

__all__ = [
    "ACTIONS",
    "ATTENTION_FLOOR",
    "AVOID",
    "CAUTION",
    "C_CODE",
    "DECISION_BAND",
    "EXPLOIT",
    "IGNORE",
    "K_CODE",
    "LEVELS",
    "MEMORY_EVENTS",
    "M_CODE",
    "QUANTUM",
    "SCALE",
    "SECONDS_PER_DAY",
    "T_CODE",
    "MegramColumns",
    "MegramStore",
    "StoreClosed",
    "StoreError",
    "StoreLocked",
    "action",
    "age_days",
    "potentials",
    "quantized_terms",
    "tag_sums",
    "to_quanta",
]
