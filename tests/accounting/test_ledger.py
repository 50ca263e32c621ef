"""PrivacyLedger and the composition helpers."""

from __future__ import annotations

import copy
import math
import pickle
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skdp.accounting import (
    PrivacyLedger,
    compose_advanced,
    compose_parallel,
    compose_sequential,
)
from skdp.exceptions import BudgetExceededError, LedgerCopyError

# ------------------------------------------------------------------ composition


def test_sequential_and_parallel():
    spends = [(0.5, 1e-6), (0.25, 0.0), (1.0, 1e-5)]
    assert compose_sequential(spends) == (1.75, pytest.approx(1.1e-5))
    assert compose_parallel(spends) == (1.0, 1e-5)
    assert compose_sequential([]) == (0.0, 0.0)
    assert compose_parallel([]) == (0.0, 0.0)
    assert compose_sequential(iter(spends))[0] == 1.75  # any iterable
    assert compose_sequential([(math.inf, 0.0), (1.0, 0.0)])[0] == math.inf
    assert compose_sequential([(1.0, 0.7), (1.0, 0.7)])[1] == 1.0  # delta capped


def test_sequential_uses_exact_summation():
    assert compose_sequential([(0.1, 0.0)] * 10)[0] == 1.0


@pytest.mark.parametrize(
    "bad", [[(-0.1, 0.0)], [(0.1, -1e-9)], [(0.1, 1.5)], [(math.nan, 0)], [1.0]]
)
def test_composition_validation(bad):
    with pytest.raises((ValueError, TypeError)):
        compose_sequential(bad)
    with pytest.raises((ValueError, TypeError)):
        compose_parallel(bad)


def test_advanced_composition():
    eps, delta = compose_advanced(0.01, 1e-8, k=10_000, delta_prime=1e-6)
    expected = math.sqrt(2 * 10_000 * math.log(1e6)) * 0.01 + 10_000 * 0.01 * math.expm1(0.01)
    assert eps == pytest.approx(expected)
    assert delta == pytest.approx(10_000 * 1e-8 + 1e-6)
    assert eps < compose_sequential([(0.01, 1e-8)] * 10_000)[0]  # beats basic here
    assert compose_advanced(1.0, k=0, delta_prime=1e-6) == (0.0, 0.0)
    with pytest.raises(ValueError):
        compose_advanced(1.0, k=3, delta_prime=0.0)


@given(st.lists(st.tuples(st.floats(0, 10), st.floats(0, 0.1)), max_size=20))
def test_parallel_never_exceeds_sequential(spends):
    seq, par = compose_sequential(spends), compose_parallel(spends)
    assert par[0] <= seq[0] + 1e-12 and par[1] <= seq[1] + 1e-15


# ------------------------------------------------------------------ ledger


def test_ledger_records_and_refuses():
    ledger = PrivacyLedger(epsilon_budget=1.0, delta_budget=1e-5)
    assert ledger.spend(0.5, 1e-6, label="fit") is ledger
    ledger.spend(0.25, label="score")
    assert ledger.epsilon_spent == 0.75
    assert ledger.delta_spent == 1e-6
    assert ledger.remaining == (0.25, pytest.approx(9e-6))
    assert ledger.entries == [
        {"label": "fit", "epsilon": 0.5, "delta": 1e-6, "unit": "row"},
        {"label": "score", "epsilon": 0.25, "delta": 0.0, "unit": "row"},
    ]
    with pytest.raises(BudgetExceededError) as info:
        ledger.spend(0.5, label="refit")
    msg = str(info.value)
    assert "budget (epsilon=1, delta=1e-05)" in msg
    assert "already spent (epsilon=0.75, delta=1e-06)" in msg
    assert "requested (epsilon=0.5, delta=0)" in msg
    assert "'refit'" in msg
    assert len(ledger) == 2 and ledger.epsilon_spent == 0.75  # nothing recorded
    # the error is a ValueError too (library convention)
    assert isinstance(info.value, ValueError)
    # delta budget enforced on its own
    with pytest.raises(BudgetExceededError, match="delta"):
        ledger.spend(0.0, 1e-5)
    # exactly reaching the budget is allowed
    ledger.spend(0.25, 9e-6)
    assert ledger.remaining == (0.0, 0.0)


def test_ledger_float_rounding_is_not_refused():
    ledger = PrivacyLedger(epsilon_budget=0.3)
    ledger.spend(0.1).spend(0.2)  # 0.1 + 0.2 > 0.3 in binary floating point
    with pytest.raises(BudgetExceededError):
        ledger.spend(1e-6)


def test_ledger_parallel_entry():
    ledger = PrivacyLedger(epsilon_budget=2.0)
    ledger.spend_parallel([(1.0, 0.0)] * 5, label="cv folds")
    assert ledger.entries == [{"label": "cv folds", "epsilon": 1.0, "delta": 0.0, "unit": "row"}]
    with pytest.raises(BudgetExceededError):
        ledger.spend_parallel([(0.5, 0.0), (1.5, 0.0)])
    assert len(ledger) == 1


def test_ledger_default_budget_is_unlimited():
    ledger = PrivacyLedger()
    ledger.spend(1e6).spend(math.inf, label="non-private fit")
    assert ledger.epsilon_spent == math.inf
    assert ledger.remaining[0] == math.inf
    assert ledger.delta_spent == 0.0


def test_ledger_refuses_non_private_spend_with_finite_budget():
    with pytest.raises(BudgetExceededError):
        PrivacyLedger(epsilon_budget=10.0).spend(math.inf)


def test_ledger_reset_and_repr():
    ledger = PrivacyLedger(epsilon_budget=2.0, delta_budget=1e-5).spend(1.5, label="a")
    text = repr(ledger)
    assert text == (
        "PrivacyLedger(epsilon_budget=2, delta_budget=1e-05, epsilon_spent=1.5, "
        "delta_spent=0, n_entries=1)"
    )
    assert ledger.reset() is ledger
    assert ledger.entries == [] and ledger.epsilon_spent == 0.0
    assert ledger.epsilon_budget == 2.0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"epsilon_budget": -1.0},
        {"epsilon_budget": math.nan},
        {"delta_budget": 1.5},
        {"delta_budget": -0.1},
    ],
)
def test_ledger_budget_validation(kwargs):
    with pytest.raises(ValueError):
        PrivacyLedger(**kwargs)


def test_ledger_spend_validation():
    ledger = PrivacyLedger()
    for eps, delta in [(-1.0, 0.0), (math.nan, 0.0), (1.0, 2.0), (1.0, math.nan)]:
        with pytest.raises(ValueError):
            ledger.spend(eps, delta)
    with pytest.raises(TypeError):
        ledger.spend("1.0")
    with pytest.raises(TypeError):
        ledger.spend(1.0, label=3)
    assert ledger.entries == []


@pytest.mark.parametrize(
    "make_copy", [copy.deepcopy, copy.copy, lambda x: pickle.loads(pickle.dumps(x))]
)
def test_ledger_copies_refuse_to_spend(make_copy):
    """A copy is a read-only snapshot: its spends would never reach the original."""
    ledger = PrivacyLedger(epsilon_budget=3.0).spend(1.0, label="fit")
    other = make_copy(ledger)
    assert other.is_copy and not ledger.is_copy
    assert other.entries == ledger.entries and other.epsilon_budget == 3.0
    assert other.remaining == (2.0, 1.0) and "copy" in repr(other)
    for attempt in (
        lambda: other.spend(1.5),
        lambda: other.spend_parallel([(0.1, 0.0)]),
        lambda: other.spend_fitted(_Fitted()),
        other.reset,
    ):
        with pytest.raises(LedgerCopyError, match="n_jobs=1.*cv_privacy_spend"):
            attempt()
    assert other.epsilon_spent == 1.0 and len(other) == 1
    ledger.spend(1.5)  # the original keeps working
    assert ledger.epsilon_spent == 2.5
    assert make_copy(other).is_copy  # a copy of a copy too


def test_ledger_budget_and_entries_are_read_only():
    ledger = PrivacyLedger(epsilon_budget=1.0).spend(0.5)
    with pytest.raises(AttributeError):
        ledger.epsilon_budget = 100.0
    ledger.entries.append({"label": None, "epsilon": -5.0, "delta": 0.0, "unit": "row"})
    ledger.entries[0]["epsilon"] = 0.0
    assert ledger.entries == [{"label": None, "epsilon": 0.5, "delta": 0.0, "unit": "row"}]
    assert ledger.epsilon_spent == 0.5


class _Fitted:
    epsilon_spent_ = 0.7
    delta_spent_ = 1e-6


def test_ledger_spend_fitted():
    ledger = PrivacyLedger(epsilon_budget=1.0).spend_fitted(_Fitted())
    assert ledger.entries == [
        {"label": "_Fitted.fit", "epsilon": 0.7, "delta": 1e-6, "unit": "row"}
    ]
    with pytest.raises(ValueError, match="fitted skdp estimator"):
        ledger.spend_fitted(object())
    with pytest.raises(BudgetExceededError):
        ledger.spend_fitted(_Fitted(), label="second fit")


def test_ledger_spend_fitted_replace_one_uses_group_privacy():
    ledger = PrivacyLedger().spend_fitted(_Fitted(), relation="replace")
    (entry,) = ledger.entries
    assert entry["epsilon"] == 1.4
    assert entry["delta"] == pytest.approx((1 + math.exp(0.7)) * 1e-6)
    with pytest.raises(ValueError, match="relation"):
        ledger.spend_fitted(_Fitted(), relation="replace_one")
    with pytest.raises(TypeError, match="relation"):
        ledger.spend_fitted(_Fitted(), relation=None)


@pytest.mark.parametrize(
    "fitted",
    [
        {"epsilon_spent_": math.inf, "delta_spent_": 0.0, "privacy_guarantee_": "none"},
        # an estimator that forgot to set inf still says "none": refused as non-private
        {"epsilon_spent_": 0.5, "delta_spent_": 0.0, "privacy_guarantee_": "none"},
    ],
)
def test_ledger_spend_fitted_refuses_non_private_model(fitted):
    model = type("NonPrivateFit", (), {**fitted, "nonprivate_options_": ["bounds_X"]})()
    ledger = PrivacyLedger(epsilon_budget=1e6)
    with pytest.raises(BudgetExceededError, match="without differential privacy") as info:
        ledger.spend_fitted(model)
    assert "bounds_X" in str(info.value) and len(ledger) == 0
    unlimited = PrivacyLedger().spend_fitted(model)  # an infinite budget records it
    assert unlimited.epsilon_spent == math.inf


def test_ledger_spend_is_constant_time():
    ledger = PrivacyLedger(epsilon_budget=1e6, delta_budget=1.0)
    start = time.perf_counter()
    for _ in range(10_000):
        ledger.spend(0.01, 1e-9)
    elapsed = time.perf_counter() - start
    assert elapsed < 1.0  # was quadratic: over a minute
    assert ledger.epsilon_spent == pytest.approx(100.0, rel=1e-12)
    assert len(ledger) == 10_000


def test_ledger_running_total_is_exact():
    ledger = PrivacyLedger(epsilon_budget=1.0)
    for _ in range(10):
        ledger.spend(0.1)
    assert ledger.epsilon_spent == 1.0  # compensated: as math.fsum
    ledger.reset()
    assert ledger.epsilon_spent == 0.0 and ledger.remaining == (1.0, 1.0)


@given(st.lists(st.floats(0, 1), max_size=30), st.floats(0.1, 5))
def test_ledger_never_exceeds_budget(spends, budget):
    ledger = PrivacyLedger(epsilon_budget=budget)
    for e in spends:
        try:
            ledger.spend(e)
        except BudgetExceededError:
            pass
    assert ledger.epsilon_spent <= budget * (1 + 1e-9)
    assert ledger.epsilon_spent == pytest.approx(math.fsum(x["epsilon"] for x in ledger.entries))


class _Fit:
    def __init__(self, eps, delta, unit=None):
        self.epsilon_spent_, self.delta_spent_ = eps, delta
        self.privacy_guarantee_ = "exact"
        if unit is not None:
            self.privacy_unit_ = unit


def test_row_and_patient_spends_are_not_added():
    """A patient-level ledger refuses a per-row spend (and the reverse) with a message
    that says what to do; the unit is fixed by the first spend or at construction."""
    ledger = PrivacyLedger(3.0)
    assert ledger.unit is None
    ledger.spend_fitted(_Fit(1.0, 0.0, "group"))
    assert ledger.unit == "group" and ledger.entries[0]["unit"] == "group"
    with pytest.raises(ValueError, match="per patient.*max_rows_per_group"):
        ledger.spend(0.5)
    with pytest.raises(ValueError, match="per patient"):
        ledger.spend_fitted(_Fit(0.5, 0.0))
    assert len(ledger) == 1  # nothing recorded by the refusals
    rows = PrivacyLedger(3.0, unit="row")
    with pytest.raises(ValueError, match="separate ledger"):
        rows.spend(0.5, unit="group")
    with pytest.raises(ValueError, match="unit must be"):
        PrivacyLedger(unit="patient")


def test_per_row_fit_charged_to_a_patient_ledger_at_its_group_privacy_cost():
    """spend_fitted(max_rows_per_group=k): (k eps, k e^{(k-1) eps} delta)."""
    ledger = PrivacyLedger(10.0, 1e-3, unit="group")
    ledger.spend_fitted(_Fit(0.5, 1e-6), max_rows_per_group=4)
    entry = ledger.entries[0]
    assert entry["unit"] == "group" and entry["epsilon"] == pytest.approx(2.0)
    assert entry["delta"] == pytest.approx(4 * math.exp(1.5) * 1e-6)
    # pure DP stays pure; the conversion is refused past the budget like any spend
    ledger.spend_fitted(_Fit(1.0, 0.0), max_rows_per_group=3)
    assert ledger.entries[1]["epsilon"] == pytest.approx(3.0)
    with pytest.raises(BudgetExceededError):
        ledger.spend_fitted(_Fit(1.0, 0.0), max_rows_per_group=10)
    with pytest.raises(ValueError, match="max_rows_per_group"):
        ledger.spend_fitted(_Fit(0.1, 0.0), max_rows_per_group=0)
    # a fit that is already per patient is charged as reported
    ledger.spend_fitted(_Fit(0.5, 0.0, "group"), max_rows_per_group=3)
    assert ledger.entries[-1]["epsilon"] == 0.5
