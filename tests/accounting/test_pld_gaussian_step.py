"""The PLD accountant's unsubsampled Gaussian step (``sample_rate=1``): the Gaussian
mechanism's privacy loss distribution, checked against the closed form (Balle & Wang
2018: the Gaussian mechanism with noise multiplier ``s`` is exactly ``1/s``-GDP) and the
RDP bound, alone, composed with itself and with Poisson-subsampled steps (the joint
account of :mod:`skdp.accounting._mixed`)."""

import math

import pytest

from skdp.accounting import PLDAccountant, RDPAccountant, gdp_delta, gdp_epsilon


def _pld(*steps):
    acc = PLDAccountant()
    for sigma, q, n in steps:
        acc.step(noise_multiplier=sigma, sample_rate=q, num_steps=n)
    return acc


@pytest.mark.parametrize("sigma", [0.8, 3.0, 25.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-8])
def test_one_gaussian_step_is_the_closed_form(sigma, delta):
    exact = gdp_epsilon(delta, 1.0 / sigma)
    eps = _pld((sigma, 1.0, 1)).get_epsilon_pld(delta)
    assert exact <= eps <= exact * (1 + 1e-3) + 1e-6  # an upper bound, and tight
    # the delta query too, both directions of the hockey stick
    assert _pld((sigma, 1.0, 1)).get_delta_pld(exact) == pytest.approx(delta, rel=1e-2)
    assert _pld((sigma, 1.0, 1)).get_delta_pld(exact) >= delta * (1 - 1e-9)


def test_gaussian_steps_compose_as_one_gaussian():
    sigma, k, delta = 4.0, 9, 1e-6
    exact = gdp_epsilon(delta, math.sqrt(k) / sigma)  # mu^2 adds
    eps = _pld((sigma, 1.0, k)).get_epsilon_pld(delta)
    assert exact <= eps <= exact * (1 + 2e-3)


@pytest.mark.parametrize("g", [2.0, 20.0])
def test_gaussian_with_subsampled_steps_is_bounded_both_sides(g):
    delta = 1e-5
    joint = _pld((g, 1.0, 1), (1.2, 0.05, 400))
    eps = joint.get_epsilon(delta)
    rdp = RDPAccountant()
    rdp.step(noise_multiplier=g, sample_rate=1.0, num_steps=1)
    rdp.step(noise_multiplier=1.2, sample_rate=0.05, num_steps=400)
    assert eps <= rdp.get_epsilon(delta) + 1e-12  # never above the RDP bound
    # never below either part alone (composition only adds privacy loss)
    assert eps >= gdp_epsilon(delta, 1.0 / g)
    assert eps >= _pld((1.2, 0.05, 400)).get_epsilon(delta) - 1e-9
    # and the order of the steps does not matter
    other = _pld((1.2, 0.05, 400), (g, 1.0, 1)).get_epsilon(delta)
    assert other == pytest.approx(eps, rel=1e-9)


def test_delta_of_the_gaussian_step_matches_the_closed_form_curve():
    sigma = 1.5
    acc = _pld((sigma, 1.0, 1))
    for eps in (0.5, 1.0, 3.0):
        exact = gdp_delta(eps, 1.0 / sigma)
        assert exact * (1 - 1e-12) <= acc.get_delta_pld(eps) <= exact * (1 + 1e-2) + 1e-12
