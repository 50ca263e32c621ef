"""Exact (ε, δ) checks of the additive-noise mechanisms on neighbouring query values.

Each test ties the mechanism to its law (same seed => the mechanism's output equals the
value plus the documented sampler's draw) and then checks the privacy inequality on the
exact density / pmf / privacy-loss distribution for neighbours drawn by hypothesis.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, stats

from skdp.mechanisms import (
    add_gaussian,
    add_geometric,
    add_laplace,
    gaussian_delta,
    gaussian_sigma,
    smooth_sensitivity_logpdf,
    two_sided_geometric,
)

TOL = 1e-9
eps_st = st.floats(0.01, 20.0)
sens_st = st.floats(0.01, 100.0)


@given(eps_st, sens_st, st.floats(-1.0, 1.0), st.integers(0, 2**32 - 1))
def test_laplace_mechanism_density_ratio(eps, sens, frac, seed):
    f = np.array([0.3, -2.0, 7.0])
    fp = f + frac * sens  # |f - f'| <= Δ (the L1 change of one coordinate)
    out = add_laplace(f, sensitivity=sens, epsilon=eps, rng=np.random.default_rng(seed))
    ref = f + np.random.default_rng(seed).laplace(0.0, sens / eps, size=3)
    np.testing.assert_array_equal(out, ref)  # the mechanism adds Lap(Δ/ε)
    y = np.linspace(-50, 50, 201) * sens / eps
    law, lawp = stats.laplace(f[0], sens / eps), stats.laplace(fp[0], sens / eps)
    assert np.all(np.abs(law.logpdf(y) - lawp.logpdf(y)) <= eps + TOL)


@given(
    st.floats(0.01, 10.0),
    st.integers(1, 5),
    st.integers(-5, 5),
    st.integers(0, 2**32 - 1),
)
def test_geometric_mechanism_pmf_ratio(eps, sens, shift, seed):
    shift = int(np.clip(shift, -sens, sens))
    f = np.array([3, -1, 10])
    out = add_geometric(f, sensitivity=sens, epsilon=eps, rng=np.random.default_rng(seed))
    ref = f + two_sided_geometric(3, alpha=eps / sens, rng=np.random.default_rng(seed))
    np.testing.assert_array_equal(out, ref)  # the mechanism adds G(ε/Δ)
    r = math.exp(-eps / sens)
    k = np.arange(-60, 61)

    def logpmf(z):
        return math.log((1 - r) / (1 + r)) + np.abs(z) * math.log(r)

    assert np.exp(logpmf(k)).sum() == pytest.approx(1.0, abs=1e-6) or r > 0.7
    assert np.all(np.abs(logpmf(k - f[0]) - logpmf(k - f[0] - shift)) <= eps + TOL)


@given(st.floats(0.05, 20.0), st.floats(1e-8, 0.2), sens_st, st.integers(0, 2**32 - 1))
def test_gaussian_mechanism_delta_by_privacy_loss_integral(eps, delta, sens, seed):
    sigma = gaussian_sigma(sensitivity=sens, epsilon=eps, delta=delta)
    out = add_gaussian(
        np.zeros(2), sensitivity=sens, epsilon=eps, delta=delta, rng=np.random.default_rng(seed)
    )
    np.testing.assert_array_equal(out, np.random.default_rng(seed).normal(0.0, sigma, size=2))
    # hockey-stick divergence E_{e^ε}(N(0,σ²) || N(Δ,σ²)) by quadrature on the region
    # where the privacy loss exceeds ε: x < c = Δ/2 − εσ²/Δ
    c = sens / 2 - eps * sigma**2 / sens
    p, q = stats.norm(0, sigma), stats.norm(sens, sigma)

    def integrand(x):
        return p.pdf(x) - math.exp(eps) * q.pdf(x)

    val, err = integrate.quad(integrand, c - 40 * sigma, c, epsabs=1e-14, limit=200)
    assert val <= delta * (1 + 1e-6) + err + 1e-13
    # and the calibration is tight: 1 % less noise breaks the guarantee
    assert gaussian_delta(sigma * 0.99, sensitivity=sens, epsilon=eps) > delta


@given(st.floats(1e-6, 0.5))
def test_gaussian_classic_is_valid_below_one(delta):
    for eps in (0.05, 0.5, 0.99):
        s = gaussian_sigma(sensitivity=1.0, epsilon=eps, delta=delta, analytic=False)
        assert gaussian_delta(s, sensitivity=1.0, epsilon=eps) <= delta


@given(st.floats(1.1, 6.0), st.floats(0.05, 5.0), st.floats(0.0, 1.0))
def test_smooth_noise_dilation_and_shift_bounds(gamma, eps, frac):
    """Admissibility of h ∝ 1/(1+|z|^γ) behind Lantz Thm 7.4 part 1 (Nissim et al. 2007).

    With noise scale 2(γ+1)S/ε, moving the true value by at most S shifts the noise by at
    most ε/(2(γ+1)) standard units (sliding), and moving to a neighbour whose smooth bound
    differs by a factor e^λ, |λ| <= β = ε/(2(γ+1)), dilates it (dilation). Each must cost
    at most ε/2 in log density; the two halves add up to ε.
    """
    z = np.concatenate([-np.logspace(-4, 4, 200), [0.0], np.logspace(-4, 4, 200)])
    shift = frac * eps / (2 * (gamma + 1))
    lh = smooth_sensitivity_logpdf(z, gamma=gamma)
    assert np.all(np.abs(smooth_sensitivity_logpdf(z + shift, gamma=gamma) - lh) <= eps / 2 + TOL)
    lam = frac * eps / (2 * (gamma + 1))
    dil = lam + smooth_sensitivity_logpdf(np.exp(lam) * z, gamma=gamma)
    assert np.all(np.abs(dil - lh) <= eps / 2 + TOL)
