"""artoo.eventstore: where it is kept — the EventLog, the MegramStore, the AuditLog."""

from .eventlog import (
    DURABILITY_MODES,
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
    "Durability",
    "EventLog",
    "NotAStore",
    "StoreError",
    "StoreLocked",
    "close_leveldb",
    "envelope_tail",
    "open_leveldb",
]
