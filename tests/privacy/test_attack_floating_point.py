"""Issue 15 item 11: the floating-point attack of Mironov (2012) on the histogram release.

Floating-point Laplace noise ``c + rng.laplace(0, b)`` can only produce the doubles
``fl(c + noise(U))`` for the 2^53 uniforms ``U`` numpy draws, and that set depends on
``c``. The attacker who sees a released value ``o`` asks: is there *any* uniform ``U'``
with ``fl(11 + noise(U')) == o``? If not, the true count was not 11. With numpy's
sampler (reproduced bit for bit below) about 10 % of the releases from a count of 10
are impossible from 11 at ``epsilon = 1`` -- an event of probability 0.1 under one
neighbour and 0 under the other, so no finite epsilon holds.

The check is exact and fast: ``noise(k / 2^53)`` is non-decreasing in ``k`` (every
rounding step is monotone), so a binary search over ``k`` finds whether ``o`` is hit.
The same search must find every release from its *true* count (a self-check).

With the exact default (``mechanism="geometric"``) every release is an integer, reachable
from 10 and from 11 with probabilities whose ratio is at most ``e^epsilon``.
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from skdp.mechanisms import two_sided_geometric
from skdp.synthesis import DPHistogramSynthesizer

TWO53 = 2.0**53


def _numpy_laplace(k, scale):
    """numpy's ``Generator.laplace(0, scale)`` for the uniform ``U = k / 2^53``."""
    u = k / TWO53
    if u >= 0.5:
        return 0.0 - scale * math.log(2.0 - u - u)
    return 0.0 + scale * math.log(u + u)


def _reachable(o, count, scale):
    """Is there a uniform ``k`` in [1, 2^53) with ``fl(count + noise(k)) == o``?"""
    lo, hi = 1, 2**53 - 1
    while lo < hi:  # smallest k with count + noise(k) >= o
        mid = (lo + hi) // 2
        if float(count) + _numpy_laplace(mid, scale) >= o:
            hi = mid
        else:
            lo = mid + 1
    return float(count) + _numpy_laplace(lo, scale) == o


def test_reimplementation_is_numpys_laplace():
    """The attack models numpy's actual sampler, not a strawman."""
    rng_a, rng_b = np.random.default_rng(0), np.random.default_rng(0)
    scale = 1.0 / 0.7
    ref = rng_a.laplace(0.0, scale, size=20000)
    mine = [_numpy_laplace(int(u * TWO53), scale) for u in rng_b.random(20000)]
    np.testing.assert_array_equal(ref, mine)


@pytest.mark.parametrize("epsilon, floor", [(1.0, 0.04), (0.1, 0.3)])
def test_float_laplace_release_from_10_is_impossible_from_11(epsilon, floor):
    scale = 1.0 / epsilon
    rng = np.random.default_rng(1)
    released = 10.0 + rng.laplace(0.0, scale, size=600)  # the old histogram cell
    assert all(_reachable(o, 10, scale) for o in released[:100])  # self-check
    impossible = np.mean([not _reachable(o, 11, scale) for o in released])
    # measured: about 10 % at epsilon = 1 and about half at epsilon = 0.1
    assert impossible > floor


def _cell_data(count):
    return pd.DataFrame({"g": ["a"] * count + ["b"] * 3})


def _release(count, seed, **kw):
    m = DPHistogramSynthesizer(
        epsilon=1.0, categories={"g": ["a", "b"]}, n_public=20, random_state=seed, **kw
    ).fit(_cell_data(count))
    h = m.histograms_[0]
    hit = h["cells"] == 0
    return float(h["counts"][hit][0]) if hit.any() else None


def test_histogram_float_laplace_option_is_attackable():
    """``mechanism="laplace"`` (documented as unsafe) leaks through the estimator itself."""
    releases = [_release(10, seed, mechanism="laplace") for seed in range(150)]
    releases = [o for o in releases if o is not None]
    assert all(_reachable(o, 10, 1.0) for o in releases[:40])
    impossible = sum(not _reachable(o, 11, 1.0) for o in releases)
    assert impossible >= 3  # about 10 % of 150


def test_histogram_default_release_is_reachable_from_both_neighbours():
    eps = 1.0
    r = math.exp(-eps)  # epsilon = 1 is a 20-bit rational: used exactly

    def pmf(z):
        return (1 - r) / (1 + r) * r ** abs(z)

    for count in (10, 11):
        releases = np.array([_release(count, seed) for seed in range(250)], dtype=float)
        assert not np.isnan(releases).any()
        # every release is an integer, hence reachable from 10 and from 11 ...
        np.testing.assert_array_equal(releases, np.round(releases))
        for o in np.unique(releases):
            p10, p11 = pmf(o - 10), pmf(o - 11)
            assert p10 > 0 and p11 > 0
            assert abs(math.log(p10 / p11)) <= eps + 1e-12  # ... with ratio <= e^eps
        # and the estimator's released law is the exact discrete Laplace around count
        ks = np.arange(-3, 4)
        obs = [np.sum(releases - count == k) for k in ks]
        obs.append(len(releases) - sum(obs))
        exp = [pmf(k) for k in ks]
        exp.append(1 - sum(exp))
        assert stats.chisquare(obs, np.array(exp) * len(releases)).pvalue > 1e-3


def test_secure_mode_laplace_releases_grid_values():
    for count in (10, 11):
        for _ in range(20):
            o = _release(count, None, mechanism="laplace", secure_mode=True)
            steps = (o - 11) * 2**10  # in grid units from the other neighbour
            assert steps == round(steps)


def test_the_noise_primitive_is_exact():
    z = two_sided_geometric(2000, alpha=1.0, rng=np.random.default_rng(5))
    assert z.dtype == np.int64
    o = 10 + z
    # log P(o | 11) - log P(o | 10) = alpha (|o - 10| - |o - 11|), an integer times alpha
    assert np.all(np.abs(np.abs(o - 10) - np.abs(o - 11)) <= 1)


def test_dp_accuracy_release_is_an_integer_count_over_n():
    """Floating-point Laplace on the accuracy left gaps (Mironov 2012): a release from
    one count could be unreachable from a neighbour's. The release is now a noisy
    integer count divided by the public N, reachable from every count."""
    from skdp.metrics import dp_accuracy_score

    rng = np.random.default_rng(0)
    N = 200
    y = rng.integers(0, 2, N)
    pred = y.copy()
    pred[:40] = 1 - pred[:40]
    for seed in range(50):
        out = dp_accuracy_score(y, pred, epsilon=0.5, random_state=seed)
        count = out * N
        assert out in (0.0, 1.0) or abs(count - round(count)) < 1e-9
