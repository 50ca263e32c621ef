"""zCDP <-> (epsilon, delta) conversion (Canonne, Kamath & Steinke 2020, Prop. 12)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skdp.accounting import rdp_to_epsilon, zcdp_delta, zcdp_epsilon, zcdp_rho


def _delta_mpmath(rho, eps):
    """The bound minimised over alpha at 40 digits (the stationary point of log delta)."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    rho, eps = mp.mpf(rho), mp.mpf(eps)
    a = mp.findroot(lambda a: (2 * a - 1) * rho - eps + mp.log(1 - 1 / a), (eps + 1) / (2 * rho))
    return float(mp.exp((a - 1) * (a * rho - eps)) * (1 - 1 / a) ** a / (a - 1))


@pytest.mark.parametrize("rho, eps", [(0.5, 5.0), (0.03, 1.0), (2.0, 14.0), (1e-3, 0.3)])
def test_delta_matches_high_precision_minimum(rho, eps):
    assert zcdp_delta(rho, eps) == pytest.approx(_delta_mpmath(rho, eps), rel=1e-9)


def test_known_values():
    # computed at 40 digits with mpmath (test above); rho for the common (1, 1e-5)
    assert zcdp_delta(0.5, 5.0) == pytest.approx(2.8961228093847950e-06, rel=1e-10)
    assert zcdp_rho(1.0, 1e-5) == pytest.approx(0.030556595197639563, rel=1e-9)


@pytest.mark.parametrize("rho, delta", [(0.5, 1e-5), (0.01, 1e-5), (2.0, 1e-9), (100.0, 1e-5)])
def test_epsilon_equals_improved_rdp_conversion_on_a_fine_grid(rho, delta):
    # the RDP module's "improved" conversion (Balle et al. 2020) is the same formula,
    # minimised over a grid of orders: never below ours, and close to it
    orders = 1.0 + np.logspace(-6, 3.9, 100001)
    grid = rdp_to_epsilon(orders * rho, orders, delta=delta, conversion="improved")
    eps = zcdp_epsilon(rho, delta)
    assert eps <= grid + 1e-12
    assert eps == pytest.approx(grid, rel=1e-7)
    # and below the classic closed form rho + 2 sqrt(rho log(1/delta)) (Bun & Steinke 2016)
    assert eps < rho + 2 * math.sqrt(rho * math.log(1 / delta))


@pytest.mark.parametrize("eps, delta", [(0.1, 1e-6), (1.0, 1e-5), (10.0, 1e-5), (1.0, 1e-9)])
def test_round_trip_and_validity(eps, delta):
    rho = zcdp_rho(eps, delta)
    assert zcdp_delta(rho, eps) <= delta  # valid, checked in floating point
    assert zcdp_delta(rho * (1 + 1e-6), eps) > delta  # and tight
    assert zcdp_epsilon(rho, delta) == pytest.approx(eps, rel=1e-9)
    assert zcdp_delta(rho, zcdp_epsilon(rho, delta)) <= delta


def test_edge_cases():
    assert zcdp_rho(math.inf, 1e-5) == math.inf
    assert zcdp_rho(1.0, 0.0) == 0.0
    assert zcdp_epsilon(0.0, 1e-5) == 0.0
    assert zcdp_epsilon(0.1, 0.0) == math.inf
    assert zcdp_delta(0.0, 1.0) == 0.0
    assert zcdp_delta(1.0, math.inf) == 0.0
    assert zcdp_delta(math.inf, 1.0) == 1.0
    with pytest.raises(ValueError):
        zcdp_rho(1.0, 1.0)
    with pytest.raises(ValueError):
        zcdp_delta(-1.0, 1.0)


def test_monotone():
    rhos = [zcdp_rho(e, 1e-5) for e in (0.1, 0.3, 1.0, 3.0, 10.0)]
    assert all(a < b for a, b in zip(rhos, rhos[1:], strict=False))
    deltas = [zcdp_delta(0.1, e) for e in (0.5, 1.0, 2.0, 4.0)]
    assert all(a > b for a, b in zip(deltas, deltas[1:], strict=False))


# ---------------------------------------- issue 30: the ends of the float range
_EXTREMES = [5e-324, 1e-300, 1e-100, 1e-30, 1e-6, 1.0, 1e6, 1e30, 1e100, 1e300, 1e308]
_DELTAS = [5e-324, 1e-310, 1e-300, 1e-100, 1e-5, 0.5]


def test_conversions_are_sound_everywhere():
    """No solver error, overflow or hang (zcdp_epsilon hung at rho=1e-300), and each
    answer is valid: the classic Bun-Steinke bound stands in where the search fails."""
    for eps in _EXTREMES:
        for delta in _DELTAS:
            rho = zcdp_rho(eps, delta)
            assert rho >= 0 and not math.isnan(rho)
            if 0 < rho < math.inf:
                assert zcdp_delta(rho, eps) <= delta * (1 + 1e-9)
    for rho in _EXTREMES:
        for delta in _DELTAS:
            eps = zcdp_epsilon(rho, delta)
            assert eps >= 0 and not math.isnan(eps)
            # never looser than the classic conversion (Bun & Steinke 2016, Prop. 1.3)
            # (a subnormal rho has too few bits for the comparison to be meaningful)
            classic = rho + 2 * math.sqrt(rho * math.log(1 / delta))
            assert rho < 1e-300 or eps <= classic * (1 + 1e-6)
        for eps in _EXTREMES:
            d = zcdp_delta(rho, eps)
            assert 0.0 <= d <= 1.0


def test_conversions_unchanged_in_the_usual_range():
    # the classic fallback never replaces a working search (it is never tighter)
    for rho, delta in [(0.5, 1e-5), (0.03, 1e-6), (5.0, 1e-8)]:
        eps = zcdp_epsilon(rho, delta)
        assert eps < rho + 2 * math.sqrt(rho * math.log(1 / delta))
        assert zcdp_delta(rho, eps) <= delta
