"""artoo: an event-sourced actor system that runs LLM agents as a hierarchy of roles."""

import logging

__version__ = "0.1.0"

logging.getLogger("artoo").addHandler(logging.NullHandler())

__all__ = ["__version__"]
