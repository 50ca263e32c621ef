"""White-box audit of one DP-SGD step of the shared engine (skdp.training).

The estimators trained with DP-SGD are slow to audit end to end, so the engine's
normative step (clip each per-sample gradient to C, add N(0, sigma^2 C^2) once to the
sum, divide by the expected batch size; spec dp_flow.md §2.5) is audited directly: a
"Dirac" canary whose gradient is 100 C along one coordinate, every other record with a
zero gradient, sample rate 1. One step is then the Gaussian mechanism with sensitivity
C (after clipping), whose exact epsilon at delta is known in closed form. A missing
clip, a noise term that is too small, or a wrong normalisation shows up as a bound
above that epsilon.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from skdp.auditing import threshold_audit

torch = pytest.importorskip("torch")
training = pytest.importorskip("skdp.training")

DELTA = 1e-5
N = 8


def gaussian_epsilon(sigma, delta):
    """Exact epsilon of the Gaussian mechanism with sensitivity 1 and std sigma."""

    def f(e):
        return norm.cdf(-e * sigma + 0.5 / sigma) - math.exp(e) * norm.cdf(-e * sigma - 0.5 / sigma)

    return 0.0 if f(0.0) <= delta else brentq(lambda e: f(e) - delta, 0.0, 200.0)


def _step_scores(noise_multiplier, n_trials, *, with_canary, seed, clip=1.0):
    module = torch.nn.Linear(1, 1, bias=False).double()
    trainer = training.DPSGDTrainer(
        module,
        lambda out: out.sum(),  # per-record loss w * x: gradient x
        n_samples=N,
        sample_rate=1.0,
        noise_multiplier=noise_multiplier,
        max_grad_norm=clip,
        optimizer="sgd",
        random_state=seed,
    )
    x = torch.zeros(N, 1, dtype=torch.float64)
    if with_canary:
        x[0, 0] = 100.0 * clip
    out = np.empty(n_trials)
    for t in range(n_trials):
        g = trainer.noisy_gradient([x])
        out[t] = float(g["weight"].reshape(-1)[0])
    return out


def _audit(noise_multiplier, n_trials, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n_trials) % 2)
    s1 = _step_scores(noise_multiplier, int(labels.sum()), with_canary=True, seed=seed + 1)
    s0 = _step_scores(noise_multiplier, int((1 - labels).sum()), with_canary=False, seed=seed + 2)
    scores = np.empty(n_trials)
    scores[labels == 1], scores[labels == 0] = s1, s0
    return threshold_audit(scores, labels, delta=DELTA)


def test_gaussian_epsilon_reference():
    """spec README S4: exact Gaussian eps(1e-5; mu=1) = 4.3772."""
    assert gaussian_epsilon(1.0, 1e-5) == pytest.approx(4.3772, abs=1e-3)


def test_one_dpsgd_step_within_its_epsilon():
    sigma = 1.0
    res = _audit(sigma, 300)
    assert res.epsilon_lb <= gaussian_epsilon(sigma, DELTA), res.summary()
    assert res.auc > 0.6  # the attack does see the canary at this noise level


def test_step_audit_catches_too_little_noise():
    """Claimed sigma = 4 (eps ~ 0.93 per step); a step with sigma/8 is flagged."""
    claimed = gaussian_epsilon(4.0, DELTA)
    res = _audit(0.5, 300)
    assert res.epsilon_lb > claimed


@pytest.mark.slow
def test_one_dpsgd_step_full():
    """3000 steps per noise level: every bound stays below the exact epsilon and grows
    as the noise shrinks. (A threshold attack cannot approach the Gaussian's epsilon at
    delta=1e-5, which lives in the far tails, so no tightness is asserted.)"""
    bounds = []
    for sigma in (2.0, 1.0, 0.5):
        res = _audit(sigma, 3000, seed=3)
        assert res.epsilon_lb <= gaussian_epsilon(sigma, DELTA), res.summary()
        bounds.append(res.epsilon_lb)
    assert bounds == sorted(bounds)
    assert bounds[-1] > 2.0
