"""artoo.schemas: what flows — every bus message, the Envelope, Megram and the Config.

This package imports nothing else of artoo.
"""

from .config import Config, GGSConfig
from .envelope import CorruptRecord, Envelope, decode_body, decode_envelope, encode_envelope
from .messages import *  # noqa: F403
from .messages import __all__ as _messages_all

__all__ = [
    "Config",
    "CorruptRecord",
    "Envelope",
    "GGSConfig",
    "decode_body",
    "decode_envelope",
    "encode_envelope",
    *_messages_all,
]
