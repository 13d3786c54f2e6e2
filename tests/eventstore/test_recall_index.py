"""The RecallIndex's two lists: BM25 against a plain formula, the inverted-file index
against brute force, and the text masking recall relies on."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from artoo.eventstore import HashEmbedder, RecallIndex, keyword_terms, task_text

WORDS = ["count", "lines", "words", "delete", "python", "largest", "commit", "sales", "total"]


def _naive_bm25(docs: list[str], query: str, k1: float = 1.2, b: float = 0.75) -> list[float]:
    terms = [keyword_terms(d) for d in docs]
    n, avg = len(docs), sum(map(len, terms)) / len(docs)
    out = []
    for t in terms:
        score = 0.0
        for q in dict.fromkeys(keyword_terms(query)):
            tf = t.count(q)
            if not tf:
                continue
            df = sum(1 for u in terms if q in u)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(t) / max(avg, 1e-9)))
        out.append(score)
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), min_size=1, max_size=12),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
)
def test_bm25_is_the_okapi_formula(docs: list[list[str]], query: list[str]) -> None:
    texts = [" ".join(d) for d in docs]
    index = RecallIndex(HashEmbedder())
    index.add_many(texts, [f"intent:{i}" for i in range(len(texts))])
    want = _naive_bm25(list(index.texts), " ".join(query))
    got = dict(index.keyword(" ".join(query), k=len(texts)))
    for doc, score in enumerate(want):
        assert math.isclose(got.get(doc, 0.0), score, rel_tol=1e-4, abs_tol=1e-5)
    # and a second query on the same index starts from a clean accumulator
    assert dict(index.keyword(" ".join(query), k=len(texts))) == got


class _Given:
    name, similar, dim = "given", 0.5, 16

    def __init__(self, table: dict[str, Any]) -> None:
        self.table = table

    def embed(self, texts: Any) -> Any:
        return np.stack([self.table[t] for t in texts])


def test_the_inverted_file_index_finds_each_row_as_brute_force_does() -> None:
    rng = np.random.default_rng(0)
    n = 3000
    vectors = rng.standard_normal((n, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = [f"request {i}" for i in range(n)]
    index = RecallIndex(_Given({task_text(t): v for t, v in zip(texts, vectors, strict=True)}))
    index.ivf_min = 1000
    index.add_many(texts, [f"intent:{i}" for i in range(n)], vectors)
    for i in range(0, n, 97):
        (top, _), *_ = index.vector(texts[i], 5)
        assert top == i == index.vector(texts[i], 5, brute=True)[0][0]
    late = rng.standard_normal(16).astype(np.float32)
    late /= np.linalg.norm(late)
    index.embedder.table["late one"] = late  # type: ignore[attr-defined]
    index.add_many(["late one"], ["intent:late"], late[None, :])
    assert index.vector("late one", 1)[0][0] == n  # added after the build: still found


def test_paths_are_masked_for_both_lists() -> None:
    assert task_text("count the lines of notes/a.txt and src/b.py") == (
        "count the lines of FILE and FILE"
    )
    assert keyword_terms("how many lines are in notes/todo.txt?") == ["line"]


class _Counting(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def embed(self, texts: Any) -> np.ndarray:
        self.seen.extend(texts)
        return super().embed(texts)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4))
def test_a_prepared_query_searches_without_embedding_and_finds_the_same(
    query_words: list[str],
) -> None:
    """Memory embeds a request while the Perceiver's model reads it (``prepare``): the
    search of the same text then embeds nothing, and returns exactly what an unprepared
    search returns."""
    docs = ["count the lines", "delete python files", "total sales", "largest commit"]
    query = " ".join(query_words)
    plain, ahead = RecallIndex(HashEmbedder()), RecallIndex(_Counting())
    for index in (plain, ahead):
        index.add_many(docs, [f"intent:{i}" for i in range(len(docs))])
    ahead.prepare(query)
    assert isinstance(ahead.embedder, _Counting)
    before = len(ahead.embedder.seen)
    assert ahead.search(query) == plain.search(query)
    assert len(ahead.embedder.seen) == before  # the search embedded nothing
    ahead.search("another request entirely")
    assert len(ahead.embedder.seen) == before + 1  # an unprepared text is embedded


def test_prepare_keeps_a_bounded_number_of_queries() -> None:
    index = RecallIndex(HashEmbedder())
    for i in range(RecallIndex.PREPARED_MAX + 5):
        index.prepare(f"request number {i}")
    assert len(index._prepared) == RecallIndex.PREPARED_MAX
    assert task_text("request number 0") not in index._prepared  # the oldest went first
