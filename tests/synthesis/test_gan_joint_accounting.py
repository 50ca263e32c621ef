"""Joint RDP accounting of a Gaussian release plus DP-SGD steps (skdp.accounting._mixed)."""

import math

import numpy as np
import pytest

from skdp.accounting import rdp_to_epsilon
from skdp.accounting._mixed import calibrate_joint_noise, joint_gaussian_epsilon
from skdp.accounting._rdp import DEFAULT_ORDERS


def _independent_epsilon(g, s, q, steps, delta):
    # recompute the composed RDP by the closed forms, not through the module
    a = np.asarray(DEFAULT_ORDERS, dtype=float)
    rdp = a / (2.0 * g**2)
    from skdp.accounting import rdp_subsampled_gaussian

    rdp = rdp + steps * np.asarray(
        rdp_subsampled_gaussian(noise_multiplier=s, sample_rate=q, orders=a)
    )
    return float(rdp_to_epsilon(rdp, a, delta=delta))


@pytest.mark.parametrize("epsilon", [1.0, 10.0])
@pytest.mark.parametrize("k", [1, 5])  # row level, and a patient with k rows (sens. k)
def test_calibrated_noise_meets_the_total(epsilon, k):
    d, delta, q, steps = 8, 1e-5, 0.02, 300
    g = 150.0 / (math.sqrt(d) * k)  # noise sd 150 over the L2 sensitivity sqrt(d) * k
    s = calibrate_joint_noise(
        epsilon=epsilon, delta=delta, sample_rate=q, steps=steps, gaussian_noise_multiplier=g
    )
    spent = _independent_epsilon(g, s, q, steps, delta)
    assert spent <= epsilon + 1e-9
    assert spent >= 0.98 * epsilon  # tight: the smallest noise within the ratio


def test_joint_is_tighter_than_splitting():
    delta, q, steps, eps = 1e-5, 0.02, 300, 1.0
    g = 6.0
    joint = calibrate_joint_noise(
        epsilon=eps, delta=delta, sample_rate=q, steps=steps, gaussian_noise_multiplier=g
    )
    # the split: the Gaussian release's own epsilon at 0.1 delta, the rest to DP-SGD
    eps_g = joint_gaussian_epsilon(
        gaussian_noise_multiplier=g,
        noise_multiplier=math.inf,
        sample_rate=q,
        steps=0,
        delta=0.1 * delta,
    )
    split = calibrate_joint_noise(
        epsilon=eps - eps_g,
        delta=0.9 * delta,
        sample_rate=q,
        steps=steps,
        gaussian_noise_multiplier=math.inf,
    )
    assert joint < split


def test_budget_spent_by_the_release_alone_is_refused():
    with pytest.raises(ValueError, match="Gaussian release alone"):
        calibrate_joint_noise(
            epsilon=0.1, delta=1e-5, sample_rate=0.01, steps=10, gaussian_noise_multiplier=0.5
        )
