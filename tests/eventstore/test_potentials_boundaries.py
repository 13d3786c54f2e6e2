"""The action thresholds at their boundaries come out as exact decimal arithmetic gives
them (paper §6.4: |M_dec| ≤ 0.2 is caution), in the pure math and in the store's query."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from artoo.eventstore import MegramStore
from artoo.eventstore.megrams import action, potentials
from artoo.schemas import Megram, MegramRecorded

T0 = 1_700_000_000.0


def m(mid: str, f: float, sigma: float, k: float = 0.0) -> Megram:
    return Megram(id=mid, level="M", created_at=T0, space="s", entity="e", f=f, sigma=sigma, k=k)


def exact_action(fs: list[tuple[str, str]]) -> str:
    """The action by exact decimal arithmetic (k = 0, so every decay factor is 1)."""
    att = sum(abs(Decimal(f)) for f, _ in fs)
    dec = sum(Decimal(f) * Decimal(s) for f, s in fs)
    if att < Decimal("0.5"):
        return "ignore"
    if dec > Decimal("0.2"):
        return "exploit"
    if dec < Decimal("-0.2"):
        return "avoid"
    return "caution"


BOUNDARIES = [
    # (f of the success, f of the failure): decision = difference, exactly ±0.2 → caution
    ("0.6", "0.4"),
    ("0.85", "0.65"),
    ("0.9", "0.7"),
    ("0.8", "0.6"),
]


@pytest.mark.parametrize(("good", "bad"), BOUNDARIES)
def test_a_decision_of_exactly_plus_or_minus_0_2_is_caution(good: str, bad: str) -> None:
    up = [m("a", float(good), 1.0), m("b", float(bad), -1.0)]
    down = [m("a", float(good), -1.0), m("b", float(bad), 1.0)]
    att, dec = potentials(up, T0)
    assert dec == 0.2 and action(att, dec) == "caution"
    att, dec = potentials(down, T0)
    assert dec == -0.2 and action(att, dec) == "caution"


@pytest.mark.parametrize(
    ("fs", "expected"),
    [
        ([("0.61", "1"), ("0.4", "-1")], "exploit"),  # 0.21
        ([("0.6", "1"), ("0.41", "-1")], "caution"),  # 0.19
        ([("0.9", "-1"), ("0.69", "1")], "avoid"),  # −0.21
        ([("0.25", "1"), ("0.25", "-1")], "caution"),  # attention exactly 0.5
        ([("0.24", "1"), ("0.25", "1")], "ignore"),  # attention 0.49
    ],
)
def test_worked_examples_either_side_of_the_boundaries(
    fs: list[tuple[str, str]], expected: str
) -> None:
    megrams = [m(str(i), float(f), float(s)) for i, (f, s) in enumerate(fs)]
    assert action(*potentials(megrams, T0)) == expected == exact_action(fs)


decimals = st.integers(0, 100).map(lambda n: f"{n / 100:.2f}")
signs = st.sampled_from(["1", "-1", "0.5", "0"])


@given(st.lists(st.tuples(decimals, signs), min_size=1, max_size=12))
def test_the_action_equals_exact_decimal_arithmetic(fs: list[tuple[str, str]]) -> None:
    megrams = [m(str(i), float(f), float(s)) for i, (f, s) in enumerate(fs)]
    assert action(*potentials(megrams, T0)) == exact_action(fs)


@pytest.mark.parametrize(("good", "bad"), BOUNDARIES)
def test_the_store_query_agrees_at_the_boundary(tmp_path: Path, good: str, bad: str) -> None:
    with MegramStore.open(tmp_path / f"m{good}") as store:
        store.apply(MegramRecorded(megram=m("a", float(good), 1.0)))
        store.apply(MegramRecorded(megram=m("b", float(bad), -1.0)))
        _, dec, act = store.query_mk("s", "e", T0)
        assert (dec, act) == (0.2, "caution")
        assert store.strongest("s", "caution", 5, T0)[0].decision == 0.2


def test_the_thresholds_are_parameters_of_the_store(tmp_path: Path) -> None:
    with MegramStore.open(tmp_path / "m", attention_floor=2.0, decision_band=0.05) as store:
        store.apply(MegramRecorded(megram=m("a", 0.9, 1.0)))
        assert store.query_mk("s", "e", T0)[2] == "ignore"  # 0.9 < the floor of 2.0
    with MegramStore.open(tmp_path / "m", attention_floor=0.5, decision_band=0.95) as store:
        assert store.query_mk("s", "e", T0)[2] == "caution"  # 0.9 within ±0.95
