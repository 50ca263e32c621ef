"""Cross-check against Google's dp-accounting (test-only dependency), integer orders only.

dp-accounting's fractional-order routine can fail to converge and drop orders, and
where it converges its value can exceed the exact integral (spec README S3), so the
comparison pins integer orders.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from skdp.accounting import compute_epsilon, get_accountant, rdp_subsampled_gaussian

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting import rdp as dp_rdp  # noqa: E402

INTEGER_ORDERS = list(range(2, 257)) + [512]


def _dp_acc(sigma, q, steps, orders=INTEGER_ORDERS):
    acc = dp_rdp.RdpAccountant(orders)
    event = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
    acc.compose(event, steps)
    return acc


QS = [1e-4, 1e-3, 0.01, 0.04, 0.2, 1.0]
SIGMAS = [0.5, 0.8, 1.1, 2.0, 5.0]
STEPS = [1, 100, 10_000]
# dp-accounting's integer-order loop is slow (~0.1 s per case): a spread-out subset runs
# by default, the full grid with -m slow.
GRID = list(itertools.product(QS, SIGMAS, STEPS))
FAST = GRID[::7]
SLOW = [pytest.param(*case, marks=pytest.mark.slow) for case in GRID if case not in FAST]


@pytest.mark.parametrize(("q", "sigma", "steps"), FAST + SLOW)
def test_epsilon_matches_dp_accounting(q, sigma, steps):
    theirs = _dp_acc(sigma, q, steps)
    for delta in (1e-5, 1e-8):
        ours = compute_epsilon(
            noise_multiplier=sigma,
            sample_rate=q,
            steps=steps,
            delta=delta,
            orders=INTEGER_ORDERS,
        )
        assert ours == pytest.approx(theirs.get_epsilon(delta), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(("q", "sigma"), [(1e-3, 0.6), (0.05, 1.0), (0.5, 3.0), (1.0, 1.3)])
def test_rdp_curve_matches_dp_accounting(q, sigma):
    ours = rdp_subsampled_gaussian(noise_multiplier=sigma, sample_rate=q, orders=INTEGER_ORDERS)
    theirs = np.asarray(_dp_acc(sigma, q, 1)._rdp)
    finite = np.isfinite(theirs)
    np.testing.assert_allclose(ours[finite], theirs[finite], rtol=1e-9, atol=1e-300)


def test_heterogeneous_composition_matches_dp_accounting():
    ours = get_accountant("rdp", orders=INTEGER_ORDERS)
    theirs = dp_rdp.RdpAccountant(INTEGER_ORDERS)
    for sigma, q, n in [(1.0, 0.01, 500), (2.5, 0.1, 40), (0.9, 0.002, 3000)]:
        ours.step(noise_multiplier=sigma, sample_rate=q, num_steps=n)
        event = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
        theirs.compose(event, n)
    assert ours.get_epsilon(1e-6) == pytest.approx(theirs.get_epsilon(1e-6), rel=1e-9)
    assert ours.get_delta(2.0) == pytest.approx(theirs.get_delta(2.0), rel=1e-7)
