"""Recall by meaning: past requests found by keyword (BM25) and by vector, fused by
Reciprocal Rank Fusion per tag, with the keyword/vector disagreement flag of
distractor-aware retrieval (seed 003; docs/memory.md "Recall by meaning").

A document is one past request (or, for episodes recorded before requests were kept, the
words of its intent slug) and the tag it was recorded under. Paths and file names are
masked to ``FILE`` on both sides (:func:`task_text`): the same task on other files is the
same task. For a query, :meth:`RecallIndex.search`:

1. ranks requests by keyword — Okapi BM25 (k1 = 1.2, b = 0.75) over an inverted index —
   and by vector — the cosine of unit vectors from an
   :class:`~artoo.eventstore._embed.Embedder`, brute force over a float32 matrix, or an
   inverted-file index (k-means cells, the ``probe`` nearest searched) past ``ivf_min``;
2. ranks tags in each list by the reciprocal-rank sum of their requests (tags are what
   memory reads; a family of paraphrases votes together);
3. fuses the two tag ranks: ``1/(rrf_k + keyword rank) + 1/(rrf_k + vector rank)``
   (rrf_k = 60);
4. flags a tag as a **distractor** when it ranks better by keyword than by vector and
   ``|r_kw − r_vec| / max(r_kw, r_vec) ≥ disagreement`` (0.5) — seed 003's rule, on tag
   ranks — or when it shares words with the query while its best cosine stays below the
   embedder's ``similar`` line (ours: in a small memory ranks cannot disagree much) —
   or, the other way round ("or vice versa"), when it is close enough by vector to be
   read while none of the query's words is in any of its requests;
5. calls a tag **recalled** when it is not flagged and its best cosine reaches
   ``similar``. The rest are irrelevant.

Hits come back request by request, the best tag's requests first.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ._embed import Embedder

__all__ = ["Hit", "Method", "RecallIndex", "keyword_terms", "task_text"]

Method = Literal["keyword", "vector", "fused"]

_TERM = re.compile(r"[a-z0-9_]+")
_STOP = frozenset(
    "a an the of in on at to for from by with and or is are be was it its this that these "
    "those do does did what which how please me my i you your can could would should will "
    "there here as into than then many much have has contain contains give show tell "
    "find get let list print display".split()
)


_PATHLIKE = re.compile(r"(?<![\w/.])(?:[\w.-]*/[\w./-]*|\.?[\w-]+\.[A-Za-z0-9]{1,5})(?![\w/])")


def task_text(text: str) -> str:
    """``text`` with its paths and file names replaced by ``FILE``: recall matches the
    task, not its arguments ("the same task on other files" is the same task)."""
    return _PATHLIKE.sub("FILE", text)


def keyword_terms(text: str) -> list[str]:
    """The BM25 terms of ``text``: its lower-case words, paths and file names out (as in
    :func:`task_text`), stop words out, a plural ``s`` stripped (``lines`` → ``line``)."""
    out = []
    for word in _TERM.findall(_PATHLIKE.sub(" ", text).lower()):
        if word in _STOP:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.append(word)
    return out


def _matvec(matrix: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``matrix @ q`` on one thread: einsum's own loop, not BLAS, whose threads spin
    against each other on a busy two-core machine (10⁴ × 384: 0.4 ms against 11 ms)."""
    return np.einsum("ij,j->i", matrix, q)


@dataclass(frozen=True, slots=True)
class _Cells:
    """The inverted-file index: k-means centroids, the rows ordered by cell, each cell's
    bounds in that order, the vectors in that order, and the row count it was built at."""

    centroids: np.ndarray
    order: np.ndarray
    bounds: np.ndarray
    matrix: np.ndarray
    built: int


@dataclass(frozen=True, slots=True)
class Hit:
    """One recalled document with both ranks (1 = best; None: not in that list)."""

    doc: int
    text: str
    tag: str
    keyword_rank: int | None
    vector_rank: int | None
    keyword: float
    vector: float
    fused: float
    disagreement: float
    distractor: bool
    recalled: bool
    """Not a distractor, and the cosine reaches the embedder's ``similar`` line."""


class _Postings:
    __slots__ = ("arrays", "docs", "tfs")

    def __init__(self) -> None:
        self.docs: list[int] = []
        self.tfs: list[int] = []
        self.arrays: tuple[np.ndarray, np.ndarray] | None = None

    def add(self, doc: int, tf: int) -> None:
        self.docs.append(doc)
        self.tfs.append(tf)
        self.arrays = None

    def view(self) -> tuple[np.ndarray, np.ndarray]:
        if self.arrays is None:
            self.arrays = (
                np.asarray(self.docs, dtype=np.int64),
                np.asarray(self.tfs, dtype=np.float32),
            )
        return self.arrays


class RecallIndex:
    """Past requests by tag, searchable by keyword, vector and both (see the module)."""

    k1 = 1.2
    b = 0.75

    def __init__(
        self,
        embedder: Embedder,
        *,
        rrf_k: int = 60,
        disagreement: float = 0.5,
        depth: int = 50,
        ivf_min: int = 200_000,
        probe: int = 24,
    ) -> None:
        self.embedder = embedder
        self.rrf_k = rrf_k
        self.disagreement = disagreement
        self.depth = depth
        self.ivf_min = ivf_min
        self.probe = probe
        self.texts: list[str] = []
        self.tags: list[str] = []
        self._key: dict[tuple[str, str], int] = {}
        self._postings: dict[str, _Postings] = {}
        self._lengths: list[int] = []
        self._total_length = 0
        self._vectors = np.zeros((1024, embedder.dim), dtype=np.float32)
        self._ivf: _Cells | None = None
        self._buffer = np.zeros(0, dtype=np.float32)  # BM25 accumulator, zero between uses
        self._prepared: dict[str, np.ndarray] = {}  # query vectors embedded ahead (prepare)

    def __len__(self) -> int:
        return len(self.texts)

    # ---- building
    def add(self, text: str, tag: str) -> int:
        """Index ``text`` under ``tag`` (an existing pair is not added twice); its doc id."""
        return self.add_many([text], [tag])[0]

    def add_many(
        self, texts: Sequence[str], tags: Sequence[str], vectors: np.ndarray | None = None
    ) -> list[int]:
        """Index many (text, tag) pairs; ``vectors`` (unit rows) skip the embedder."""
        fresh = [i for i, key in enumerate(zip(texts, tags, strict=True)) if key not in self._key]
        fresh = list({(texts[i], tags[i]): i for i in fresh}.values())
        if fresh:
            if vectors is None:
                new = self.embedder.embed([task_text(texts[i]) for i in fresh])
            else:
                new = np.asarray(vectors, dtype=np.float32)[fresh]
            n = len(self.texts)
            need = n + len(fresh)
            if need > len(self._vectors):
                grown = np.zeros((max(need, 2 * len(self._vectors)), self.embedder.dim), np.float32)
                grown[:n] = self._vectors[:n]
                self._vectors = grown
            self._vectors[n:need] = new
            for j, i in enumerate(fresh):
                doc = n + j
                self._key[(texts[i], tags[i])] = doc
                self.texts.append(texts[i])
                self.tags.append(tags[i])
                terms = keyword_terms(texts[i])
                counts: dict[str, int] = {}
                for term in terms:
                    counts[term] = counts.get(term, 0) + 1
                for term, tf in counts.items():
                    postings = self._postings.get(term)
                    if postings is None:
                        postings = self._postings[term] = _Postings()
                    postings.add(doc, tf)
                self._lengths.append(len(terms))
                self._total_length += len(terms)
            self._lengths_array: np.ndarray | None = None
        return [self._key[key] for key in zip(texts, tags, strict=True)]

    def build_ivf(self, cells: int | None = None, *, seed: int = 0, rounds: int = 6) -> None:
        """Build the inverted-file index now (k-means on a sample; every row to its cell).

        ``search`` builds it by itself once the index holds ``ivf_min`` documents; rows
        added later are searched by brute force until the next build.
        """
        n = len(self.texts)
        if n == 0:
            return
        cells = cells or max(1, int(math.sqrt(n)))
        rng = np.random.default_rng(seed)
        matrix = self._vectors[:n]
        sample = matrix[rng.choice(n, size=min(n, 40 * cells), replace=False)]
        centroids = sample[rng.choice(len(sample), size=cells, replace=False)].copy()
        for _ in range(rounds):
            assign = np.argmax(sample @ centroids.T, axis=1)
            for c in range(cells):
                members = sample[assign == c]
                if len(members):
                    mean = members.mean(0)
                    centroids[c] = mean / max(float(np.linalg.norm(mean)), 1e-12)
        owner = np.empty(n, dtype=np.int64)
        for start in range(0, n, 65_536):
            owner[start : start + 65_536] = np.argmax(
                matrix[start : start + 65_536] @ centroids.T, axis=1
            )
        order = np.argsort(owner, kind="stable")
        bounds = np.searchsorted(owner[order], np.arange(cells + 1))
        # each cell's vectors contiguous: a probe scores slices, it copies nothing
        self._ivf = _Cells(centroids, order, bounds, matrix[order], n)

    # ---- searching
    def _bm25(self, terms: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """BM25 scores of (at least) the ``k`` best requests having a term of ``terms``.

        Scores accumulate into a dense buffer at the postings only, and only the postings
        are read back (no pass over every request); the buffer is zeroed after."""
        n = len(self.texts)
        lengths = getattr(self, "_lengths_array", None)
        if lengths is None or len(lengths) != n:
            lengths = self._lengths_array = np.asarray(self._lengths, dtype=np.float32)
        if len(self._buffer) < n:
            self._buffer = np.zeros(max(n, 2 * len(self._buffer)), dtype=np.float32)
        buffer = self._buffer
        avg = self._total_length / n if n else 1.0
        touched: list[np.ndarray] = []
        for term in dict.fromkeys(terms):
            postings = self._postings.get(term)
            if postings is None:
                continue
            docs, tfs = postings.view()  # one posting per document: no repeated index
            df = len(docs)
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            norm = self.k1 * (1.0 - self.b + self.b * lengths[docs] / max(avg, 1e-9))
            buffer[docs] += idf * tfs * (self.k1 + 1.0) / (tfs + norm)
            touched.append(docs)
        if not touched:
            return np.empty(0, np.int64), np.empty(0, np.float32)
        candidates = np.concatenate(touched)
        values = buffer[candidates]
        keep = k * len(touched)  # a request appears once per term it has
        if len(candidates) > keep:
            part = np.argpartition(-values, keep - 1)[:keep]
            candidates = candidates[part]
        candidates = np.unique(candidates)
        scores = buffer[candidates].copy()
        for docs in touched:
            buffer[docs] = 0.0
        return candidates, scores

    def _top(self, docs: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[int, float]]:
        if len(docs) > k:
            part = np.argpartition(-scores, k - 1)[:k]
            docs, scores = docs[part], scores[part]
        order = np.lexsort((docs, -scores))
        return [(int(docs[i]), float(scores[i])) for i in order]

    def keyword(self, query: str, k: int | None = None) -> list[tuple[int, float]]:
        """BM25 top ``k`` (default ``depth``) as (doc, score), best first; score > 0 only."""
        k = k or self.depth
        docs, scores = self._bm25(keyword_terms(query), k)
        keep = scores > 0
        return self._top(docs[keep], scores[keep], k)

    def vector(
        self,
        query: str,
        k: int | None = None,
        *,
        brute: bool = False,
        qvec: np.ndarray | None = None,
    ) -> list[tuple[int, float]]:
        """Cosine top ``k`` (default ``depth``) as (doc, cosine), best first.

        Past ``ivf_min`` documents (unless ``brute``) only the ``probe`` nearest cells and
        the rows added since the last build are scored.
        """
        n = len(self.texts)
        if n == 0:
            return []
        q = self._query_vector(query) if qvec is None else qvec
        if not brute and n >= self.ivf_min and (self._ivf is None or self._ivf.built < n // 2):
            self.build_ivf()
        if brute or self._ivf is None:
            return self._top(np.arange(n), _matvec(self._vectors[:n], q), k or self.depth)
        cells = self._ivf
        probe = min(self.probe, len(cells.centroids))
        near = np.argpartition(-_matvec(cells.centroids, q), probe - 1)[:probe]
        rows = [cells.order[cells.bounds[c] : cells.bounds[c + 1]] for c in near.tolist()]
        found = [
            _matvec(cells.matrix[cells.bounds[c] : cells.bounds[c + 1]], q) for c in near.tolist()
        ]
        if cells.built < n:  # rows added since the build: brute force
            rows.append(np.arange(cells.built, n))
            found.append(_matvec(self._vectors[cells.built : n], q))
        return self._top(np.concatenate(rows), np.concatenate(found), k or self.depth)

    PREPARED_MAX = 16
    """Query vectors :meth:`prepare` keeps (the oldest dropped first)."""

    def prepare(self, query: str) -> None:
        """Embed ``query`` ahead of its search: a host with idle time (Memory, while the
        Perceiver's model reads the request) takes the query's embedding, the costly part
        of a recall, off the search's path. The vector is kept for the next searches of
        the same text (at most :data:`PREPARED_MAX` texts); a search of an unprepared
        text embeds it as before. Results are the same either way."""
        key = task_text(query)
        if key in self._prepared:
            return
        self._prepared[key] = self.embedder.embed([key])[0]
        while len(self._prepared) > self.PREPARED_MAX:
            del self._prepared[next(iter(self._prepared))]

    def _query_vector(self, query: str) -> np.ndarray:
        key = task_text(query)
        found = self._prepared.get(key)
        return self.embedder.embed([key])[0] if found is None else found

    def cosine(self, query: str, docs: Sequence[int]) -> np.ndarray:
        """Exact cosines of ``docs`` to ``query``."""
        q = self._query_vector(query)
        return _matvec(self._vectors[np.asarray(docs, dtype=np.int64)], q)

    def search(self, query: str, k: int = 5, method: Method = "fused") -> list[Hit]:
        """The ``k`` best requests for ``query`` by ``method``, grouped by tag: requests
        of the best tag first (see the module docstring), each with its own ranks and
        cosine and its tag's fused score, disagreement and flags. With ``method``
        "keyword" or "vector" the tags are ranked by that list alone and nothing is
        flagged (``recalled`` still needs the cosine line)."""
        if not self.texts:
            return []
        q = self._query_vector(query)
        terms = keyword_terms(query)
        kw = self.keyword(query)
        vec = self.vector(query, qvec=q)
        cos: dict[int, float] = dict(vec)
        missing = [d for d, _ in kw if d not in cos]
        if missing:
            exact = _matvec(self._vectors[np.asarray(missing, dtype=np.int64)], q)
            cos.update(zip(missing, exact.tolist(), strict=True))
        vector_order = sorted(cos, key=lambda d: (-cos[d], d))
        v_rank = {d: i for i, d in enumerate(vector_order, start=1)}
        k_rank = {d: i for i, (d, _) in enumerate(kw, start=1)}
        k_score = dict(kw)
        tag_k = self._tag_ranks([d for d, _ in kw])
        tag_v = self._tag_ranks(vector_order)
        absent = len(set(tag_k) | set(tag_v)) + 1
        best_cos: dict[str, float] = {}
        for d, c in cos.items():
            tag = self.tags[d]
            best_cos[tag] = max(best_cos.get(tag, -1.0), c)
        tag_fused: dict[str, float] = {}
        tag_flag: dict[str, tuple[float, bool]] = {}
        for tag in set(tag_k) | set(tag_v):
            rk, rv = tag_k.get(tag), tag_v.get(tag)
            fused = 0.0
            if method in ("keyword", "fused") and rk is not None:
                fused += 1.0 / (self.rrf_k + rk)
            if method in ("vector", "fused") and rv is not None:
                fused += 1.0 / (self.rrf_k + rv)
            if fused == 0.0:
                continue
            tag_fused[tag] = fused
            a, b = rk or absent, rv or absent
            disagreement = abs(a - b) / max(a, b)
            trap = rk is not None and (
                (a < b and disagreement >= self.disagreement)
                or best_cos.get(tag, -1.0) < self.embedder.similar
            )
            # the other way round (seed 003: "or vice versa"): close enough by vector to be
            # read, yet none of the query's words is in any of the tag's requests
            trap = trap or (
                rk is None and bool(terms) and best_cos.get(tag, -1.0) >= self.embedder.similar
            )
            tag_flag[tag] = (disagreement, trap and method == "fused")
        hits = []
        for d in set(v_rank) | set(k_rank):
            tag = self.tags[d]
            if tag not in tag_fused:
                continue
            rk, rv = k_rank.get(d), v_rank.get(d)
            own = (1.0 / (self.rrf_k + rk) if rk else 0.0) + (
                1.0 / (self.rrf_k + rv) if rv else 0.0
            )
            disagreement, distractor = tag_flag[tag]
            hits.append(
                (
                    -tag_fused[tag],
                    -own,
                    d,
                    Hit(
                        doc=d,
                        text=self.texts[d],
                        tag=tag,
                        keyword_rank=rk,
                        vector_rank=rv,
                        keyword=k_score.get(d, 0.0),
                        vector=cos.get(d, 0.0),
                        fused=tag_fused[tag],
                        disagreement=disagreement,
                        distractor=distractor,
                        recalled=not distractor and best_cos[tag] >= self.embedder.similar,
                    ),
                )
            )
        hits.sort(key=lambda item: item[:3])
        return [hit for *_, hit in hits[:k]]

    def _tag_ranks(self, ranked: Sequence[int]) -> dict[str, int]:
        """Tags ranked by the reciprocal-rank sum of their requests in ``ranked``."""
        score: dict[str, float] = {}
        for r, d in enumerate(ranked[: self.depth], start=1):
            tag = self.tags[d]
            score[tag] = score.get(tag, 0.0) + 1.0 / (self.rrf_k + r)
        order = sorted(score, key=lambda t: (-score[t], t))
        return {tag: i for i, tag in enumerate(order, start=1)}
