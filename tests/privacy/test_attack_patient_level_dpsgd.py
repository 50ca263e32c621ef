"""Attack: one patient with many rows against row-level DP-SGD.

The game (as ``test_attack_patient_level.py``): D (patients with one row each) versus D
plus one patient with K = 5 identical extreme rows, claim epsilon = 1. Row-level DP-SGD
clips each of the patient's rows to C, so the patient moves the clipped sum by up to K C
(group privacy: about K epsilon) and the audit proves more than the claim; patient-level
DP-SGD (``groups=``, :mod:`skdp.training._patients`) clips the patient's gradient sum
once, and the empirical lower bound stays at or below the claim. One-sided
Clopper-Pearson bounds at 95 % confidence over independent trials
(:func:`skdp.auditing.threshold_audit`), fixed seeds.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from skdp.accounting import calibrate_noise_multiplier
from skdp.auditing import threshold_audit
from skdp.linear_model import DPLogisticRegression
from skdp.training import DPSGDTrainer, RecordGroups

K = 5
EPSILON = 1.0
N = 200


def _worlds(n=N, seed=0):
    """Labels independent of x, plus one patient with K rows at x = 1, label 1."""
    rng = np.random.default_rng(seed)
    X0 = rng.uniform(-0.2, 0.2, (n, 1))
    y0 = rng.integers(0, 2, n)
    g0 = np.arange(n)
    X1, y1 = np.vstack([X0, np.ones((K, 1))]), np.r_[y0, np.ones(K, dtype=int)]
    return (X0, y0, g0), (X1, y1, np.r_[g0, np.full(K, n)])


# ------------------------------------------------------- white box: one engine step
def _logistic_loss(out, t):
    return torch.nn.functional.binary_cross_entropy_with_logits(out.reshape(()), t.reshape(()))


def _step_scores(use_groups, n_trials, delta=1e-5, seed=0):
    """The released noisy gradient of one full-batch step at w = 0, in each world,
    ``n_trials`` / 2 times (the canary pulls the weight's gradient down by up to K C per
    row-level step, by C per patient-level step).

    At ``q = 1`` the Poisson batch is every unit, so one step's release is
    ``privatize(grad_sum(all units))``: the engine's clipped sum (per row, or per patient
    with ``groups``) is computed once per world and the privatizer draws the noise
    afresh for every trial, which keeps thousands of trials fast."""
    sigma = calibrate_noise_multiplier(
        epsilon=EPSILON, delta=delta, sample_rate=1.0, steps=1, accountant="rdp"
    )
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n_trials) % 2)
    releases = []
    for w, (X, y, g) in enumerate(_worlds()):
        module = torch.nn.Linear(1, 1, bias=False).double()
        torch.nn.init.zeros_(module.weight)
        data = (torch.as_tensor(X), torch.as_tensor(y, dtype=torch.float64))
        trainer = DPSGDTrainer(
            module,
            _logistic_loss,
            n_samples=len(X),
            sample_rate=1.0,
            noise_multiplier=sigma,
            max_grad_norm=0.5,  # the canary's row gradient at w = 0 has norm 0.5
            random_state=np.random.default_rng([seed, w]),
            groups=RecordGroups(g, K) if use_groups else None,
        )
        step = trainer.dp_step
        everyone = np.arange(step.sampler.n_samples)
        assert np.array_equal(step.sampler.sample(), everyone)  # q = 1
        summed, _ = trainer._grad_sum(data)(everyone)
        releases.append((step.privatizer, summed))
    scores = np.empty(n_trials)
    for t, label in enumerate(labels):
        privatizer, summed = releases[label]
        scores[t] = -float(privatizer.privatize(summed)["weight"].reshape(()))
    return threshold_audit(scores, labels, epsilon=EPSILON, delta=delta)


def test_row_level_dpsgd_step_breaks_its_promise_for_a_patient_with_many_rows():
    """Control: a row-level step protects the patient's 5 rows at about 5 epsilon."""
    res = _step_scores(use_groups=False, n_trials=6000)
    assert res.epsilon_lb > EPSILON, res


def test_patient_level_dpsgd_step_keeps_its_promise():
    res = _step_scores(use_groups=True, n_trials=6000)
    assert res.epsilon_lb <= EPSILON, res


# ---------------------------------------------- black box: the released estimator
def _logistic(max_rows_per_group=None):
    def make(seed):
        return DPLogisticRegression(
            epsilon=EPSILON,
            delta=1e-3,
            mechanism="dpsgd",
            bounds_X=(-1.0, 1.0),
            classes=[0, 1],
            fit_intercept=False,
            # one full-batch step: Adam's first step releases the sign of the noisy
            # gradient, which the canary's K rows (each at norm C) tilt
            n_iter=1,
            batch_size=N + K,
            max_grad_norm=0.5,
            max_rows_per_group=max_rows_per_group,
            random_state=seed,
        )

    return make


def _audit(make, use_groups, n_trials=600, seed=1):
    worlds = _worlds()
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n_trials) % 2)
    scores = np.empty(n_trials)
    for t, label in enumerate(labels):
        X, y, g = worlds[label]
        est = make(int(rng.integers(2**31)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y, groups=g if use_groups else None)
        scores[t] = float(est.decision_function(np.ones((1, 1)))[0])
    return threshold_audit(scores, labels, epsilon=EPSILON, delta=1e-3)


@pytest.mark.slow
def test_row_level_dpsgd_logistic_breaks_its_promise_for_a_patient_with_many_rows():
    res = _audit(_logistic(), use_groups=False)
    assert res.epsilon_lb > EPSILON, res


@pytest.mark.slow
def test_patient_level_dpsgd_logistic_keeps_its_promise():
    res = _audit(_logistic(max_rows_per_group=K), use_groups=True)
    assert res.epsilon_lb <= EPSILON, res
