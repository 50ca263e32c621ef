"""The GAN's epsilon split: one test per share (skdp.synthesis._gan._budget)."""

from __future__ import annotations

import math

import pytest

from skdp.accounting import compute_epsilon
from skdp.synthesis._gan import _budget


def test_prior_share_only_for_a_dp_prior_of_a_conditional_model():
    assert _budget.prior_share(2.0, conditional=True, class_prior="dp") == pytest.approx(0.1)
    assert _budget.prior_share(2.0, conditional=False, class_prior="dp") == 0.0
    assert _budget.prior_share(2.0, conditional=True, class_prior="uniform") == 0.0
    assert _budget.prior_share(2.0, conditional=True, class_prior={0: 1.0}) == 0.0
    # epsilon=inf: the exact frequencies of a non-private fit
    assert _budget.prior_share(math.inf, conditional=True, class_prior="dp") == math.inf


def test_selection_share_only_when_selection_is_on_and_private():
    assert _budget.selection_share(2.5, selection=True) == pytest.approx(0.5)
    assert _budget.selection_share(2.5, selection=False) == 0.0
    assert _budget.selection_share(math.inf, selection=True) == 0.0


def test_dpsgd_share_is_what_is_left_and_must_be_positive():
    left = _budget.dpsgd_share(4.0, bounds=0.4, prior=0.2, selection=0.8)
    assert left == pytest.approx(2.6)
    with pytest.raises(ValueError, match="DP-SGD"):
        _budget.dpsgd_share(1.0, bounds=0.5, prior=0.2, selection=0.3)
    assert _budget.dpsgd_share(math.inf, bounds=0.0, prior=0.0, selection=0.0) == math.inf


def test_the_fixed_shares_leave_most_of_the_budget_to_dpsgd():
    eps = 3.0
    bounds = _budget.BOUNDS_FRACTION * eps
    prior = _budget.prior_share(eps, conditional=True, class_prior="dp")
    selection = _budget.selection_share(eps, selection=True)
    left = _budget.dpsgd_share(eps, bounds=bounds, prior=prior, selection=selection)
    assert bounds + prior + selection + left == pytest.approx(eps)
    assert left == pytest.approx(0.65 * eps)


def test_calibrate_noise_meets_the_dpsgd_share_tightly():
    sigma = _budget.calibrate_noise(1.0, 1e-5, 0.1, 50, noise_multiplier=None, accountant="rdp")
    eps = compute_epsilon(
        noise_multiplier=sigma, sample_rate=0.1, steps=50, delta=1e-5, accountant="rdp"
    )
    looser = compute_epsilon(
        noise_multiplier=sigma / 1.01, sample_rate=0.1, steps=50, delta=1e-5, accountant="rdp"
    )
    assert eps <= 1.0 < looser
    # a given sigma is kept when it fits, refused when it spends too much
    assert (
        _budget.calibrate_noise(1.0, 1e-5, 0.1, 50, noise_multiplier=2 * sigma, accountant="rdp")
        == 2 * sigma
    )
    with pytest.raises(ValueError, match="epsilon"):
        _budget.calibrate_noise(1.0, 1e-5, 0.1, 50, noise_multiplier=sigma / 2, accountant="rdp")
    assert (
        _budget.calibrate_noise(math.inf, 0.0, 0.1, 50, noise_multiplier=None, accountant="rdp")
        == 0.0
    )


def test_breakdown_adds_up_to_the_total():
    b = _budget.breakdown(bounds=0.1, prior=0.05, dpsgd=0.6, selection=0.2)
    assert set(b) == {"bounds", "prior", "dpsgd", "selection", "marginals"}
    assert sum(b.values()) == pytest.approx(0.95)
    # a "data" opt-in makes the fit non-private: the parts add up to inf
    b = _budget.breakdown(bounds=0.0, prior=0.05, dpsgd=0.6, selection=0.0, nonprivate=True)
    assert b["nonprivate"] == math.inf and sum(b.values()) == math.inf
    # epsilon=inf: nothing else is charged
    b = _budget.breakdown(bounds=0.3, prior=0.0, dpsgd=math.inf, selection=0.0, nonprivate=True)
    assert b == {
        "bounds": 0.0,
        "prior": 0.0,
        "dpsgd": math.inf,
        "selection": 0.0,
        "marginals": 0.0,
    }


def test_noise_scales_are_the_laplace_scales_drawn():
    """noise_scale_ holds the scale of the class counts' noise and of each report-noisy-max
    round's noise (sensitivity 1 both), keyed like the breakdown; 0 where nothing noisy."""
    s = _budget.noise_scales(prior=0.1, selection=0.5, selection_rounds=5)
    assert s == {"prior": pytest.approx(10.0), "selection": pytest.approx(10.0), "marginals": 0.0}
    assert set(s) <= set(_budget.breakdown(bounds=0.0, prior=0.1, dpsgd=1.0, selection=0.5))
    assert _budget.noise_scales(prior=0.0, selection=0.0, selection_rounds=1) == {
        "prior": 0.0,
        "selection": 0.0,
        "marginals": 0.0,
    }
    free = _budget.noise_scales(prior=math.inf, selection=math.inf, selection_rounds=2)
    assert free == {"prior": 0.0, "selection": 0.0, "marginals": 0.0}
