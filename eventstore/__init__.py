"""artoo.eventstore: where it is kept — the EventLog and the MegramStore (memory, a
projection of the log), behind one flat namespace over private modules."""

from ._blobs import (
    BlobCorrupt,
    BlobMissing,
    BlobStore,
    FileBlobStore,
    InMemoryBlobStore,
    PostgresBlobStore,
    sha256_hex,
)
from ._contract import EventLogBackend, InMemoryEventLog, MegramReader
from ._embed import (
    EMBEDDERS,
    Embedder,
    EmbedderUnavailable,
    HashEmbedder,
    MiniLMEmbedder,
    make_embedder,
)
from ._megramstore import MegramStore, StoreClosed
from ._potentials import action
from ._projection import MEMORY_EVENTS, catch_up_memory, open_memory, rebuild_memory, salvage
from ._recall import Hit, RecallIndex, keyword_terms, task_text
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
    "EMBEDDERS",
    "MEMORY_EVENTS",
    "AuditLog",
    "AuditLogReader",
    "AuditVerification",
    "BlobCorrupt",
    "BlobMissing",
    "BlobStore",
    "CorruptLog",
    "Durability",
    "Embedder",
    "EmbedderUnavailable",
    "EventLog",
    "EventLogBackend",
    "FileBlobStore",
    "HashEmbedder",
    "Hit",
    "InMemoryBlobStore",
    "InMemoryEventLog",
    "MegramReader",
    "MegramStore",
    "MiniLMEmbedder",
    "NotAStore",
    "PostgresBlobStore",
    "RecallIndex",
    "StoreClosed",
    "StoreError",
    "StoreLocked",
    "action",
    "catch_up_memory",
    "close_leveldb",
    "envelope_tail",
    "keyword_terms",
    "make_embedder",
    "open_leveldb",
    "open_memory",
    "rebuild_memory",
    "salvage",
    "sha256_hex",
    "task_text",
]
