"""Exact integer samplers (Canonne, Kamath & Steinke 2020): laws, exactness, sources."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from skdp.mechanisms import (
    add_geometric,
    add_laplace,
    discrete_gaussian_noise,
    discrete_laplace_noise,
    two_sided_geometric,
)
from skdp.mechanisms._discrete import (
    GeneratorSource,
    SecureSource,
    bernoulli_exp,
    grid_laplace,
    rational_ceil,
    rational_floor,
    sample_discrete_gaussian,
    sample_discrete_laplace,
    sample_geometric,
    uniform_below,
    uniform_subset,
)


def src(seed=0):
    return GeneratorSource(np.random.default_rng(seed))


def _chi2_against(z, pmf_of, lo, hi):
    """Chi-square of integer draws against an exact pmf on [lo, hi] plus both tails."""
    ks = np.arange(lo, hi + 1)
    p_mid = np.array([pmf_of(k) for k in ks])
    p_lo = 1.0 - p_mid.sum()  # both tails together
    obs = np.array([np.sum(z == k) for k in ks] + [np.sum((z < lo) | (z > hi))])
    exp = np.append(p_mid, p_lo) * len(z)
    return stats.chisquare(obs, exp).pvalue


def _dlap_pmf(alpha):
    r = math.exp(-alpha)
    return lambda k: (1 - r) / (1 + r) * r ** abs(k)


# ---------------------------------------------------------------------- exact laws
@pytest.mark.parametrize("scale", [0.4, 1.0, 3.7])
def test_discrete_laplace_matches_exact_pmf(scale):
    z = discrete_laplace_noise(40000, scale=scale, rng=np.random.default_rng(1))
    assert z.dtype == np.int64
    alpha = 1 / float(rational_ceil(scale))  # the rational scale actually used
    half = max(2, int(3 * scale))
    assert _chi2_against(z, _dlap_pmf(alpha), -half, half) > 1e-3


@pytest.mark.parametrize("sigma", [0.6, 2.5])
def test_discrete_gaussian_matches_exact_pmf(sigma):
    z = discrete_gaussian_noise(40000, sigma=sigma, rng=np.random.default_rng(2))
    var = float(rational_ceil(sigma) ** 2)
    support = np.arange(-60, 61)
    w = np.exp(-(support**2) / (2 * var))
    norm = w.sum()
    half = max(2, int(2.5 * sigma))
    pval = _chi2_against(z, lambda k: math.exp(-(k**2) / (2 * var)) / norm, -half, half)
    assert pval > 1e-3


def test_geometric_matches_exact_pmf():
    s, t = 3, 4  # r = exp(-3/4): exercises the U / t branch and the floor by s
    z = sample_geometric(src(3), 40000, s, t)
    r = math.exp(-s / t)
    ks = np.arange(0, 8)
    pmf = (1 - r) * r**ks
    obs = np.append([np.sum(z == k) for k in ks], np.sum(z >= 8))
    assert stats.chisquare(obs, np.append(pmf, r**8) * len(z)).pvalue > 1e-3


def test_symmetry():
    z = sample_discrete_laplace(src(4), 60000, 2, 3)
    pos, neg = int(np.sum(z > 0)), int(np.sum(z < 0))
    assert stats.binomtest(pos, pos + neg, 0.5).pvalue > 1e-3
    for k in (1, 2, 3):
        a, b = int(np.sum(z == k)), int(np.sum(z == -k))
        assert stats.binomtest(a, a + b, 0.5).pvalue > 1e-3
    g = sample_discrete_gaussian(src(5), 40000, 9, 4)  # sigma^2 = 9/4
    pos, neg = int(np.sum(g > 0)), int(np.sum(g < 0))
    assert stats.binomtest(pos, pos + neg, 0.5).pvalue > 1e-3


@pytest.mark.parametrize("num,den", [(0, 1), (3, 10), (1, 1), (5, 2), (7, 3), (10, 1)])
def test_bernoulli_exp_frequencies(num, den):
    n = 60000
    b = bernoulli_exp(src(6), np.full(n, num), den)
    assert b.dtype == bool
    p = math.exp(-num / den)
    if num == 0:
        assert b.all()
    else:
        assert stats.binomtest(int(b.sum()), n, p).pvalue > 1e-3


def test_bernoulli_exp_per_element_denominators():
    num = np.array([1, 2, 3] * 20000)
    den = np.array([2, 3, 1] * 20000)
    b = bernoulli_exp(src(7), num, den)
    for j, (a, d) in enumerate([(1, 2), (2, 3), (3, 1)]):
        hits = b[j::3]
        assert stats.binomtest(int(hits.sum()), hits.size, math.exp(-a / d)).pvalue > 1e-3


def test_uniform_below_and_subset_are_uniform():
    u = uniform_below(src(8), np.full(70000, 7))
    assert u.min() == 0 and u.max() == 6
    assert stats.chisquare(np.bincount(u, minlength=7)).pvalue > 1e-3
    hits = np.zeros(12)
    s = src(9)
    for _ in range(2000):
        cells = uniform_subset(s, 12, 4)
        assert len(np.unique(cells)) == 4 and np.all(np.diff(cells) > 0)
        hits[cells] += 1
    assert stats.chisquare(hits).pvalue > 1e-3
    big = uniform_subset(s, 12, 10)  # complement branch
    assert len(np.unique(big)) == 10 and big.max() < 12


# --------------------------------------------------------------- reproducibility
def test_seeded_generator_reproduces_and_secure_source_does_not_need_one():
    a = discrete_laplace_noise(1000, scale=2.0, rng=np.random.default_rng(11))
    b = discrete_laplace_noise(1000, scale=2.0, rng=np.random.default_rng(11))
    c = discrete_laplace_noise(1000, scale=2.0, rng=np.random.default_rng(12))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    g1 = discrete_gaussian_noise(500, sigma=3.0, rng=np.random.default_rng(11))
    g2 = discrete_gaussian_noise(500, sigma=3.0, rng=np.random.default_rng(11))
    np.testing.assert_array_equal(g1, g2)
    with pytest.raises(TypeError, match="Generator"):
        discrete_laplace_noise(3, scale=1.0)
    assert isinstance(discrete_laplace_noise(None, scale=1.0, secure_mode=True), int)


def test_secure_source_law():
    words = SecureSource().words(4000)
    assert words.dtype == np.uint64
    # each bit position is a fair coin
    bits = np.unpackbits(words.view(np.uint8)).reshape(4000, 64).mean(axis=0)
    assert np.all(np.abs(bits - 0.5) < 0.05)
    z = discrete_laplace_noise(30000, scale=1.0, secure_mode=True)
    assert _chi2_against(z, _dlap_pmf(1.0), -3, 3) > 1e-4
    g = two_sided_geometric(30000, alpha=0.5, rng=None, secure_mode=True)
    assert g.dtype == np.int64 and abs(g.var() - 2 * math.exp(-0.5) / (1 - math.exp(-0.5)) ** 2) < 1
    out = add_geometric([3, 5], sensitivity=1, epsilon=1.0, secure_mode=True)
    assert out.dtype == np.int64


# ------------------------------------------------------------- extreme parameters
def test_no_overflow_at_extreme_scales():
    tiny = two_sided_geometric(2000, alpha=1e-12, rng=np.random.default_rng(0))
    assert tiny.dtype == np.int64
    assert 1e11 < np.abs(tiny).mean() < 1e13  # mean |Z| ~ 1 / alpha
    huge = two_sided_geometric(2000, alpha=80.0, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(huge, 0)
    # sigma^2 = 1e14: the acceptance exponent (|y| b t - a)^2 needs Python ints
    g = discrete_gaussian_noise(200, sigma=1e7, rng=np.random.default_rng(0))
    assert g.dtype == np.int64 and 5e6 < g.std() < 2e7
    # exact huge rational parameters are kept exact (big-integer path)
    big = Fraction(10**30 + 1, 10**29)
    z = discrete_laplace_noise(200, scale=big, rng=np.random.default_rng(0))
    assert 3 < np.abs(z).mean() < 20
    # uniform integers far above 2^64, and Bernoulli(exp(-gamma)) with huge terms
    u = uniform_below(src(1), np.array([2**100] * 200, dtype=object))
    assert all(0 <= int(v) < 2**100 for v in u) and max(int(v) for v in u) > 2**90
    b = bernoulli_exp(src(2), np.array([10**40] * 50, dtype=object), 10**20)
    assert not b.any()
    b = bernoulli_exp(src(2), np.array([10**20] * 4000, dtype=object), 2 * 10**20)
    assert stats.binomtest(int(b.sum()), 4000, math.exp(-0.5)).pvalue > 1e-3


def test_rational_rounding_adds_noise():
    for x in (0.1, 1 / 3, 2.7, 1e-9, 12345.678):
        lo, hi = rational_floor(x), rational_ceil(x)
        assert lo <= Fraction(x) <= hi
        assert (Fraction(x) - lo) / Fraction(x) < Fraction(1, 2**19)
        assert (hi - Fraction(x)) / Fraction(x) < Fraction(1, 2**19)
    assert rational_floor(1.0) == 1 and rational_floor(0.75) == Fraction(3, 4)
    assert rational_floor(Fraction(1, 3)) == Fraction(1, 3)  # exact input kept


# ------------------------------------------------------- floating-point-safe Laplace
def test_grid_laplace_releases_exact_grid_multiples():
    x = np.array([0.1, 2.0 / 3.0, -5.25])
    out, (grid, big_d, eps) = grid_laplace(x, sensitivity=1.0, epsilon=1.0, source=src(3))
    assert grid == 2.0**-12  # largest power of two <= 1 / 3 * 2^-10
    assert big_d == 2**12 + 3 and eps == 1
    steps = out / grid
    np.testing.assert_array_equal(steps, np.round(steps))
    # noise law in grid steps: discrete Laplace with alpha = eps / D
    z = grid_laplace(np.zeros(30000), sensitivity=30000.0, epsilon=2.0, source=src(4))
    vals, (g, d, e) = z
    assert g * 30000 <= 30000.0 * 2**-10
    noise = vals / g
    alpha = float(e) / d
    var = 2 * math.exp(-alpha) / (1 - math.exp(-alpha)) ** 2
    assert noise.var() == pytest.approx(var, rel=0.05)


def test_add_laplace_secure_mode():
    out = add_laplace(np.full(20000, 3.0), sensitivity=2.0, epsilon=0.5, secure_mode=True)
    grid = 2.0**-24  # largest power of two <= 2 / 20000 * 2^-10
    np.testing.assert_array_equal(out / grid, np.round(out / grid))
    assert stats.kstest(out - 3.0, stats.laplace(scale=4.0).cdf).pvalue > 1e-4
    assert isinstance(add_laplace(1.0, sensitivity=1.0, epsilon=1.0, secure_mode=True), float)
    with pytest.raises(TypeError):
        add_laplace(1.0, sensitivity=1.0, epsilon=1.0)  # no rng and not secure
