"""RDP of the Poisson-subsampled Gaussian: closed forms, exactness, golden values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from skdp.accounting import (
    DEFAULT_ORDERS,
    compute_epsilon,
    rdp_gaussian,
    rdp_pure_dp,
    rdp_subsampled_gaussian,
    rdp_to_delta,
    rdp_to_epsilon,
)
from skdp.accounting._rdp import _log_a_minus_one_frac, _log_a_minus_one_int

INTEGER_ORDERS = list(range(2, 257))
OPACUS_ORDERS = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
# dp-accounting 0.6.0 DEFAULT_RDP_ORDERS (copied so the golden tests do not need it).
DPACC_ORDERS = [1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024]


def eps(sigma, q, steps, delta, **kw):
    return compute_epsilon(noise_multiplier=sigma, sample_rate=q, steps=steps, delta=delta, **kw)


# ------------------------------------------------------------------ default grid


def test_default_orders_are_tf_grid_union_integers_and_tenths():
    tf = [1.25, 1.5, 1.75, 2, 2.25, 2.5, 3, 3.5, 4, 4.5] + list(range(5, 64)) + [128, 256, 512]
    tenths = [k / 10 for k in range(20, 120)]  # 2.0, 2.1, ..., 11.9 (issue 19)
    expected = set(map(float, tf)) | set(map(float, range(2, 257))) | set(tenths)
    assert set(DEFAULT_ORDERS) == expected
    assert np.all(np.diff(DEFAULT_ORDERS) > 0)
    assert not DEFAULT_ORDERS.flags.writeable


# ------------------------------------------------------------------ closed forms


@pytest.mark.parametrize("sigma", [0.3, 1.0, 7.36])
def test_full_batch_is_gaussian_mechanism(sigma):
    orders = np.array([1.25, 1.5, 2, 3.5, 10, 256])
    expected = orders / (2 * sigma**2)
    got = rdp_subsampled_gaussian(noise_multiplier=sigma, sample_rate=1.0, orders=orders)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(rdp_gaussian(noise_multiplier=sigma, orders=orders), expected)


def test_zero_rate_zero_steps_and_infinite_noise_give_zero():
    for kw in (
        {"noise_multiplier": 1.0, "sample_rate": 0.0},
        {"noise_multiplier": math.inf, "sample_rate": 0.3},
        {"noise_multiplier": 0.0, "sample_rate": 0.0},
    ):
        assert np.all(rdp_subsampled_gaussian(**kw) == 0)
    assert eps(1.0, 0.3, 0, 1e-5) == 0.0
    assert eps(1.0, 0.0, 1000, 1e-5) == 0.0
    assert eps(1.0, 0.0, 1000, 0.0) == 0.0  # delta-independent


def test_zero_noise_is_infinite():
    assert np.all(np.isinf(rdp_subsampled_gaussian(noise_multiplier=0.0, sample_rate=0.1)))
    assert eps(0.0, 0.1, 1, 1e-5) == math.inf


def test_delta_zero_gives_infinite_epsilon():
    assert eps(1.0, 0.1, 10, 0.0) == math.inf


def test_pure_dp_curve():
    got = rdp_pure_dp(epsilon=0.5, orders=[2, 3, 100])
    np.testing.assert_allclose(got, [0.25, 0.375, 0.5])


def test_small_q_matches_leading_term():
    # A - 1 ~ C(a,2) q^2 expm1(1/s^2) for tiny q: relative precision is kept.
    q, sigma, a = 1e-9, 2.0, 5.0
    got = rdp_subsampled_gaussian(noise_multiplier=sigma, sample_rate=q, orders=[a])[0]
    lead = math.comb(5, 2) * q**2 * math.expm1(1 / sigma**2) / (a - 1)
    assert got == pytest.approx(lead, rel=1e-6)
    frac = rdp_subsampled_gaussian(noise_multiplier=sigma, sample_rate=q, orders=[4.5])[0]
    lead = 4.5 * 3.5 / 2 * q**2 * math.expm1(1 / sigma**2) / 3.5
    assert frac == pytest.approx(lead, rel=1e-6)


# ------------------------------------------- fractional orders are computed exactly


@pytest.mark.parametrize("sigma", [0.3, 0.7, 1.0, 2.0, 10.0, 1000.0])
@pytest.mark.parametrize("q", [1e-7, 1e-3, 0.04, 0.5, 0.999])
def test_integral_matches_binomial_sum_at_integer_orders(sigma, q):
    orders = np.array([2.0, 3.0, 7.0, 33.0, 128.0])
    a = _log_a_minus_one_int(orders, q, sigma)
    b = _log_a_minus_one_frac(orders, q, sigma)
    ra = np.logaddexp(0, a) / (orders - 1)
    rb = np.logaddexp(0, b) / (orders - 1)
    np.testing.assert_allclose(rb, ra, rtol=1e-10)


def _quad_rdp(q, sigma, alpha):
    def integrand(z):
        ratio = (1 - q) + q * math.exp((2 * z - 1) / (2 * sigma**2))
        return stats.norm.pdf(z, scale=sigma) * ratio**alpha

    lo, hi = -40 * sigma, alpha + 40 * sigma
    a, _ = integrate.quad(
        integrand, lo, hi, epsabs=0, epsrel=1e-12, limit=500, points=[0.0, 0.5, alpha]
    )
    return math.log(a) / (alpha - 1)


@pytest.mark.parametrize(
    ("q", "sigma", "alpha"),
    [(1 / 12, 1.3, 1.5), (0.1, 0.8, 2.5), (0.5, 7.36, 1.25), (0.01, 1.0, 4.5), (0.3, 0.5, 1.75)],
)
def test_fractional_order_matches_quadrature(q, sigma, alpha):
    got = rdp_subsampled_gaussian(noise_multiplier=sigma, sample_rate=q, orders=[alpha])[0]
    assert got == pytest.approx(_quad_rdp(q, sigma, alpha), rel=1e-7)


def test_spec_quadrature_value_fractional():
    # Spec README S3: exact RDP at q=1/12, sigma=1.3, alpha=1.5 is 0.00405 (dp-accounting's
    # series gives 0.00500 there).
    got = rdp_subsampled_gaussian(noise_multiplier=1.3, sample_rate=1 / 12, orders=[1.5])[0]
    assert got == pytest.approx(0.00405, abs=5e-6)


def test_no_order_dropped_where_series_fails():
    # dp-accounting's fractional series fails to converge here and drops the orders.
    orders = np.arange(1.1, 2.0, 0.1)
    rdp = rdp_subsampled_gaussian(noise_multiplier=7.36, sample_rate=0.5, orders=orders)
    assert np.all(np.isfinite(rdp)) and np.all(rdp > 0)
    assert np.all(np.diff(rdp) > 0)


@pytest.mark.parametrize("sigma", [0.4, 1.0, 5.0])
@pytest.mark.parametrize("q", [1e-4, 0.05, 0.6])
def test_rdp_nondecreasing_in_order(sigma, q):
    rdp = rdp_subsampled_gaussian(noise_multiplier=sigma, sample_rate=q)
    assert np.all(np.diff(rdp) >= -1e-12 * rdp[1:])


def test_extreme_inputs_are_finite():
    for sigma, q in [(0.3, 0.999999), (0.3, 1e-12), (1000.0, 0.5), (0.3, 0.5)]:
        rdp = rdp_subsampled_gaussian(noise_multiplier=sigma, sample_rate=q)
        assert np.all(np.isfinite(rdp)) and np.all(rdp >= 0)
    # huge step counts do not overflow
    assert math.isfinite(eps(1.0, 1e-6, 10**12, 1e-9))


# ------------------------------------------------------------------ golden values


def test_opacus_reference_value():
    # sigma=1.5, q=0.04, T=2250, delta=1e-5: Opacus's RDP accountant reports 7.3291.
    assert eps(1.5, 0.04, 2250, 1e-5, orders=OPACUS_ORDERS) == pytest.approx(7.3291, abs=1e-4)
    # Spec README S2: 7.3299 on the integers; the default grid (with tenths between 2
    # and 12, issue 19) finds 7.3291 at alpha=4.1 (4.2 on Opacus's grid).
    assert eps(1.5, 0.04, 2250, 1e-5, orders=INTEGER_ORDERS) == pytest.approx(7.3299, abs=1e-4)
    assert eps(1.5, 0.04, 2250, 1e-5) == pytest.approx(7.3291, abs=1e-4)


@pytest.mark.parametrize(
    ("q", "sigma", "steps", "classic", "alpha", "improved"),
    [  # dp_gan.md §3.4 (integer grid), confirmed in spec README S2
        (1 / 6000, 1.0, 3_000_000, 1.893, 14, 1.597),
        (1 / 6000, 1.0, 600_000, 0.998, 16, 0.749),
        (1 / 6000, 1.0, 6_000_000, 2.716, 10, 2.339),
        (256 / 60000, 1.1, 14_062, 3.009, 9, 2.597),
    ],
)
def test_dp_gan_anchors(q, sigma, steps, classic, alpha, improved):
    rdp = steps * rdp_subsampled_gaussian(
        noise_multiplier=sigma, sample_rate=q, orders=INTEGER_ORDERS
    )
    e, a = rdp_to_epsilon(rdp, INTEGER_ORDERS, delta=1e-5, conversion="classic", return_order=True)
    assert e == pytest.approx(classic, abs=6e-4)
    assert a == alpha
    assert eps(sigma, q, steps, 1e-5, orders=INTEGER_ORDERS) == pytest.approx(improved, abs=6e-4)


def test_dp_gan_b4():
    # G §8 B4 (classic conversion requested explicitly, spec README §2 row 3).
    e = eps(1.0, 1 / 6000, 3_000_000, 1e-5, conversion="classic", orders=INTEGER_ORDERS)
    assert 1.88 <= e <= 1.91 and e <= 2.0
    e = eps(1.1, 256 / 60000, 14062, 1e-5, conversion="classic", orders=INTEGER_ORDERS)
    assert 2.99 <= e <= 3.03


def test_dp_gan_practical_guide():
    # dp_gan.md §3.4: B=64, classic, delta=1e-5, epochs 1/10/50/100/300.
    rows = {
        (858, 2.0): [1.00, 2.57, 5.70, 8.26, 15.49],
        (10_000, 1.1): [1.15, 1.68, 3.42, 4.89, 8.89],
        (70_000, 1.0): [0.97, 1.07, 1.50, 2.01, 3.56],
    }
    for (n, sigma), expected in rows.items():
        q = 64 / n
        for epochs, want in zip([1, 10, 50, 100, 300], expected, strict=True):
            steps = round(epochs * n / 64)
            got = eps(sigma, q, steps, 1e-5, conversion="classic", orders=INTEGER_ORDERS)
            assert got == pytest.approx(want, abs=0.015), (n, epochs)


@pytest.mark.parametrize(
    ("sigma", "q", "delta", "improved", "classic"),
    [  # dp_flow.md §2.6: integer-grid values (spec README S3 pins the grid)
        (7.36, 0.5, 1e-2, 40.396, 41.783),
        (11.44, 0.5, 1e-2, 18.545, 19.931),
        (18.28, 0.5, 1e-2, 9.211, 10.597),
        (29.93, 0.5, 1e-2, 4.699, 5.654),
        (1.30, 1 / 12, 1e-5, 54.840, 56.226),
        (6.68, 1 / 12, 1e-5, 5.417, 6.042),
        (14.88, 1 / 12, 1e-5, 2.179, 2.539),
        (27.82, 1 / 12, 1e-5, 1.093, 1.323),
    ],
)
def test_dp_flow_integer_grid_anchors(sigma, q, delta, improved, classic):
    kw = {"orders": INTEGER_ORDERS}
    assert eps(sigma, q, 8000, delta, **kw) == pytest.approx(improved, abs=1e-3)
    assert eps(sigma, q, 8000, delta, conversion="classic", **kw) == pytest.approx(
        classic, abs=1e-3
    )


def test_fractional_orders_tighten_high_epsilon_anchors():
    # Spec README S3: with exact fractional orders the alpha=2 anchors drop.
    e, a = rdp_to_epsilon(
        8000 * rdp_subsampled_gaussian(noise_multiplier=7.36, sample_rate=0.5),
        delta=1e-2,
        return_order=True,
    )
    assert e == pytest.approx(35.12, abs=5e-3) and a == 1.5
    classic = eps(7.36, 0.5, 8000, 1e-2, conversion="classic")
    assert classic == pytest.approx(37.03, abs=5e-3)
    assert eps(1.30, 1 / 12, 8000, 1e-5, orders=DPACC_ORDERS) == pytest.approx(52.02, abs=5e-3)
    # continuous-order optimum ~1.65: between the 0.1-grid value and the default grid's
    fine = eps(1.30, 1 / 12, 8000, 1e-5, orders=np.arange(1.5, 1.9, 0.005))
    assert 51.9 < fine <= 52.03
    assert eps(1.30, 1 / 12, 8000, 1e-5) == pytest.approx(52.21, abs=5e-3)  # alpha=1.75
    assert eps(0.5, 0.1, 100, 1e-5, orders=DPACC_ORDERS) == pytest.approx(35.2, abs=0.05)
    # PLD (31.855 / 49.135, dp_flow.md §2.7) stays below the rigorous RDP bound (C6)
    assert eps(7.36, 0.5, 8000, 1e-2) >= 31.855 - 0.05
    assert eps(1.30, 1 / 12, 8000, 1e-5) >= 49.135 - 0.05


def test_exact_gaussian_c3():
    # q=1, T=1, sigma=1: exact 4.3772; RDP is a valid upper bound (4.753 on integers,
    # 4.7285 on the default grid with its tenths between 2 and 12).
    assert (
        4.3772 <= eps(1.0, 1.0, 1, 1e-5, orders=INTEGER_ORDERS) == pytest.approx(4.7527, abs=1e-4)
    )
    e = eps(1.0, 1.0, 1, 1e-5)
    assert 4.3772 <= e == pytest.approx(4.7285, abs=1e-4)
    fine = eps(1.0, 1.0, 1, 1e-5, orders=np.arange(1.01, 12, 0.01))
    assert 4.3772 <= fine == pytest.approx(4.729, abs=1e-3)


def test_gan_delta_at_epsilon_two():
    # Spec README S3: 002's delta(eps=2) ~ 2.5e-6 at q=1/6000, sigma=1, T=3e6.
    rdp = 3_000_000 * rdp_subsampled_gaussian(
        noise_multiplier=1.0, sample_rate=1 / 6000, orders=INTEGER_ORDERS
    )
    d = rdp_to_delta(rdp, INTEGER_ORDERS, epsilon=2.0, conversion="classic")
    assert 2.0e-6 <= d <= 3.0e-6


# ------------------------------------------------------------------ conversion


def test_improved_never_exceeds_classic():
    for sigma, q, steps in [(0.8, 0.01, 1000), (2.0, 0.2, 50), (1.0, 1.0, 1)]:
        imp = eps(sigma, q, steps, 1e-5)
        cla = eps(sigma, q, steps, 1e-5, conversion="classic")
        assert imp <= cla


def test_epsilon_delta_round_trip():
    rdp = 1000 * rdp_subsampled_gaussian(noise_multiplier=1.0, sample_rate=0.01)
    for conversion in ("classic", "improved"):
        e = rdp_to_epsilon(rdp, delta=1e-6, conversion=conversion)
        d = rdp_to_delta(rdp, epsilon=e, conversion=conversion)
        assert d == pytest.approx(1e-6, rel=1e-9)


def test_total_variation_shortcut():
    # A large delta is met with epsilon = 0 (delta >= sqrt(1 - exp(-rdp))).
    assert rdp_to_epsilon([1e-6], [2.0], delta=0.01) == 0.0
    assert rdp_to_epsilon([1e-6], [2.0], delta=0.01, conversion="classic") > 0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"orders": [1.0]},
        {"orders": [0.5, 2]},
        {"orders": [np.nan]},
        {"orders": []},
        {"orders": [2, 20_000]},
        {"noise_multiplier": -1.0},
        {"sample_rate": 1.5},
        {"sample_rate": np.nan},
    ],
)
def test_invalid_inputs_raise(kwargs):
    base = {"noise_multiplier": 1.0, "sample_rate": 0.1, "orders": None}
    with pytest.raises(ValueError):
        rdp_subsampled_gaussian(**{**base, **kwargs})


def test_conversion_validation():
    with pytest.raises(ValueError, match="conversion"):
        rdp_to_epsilon([1.0], [2.0], delta=1e-5, conversion="tight")
    with pytest.raises(ValueError, match="delta"):
        rdp_to_epsilon([1.0], [2.0], delta=1.0)
    with pytest.raises(ValueError, match="same length"):
        rdp_to_epsilon([1.0, 2.0], [2.0], delta=1e-5)


# ---------------------------------------- issue 30: tiny and huge noise multipliers
def test_fractional_orders_beyond_the_budget_take_the_next_integer_order(monkeypatch):
    import skdp.accounting._rdp as rdp_mod

    orders = np.array([2.5, 3.25, 7.9, 8.0])
    exact = rdp_subsampled_gaussian(noise_multiplier=0.7, sample_rate=0.05, orders=orders)
    monkeypatch.setattr(rdp_mod, "_MAX_FRAC_CELLS", 0)  # no fractional order fits
    bounded = rdp_subsampled_gaussian(noise_multiplier=0.7, sample_rate=0.05, orders=orders)
    ceil = rdp_subsampled_gaussian(noise_multiplier=0.7, sample_rate=0.05, orders=np.ceil(orders))
    np.testing.assert_array_equal(bounded, ceil)  # the integer order's value
    assert np.all(bounded >= exact)  # sound: RDP grows with the order
    assert bounded[-1] == exact[-1]  # integer orders are untouched


def test_tiny_noise_multiplier_answers_quickly_and_soundly():
    import time

    t = time.process_time()
    eps = compute_epsilon(noise_multiplier=3e-3, sample_rate=0.01, steps=100, delta=1e-5)
    assert time.process_time() - t < 5.0  # 25 s before issue 30
    # the fractional orders still help (never worse than the integer orders alone);
    # soundness of their stand-in: test_fractional_orders_beyond_the_budget_...
    integer_only = compute_epsilon(
        noise_multiplier=3e-3, sample_rate=0.01, steps=100, delta=1e-5, orders=INTEGER_ORDERS
    )
    assert 0 < eps <= integer_only


@pytest.mark.parametrize("sigma", [1e150, 1e155, 1e300, 1.7e308])
def test_huge_noise_multiplier_gives_a_finite_nonnegative_curve(sigma):
    rdp = rdp_subsampled_gaussian(noise_multiplier=sigma, sample_rate=0.01)
    assert np.all(np.isfinite(rdp)) and np.all(rdp >= 0)
    assert compute_epsilon(noise_multiplier=sigma, sample_rate=0.01, steps=10, delta=1e-5) < 1e-3
