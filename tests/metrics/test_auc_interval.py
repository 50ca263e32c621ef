"""The noise-aware interval of ``dp_roc_auc_score(..., return_interval=True)``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from skdp.accounting import PrivacyLedger
from skdp.metrics import dp_roc_auc_score
from skdp.metrics._auc_interval import (
    _abs_quantile,
    auc_interval,
    count_share,
    hanley_mcneil_variance,
    release_with_interval,
)
from skdp.metrics._smooth import _noise_parameters, _row_local_sensitivities


def _binormal(n_rows, auc, rng, prevalence=0.5):
    y = (rng.random(n_rows) < prevalence).astype(int)
    s = rng.standard_normal(n_rows) + math.sqrt(2.0) * norm.ppf(auc) * y
    return y, s


def _delong_width(y, s, alpha=0.05):
    from scipy.stats import rankdata

    pos, neg = s[y == 1], s[y == 0]
    n, m = pos.shape[0], neg.shape[0]
    r = rankdata(s)
    v10 = (r[y == 1] - rankdata(pos)) / m
    v01 = 1.0 - (r[y == 0] - rankdata(neg)) / n
    se = math.sqrt(v10.var(ddof=1) / n + v01.var(ddof=1) / m)
    return 2.0 * norm.ppf(1.0 - alpha / 2.0) * se


@pytest.fixture
def data():
    return _binormal(1000, 0.75, np.random.default_rng(0))


# ---------------------------------------------------------------- interface, checks
def test_returns_score_and_interval(data):
    y, s = data
    auc, (lo, hi) = dp_roc_auc_score(
        y, s, epsilon=1.0, delta=1e-6, return_interval=True, random_state=0
    )
    assert 0.0 <= lo <= auc <= hi <= 1.0
    assert all(isinstance(v, float) for v in (auc, lo, hi))


def test_default_release_unchanged(data):
    y, s = data
    base = dp_roc_auc_score(y, s, epsilon=1.0, random_state=3)
    same = dp_roc_auc_score(y, s, epsilon=1.0, random_state=3, return_interval=False)
    other_alpha = dp_roc_auc_score(y, s, epsilon=1.0, random_state=3, alpha=0.1)
    assert base == same == other_alpha


def test_reproducible_with_a_seed(data):
    y, s = data
    kw = dict(epsilon=1.0, return_interval=True, random_state=5)
    assert dp_roc_auc_score(y, s, **kw) == dp_roc_auc_score(y, s, **kw)


@pytest.mark.parametrize("bad", [1, "yes", None, 0.0])
def test_return_interval_must_be_bool(data, bad):
    y, s = data
    with pytest.raises(TypeError, match="return_interval"):
        dp_roc_auc_score(y, s, epsilon=1.0, return_interval=bad)


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5, math.nan, math.inf])
def test_alpha_range(data, bad):
    y, s = data
    with pytest.raises(ValueError, match="alpha"):
        dp_roc_auc_score(y, s, epsilon=1.0, return_interval=True, alpha=bad)


@pytest.mark.parametrize("bad", [True, "0.05", None, [0.05]])
def test_alpha_type(data, bad):
    y, s = data
    with pytest.raises(TypeError, match="alpha"):
        dp_roc_auc_score(y, s, epsilon=1.0, return_interval=True, alpha=bad)


def test_ledger_charged_the_total_once(data):
    y, s = data
    ledger = PrivacyLedger(epsilon_budget=5.0, delta_budget=1e-5)
    dp_roc_auc_score(y, s, epsilon=1.0, delta=1e-6, return_interval=True, ledger=ledger)
    assert ledger.epsilon_spent == pytest.approx(1.0)
    assert ledger.delta_spent == pytest.approx(1e-6)


@pytest.mark.parametrize("labels", [np.zeros(50, int), np.ones(50, int)])
def test_single_class_does_not_raise(labels):
    s = np.random.default_rng(1).standard_normal(50)
    auc, (lo, hi) = dp_roc_auc_score(labels, s, epsilon=1.0, return_interval=True)
    assert 0.0 <= lo <= auc <= hi <= 1.0


# ---------------------------------------------------------------- the helpers
def test_count_share_public_and_bounded():
    assert count_share(math.inf, 1000, 0.05) == 0.0
    for eps in (0.01, 0.3, 1.0, 3.0, 100.0):
        for n_rows in (10, 500, 10**6):
            assert 0.02 <= count_share(eps, n_rows, 0.05) <= 0.5


def test_abs_quantile_normal_and_noise_limits():
    z = norm.ppf(0.975)
    assert _abs_quantile(2.0, 0.0, 0.95, None, 2.0) == pytest.approx(2.0 * z)
    cauchy = math.tan(math.pi * 0.95 / 2.0)
    q = _abs_quantile(0.0, 1.0, 0.95, "smooth", 2.0)
    assert cauchy <= q <= 1.01 * cauchy
    q = _abs_quantile(0.0, 1.0, 0.95, "laplace", 2.0)
    assert math.log(20.0) <= q <= 1.01 * math.log(20.0)


@pytest.mark.parametrize("kind,gamma", [("smooth", 2.0), ("laplace", 2.0), ("smooth", 3.0)])
def test_abs_quantile_conservative_but_tight(kind, gamma):
    from skdp.mechanisms import laplace_noise, smooth_sensitivity_noise

    rng = np.random.default_rng(0)
    size = 400_000
    if kind == "smooth":
        eta = smooth_sensitivity_noise(size, gamma=gamma, rng=rng)
    else:
        eta = laplace_noise(size, scale=1.0, rng=rng)
    for sigma, s in ((1.0, 0.3), (1.0, 1.0), (0.2, 1.0)):
        w = np.abs(sigma * rng.standard_normal(size) + s * eta)
        t = _abs_quantile(sigma, s, 0.95, kind, gamma)
        # about 0.95 of the mass inside (Monte Carlo error about 0.0004), not much more
        assert 0.9485 <= np.mean(w <= t) <= 0.953


def test_hanley_mcneil_null_variance():
    # at a = 0.5 it is the Mann-Whitney null variance up to O(1/(n m))
    n, m = 300, 500
    v = float(hanley_mcneil_variance(0.5, n, m))
    assert v == pytest.approx((n + m + 1) / (12.0 * n * m), rel=0.01)
    assert float(hanley_mcneil_variance(1.0, n, m)) == 0.0


def test_maxima_over_a_count_set_are_at_its_ends():
    """The interval bounds the noise scale and the variance at the ends of the count set
    only: both must be largest there (the scale depends on min(n, N - n) only,
    decreasingly; the variance is convex in n)."""
    N = 300
    local = _row_local_sensitivities("roc_auc", N, None, None)
    for delta in (0.0, 1e-6):
        scale = np.array(
            [
                _noise_parameters(local, c, N, epsilon=1.0, delta=delta, gamma=2.0)[0]
                for c in range(N + 1)
            ]
        )
        for lo, hi in ((1, 40), (20, 200), (100, 299), (140, 160)):
            assert scale[lo : hi + 1].max() == max(scale[lo], scale[hi])
    counts = np.arange(1, N)
    for a in (0.3, 0.5, 0.75, 0.95):
        v = np.array([float(hanley_mcneil_variance(a, c, N - c)) for c in counts])
        for lo, hi in ((1, 40), (20, 200), (100, 298)):
            part = v[lo - 1 : hi]
            assert part.max() <= max(part[0], part[-1]) * (1 + 1e-12)


def test_interval_uses_released_counts_only():
    """The scale at the true count feeds the release only; the interval sees the scale
    at the ends of the noisy count's confidence set."""
    calls = []

    def scale_at(count, eps):
        calls.append(count)
        return 0.01, "laplace"

    rng = np.random.default_rng(0)
    release_with_interval(
        0.8, 400, 1000, rng, epsilon=1.0, delta=1e-6, gamma=2.0, alpha=0.05, scale_at=scale_at
    )
    assert calls[0] == 400 and len(calls) == 3
    assert calls[1] < 400 < calls[2]  # a set around the noisy count, not the count


def test_interval_clamped_release_still_covers():
    # released at the clamp: the interval reaches 1 (the clipped test is still valid)
    lo, hi = auc_interval(1.0, 400, 600, 1000, 0.05, "laplace", 2.0, 0.045)
    assert hi == 1.0 and lo < 1.0


def test_empty_class_possible_gives_the_unit_interval():
    assert auc_interval(0.7, 0, 10, 1000, 0.01, "laplace", 2.0, 0.045) == (0.0, 1.0)


# ---------------------------------------------------------------- epsilon = inf
def test_epsilon_inf_close_to_delong():
    y, s = _binormal(4000, 0.8, np.random.default_rng(2))
    auc, (lo, hi) = dp_roc_auc_score(y, s, epsilon=math.inf, return_interval=True)
    assert lo < auc < hi
    assert hi - lo == pytest.approx(_delong_width(y, s), rel=0.1)


# ---------------------------------------------------------------- coverage
def _coverage(n_rows, eps, delta, reps, auc=0.75, seed=0, prevalence=0.5):
    rng = np.random.default_rng([seed, n_rows])
    hits, widths = 0, []
    for rep in range(reps):
        y, s = _binormal(n_rows, auc, rng, prevalence)
        _, (lo, hi) = dp_roc_auc_score(
            y, s, epsilon=eps, delta=delta, return_interval=True, random_state=rep
        )
        hits += lo <= auc <= hi
        widths.append(hi - lo)
    return hits / reps, float(np.mean(widths))


def test_coverage_sanity_small_simulation():
    cover, width = _coverage(2000, 1.0, 1e-6, reps=40)
    assert cover >= 0.85  # nominal 0.95; P(< 0.85) < 0.02 for a 0.95 interval
    assert width < 0.1


@pytest.mark.slow
@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_coverage_full_grid(delta):
    covers = []
    for n_rows in (500, 2000, 10_000):
        for eps in (0.3, 1.0, 3.0):
            cover, _ = _coverage(n_rows, eps, delta, reps=100, seed=1)
            covers.append(cover)
            assert cover >= 0.88, (n_rows, eps, cover)  # 100 repetitions: SE about 0.022
    assert np.mean(covers) >= 0.93


@pytest.mark.parametrize("kind", ["smooth", "laplace"])
def test_quantile_table_interpolation_is_conservative(kind):
    from skdp.metrics._auc_interval import _quantiles

    for r in np.geomspace(2e-4, 5e3, 23):
        direct = _abs_quantile(float(r), 1.0, 0.955, kind, 2.0)
        table = float(_quantiles(np.array([r]), 1.0, 0.955, kind, 2.0)[0])
        assert direct <= table <= 1.01 * direct


def test_symmetric_variance_dominates_the_binormal_model():
    """The interval uses the larger orientation of the Hanley-McNeil terms; their mean
    is already at least the equal-variance binormal covariance term at every AUC."""
    from scipy.integrate import quad

    for a in np.linspace(0.02, 0.99, 50):
        mu = math.sqrt(2.0) * norm.ppf(a)
        q1 = quad(lambda x, mu=mu: norm.pdf(x) * norm.sf(x - mu) ** 2, -30, 30, epsabs=1e-13)[0]
        binormal = q1 - a * a  # the same for both classes in this model
        hm1 = a * (1 - a) ** 2 / (2 - a)
        hm2 = a * a * (1 - a) / (1 + a)
        assert 0.5 * (hm1 + hm2) >= binormal * (1 - 1e-7)


def test_dask_input_same_release():
    da = pytest.importorskip("dask.array")
    y, s = _binormal(600, 0.75, np.random.default_rng(4))
    kw = dict(epsilon=1.0, delta=1e-6, return_interval=True, random_state=2)
    local = dp_roc_auc_score(y, s, **kw)
    dist = dp_roc_auc_score(da.from_array(y, chunks=200), da.from_array(s, chunks=200), **kw)
    assert dist == local


def test_make_dp_scorer_refuses_return_interval():
    """A scorer returns one number: the interval is for a direct call only."""
    from skdp.metrics import make_dp_scorer

    with pytest.raises(ValueError, match="return_interval=True cannot go into a scorer"):
        make_dp_scorer("roc_auc", epsilon=1.0, return_interval=True)
    make_dp_scorer("roc_auc", epsilon=1.0, return_interval=False)  # the default is fine
