"""Privacy of the DP AUC / AP mechanisms on neighbouring datasets (spec lantz.md §5.6 items 3-4).

For neighbouring datasets D, D' (replace one row: label and/or score) the released value is
``f(D) + scale(D) * eta`` before clamping (clamping is post-processing). With ``delta = 0``
the log-density ratio must stay within ``epsilon`` everywhere (checked on a fine grid); with
``delta > 0`` the numerically integrated hockey-stick divergence must stay below ``delta``.
The noise parameters come from the same private helper the release uses.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.integrate import quad

from skdp.mechanisms.sensitivity import (
    ap_local_sensitivity,
    auc_local_sensitivity,
    count_smooth_sensitivity,
)
from skdp.metrics._smooth import _exact_auc_ap, _noise_parameters, _smooth_sensitivity


def _release_parameters(
    labels, scores, which, *, epsilon, delta, gamma=2.0, form="harmonic", ties="sklearn"
):
    labels = np.asarray(labels, dtype=bool)
    N = labels.shape[0]
    auc, ap, n = _exact_auc_ap(labels, np.asarray(scores, dtype=float), ties)
    if which == "auc":
        value, ls = auc, lambda c: auc_local_sensitivity(c, N - c)
    else:
        value, ls = ap, lambda c: ap_local_sensitivity(c, ties=ties, form=form)
    scale, kind = _noise_parameters(ls, n, N, epsilon=epsilon, delta=delta, gamma=gamma)
    return value, scale, kind


def _log_density(z, loc, scale, gamma):
    """log of h((z - loc) / scale) / scale without the (common) normalising constant."""
    u = np.abs((z - loc) / scale)
    return -np.log(scale) - np.log1p(u**gamma)


def _max_log_ratio(p, q, gamma):
    (f1, s1), (f2, s2) = p, q
    smax = max(s1, s2)
    offsets = np.concatenate([-np.logspace(-6, 8, 2000), [0.0], np.logspace(-6, 8, 2000)])
    z = np.concatenate(
        [
            f1 + smax * offsets,
            f2 + smax * offsets,
            np.linspace(min(f1, f2) - 5 * smax, max(f1, f2) + 5 * smax, 20001),
        ]
    )
    return float(np.max(np.abs(_log_density(z, f1, s1, gamma) - _log_density(z, f2, s2, gamma))))


def _hockey_stick(p, q, epsilon):
    """int max(0, Lap(f1, b1) - e^eps Lap(f2, b2)) dz, by adaptive quadrature."""
    (f1, b1), (f2, b2) = p, q

    def integrand(z):
        d1 = math.exp(-abs(z - f1) / b1) / (2 * b1)
        d2 = math.exp(-abs(z - f2) / b2) / (2 * b2)
        return max(0.0, d1 - math.exp(epsilon) * d2)

    bmax = max(b1, b2)
    lo, hi = min(f1, f2) - 80 * bmax, max(f1, f2) + 80 * bmax
    pts = sorted({f1, f2})
    total = 0.0
    edges = [lo, *pts, hi]
    for a, b in itertools.pairwise(edges):
        if b > a:
            total += quad(integrand, a, b, limit=400, epsabs=1e-14, epsrel=1e-10)[0]
    return total


def _ranking_neighbours(N):
    """Datasets of N rows (labels in increasing-score order) and all replace-one neighbours."""
    for labels in itertools.product((0, 1), repeat=N):
        scores = list(range(N))
        for k in range(N):
            for new_score in np.arange(-0.5, N, 0.5):
                for new_label in (0, 1):
                    s2 = scores[:k] + [float(new_score)] + scores[k + 1 :]
                    l2 = list(labels[:k]) + [new_label] + list(labels[k + 1 :])
                    yield (labels, scores), (l2, s2)


def _distinct_pairs(N, which, **kw):
    """Each distinct unordered pair of release parameters once (every check here is
    symmetric or runs both directions); a data set's parameters are computed once."""
    seen, params = set(), {}

    def release(labels, scores):
        key = (tuple(labels), tuple(scores))
        if key not in params:
            params[key] = _release_parameters(labels, scores, which, **kw)
        return params[key]

    for (l1, s1), (l2, s2) in _ranking_neighbours(N):
        p, q = release(l1, s1), release(l2, s2)
        a, b = sorted([(round(p[0], 12), round(p[1], 12)), (round(q[0], 12), round(q[1], 12))])
        if (a, b) not in seen:
            seen.add((a, b))
            yield (p[0], p[1]), (q[0], q[1])


@pytest.mark.parametrize("ties", ["sklearn", "pessimistic"])
@pytest.mark.parametrize(
    ("which", "epsilon", "gamma"),
    [("auc", 0.1, 2.0), ("auc", 2.0, 2.0), ("auc", 1.0, 3.0), ("ap", 0.1, 2.0), ("ap", 2.0, 2.0)],
)
def test_pure_dp_density_ratio_exhaustive_small_n(which, epsilon, gamma, ties):
    """sup_z |log p_D(z) - log p_D'(z)| <= epsilon for every neighbour pair with N <= 5.

    The realised worst case is about 0.15-0.3 epsilon (Thm 7.4 is not tight here).
    """
    worst = 0.0
    for N in range(1, 6):
        for p, q in _distinct_pairs(N, which, epsilon=epsilon, delta=0.0, gamma=gamma, ties=ties):
            worst = max(worst, _max_log_ratio(p, q, gamma))
    assert worst <= epsilon * (1 + 1e-9)
    assert worst > 0.1 * epsilon  # the check is not vacuous


@st.composite
def neighbours(draw):
    N = draw(st.integers(2, 60))
    labels = draw(st.lists(st.integers(0, 1), min_size=N, max_size=N))
    scores = draw(st.lists(st.integers(0, 5), min_size=N, max_size=N))
    k = draw(st.integers(0, N - 1))
    l2, s2 = list(labels), list(scores)
    l2[k] = draw(st.integers(0, 1))
    s2[k] = draw(st.integers(0, 5))
    return (labels, scores), (l2, s2)


@given(
    neighbours(),
    st.sampled_from(["auc", "ap"]),
    st.sampled_from([0.05, 0.5, 2.0]),
    st.sampled_from(["sklearn", "pessimistic"]),
)
def test_pure_dp_density_ratio_random_neighbours(pair, which, epsilon, ties):
    (l1, s1), (l2, s2) = pair
    p = _release_parameters(l1, s1, which, epsilon=epsilon, delta=0.0, ties=ties)
    q = _release_parameters(l2, s2, which, epsilon=epsilon, delta=0.0, ties=ties)
    assert p[2] == "smooth"
    assert _max_log_ratio(p[:2], q[:2], 2.0) <= epsilon * (1 + 1e-9)


@pytest.mark.parametrize("ties", ["sklearn", "pessimistic"])
@pytest.mark.parametrize("which", ["auc", "ap"])
@pytest.mark.parametrize(("epsilon", "delta"), [(0.5, 1e-2), (1.0, 1e-5), (3.0, 1e-3)])
def test_laplace_hockey_stick_exhaustive_small_n(which, epsilon, delta, ties):
    """int max(0, p_D - e^eps p_D') <= delta for every neighbour pair with N <= 5."""
    worst = 0.0
    for N in range(1, 6):
        for p, q in _distinct_pairs(N, which, epsilon=epsilon, delta=delta, ties=ties):
            worst = max(worst, _hockey_stick(p, q, epsilon), _hockey_stick(q, p, epsilon))
    assert worst <= delta


@given(
    neighbours(),
    st.sampled_from(["auc", "ap"]),
    st.sampled_from([(0.1, 1e-3), (1.0, 1e-6)]),
    st.sampled_from(["sklearn", "pessimistic"]),
)
def test_laplace_hockey_stick_random_neighbours(pair, which, eps_delta, ties):
    epsilon, delta = eps_delta
    (l1, s1), (l2, s2) = pair
    p = _release_parameters(l1, s1, which, epsilon=epsilon, delta=delta, ties=ties)
    q = _release_parameters(l2, s2, which, epsilon=epsilon, delta=delta, ties=ties)
    assert p[2] == "laplace"
    assert _hockey_stick(p[:2], q[:2], epsilon) <= delta
    assert _hockey_stick(q[:2], p[:2], epsilon) <= delta


def test_checks_detect_an_under_noised_mechanism():
    """The same checks fail for a mechanism with a tenth of the noise (they have power)."""
    assert _hockey_stick((0.0, 1.0), (3.0, 1.0), 1.0) > 0.1
    worst_ratio, worst_hs = 0.0, 0.0
    for p, q in _distinct_pairs(4, "auc", epsilon=1.0, delta=0.0):
        worst_ratio = max(worst_ratio, _max_log_ratio((p[0], p[1] / 10), (q[0], q[1] / 10), 2.0))
    for p, q in _distinct_pairs(4, "auc", epsilon=1.0, delta=1e-5):
        worst_hs = max(worst_hs, _hockey_stick((p[0], p[1] / 10), (q[0], q[1] / 10), 1.0))
    assert worst_ratio > 1.0
    assert worst_hs > 1e-5


@given(
    N=st.integers(1, 5000),
    frac=st.floats(0, 1),
    beta=st.sampled_from([0.0, 1e-5, 1e-3, 0.0943696, 1 / 6, 2.0, 50.0]),
    which=st.sampled_from(["auc", "ap-harmonic", "ap-log"]),
    ties=st.sampled_from(["sklearn", "pessimistic"]),
)
def test_windowed_smooth_sensitivity_equals_full_maximum(N, frac, beta, which, ties):
    """The release scans only a window around n; it must equal the maximum over 0..N."""
    n = int(round(frac * N))
    if which == "auc":
        fn = lambda c: auc_local_sensitivity(c, N - c)  # noqa: E731
    else:
        fn = lambda c: ap_local_sensitivity(c, ties=ties, form=which[3:])  # noqa: E731
    full = count_smooth_sensitivity(fn(np.arange(N + 1)), n, beta)
    assert _smooth_sensitivity(fn, n, N, beta) == full
