"""artoo.eventstore: where it is kept — the EventLog and the MegramStore (memory, a
projection of the log), behind one flat namespace over private modules."""

from ._contract import EventLogBackend, InMemoryEventLog, MegramReader
from ._megramstore import MegramStore, StoreClosed
from ._projection import MEMORY_EVENTS, catch_up_memory, open_memory, rebuild_memory, salvage
from .audit import AuditLog, AuditLogReader, AuditVerification
from .eventlog import (
    DURABILITY_MODES,
    CorruptLog,
    Durability,
    EventLog,
    NotAStore,
    StoreError,
    StoreLocked,
    close_leveldb,
    envelope_tail,
    open_leveldb,
)

__all__ = [
    "DURABILITY_MODES",
    "MEMORY_EVENTS",
    "AuditLog",
    "AuditLogReader",
    "AuditVerification",
    "CorruptLog",
    "Durability",
    "EventLog",
    "EventLogBackend",
    "InMemoryEventLog",
    "MegramReader",
    "MegramStore",
    "NotAStore",
    "StoreClosed",
    "StoreError",
    "StoreLocked",
    "catch_up_memory",
    "close_leveldb",
    "envelope_tail",
    "open_leveldb",
    "open_memory",
    "rebuild_memory",
    "salvage",
]
