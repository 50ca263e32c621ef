"""Exponential mechanism and SSEM: exact selection probabilities, sampler laws, overflow."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats
from scipy.special import logsumexp

from skdp.mechanisms import (
    exponential_mechanism,
    exponential_mechanism_log_probs,
    report_noisy_max,
    subsampled_exponential_mechanism,
)

TOL = 1e-9


# ----------------------------------------------------------- strategies
@st.composite
def neighbouring_utilities(draw, max_k=5):
    """(u, u', log μ, ε, Δ) with ‖u − u'‖∞ <= Δ."""
    k = draw(st.integers(1, max_k))
    sens = draw(st.floats(0.01, 100.0))
    eps = draw(st.floats(0.01, 20.0))
    u = np.array(draw(st.lists(st.floats(-1e3, 1e3), min_size=k, max_size=k)))
    shift = np.array(draw(st.lists(st.floats(-1.0, 1.0), min_size=k, max_size=k))) * sens
    log_mu = np.array(
        draw(
            st.lists(
                st.one_of(st.floats(-20.0, 5.0), st.just(-np.inf)),
                min_size=k,
                max_size=k,
            )
        )
    )
    if not np.isfinite(log_mu).any():
        log_mu[draw(st.integers(0, k - 1))] = 0.0
    return u, u + shift, log_mu, eps, sens


# ------------------------------------------------------- exact privacy
@given(neighbouring_utilities())
def test_exponential_mechanism_ratio_bound(args):
    u, up, log_mu, eps, sens = args
    lp = exponential_mechanism_log_probs(u, epsilon=eps, sensitivity=sens, log_base_measure=log_mu)
    lq = exponential_mechanism_log_probs(up, epsilon=eps, sensitivity=sens, log_base_measure=log_mu)
    supp = np.isfinite(log_mu)
    np.testing.assert_array_equal(np.isfinite(lp), supp)
    assert np.isclose(logsumexp(lp), 0.0)
    assert np.all(np.abs(lp[supp] - lq[supp]) <= eps + TOL)


@given(neighbouring_utilities(max_k=4))
def test_exponential_log_probs_closed_form(args):
    u, _, log_mu, eps, sens = args
    lp = exponential_mechanism_log_probs(u, epsilon=eps, sensitivity=sens, log_base_measure=log_mu)
    w = eps * u / (2 * sens) + log_mu
    np.testing.assert_allclose(np.exp(lp), np.exp(w - logsumexp(w)), atol=1e-12)


def test_exponential_ratio_is_attained():
    # two candidates, utilities moved by ±Δ in opposite directions: ratio exactly e^ε in the limit
    eps, sens = 1.0, 1.0
    lp = exponential_mechanism_log_probs([0.0, 0.0], epsilon=eps, sensitivity=sens)
    lq = exponential_mechanism_log_probs([1.0, -1.0], epsilon=eps, sensitivity=sens)
    ratio = np.max(np.abs(lp - lq))
    assert ratio <= eps and ratio > 0.4 * eps


# --------------------------------------------------------- sampler law
@pytest.mark.parametrize("seed", [0])
def test_exponential_sampler_matches_log_probs(seed):
    u = np.array([0.0, 1.0, 2.0, 2.5, -1.0])
    log_mu = np.array([0.0, np.log(2.0), -1.0, 0.0, -np.inf])
    lp = exponential_mechanism_log_probs(u, epsilon=1.5, sensitivity=1.0, log_base_measure=log_mu)
    rng = np.random.default_rng(seed)
    n = 20000
    draws = [
        exponential_mechanism(u, epsilon=1.5, sensitivity=1.0, rng=rng, log_base_measure=log_mu)
        for _ in range(n)
    ]
    counts = np.bincount(draws, minlength=5)
    assert counts[4] == 0
    assert stats.chisquare(counts[:4], np.exp(lp[:4]) * n).pvalue > 1e-3


# ------------------------------------------------------------ overflow
@pytest.mark.parametrize(
    "u,expect",
    [
        ([0.0, 1e300], 1),
        ([1e300, -1e300], 0),
        ([-1e308, 1.7e308, -1.7e308], 1),
        ([-1e300, -1e300 + 1e290], 1),
    ],
)
def test_huge_utilities(u, expect):
    lp = exponential_mechanism_log_probs(u, epsilon=1.0, sensitivity=1.0)
    assert not np.any(np.isnan(lp))
    assert np.exp(lp[expect]) == pytest.approx(1.0)
    out = exponential_mechanism(u, epsilon=1.0, sensitivity=1.0, rng=np.random.default_rng(0))
    assert out == expect


def test_huge_equal_utilities_uniform():
    lp = exponential_mechanism_log_probs([1e300, 1e300], epsilon=1.0, sensitivity=1e-300)
    np.testing.assert_allclose(np.exp(lp), [0.5, 0.5])


def test_epsilon_inf_uniform_over_maximisers():
    lp = exponential_mechanism_log_probs(
        [1.0, 3.0, 3.0, 5.0], epsilon=math.inf, sensitivity=1.0, log_base_measure=[0, 0, 0, -np.inf]
    )
    np.testing.assert_allclose(np.exp(lp), [0, 0.5, 0.5, 0])


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(utilities=[np.nan, 1.0]), "finite"),
        (dict(utilities=[np.inf, 1.0]), "finite"),
        (dict(utilities=[]), "non-empty"),
        (dict(utilities=[[1.0]]), "1-d"),
        (dict(utilities=[1.0, 2.0], log_base_measure=[-np.inf, -np.inf]), "zero mass"),
        (dict(utilities=[1.0, 2.0], log_base_measure=[np.nan, 0.0]), "NaN"),
        (dict(utilities=[1.0, 2.0], sensitivity=0.0), "sensitivity"),
        (dict(utilities=[1.0, 2.0], epsilon=-1.0), "epsilon"),
    ],
)
def test_exponential_rejects_bad_input(kwargs, match):
    args = dict(epsilon=1.0, sensitivity=1.0) | kwargs
    with pytest.raises(ValueError, match=match):
        exponential_mechanism(rng=np.random.default_rng(0), **args)


# ------------------------------------------------------------------ SSEM
def ssem_output_probs(q, mu, m, c, replace=True):
    """Exact P(output = z) of SSEM over a finite Z by enumerating the ordered draws.

    q: utilities on Z, mu: base probabilities on Z, c: exponent ε/(2Δ).
    """
    k = len(q)
    out = np.zeros(k)
    for draw in itertools.product(range(k), repeat=m):
        if replace:
            p_draw = np.prod([mu[z] for z in draw])
        else:
            if len(set(draw)) < m:
                continue
            p_draw, left = 1.0, 1.0
            for z in draw:
                if left <= 0:
                    p_draw = 0.0
                    break
                p_draw *= mu[z] / left
                left -= mu[z]
        if p_draw == 0.0:
            continue
        w = np.exp(c * (np.array([q[z] for z in draw]) - max(q[z] for z in draw)))
        w /= w.sum()
        for j, z in enumerate(draw):
            out[z] += p_draw * w[j]
    return out


@st.composite
def ssem_instances(draw, replace=True):
    k = draw(st.integers(1, 4))
    m = draw(st.integers(1, 3 if replace else k))
    sens = draw(st.floats(0.1, 10.0))
    eps = draw(st.floats(0.05, 8.0))
    # utilities within ±5Δ keep every probability well above underflow
    q = np.array(draw(st.lists(st.floats(-5, 5), min_size=k, max_size=k))) * sens
    qp = q + np.array(draw(st.lists(st.floats(-1, 1), min_size=k, max_size=k))) * sens
    mu = np.array(draw(st.lists(st.floats(0.05, 1.0), min_size=k, max_size=k)))
    return q, qp, mu / mu.sum(), m, eps, sens


@pytest.mark.parametrize("replace", [True, False])
@given(data=st.data())
def test_ssem_ratio_bound_exact_enumeration(replace, data):
    q, qp, mu, m, eps, sens = data.draw(ssem_instances(replace=replace))
    c = eps / (2 * sens)
    P = ssem_output_probs(q, mu, m, c, replace)
    Pp = ssem_output_probs(qp, mu, m, c, replace)
    assert P.sum() == pytest.approx(1.0) and Pp.sum() == pytest.approx(1.0)
    assert np.all(np.abs(np.log(P) - np.log(Pp)) <= eps + TOL)


def test_ssem_without_replacement_full_is_expm():
    q = np.array([0.0, 1.0, 3.0, -2.0])
    mu = np.array([0.1, 0.4, 0.3, 0.2])
    P = ssem_output_probs(q, mu, 4, 0.5, replace=False)
    lp = exponential_mechanism_log_probs(q, epsilon=1.0, sensitivity=1.0)
    np.testing.assert_allclose(P, np.exp(lp), atol=1e-12)


def test_ssem_sampler_matches_enumeration():
    Z = np.array([10.0, 20.0, 30.0, 40.0])
    q = np.array([0.0, 2.0, 1.0, -1.0])
    mu = np.array([0.4, 0.1, 0.3, 0.2])
    m, eps, sens = 3, 2.0, 1.0
    expected = ssem_output_probs(q, mu, m, eps / (2 * sens))
    rng = np.random.default_rng(3)

    def sample(mm, r):
        return Z[r.choice(4, size=mm, p=mu)]

    def utility(c):
        return q[np.searchsorted(Z, c)]

    n = 20000
    counts = np.zeros(4)
    for _ in range(n):
        cands, i = subsampled_exponential_mechanism(
            sample, utility, m=m, epsilon=eps, sensitivity=sens, rng=rng
        )
        assert cands.shape == (m,)
        counts[np.searchsorted(Z, cands[i])] += 1
    assert stats.chisquare(counts, expected * n).pvalue > 1e-3


def test_ssem_multidimensional_candidates_and_checks():
    rng = np.random.default_rng(0)
    cands, i = subsampled_exponential_mechanism(
        lambda m, r: r.normal(size=(m, 2)),
        lambda c: -np.linalg.norm(c, axis=1),
        m=5,
        epsilon=1.0,
        sensitivity=1.0,
        rng=rng,
        replace=False,
    )
    assert cands.shape == (5, 2) and 0 <= i < 5
    with pytest.raises(ValueError, match="duplicate"):
        subsampled_exponential_mechanism(
            lambda m, r: np.zeros(m),
            lambda c: c,
            m=3,
            epsilon=1.0,
            sensitivity=1.0,
            rng=rng,
            replace=False,
        )
    with pytest.raises(ValueError, match="first axis"):
        subsampled_exponential_mechanism(
            lambda m, r: np.zeros(m + 1), lambda c: c, m=3, epsilon=1.0, sensitivity=1.0, rng=rng
        )
    with pytest.raises(ValueError, match="m utilities"):
        subsampled_exponential_mechanism(
            lambda m, r: np.zeros(m), lambda c: c[:2], m=3, epsilon=1.0, sensitivity=1.0, rng=rng
        )
    with pytest.raises(ValueError, match="positive integer"):
        subsampled_exponential_mechanism(
            lambda m, r: np.zeros(m), lambda c: c, m=0, epsilon=1.0, sensitivity=1.0, rng=rng
        )


# ------------------------------------------------------- report noisy max
def rnm_probs(u, b):
    """Exact P(argmax_i(u_i + Lap(b)) = i) by quadrature on a fine grid."""
    z = np.linspace(u.min() - 60 * b, u.max() + 60 * b, 200001)
    pdf = np.exp(-np.abs(z[None, :] - u[:, None]) / b) / (2 * b)
    t = (z[None, :] - u[:, None]) / b
    cdf = np.where(t < 0, 0.5 * np.exp(np.minimum(t, 0)), 1 - 0.5 * np.exp(-np.maximum(t, 0)))
    out = np.empty(u.size)
    for i in range(u.size):
        others = np.prod(np.delete(cdf, i, axis=0), axis=0)
        out[i] = np.trapezoid(pdf[i] * others, z)
    return out


@pytest.mark.parametrize("monotonic", [True, False])
@given(data=st.data())
def test_report_noisy_max_ratio_bound(monotonic, data):
    k = data.draw(st.integers(2, 3))
    eps = data.draw(st.floats(0.1, 3.0))
    sens = 1.0
    u = np.array(data.draw(st.lists(st.floats(-3, 3), min_size=k, max_size=k)))
    if monotonic:
        sign = data.draw(st.sampled_from([-1.0, 1.0]))
        d = sign * np.array(data.draw(st.lists(st.floats(0, 1), min_size=k, max_size=k)))
    else:
        d = np.array(data.draw(st.lists(st.floats(-1, 1), min_size=k, max_size=k)))
    b = (1.0 if monotonic else 2.0) * sens / eps
    P, Pn = rnm_probs(u, b), rnm_probs(u + d * sens, b)
    assert P.sum() == pytest.approx(1.0, abs=1e-5)
    assert np.all(np.abs(np.log(P) - np.log(Pn)) <= eps + 1e-4)


def test_report_noisy_max_uses_documented_scale_and_exclude():
    u = np.array([1.0, 2.0, 0.5])
    for mono, factor in [(True, 1.0), (False, 2.0)]:
        got = report_noisy_max(
            u, epsilon=0.5, sensitivity=3.0, rng=np.random.default_rng(4), monotonic=mono
        )
        ref = np.argmax(u + np.random.default_rng(4).laplace(0, factor * 3.0 / 0.5, size=3))
        assert got == ref
    rng = np.random.default_rng(0)
    picks = {
        report_noisy_max(u, epsilon=0.1, sensitivity=1.0, rng=rng, exclude=[1]) for _ in range(200)
    }
    assert picks == {0, 2}
    assert report_noisy_max(u, epsilon=math.inf, sensitivity=1.0, rng=rng) == 1
    with pytest.raises(ValueError, match="excluded"):
        report_noisy_max(u, epsilon=1.0, sensitivity=1.0, rng=rng, exclude=[0, 1, 2])
    with pytest.raises(ValueError, match="finite"):
        report_noisy_max([np.nan], epsilon=1.0, sensitivity=1.0, rng=rng)


# ----------------------------------------------- issue 30: malformed inputs, clear errors
def test_report_noisy_max_checks_exclude():
    u = np.array([1.0, 2.0, 3.0])
    g = np.random.default_rng(0)
    for ex in ([5], [-1], [3]):
        with pytest.raises(ValueError, match=r"indices in \[0, 3\)"):
            report_noisy_max(u, epsilon=1.0, sensitivity=1.0, rng=g, exclude=ex)
    for ex in ([1.5], "a", [True, False], [[0]]):
        with pytest.raises(TypeError, match="integer indices"):
            report_noisy_max(u, epsilon=1.0, sensitivity=1.0, rng=g, exclude=ex)
    out = report_noisy_max(u, epsilon=math.inf, sensitivity=1.0, rng=g, exclude=np.array([2]))
    assert out == 1


def test_exponential_mechanism_input_errors_name_the_parameter():
    u = np.array([1.0, 2.0, 3.0])
    g = np.random.default_rng(0)
    with pytest.raises(ValueError, match="one entry per utility"):
        exponential_mechanism(u, epsilon=1.0, sensitivity=1.0, rng=g, log_base_measure=[0, 0])
    with pytest.raises(ValueError) as exc:
        exponential_mechanism(["1", "987654x"], epsilon=1.0, sensitivity=1.0, rng=g)
    assert str(exc.value).startswith("utilities") and "987654" not in str(exc.value)
    with pytest.raises(TypeError, match="date"):
        exponential_mechanism(np.arange(3).astype("M8[D]"), epsilon=1.0, sensitivity=1.0, rng=g)
