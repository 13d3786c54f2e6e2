"""artoo.schemas: what flows — every bus message, the Envelope, Megram and the Config.

This package imports nothing else of artoo.
"""

from .audit import *  # noqa: F403
from .audit import __all__ as _audit_all
from .config import (
    AuditConfig,
    Config,
    DreamerConfig,
    GGSConfig,
    JudgeConfig,
    MemoryConfig,
    OutputCapsConfig,
    QueenConfig,
    SupervisorConfig,
    TelemetryConfig,
    ToolsConfig,
)
from .envelope import CorruptRecord, Envelope, decode_body, decode_envelope, encode_envelope
from .messages import *  # noqa: F403
from .messages import __all__ as _messages_all
from .policy import POLICIES, POLICY, RETIRED

__all__ = [
    "AuditConfig",
    "OutputCapsConfig",
    "Config",
    "CorruptRecord",
    "Envelope",
    "DreamerConfig",
    "GGSConfig",
    "JudgeConfig",
    "MemoryConfig",
    "QueenConfig",
    "SupervisorConfig",
    "TelemetryConfig",
    "ToolsConfig",
    "decode_body",
    "decode_envelope",
    "encode_envelope",
    "POLICIES",
    "POLICY",
    "RETIRED",
    *_messages_all,
    *_audit_all,
]
