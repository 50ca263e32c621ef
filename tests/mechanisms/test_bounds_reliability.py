"""Private bounds on 0/1 and integer columns; BoundsEstimateWarning from public quantities."""

import warnings

import numpy as np
import pandas as pd
import pytest

import skdp.mechanisms._bounds as B
from skdp.exceptions import BoundsEstimateWarning
from skdp.mechanisms import (
    bounds_estimate_unreliable,
    integer_grid_candidates,
    log_grid_candidates,
    private_bounds,
    resolve_bounds,
    resolve_schema_bounds,
)
from skdp.utils.schema import TabularSchema


def _rare_onehot(n=3000, seed=0):
    """Age plus a one-hot of 5 categories, two of them rarer than the 1 % tail quantile."""
    rng = np.random.default_rng(seed)
    age = rng.uniform(20, 80, n)
    cat = rng.choice(5, size=n, p=[0.6, 0.3, 0.08, 0.015, 0.005])
    onehot = np.eye(5)[cat]
    X = np.column_stack([age, onehot])
    y = 0.5 * age + onehot @ np.array([0, 3, -2, 5, 1]) + rng.normal(0, 3, n)
    return X, y


def _warnings(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, [str(x.message) for x in w if issubclass(x.category, BoundsEstimateWarning)]


# ------------------------------------------------------------- the reproduction
@pytest.mark.parametrize("seed", range(3))
def test_issue_reproduction_linear_regression_rare_onehot_warns(seed):
    # issue 21: bounds_X=None, one-hot columns, eps=10: R^2 in the hundreds below 0 and no
    # warning. The 0/1 columns of plain float arrays carry no declared kind, so the
    # estimate may still clip them, but it must say so.
    from sklearn.metrics import r2_score

    from skdp.linear_model import DPLinearRegression

    X, y = _rare_onehot()
    reg, msgs = _warnings(lambda: DPLinearRegression(epsilon=10.0, random_state=seed).fit(X, y))
    r2 = r2_score(y, reg.predict(X))
    assert r2 > 0.5 or any("collapsed onto one value" in m for m in msgs), (r2, msgs)


def test_rare_onehot_declared_binary_keeps_support_and_spends_nothing_on_it():
    X, _ = _rare_onehot()
    kinds = ["continuous"] + ["binary"] * 5
    (lo, hi, used), msgs = _warnings(
        lambda: resolve_bounds(None, X, epsilon=10.0, rng=np.random.default_rng(1), kinds=kinds)
    )
    np.testing.assert_array_equal(lo[1:], 0.0)
    np.testing.assert_array_equal(hi[1:], 1.0)
    assert used == pytest.approx(1.0)
    assert msgs == []
    # the continuous column got the whole budget: same draw as private_bounds on it alone
    lo0, hi0 = private_bounds(X[:, :1], epsilon=1.0, rng=np.random.default_rng(1))
    assert (lo[0], hi[0]) == (lo0[0], hi0[0])
    # all declared binary: nothing read, nothing spent
    lo, hi, used = resolve_bounds(
        None, X[:, 1:], epsilon=1.0, rng=np.random.default_rng(0), kinds="binary"
    )
    assert used == 0.0 and np.all(lo == 0) and np.all(hi == 1)


@pytest.mark.parametrize("seed", range(10))
def test_integer_kind_never_cuts_the_ones_of_a_mostly_zero_column(seed):
    X, _ = _rare_onehot(seed=seed)
    lo, hi = private_bounds(
        X[:, 1:], epsilon=10.0, rng=np.random.default_rng(seed), kinds="integer"
    )
    assert np.all(hi - lo >= 1)
    assert np.all(lo == np.round(lo)) and np.all(hi == np.round(hi))
    # every column's support {0, 1} is inside its range: at eps=10 per column
    assert np.all(lo <= 0) and np.all(hi >= 1)


def test_integer_grid_candidates():
    c = integer_grid_candidates(-1e6, 1e6)
    assert np.all(c == np.round(c)) and np.all(np.diff(c) >= 1)
    assert {-1.0, 0.0, 1.0} <= set(c.tolist())
    assert c[0] == -1e6 and c[-1] == 1e6
    c = integer_grid_candidates(0.5, 3.7)
    assert c.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="two integers"):
        integer_grid_candidates(0.2, 0.8)


def test_schema_integer_column_searched_on_integer_grid():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "visits": (rng.random(5000) < 0.004).astype(np.int64),  # mostly 0, rare 1
            "bmi": rng.normal(27, 4, 5000),
        }
    )
    # the kind is declared (an int64 dtype is not a declaration)
    schema = TabularSchema.from_data(frame, column_types={"visits": "integer"})
    assert schema["visits"].kind == "integer"
    for seed in range(5):
        out, used = resolve_schema_bounds(
            schema, frame, epsilon=20.0, rng=np.random.default_rng(seed)
        )
        lo, hi = out["visits"].bounds
        assert lo <= 0 and hi >= 1 and used == pytest.approx(2.0)


def test_kinds_rejected():
    with pytest.raises(ValueError, match="kinds"):
        private_bounds(
            np.zeros((5, 2)), epsilon=1.0, rng=np.random.default_rng(0), kinds=["x", "y"]
        )
    with pytest.raises(ValueError, match="kinds"):
        resolve_bounds(
            None, np.zeros((5, 2)), epsilon=1.0, rng=np.random.default_rng(0), kinds=["binary"]
        )


def test_min_width_public_and_overridable():
    X = np.random.default_rng(0).uniform(0.0, 0.002, size=(20000, 1))  # tiny units
    _, msgs = _warnings(lambda: resolve_bounds(None, X, epsilon=5.0, rng=np.random.default_rng(0)))
    assert any("minimum width" in m for m in msgs)
    _, msgs = _warnings(
        lambda: resolve_bounds(
            None,
            X,
            epsilon=5.0,
            rng=np.random.default_rng(0),
            search_range=(0, 1),
            min_width=1e-4,
        )
    )
    assert msgs == []


# ----------------------------------------------- the warning reads public quantities
def _datasets(n, d, rng):
    yield rng.normal(size=(n, d))
    yield np.zeros((n, d))
    yield (rng.random((n, d)) < 0.005).astype(float)
    yield rng.uniform(-1e6, 1e6, size=(n, d))
    yield np.full((n, d), 3.0)


@pytest.mark.parametrize("n", [50, 400, 3000, 30000])
@pytest.mark.parametrize("d", [1, 4])
@pytest.mark.parametrize("eps", [0.1, 1.0, 10.0])
def test_pre_estimate_warning_is_a_function_of_public_quantities_only(monkeypatch, n, d, eps):
    # the estimate is replaced by a fixed, data-independent release; whatever the data,
    # the refusal (None) and the warnings ("private") must then be identical, and equal
    # to the public predicate's verdict
    def fixed(X, *args, **kw):
        return np.full(d, -1.0), np.full(d, 1.0), np.zeros(d, dtype=bool)

    monkeypatch.setattr(B, "_private_bounds", fixed)
    seen, refused = set(), set()
    for X in _datasets(n, d, np.random.default_rng(n + d)):
        _, msgs = _warnings(
            lambda X=X: resolve_bounds("private", X, epsilon=eps, rng=np.random.default_rng(0))
        )
        seen.add(tuple(msgs))
        try:
            resolve_bounds(None, X, epsilon=eps, rng=np.random.default_rng(0))
        except ValueError as err:
            refused.add(str(err))
        else:
            refused.add(None)
    assert len(seen) == 1 and len(refused) == 1
    sizes = [log_grid_candidates(-1e6, 1e6).size] * d
    expected = bounds_estimate_unreliable(n, 0.1 * eps, (0.01, 0.99), sizes) is not None
    assert (len(next(iter(seen))) == 1) == expected
    assert (next(iter(refused)) is not None) == expected


@pytest.mark.parametrize("released", [(0.0, 0.001, False), (0.0, 1.0, False), (0.8, 1.2, True)])
def test_post_estimate_warning_is_a_function_of_the_release_only(monkeypatch, released):
    lo_r, hi_r, mass = released

    def fixed(X, *args, **kw):
        return np.array([lo_r]), np.array([hi_r]), np.array([mass])

    monkeypatch.setattr(B, "_private_bounds", fixed)
    seen = set()
    for X in _datasets(100_000, 1, np.random.default_rng(0)):
        _, msgs = _warnings(
            lambda X=X: resolve_bounds(None, X, epsilon=10.0, rng=np.random.default_rng(0))
        )
        seen.add(tuple(msgs))
    assert len(seen) == 1
    assert (len(next(iter(seen))) == 1) == (hi_r - lo_r < 0.01 or mass)


def test_unreliability_is_monotone_in_n_eps_and_grid():
    K = log_grid_candidates(-1e6, 1e6).size
    q = (0.01, 0.99)
    verdict = {
        (n, e): bounds_estimate_unreliable(n, e, q, [K] * 3) is not None
        for n in [100, 1000, 10_000, 100_000]
        for e in [0.01, 0.1, 1.0, 10.0]
    }
    for (n, e), bad in verdict.items():
        for (n2, e2), bad2 in verdict.items():
            if n2 >= n and e2 >= e and not bad:
                assert not bad2
    # a finer or wider grid needs more rows: there is an n at which only the big grid warns
    assert any(
        bounds_estimate_unreliable(n, 0.01, q, [10**6]) is not None
        and bounds_estimate_unreliable(n, 0.01, q, [K]) is None
        for n in range(10_000, 40_000, 500)
    )
    # declared-binary columns are not queried and do not count
    assert bounds_estimate_unreliable(10, 0.01, q, [0, 0]) is None
