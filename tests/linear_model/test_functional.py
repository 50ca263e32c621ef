"""Tests of DPLinearRegression (functional mechanism), spec lantz.md §2.5."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdp.exceptions import PrivacyLeakWarning
from skdp.linear_model import DPLinearRegression
from skdp.linear_model._functional import _objective_coefficients
from skdp.mechanisms.sensitivity import functional_mechanism_sensitivity


def _data(n=2000, p=3, seed=0, noise=0.1):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, p))
    w = np.linspace(1, -1, p)
    y = X @ w + 0.5 + rng.normal(0, noise, size=n)
    return X, y


BX, BY = (-2.0, 2.0), (-4.0, 5.0)


def _fit(X, y, **kw):
    params = {"epsilon": 1.0, "bounds_X": BX, "bounds_y": BY, "random_state": 0}
    params.update(kw)
    return DPLinearRegression(**params).fit(X, y)


def _coefs(X, y, bx, by, fit_intercept=True):
    lo, hi = np.broadcast_to(bx[0], X.shape[1]), np.broadcast_to(bx[1], X.shape[1])
    ylo, yhi = by
    ax, cx = 2 / (hi - lo), -2 * lo / (hi - lo) - 1
    ay, cy = 2 / (yhi - ylo), -2 * ylo / (yhi - ylo) - 1
    M, a = _objective_coefficients(
        np.ascontiguousarray(X, dtype=float),
        np.asarray(y, float),
        lo,
        hi,
        ylo,
        yhi,
        ax,
        cx,
        ay,
        cy,
        fit_intercept,
    )
    return np.concatenate([M.ravel(), a])


def test_noise_scale_depends_only_on_d_and_epsilon():
    """Invariant 2: noise_scale_ == Delta / epsilon, Delta = d'^2 + 2d'."""
    for p, eps in [(1, 0.5), (3, 1.0), (10, 3.0)]:
        X, y = _data(200, p)
        reg = _fit(X, y, epsilon=eps)
        d = p + 1
        assert reg.sensitivity_ == d * d + 2 * d
        assert reg.noise_scale_ == pytest.approx((d * d + 2 * d) / eps, rel=1e-15)
        assert reg.regularization_ == pytest.approx(5 * math.sqrt(2) * reg.noise_scale_)
        assert reg.epsilon_spent_ == eps and reg.delta_spent_ == 0.0
        assert reg.privacy_guarantee_ == "exact"
    reg = _fit(*_data(200, 3), fit_intercept=False)
    assert reg.sensitivity_ == 3 * 3 + 2 * 3


@given(
    st.integers(1, 4),
    st.integers(1, 30),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_released_coefficients_have_the_stated_sensitivity(p, n, fit_intercept, seed):
    """Invariant 1 on random neighbouring datasets (add one row, replace one row),
    through the estimator's own clipping and scaling (values partly out of bounds)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, p))
    y = rng.uniform(-6, 7, size=n)
    x_new, y_new = rng.uniform(-5, 5, size=p), rng.uniform(-9, 9)
    delta = functional_mechanism_sensitivity(p, fit_intercept=fit_intercept)
    if fit_intercept:
        c = _coefs(X, y, BX, BY)
        c_add = _coefs(np.vstack([X, x_new]), np.append(y, y_new), BX, BY)
    else:
        lo, hi = np.full(p, BX[0]), np.full(p, BX[1])
        ax, ay = 1 / np.maximum(np.abs(lo), np.abs(hi)), 1 / max(abs(BY[0]), abs(BY[1]))

        def f(X_, y_):
            M, a = _objective_coefficients(
                X_, y_, lo, hi, BY[0], BY[1], ax, np.zeros(p), ay, 0.0, False
            )
            return np.concatenate([M.ravel(), a])

        c, c_add = f(X, y), f(np.vstack([X, x_new]), np.append(y, y_new))
    assert np.abs(c_add - c).sum() <= delta + 1e-9
    if fit_intercept:
        X_rep, y_rep = X.copy(), y.copy()
        X_rep[0], y_rep[0] = x_new, y_new
        assert np.abs(_coefs(X_rep, y_rep, BX, BY) - c).sum() <= 2 * delta + 1e-9


def test_density_ratio_of_the_release_is_bounded_by_epsilon():
    """Invariant 3: for realised noisy coefficients z, the Laplace log-density ratio
    between neighbouring datasets is at most epsilon."""
    rng = np.random.default_rng(1)
    eps = 0.7
    for _ in range(50):
        X = rng.uniform(-2, 2, size=(20, 2))
        y = rng.uniform(-4, 5, size=20)
        c = _coefs(X, y, BX, BY)
        c2 = _coefs(X[1:], y[1:], BX, BY)  # remove one row
        b = functional_mechanism_sensitivity(2) / eps
        z = c + rng.laplace(0, b, size=c.shape)
        log_ratio = (np.abs(z - c2).sum() - np.abs(z - c).sum()) / b
        assert abs(log_ratio) <= eps + 1e-9


def test_converges_to_ols_on_clipped_data_as_epsilon_grows():
    """Invariant 5 (and 6: predictions in original units)."""
    X, y = _data(3000, 3, noise=0.5)
    X[:5] = 3.0  # out of bounds: clipped
    Xc = np.clip(X, *BX)
    yc = np.clip(y, *BY)
    ols = LinearRegression().fit(Xc, yc)
    for eps in (1e12, math.inf):
        reg = _fit(X, y, epsilon=eps)
        np.testing.assert_allclose(reg.coef_, ols.coef_, atol=1e-6)
        assert reg.intercept_ == pytest.approx(ols.intercept_, abs=1e-6)
    assert reg.epsilon_spent_ == math.inf and reg.noise_scale_ == 0.0
    np.testing.assert_allclose(reg.predict(X), X @ reg.coef_ + reg.intercept_)
    # error shrinks with epsilon
    errs = [
        np.mean(
            [
                np.abs(_fit(X, y, epsilon=e, random_state=s).coef_ - ols.coef_).sum()
                for s in range(10)
            ]
        )
        for e in (0.3, 3.0, 30.0)
    ]
    assert errs[0] > errs[1] > errs[2]


def test_no_intercept_is_linear_through_origin():
    X, y = _data(1000, 2)
    reg = _fit(X, y, fit_intercept=False, epsilon=math.inf)
    assert reg.intercept_ == 0.0
    ols = LinearRegression(fit_intercept=False).fit(X, np.clip(y, *BY))
    np.testing.assert_allclose(reg.coef_, ols.coef_, atol=1e-8)
    np.testing.assert_allclose(reg.predict(X), X @ reg.coef_)


def test_reproducible_and_row_order_invariant():
    """Invariants 7 and 9."""
    X, y = _data(500, 3)
    a = _fit(X, y, random_state=7)
    b = _fit(X, y, random_state=7)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.intercept_ == b.intercept_
    c = _fit(X, y, random_state=8)
    assert not np.allclose(a.coef_, c.coef_)
    perm = np.random.default_rng(0).permutation(len(y))
    d = _fit(X[perm], y[perm], random_state=7)
    np.testing.assert_allclose(d.coef_, a.coef_, rtol=1e-9, atol=1e-12)
    # a Generator is consumed: two fits with the same generator differ
    g = np.random.default_rng(3)
    e1, e2 = _fit(X, y, random_state=g), _fit(X, y, random_state=g)
    assert not np.allclose(e1.coef_, e2.coef_)


def test_post_processing_keeps_the_objective_bounded():
    """Invariant 4: coefficients are finite even at tiny epsilon and without
    regularisation (trimming drops non-positive directions)."""
    X, y = _data(50, 4)
    for s in range(20):
        for reg in ("zhang", 0.0):
            m = _fit(X, y, epsilon=0.01, regularization=reg, random_state=s)
            assert np.all(np.isfinite(m.coef_)) and math.isfinite(m.intercept_)
            assert 1 <= m.n_components_ <= 5


def test_clip_or_raise_and_nan():
    """Invariant 8."""
    X, y = _data(100, 2)
    X[3, 1] = 9.5
    _fit(X, y)  # clipped silently
    with pytest.raises(ValueError, match="column.*1") as exc:
        _fit(X, y, clip=False)
    assert "9.5" not in str(exc.value)
    X, y = _data(100, 2)
    y[0] = 99.0
    with pytest.raises(ValueError, match="'y'"):
        _fit(X, y, clip=False)
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        _fit(X, y)


def test_sample_weight_rejected():
    X, y = _data(100, 2)
    with pytest.raises(ValueError, match="sample_weight"):
        DPLinearRegression(bounds_X=BX, bounds_y=BY).fit(X, y, sample_weight=np.ones(100))
    DPLinearRegression(bounds_X=BX, bounds_y=BY).fit(X, y, sample_weight=None)
    with pytest.raises(TypeError):
        DPLinearRegression(bounds_X=BX, bounds_y=BY).fit(X, y, weights=1)


def test_missing_bounds_are_estimated_privately_within_the_budget():
    X, y = _data(3000, 2)
    reg = DPLinearRegression(epsilon=2.0, random_state=0).fit(X, y)
    assert reg.epsilon_spent_ == 2.0
    assert reg.privacy_breakdown_["bounds"] > 0
    assert sum(reg.privacy_breakdown_.values()) == pytest.approx(2.0)
    assert reg.noise_scale_ == pytest.approx(reg.sensitivity_ / reg.privacy_breakdown_["objective"])
    lo, hi = reg.bounds_X_
    assert lo.shape == (2,) and np.all(lo < hi)
    # only y missing
    reg = DPLinearRegression(epsilon=2.0, bounds_X=BX, random_state=0).fit(X, y)
    assert 0 < reg.privacy_breakdown_["bounds"] < 2.0
    np.testing.assert_array_equal(reg.bounds_X_[0], [-2.0, -2.0])


def test_data_bounds_opt_in_warns():
    X, y = _data(100, 2)
    with pytest.warns(PrivacyLeakWarning):
        DPLinearRegression(bounds_X="data", bounds_y=BY).fit(X, y)
    with pytest.warns(PrivacyLeakWarning):
        DPLinearRegression(bounds_X=BX, bounds_y="data").fit(X, y)


def test_per_feature_bounds_and_original_units():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(0, 100, 20000), rng.uniform(-1, 1, 20000)])
    y = 0.05 * X[:, 0] - 2 * X[:, 1] + 3 + rng.normal(0, 0.1, 20000)
    reg = DPLinearRegression(
        epsilon=5.0, bounds_X=([0, -1], [100, 1]), bounds_y=(-2, 10), random_state=0
    ).fit(X, y)
    np.testing.assert_allclose(reg.coef_, [0.05, -2], rtol=0.1)
    assert reg.intercept_ == pytest.approx(3, abs=0.5)


def test_pipeline_and_grid_search():
    X, y = _data(3000, 3)
    pipe = make_pipeline(FunctionTransformer(), DPLinearRegression(bounds_X=BX, bounds_y=BY))
    pipe.fit(X, y)
    assert pipe.score(X, y) > 0.5
    gs = GridSearchCV(
        DPLinearRegression(bounds_X=BX, bounds_y=BY, random_state=0),
        {"epsilon": [0.1, 10.0]},
        cv=3,
    ).fit(X, y)
    assert gs.best_params_["epsilon"] == 10.0


def test_fitted_model_stores_no_unnoised_statistic():
    X, y = _data(300, 2)
    reg = _fit(X, y, epsilon=1.0)
    M = _coefs(X, y, BX, BY)
    for name, value in vars(reg).items():
        if name.endswith("_") and isinstance(value, np.ndarray):
            assert not np.isin(np.round(M, 8), np.round(value, 8)).any(), name
    assert set(vars(reg)) >= {"coef_", "intercept_", "bounds_X_", "bounds_y_"}


def test_invalid_params():
    X, y = _data(50, 2)
    with pytest.raises(ValueError):
        DPLinearRegression(epsilon=0).fit(X, y)
    with pytest.raises(ValueError):
        DPLinearRegression(regularization="big").fit(X, y)
    with pytest.raises(ValueError, match="bounds_X"):
        DPLinearRegression(bounds_X=(1, 0), bounds_y=BY).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _fit(X, y)  # declared bounds: no warning


def test_all_directions_trimmed_falls_back_with_a_warning(monkeypatch):
    """Spec §2.4e: if every eigenvalue is trimmed, coef_ = 0 and intercept_ = mid(y)."""
    from skdp.linear_model import _functional
    from skdp.linear_model._functional import _trimmed_minimiser

    w, kept = _trimmed_minimiser(-np.eye(3), np.ones(3))
    assert kept == 0 and np.all(w == 0)
    w, kept = _trimmed_minimiser(np.diag([2.0, -1.0]), np.array([4.0, 1.0]))
    assert kept == 1 and np.allclose(w, [-1.0, 0.0])

    def huge_negative(size, *, scale, rng):
        return -1e9 * np.eye(size[0]) if isinstance(size, tuple) else np.zeros(size)

    monkeypatch.setattr(_functional, "laplace_noise", huge_negative)
    X, y = _data(50, 2)
    with pytest.warns(UserWarning, match="trimmed"):
        reg = _fit(X, y, epsilon=1.0)
    assert np.all(reg.coef_ == 0) and reg.intercept_ == pytest.approx(0.5)
    assert reg.n_components_ == 0


def test_dict_bounds_for_dataframes():
    import pandas as pd

    X, y = _data(500, 2)
    df = pd.DataFrame(X, columns=["a", "b"])
    reg = DPLinearRegression(
        bounds_X={"b": (-2, 2), "a": (-2, 3)}, bounds_y=BY, random_state=0
    ).fit(df, y)
    np.testing.assert_array_equal(reg.bounds_X_[0], [-2, -2])
    np.testing.assert_array_equal(reg.bounds_X_[1], [3, 2])
    with pytest.raises(ValueError, match="'b'"):
        DPLinearRegression(bounds_X={"a": (-2, 3)}, bounds_y=BY).fit(df, y)


def _capture_grid_release(monkeypatch):
    """Record every (value, output, (grid, D, eps')) of the grid mechanism in a fit."""
    from skdp.linear_model import _functional

    calls = []
    real = _functional.grid_laplace

    def spy(value, **kw):
        out, params = real(value, **kw)
        calls.append((np.array(value, dtype=float), out, params, kw["source"]))
        return out, params

    def no_float_laplace(*args, **kwargs):
        raise AssertionError("secure_mode must not draw floating-point Laplace noise")

    monkeypatch.setattr(_functional, "grid_laplace", spy)
    monkeypatch.setattr(_functional, "laplace_noise", no_float_laplace)
    return calls


def test_secure_mode_releases_grid_multiples_from_the_discrete_sampler(monkeypatch):
    """secure_mode: one grid release of all d'^2 + d' coefficients, exact multiples of
    the power-of-two grid, drawn from os.urandom (not reproducible with random_state)."""
    calls = _capture_grid_release(monkeypatch)
    X, y = _data(500, 3)
    reg = _fit(X, y, secure_mode=True)
    assert len(calls) == 1
    value, out, (grid, big_d, eps_q), source = calls[0]
    d = 4
    assert value.shape == out.shape == (d * d + d,)
    np.testing.assert_array_equal(value, _coefs(X, y, BX, BY))
    assert source.secure
    assert math.frexp(grid)[0] == 0.5  # a power of two
    assert grid * value.size <= 2**-10 * reg.sensitivity_
    steps = out / grid
    np.testing.assert_array_equal(steps, np.round(steps))  # exact multiples of the grid
    assert big_d == math.floor(reg.sensitivity_ / grid) + value.size
    assert reg.noise_scale_ == pytest.approx(big_d * grid / float(eps_q), rel=1e-15)
    assert reg.sensitivity_ <= reg.noise_scale_ <= (1 + 2**-9) * reg.sensitivity_  # epsilon=1
    assert reg.regularization_ == pytest.approx(5 * math.sqrt(2) * reg.noise_scale_)
    assert reg.epsilon_spent_ == 1.0 and reg.privacy_guarantee_ == "exact"
    # the noise comes from the OS, not from random_state
    again = _fit(X, y, secure_mode=True)
    assert not np.array_equal(again.coef_, reg.coef_)
    # epsilon=inf: no noise, no sampler
    calls.clear()
    assert _fit(X, y, secure_mode=True, epsilon=math.inf).noise_scale_ == 0.0
    assert calls == []


def test_secure_mode_keeps_the_model_quality():
    X, y = _data(3000, 3, noise=0.5)
    ols = LinearRegression().fit(np.clip(X, *BX), np.clip(y, *BY))
    for secure in (False, True):
        reg = _fit(X, y, epsilon=1e9, secure_mode=secure)
        np.testing.assert_allclose(reg.coef_, ols.coef_, atol=1e-5)
        assert reg.intercept_ == pytest.approx(ols.intercept_, abs=1e-5)
    # at a moderate epsilon both modes have the same error on average
    errs = {
        secure: np.mean(
            [
                np.abs(
                    _fit(X, y, epsilon=30.0, secure_mode=secure, random_state=s).coef_ - ols.coef_
                ).sum()
                for s in range(20)
            ]
        )
        for secure in (False, True)
    }
    assert errs[True] == pytest.approx(errs[False], rel=0.35)


def test_secure_mode_noise_has_the_documented_scale(monkeypatch):
    """Discrete Laplace noise of scale noise_scale_: mean |Z| = b, SD = sqrt(2) b."""
    calls = _capture_grid_release(monkeypatch)
    X, y = _data(100, 40)
    for _ in range(3):
        reg = _fit(X, y, epsilon=0.5, secure_mode=True, bounds_X=(-2.0, 2.0))
    z = np.concatenate([out - value for value, out, _, _ in calls])
    b = reg.noise_scale_
    assert z.size == 3 * (41 * 41 + 41)
    assert reg.noise_scale_ == pytest.approx(reg.sensitivity_ / 0.5, rel=2e-3)
    # n = 5166 draws: relative standard errors 1.4 % (mean |Z|) and 1.6 % (SD)
    assert np.mean(np.abs(z)) == pytest.approx(b, rel=0.06)
    assert np.std(z) == pytest.approx(math.sqrt(2) * b, rel=0.07)
    assert abs(np.mean(z)) < 5 * math.sqrt(2) * b / math.sqrt(z.size)
    assert np.mean(np.abs(z) > b) == pytest.approx(math.exp(-1), abs=0.03)


def test_secure_mode_param_validation():
    X, y = _data(50, 2)
    with pytest.raises(ValueError, match="secure_mode"):
        DPLinearRegression(secure_mode="yes", bounds_X=BX, bounds_y=BY).fit(X, y)
