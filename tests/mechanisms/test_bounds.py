"""private_quantile (exact densities on tiny datasets), private_bounds, resolve_bounds."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from skdp.exceptions import PrivacyLeakWarning
from skdp.mechanisms import (
    above_threshold_bound,
    exponential_mechanism_log_probs,
    grid_quantile_utilities,
    log_grid_candidates,
    private_bounds,
    private_grid_quantile,
    private_quantile,
    private_quantile_log_probs,
    resolve_bounds,
)
from skdp.mechanisms._bounds import DEGENERATE_WIDTH

TOL = 1e-9


def density(x, q, lower, upper, eps, points):
    """Exact output density of private_quantile at the given points."""
    z, lp = private_quantile_log_probs(x, q, lower=lower, upper=upper, epsilon=eps)
    widths = np.diff(z)
    i = np.searchsorted(z, points, side="right") - 1
    i = np.clip(i, 0, len(widths) - 1)
    with np.errstate(divide="ignore"):
        return lp[i] - np.log(widths[i])


def cdf(x, q, lower, upper, eps, t):
    z, lp = private_quantile_log_probs(x, q, lower=lower, upper=upper, epsilon=eps)
    p = np.exp(lp)
    t = np.atleast_1d(t)
    frac = np.clip((t[:, None] - z[None, :-1]) / np.maximum(np.diff(z), 1e-300)[None, :], 0, 1)
    return (frac * p[None, :]).sum(axis=1)


@st.composite
def quantile_instances(draw):
    n = draw(st.integers(0, 5))
    x = draw(st.lists(st.integers(-3, 8), min_size=n, max_size=n))  # some outside [-2, 6]
    extra = draw(st.integers(-3, 8))
    q = draw(st.sampled_from([0.0, 0.01, 0.25, 0.5, 0.9, 1.0]))
    eps = draw(st.floats(0.05, 10.0))
    return np.array(x, dtype=float), float(extra), q, eps


@given(quantile_instances())
def test_private_quantile_add_remove_density_ratio(inst):
    x, extra, q, eps = inst
    lower, upper = -2.0, 6.0
    points = np.arange(-1.75, 6.0, 0.5)  # never a data value
    d0 = density(x, q, lower, upper, eps, points)
    d1 = density(np.append(x, extra), q, lower, upper, eps, points)  # add one row
    assert np.all(np.isfinite(d0)) and np.all(np.isfinite(d1))
    assert np.all(np.abs(d0 - d1) <= eps + TOL)
    if x.size:
        d2 = density(x[1:], q, lower, upper, eps, points)  # remove one row
        assert np.all(np.abs(d0 - d2) <= eps + TOL)
        d3 = density(np.append(x[1:], extra), q, lower, upper, eps, points)  # replace
        assert np.all(np.abs(d0 - d3) <= eps + TOL)


@given(quantile_instances())
def test_private_quantile_probs_normalised(inst):
    x, _, q, eps = inst
    z, lp = private_quantile_log_probs(x, q, lower=-2.0, upper=6.0, epsilon=eps)
    assert len(z) == x.size + 2 and np.all(np.diff(z) >= 0)
    assert np.exp(lp).sum() == pytest.approx(1.0)


def test_private_quantile_sampler_law_ks():
    x = np.array([0.0, 1.0, 1.5, 4.0, 4.0, 5.0])
    rng = np.random.default_rng(0)
    draws = np.array(
        [private_quantile(x, 0.5, lower=-2, upper=6, epsilon=1.0, rng=rng) for _ in range(4000)]
    )
    assert np.all((draws >= -2) & (draws <= 6))
    assert stats.kstest(draws, lambda t: cdf(x, 0.5, -2.0, 6.0, 1.0, t)).pvalue > 1e-3


def test_private_quantile_accuracy():
    x = np.random.default_rng(0).normal(3.0, 1.0, size=5000)
    rng = np.random.default_rng(1)
    for q in (0.1, 0.5, 0.9):
        est = private_quantile(x, q, lower=-1e6, upper=1e6, epsilon=1.0, rng=rng)
        assert abs(est - np.quantile(x, q)) < 0.2


def test_private_quantile_huge_range_and_inf_epsilon():
    x = np.array([1.0, 2.0, 3.0])
    out = private_quantile(
        x, 0.5, lower=-1e308, upper=1e308, epsilon=1.0, rng=np.random.default_rng(0)
    )
    assert math.isfinite(out)
    out = private_quantile(x, 0.5, lower=0, upper=4, epsilon=math.inf, rng=np.random.default_rng(0))
    assert 1.0 <= out <= 3.0
    # empty data: uniform on the range
    z, lp = private_quantile_log_probs([], 0.5, lower=0, upper=4, epsilon=1.0)
    assert lp.shape == (1,) and lp[0] == pytest.approx(0.0)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(x=[np.nan]), "NaN"),
        (dict(quantile=1.5), "quantile"),
        (dict(lower=1.0, upper=1.0), "lower"),
        (dict(lower=-np.inf), "finite"),
        (dict(epsilon=0.0), "epsilon"),
    ],
)
def test_private_quantile_rejects(kwargs, match):
    args = dict(x=[1.0], quantile=0.5, lower=0.0, upper=2.0, epsilon=1.0) | kwargs
    with pytest.raises(ValueError, match=match):
        private_quantile(rng=np.random.default_rng(0), **args)


# ---------------------------------------------------------- grid quantile
@given(quantile_instances())
def test_grid_quantile_neighbour_ratio_exact(inst):
    x, extra, q, eps = inst
    c = log_grid_candidates(-2.0, 6.0, rel_min=0.01)
    xs = np.clip(x, -2.0, 6.0)
    u0 = grid_quantile_utilities(xs, q, c)
    lp0 = exponential_mechanism_log_probs(u0, epsilon=eps, sensitivity=1.0)
    nbrs = [np.append(xs, np.clip(extra, -2, 6))]
    if x.size:
        nbrs += [xs[1:], np.append(xs[1:], np.clip(extra, -2, 6))]
    for xn in nbrs:
        u1 = grid_quantile_utilities(xn, q, c)
        assert np.max(np.abs(u1 - u0)) <= 1.0 + TOL  # sensitivity 1, brute force
        lp1 = exponential_mechanism_log_probs(u1, epsilon=eps, sensitivity=1.0)
        assert np.all(np.abs(lp1 - lp0) <= eps + TOL)


def test_grid_quantile_sampler_matches_exact_probs():
    x = np.array([0.0, 1.0, 1.0, 1.0, 4.0, 5.0])
    c = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, 4.0, 6.0])
    lp = exponential_mechanism_log_probs(
        grid_quantile_utilities(x, 0.5, c), epsilon=2.0, sensitivity=1.0
    )
    rng = np.random.default_rng(0)
    draws = [private_grid_quantile(x, 0.5, candidates=c, epsilon=2.0, rng=rng) for _ in range(8000)]
    counts = np.array([np.sum(np.asarray(draws) == v) for v in c])
    assert stats.chisquare(counts, np.exp(lp) * len(draws)).pvalue > 1e-3


def test_grid_quantile_ties_get_best_rank():
    # the tied value 1.0 can take ranks 1..4; for the median (t = 3) its utility is 0
    u = grid_quantile_utilities([0.0, 1.0, 1.0, 1.0, 4.0, 5.0], 0.5, [0.5, 1.0, 2.0])
    np.testing.assert_array_equal(u, [-2.0, 0.0, -1.0])


def test_log_grid_candidates():
    c = log_grid_candidates(-1e6, 1e6)
    assert 200 < c.size < 300 and np.all(np.diff(c) > 0)
    assert c[0] == -1e6 and c[-1] == 1e6 and 0.0 in c
    pos = c[c > 0]
    np.testing.assert_allclose(pos[1:-1] / pos[:-2], 2**0.25)
    c = log_grid_candidates(3.0, 50.0)
    assert c[0] == 3.0 and c[-1] == 50.0 and np.all(c > 0)
    with pytest.raises(ValueError):
        log_grid_candidates(0.0, 1.0, ratio=1.0)


# ------------------------------------------------------- sparse vector bound
def above_threshold_output_probs(x, q, c, eps, side):
    """Exact output law of above_threshold_bound by numerical integration over T-hat."""
    from skdp.mechanisms._quantiles import _threshold_queries

    c = np.unique(c)
    x = np.clip(np.asarray(x, dtype=float), c[0], c[-1])
    g, order = _threshold_queries(x, q, c, side)
    bt, bn = 2.0 / eps, 4.0 / eps
    tau = np.linspace(-60 * bt, 60 * bt, 60001)
    f_t = np.exp(-np.abs(tau) / bt) / (2 * bt)

    def lap_sf(t):  # P(Lap(bn) >= t)
        return np.where(t > 0, 0.5 * np.exp(-np.abs(t) / bn), 1 - 0.5 * np.exp(-np.abs(t) / bn))

    out = np.zeros(c.size)
    surv = np.ones_like(tau)  # P(no hit among the first scanned candidates | tau)
    for k in order:
        p_hit = lap_sf(tau - g[k])  # P(g_k + nu_k >= tau)
        out[k] += np.trapezoid(f_t * surv * p_hit, tau)
        surv = surv * (1 - p_hit)
    out[order[-1]] += np.trapezoid(f_t * surv, tau)
    return out


@given(quantile_instances(), st.sampled_from(["upper", "lower"]))
def test_above_threshold_neighbour_ratio(inst, side):
    x, extra, q, eps = inst
    eps = min(eps, 3.0)
    c = np.array([-1.0, 0.5, 2.0, 4.5])
    xs = np.clip(x, -2, 6)
    P = above_threshold_output_probs(xs, q, c, eps, side)
    assert P.sum() == pytest.approx(1.0, abs=1e-6)
    nbrs = [np.append(xs, extra)] + ([xs[1:], np.append(xs[1:], extra)] if x.size else [])
    for xn in nbrs:
        Pn = above_threshold_output_probs(np.clip(xn, -2, 6), q, c, eps, side)
        assert np.all(np.abs(np.log(P) - np.log(Pn)) <= eps + 1e-5)


def test_above_threshold_sampler_matches_integration():
    x = np.array([0.0, 1.0, 1.0, 3.0, 5.0])
    c = np.array([-1.0, 0.5, 2.0, 4.5])
    P = above_threshold_output_probs(x, 0.8, c, 1.0, "upper")
    rng = np.random.default_rng(0)
    n = 8000
    draws = [above_threshold_bound(x, 0.8, candidates=c, epsilon=1.0, rng=rng) for _ in range(n)]
    counts = np.array([np.sum(np.asarray(draws) == v) for v in c])
    assert stats.chisquare(counts, P / P.sum() * n).pvalue > 1e-3


def test_above_threshold_inf_and_errors():
    x = np.arange(100.0)
    c = np.linspace(-10, 200, 22)
    assert (
        above_threshold_bound(x, 1.0, candidates=c, epsilon=math.inf, rng=np.random.default_rng(0))
        == 100.0
    )
    assert (
        above_threshold_bound(
            x, 0.0, candidates=c, epsilon=math.inf, rng=np.random.default_rng(0), side="lower"
        )
        == 0.0
    )
    with pytest.raises(ValueError, match="side"):
        above_threshold_bound(
            x, 0.5, candidates=c, epsilon=1.0, rng=np.random.default_rng(0), side="up"
        )
    with pytest.raises(ValueError, match="candidates"):
        above_threshold_bound(x, 0.5, candidates=[], epsilon=1.0, rng=np.random.default_rng(0))


# -------------------------------------------------------------- private_bounds
@pytest.mark.parametrize("method", ["sparse_vector", "continuous"])
def test_private_bounds_is_2d_quantile_queries_with_split_epsilon(method):
    X = np.random.default_rng(0).normal(size=(300, 3)) * [1, 10, 100]
    lo, hi = private_bounds(
        X, epsilon=3.0, rng=np.random.default_rng(7), search_range=(-1e4, 1e4), method=method
    )
    rng = np.random.default_rng(7)
    c = log_grid_candidates(-1e4, 1e4)
    for j in range(3):
        if method == "sparse_vector":
            kw = dict(candidates=c, epsilon=0.5, rng=rng)
            a = above_threshold_bound(X[:, j], 0.01, side="lower", **kw)
            b = above_threshold_bound(X[:, j], 0.99, side="upper", **kw)
        else:
            a = private_quantile(X[:, j], 0.01, lower=-1e4, upper=1e4, epsilon=0.5, rng=rng)
            b = private_quantile(X[:, j], 0.99, lower=-1e4, upper=1e4, epsilon=0.5, rng=rng)
        assert (lo[j], hi[j]) == (min(a, b), max(a, b)) or lo[j] < hi[j]
        if a < b:
            assert (lo[j], hi[j]) == (a, b)


@pytest.mark.parametrize("seed", range(5))
def test_private_bounds_accuracy_default_wide_range(seed):
    # epsilon=1 over 3 columns (1/6 per query), n=20000, default range (-1e6, 1e6)
    X = np.random.default_rng(seed).uniform([0, -50, 1000], [10, 50, 1010], size=(20000, 3))
    lo, hi = private_bounds(X, epsilon=1.0, rng=np.random.default_rng(seed + 100))
    assert np.all(lo < hi)
    # within a factor of the data scale: covers most of the data, not absurdly wide
    assert lo[0] <= 2.0 and hi[0] >= 7.0 and lo[0] >= -12 and hi[0] <= 25
    assert -65 <= lo[1] <= -30 and 30 <= hi[1] <= 65
    assert 600 <= lo[2] <= 1005 and 1005 <= hi[2] <= 1700


def test_private_bounds_accuracy_continuous_narrow_range():
    X = np.random.default_rng(0).uniform([0, -50], [10, 50], size=(5000, 2))
    lo, hi = private_bounds(
        X, epsilon=4.0, rng=np.random.default_rng(1), search_range=(-100, 100), method="continuous"
    )
    np.testing.assert_allclose(lo, [0.1, -49], atol=1.0)
    np.testing.assert_allclose(hi, [9.9, 49], atol=1.0)


def test_private_bounds_degenerate_column_widened():
    X = np.full((2000, 1), 5.0)
    lo, hi = private_bounds(
        X, epsilon=50.0, rng=np.random.default_rng(0), search_range=(0, 10), method="continuous"
    )
    assert hi[0] - lo[0] >= DEGENERATE_WIDTH * 10 * (1 - 1e-9)
    lo, hi = private_bounds(X, epsilon=1.0, rng=np.random.default_rng(0))
    assert lo[0] < 5.0 < hi[0] and hi[0] / lo[0] < 1.5  # neighbouring grid points


@given(
    st.lists(st.floats(-5, 5), min_size=1, max_size=20),
    st.floats(0.01, 100.0),
    st.integers(0, 2**32 - 1),
    st.sampled_from(["sparse_vector", "continuous"]),
)
def test_private_bounds_always_ordered(col, eps, seed, method):
    X = np.array(col, dtype=float).reshape(-1, 1)
    lo, hi = private_bounds(
        X, epsilon=eps, rng=np.random.default_rng(seed), search_range=(-10, 10), method=method
    )
    assert lo.shape == hi.shape == (1,)
    assert lo[0] < hi[0]


def test_private_bounds_rejects():
    # zero rows: nothing to estimate (issue 30: bounds were returned, noise alone)
    for eps in (1.0, np.inf):
        with pytest.raises(ValueError, match="no rows"):
            private_bounds(np.zeros((0, 2)), epsilon=eps, rng=np.random.default_rng(0))
        with pytest.raises(ValueError, match="no rows"):
            resolve_bounds(None, np.zeros((0, 2)), epsilon=eps, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="NaN"):
        private_bounds([[1.0], [np.inf]], epsilon=1.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="quantiles"):
        private_bounds([[1.0]], epsilon=1.0, rng=np.random.default_rng(0), quantiles=(0.9, 0.1))
    with pytest.raises(ValueError, match="method"):
        private_bounds([[1.0]], epsilon=1.0, rng=np.random.default_rng(0), method="smith")


# ------------------------------------------------------------- resolve_bounds
def test_resolve_given_bounds_spend_nothing():
    X = np.zeros((5, 2))
    lo, hi, used = resolve_bounds((0, [1, 2]), X, epsilon=1.0, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(lo, [0, 0])
    np.testing.assert_array_equal(hi, [1, 2])
    assert used == 0.0
    lo, hi, used = resolve_bounds(
        {"a": (0, 1), "b": (-1, 1)}, X, epsilon=1.0, rng=None, columns=["a", "b"]
    )
    np.testing.assert_array_equal(lo, [0, -1])
    with pytest.raises(ValueError, match="bounds_X"):
        resolve_bounds((1, 0), X, epsilon=1.0, rng=None, name="bounds_X")


def test_resolve_data_warns():
    X = np.array([[0.0, 3.0], [2.0, 3.0]])
    with pytest.warns(PrivacyLeakWarning):
        lo, hi, used = resolve_bounds("data", X, epsilon=1.0, rng=None)
    np.testing.assert_array_equal(lo, [0, 3])
    np.testing.assert_array_equal(hi, [2, 4])
    assert used == 0.0
    with pytest.raises(ValueError, match="must be None"):
        resolve_bounds("auto", X, epsilon=1.0, rng=None)


def test_resolve_none_private_spends_fraction():
    X = np.random.default_rng(0).normal(size=(1000, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lo, hi, used = resolve_bounds(None, X, epsilon=2.0, rng=np.random.default_rng(3))
    assert used == pytest.approx(0.2)
    lo2, hi2 = private_bounds(X, epsilon=0.2, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(lo, lo2)
    np.testing.assert_array_equal(hi, hi2)
    _, _, used = resolve_bounds(None, X, epsilon=2.0, rng=np.random.default_rng(3), fraction=0.25)
    assert used == pytest.approx(0.5)
    with pytest.raises(ValueError, match="fraction"):
        resolve_bounds(None, X, epsilon=2.0, rng=np.random.default_rng(3), fraction=1.0)


def test_resolve_none_inf_epsilon_nonprivate_without_warning():
    X = np.array([[0.0, 1.0], [4.0, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lo, hi, used = resolve_bounds(None, X, epsilon=math.inf, rng=None)
    np.testing.assert_array_equal(lo, [0, 1])
    np.testing.assert_array_equal(hi, [4, 2])
    assert used == 0.0


def test_resolve_1d_and_nan():
    lo, hi, _ = resolve_bounds(None, np.arange(100.0), epsilon=10.0, rng=np.random.default_rng(0))
    assert lo.shape == (1,)
    with pytest.raises(ValueError, match="NaN"):
        resolve_bounds(None, [[np.nan]], epsilon=1.0, rng=np.random.default_rng(0))


def test_resolve_forwards_method_and_skips_reading_data_for_public_bounds():
    X = np.random.default_rng(0).normal(size=(1000, 2))
    a = resolve_bounds(None, X, epsilon=2.0, rng=np.random.default_rng(3), method="continuous")
    b = private_bounds(X, epsilon=0.2, rng=np.random.default_rng(3), method="continuous")
    np.testing.assert_array_equal(a[0], b[0])
    # public bounds with non-numeric columns: the data are not read
    obj = np.array([["x", 1], ["y", 2]], dtype=object)
    lo, hi, used = resolve_bounds(
        {"a": (0, 1), "b": (0, 5)}, obj, epsilon=1.0, rng=None, columns=["a", "b"]
    )
    np.testing.assert_array_equal(hi, [1, 5])
    assert used == 0.0


# ------------------------------------------- issue 30: candidate grids at the float limits
def test_grid_candidates_refuse_grids_beyond_float_and_memory():
    from skdp.mechanisms import integer_grid_candidates
    from skdp.mechanisms._quantiles import MAX_GRID_CANDIDATES

    for f in (log_grid_candidates, integer_grid_candidates):
        with pytest.raises(ValueError, match="candidates"):  # 133 PiB before
            f(-1e6, 1e6, ratio=1.0 + 1e-15)
        with pytest.raises(ValueError, match="rel_min"):  # ZeroDivisionError before
            f(-1e6, 1e6, rel_min=5e-324)
        assert f(-1e6, 1e6, ratio=1.0 + 1e-4).size <= 2 * MAX_GRID_CANDIDATES + 3
    with pytest.raises(ValueError, match="underflows"):
        log_grid_candidates(0.0, 5e-324)
    c = log_grid_candidates(-1e308, 1e308)  # the widest range still works
    assert np.all(np.isfinite(c)) and c[0] == -1e308 and c[-1] == 1e308
    with pytest.raises(ValueError, match="width"):
        private_bounds(
            np.zeros((50, 1)), epsilon=1.0, rng=np.random.default_rng(0), search_range=(0, 5e-324)
        )


def test_quantile_inputs_never_print_a_cell():
    g = np.random.default_rng(0)
    with pytest.raises(ValueError) as exc:
        private_quantile(np.array(["0.5", "987654x"]), 0.5, lower=0, upper=1, epsilon=1, rng=g)
    assert str(exc.value).startswith("x") and "987654" not in str(exc.value)
    with pytest.raises(ValueError) as exc:
        private_bounds(np.array([["1", "987654x"]] * 5), epsilon=1.0, rng=g)
    assert "987654" not in str(exc.value)
    with pytest.raises(TypeError, match="date"):
        private_bounds(np.arange(10).astype("M8[D]"), epsilon=1.0, rng=g)
