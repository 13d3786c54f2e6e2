"""The paper's memory math (§6): dual-channel potentials, their four actions, exact
quantized sums. Pure: no I/O, thresholds as parameters with the paper's defaults."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

import msgspec
import numpy as np

from artoo.schemas import (
    Megram,
)

if TYPE_CHECKING:
    pass


ATTENTION_FLOOR = 0.5
"""Attention below this: ``ignore`` (paper §6.4)."""
DECISION_BAND = 0.2
"""Decision above +this: ``exploit``; below −this: ``avoid``; within: ``caution``."""
SECONDS_PER_DAY = 86_400.0
SCALE = 10**12
"""Quanta per unit: each potential term is rounded to a whole number of quanta (10⁻¹²)
before the exact integer sum, and a sum becomes a float by one correctly rounded division.
A decimal quantum (not a binary one) makes boundaries exact: 0.6 − 0.4 sums to exactly
200000000000 quanta, which reads back as the float 0.2, so |M_dec| = 0.2 is ``caution``
exactly as decimal arithmetic gives it (paper §6.4). With 2⁻⁴⁰ quanta the same sum was
0.2000000000007276 and read as ``exploit``."""
QUANTUM = 1.0 / SCALE
"""The size of one quantum (10⁻¹²)."""

IGNORE, EXPLOIT, AVOID, CAUTION = "ignore", "exploit", "avoid", "caution"
ACTIONS: tuple[str, ...] = (IGNORE, EXPLOIT, AVOID, CAUTION)

LEVELS: tuple[str, ...] = ("M", "K", "C", "T")
"""Level names by their column code (0 = M … 3 = T)."""
M_CODE, K_CODE, C_CODE, T_CODE = 0, 1, 2, 3
"""The column codes of the four levels."""

_LEVEL_CODE = {name: code for code, name in enumerate(LEVELS)}
_SPLIT = 26
_LOW_MASK = (1 << _SPLIT) - 1


class _Slim(msgspec.Struct):
    """The fields of a stored Megram that the columns need (content is not decoded)."""

    level: str
    created_at: float
    space: str
    entity: str
    last_recalled_at: float | None = None
    f: float = 0.0
    sigma: float = 0.0
    k: float = 0.0


_slim_decoder = msgspec.msgpack.Decoder(_Slim)


# --------------------------------------------------------------------------- pure math
def age_days(created_at: float, last_recalled_at: float | None, now: float) -> float:
    """Days since the later of creation and last recall; never negative (docs/design.md C6)."""
    ref = created_at if last_recalled_at is None else max(created_at, last_recalled_at)
    return max(0.0, now - ref) / SECONDS_PER_DAY


def _unit(x: float) -> float:
    return min(1.0, max(-1.0, x)) if math.isfinite(x) else 0.0


def _rate(k: float) -> float:
    return k if math.isfinite(k) and k > 0.0 else 0.0


def _clean(m: Megram | _Slim) -> tuple[float, float, float, float, float | None]:
    """(f, σ, k, created, recalled) as the potentials use them.

    The paper's ranges are enforced, so garbage in a record cannot poison a sum: f and σ
    are clamped to [−1, 1], k below 0 counts as 0, a value that is not finite counts as 0
    (a recall time that is not finite counts as no recall).
    """
    recalled = m.last_recalled_at
    if recalled is not None and not math.isfinite(recalled):
        recalled = None
    created = m.created_at if math.isfinite(m.created_at) else 0.0
    return _unit(m.f), _unit(m.sigma), _rate(m.k), created, recalled


def _check_now(now: float) -> None:
    if not math.isfinite(now):
        raise ValueError(f"now must be a finite time, not {now!r}")


def potentials(megrams: Iterable[Megram], now: float) -> tuple[float, float]:
    """The dual-channel potentials (attention, decision) of ``megrams`` at ``now``.

    Channel A Σ|f|·e^(−kΔt) and Channel B Σσ·f·e^(−kΔt), Δt in days from the later of
    ``created_at`` and ``last_recalled_at``, never negative. Every megram given counts,
    whatever its level. Values outside the paper's ranges are clamped (f and σ to
    [−1, 1], k to ≥ 0; not finite counts 0).
    """
    _check_now(now)
    att = dec = 0
    for m in megrams:
        f, sigma, k, created, recalled = _clean(m)
        ref = created if recalled is None else max(created, recalled)
        dt = max(now - ref, 0.0) / SECONDS_PER_DAY
        g = math.exp(-k * dt) * SCALE
        att += round(abs(f) * g)
        dec += round(sigma * f * g)
    return att / SCALE, dec / SCALE


def quantized_terms(
    f: np.ndarray, sigma: np.ndarray, k: np.ndarray, t_ref: np.ndarray, now: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per-row attention and decision terms, as int64 multiples of :data:`QUANTUM`.

    The columns are clean values (f and σ in [−1, 1], k ≥ 0, all finite, as the store
    keeps them); ``t_ref`` is the later of creation and last recall (epoch seconds). The
    sum of a selection of these, divided by SCALE, is :func:`potentials` of those megrams.
    """
    _check_now(now)
    x = np.maximum(now - t_ref, 0.0)
    x /= SECONDS_PER_DAY
    x *= -k
    g = np.exp(x, out=x)
    g *= SCALE
    att = np.abs(f)
    att *= g
    dec = sigma * f
    dec *= g
    return np.rint(att, out=att).astype(np.int64), np.rint(dec, out=dec).astype(np.int64)


def to_quanta(x: float) -> int:
    """``x`` as a whole number of quanta (a threshold compared with quantized sums)."""
    return round(x * SCALE)


def action(
    attention: float,
    decision: float,
    *,
    floor: float = ATTENTION_FLOOR,
    band: float = DECISION_BAND,
) -> str:
    """The planning action of a tag's potentials (paper §6.4; ``Config.memory``).

    ``ignore`` when attention < ``floor`` (0.5), else ``exploit`` when decision > +``band``
    (0.2), ``avoid`` when decision < −``band``, ``caution`` otherwise (|decision| ≤ band,
    or not a number).
    """
    if attention < floor:
        return IGNORE
    if decision > band:
        return EXPLOIT
    if decision < -band:
        return AVOID
    return CAUTION


def _action_codes(
    att: np.ndarray,
    dec: np.ndarray,
    *,
    floor: float = ATTENTION_FLOOR,
    band: float = DECISION_BAND,
) -> np.ndarray:
    """Vectorised :func:`action`, as indices into :data:`ACTIONS`."""
    codes = np.full(att.shape, ACTIONS.index(CAUTION), dtype=np.int8)
    codes[dec < -band] = ACTIONS.index(AVOID)
    codes[dec > band] = ACTIONS.index(EXPLOIT)
    codes[att < floor] = ACTIONS.index(IGNORE)
    return codes


def tag_sums(
    tag: np.ndarray, att_q: np.ndarray, dec_q: np.ndarray, n_tags: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-pair attention, decision (floats) and presence from per-row quantized terms.

    ``tag`` gives each row's tag index; the quanta come from :func:`quantized_terms`.
    The sums are exact integer sums (so they equal :meth:`MegramStore.query_mk` bit for
    bit, whatever the row order).
    """
    att = _exact_bincount(tag, att_q, n_tags).astype(np.float64) / SCALE
    dec = _exact_bincount(tag, dec_q, n_tags).astype(np.float64) / SCALE
    present = np.bincount(tag, minlength=n_tags) > 0
    return att, dec, present


def _exact_bincount(tag: np.ndarray, q: np.ndarray, n_bins: int) -> np.ndarray:
    """Exact per-bin int64 sums of ``q``: bincount adds in float64, so split each value
    into a high and a 26-bit low part whose float sums stay exact (below 2⁵³)."""
    hi = np.bincount(tag, weights=(q >> _SPLIT).astype(np.float64), minlength=n_bins)
    lo = np.bincount(tag, weights=(q & _LOW_MASK).astype(np.float64), minlength=n_bins)
    return (hi.astype(np.int64) << _SPLIT) + lo.astype(np.int64)
