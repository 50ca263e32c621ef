"""Audit of the Fisher-information release of DPLogisticRegression(inference=True): one
canary row at the largest per-row change (``||z|| = 1``, all coordinates equal,
``p (1 - p) = 1/4``) against the release's claimed epsilon; a release with a quarter of
the noise (a wrong sensitivity) is caught by the same attack."""

import math
from dataclasses import replace

import numpy as np

from skdp.auditing import threshold_audit
from skdp.linear_model._inference_logistic import release_fisher
from skdp.linear_model._logistic_plan import LogisticPlan


def _scores(plan, trials, seed):
    d = 3
    rng = np.random.default_rng(seed)
    base = np.zeros((20, d))  # rows at the origin: no contribution
    canary = np.full((1, d), 1.0 / math.sqrt(d))
    step = 0.25 / d  # the canary's change of every entry
    upper = np.triu_indices(d)
    labels = rng.integers(0, 2, size=trials)
    scores = np.empty(trials)
    for t, with_canary in enumerate(labels):
        Z = np.vstack([base, canary]) if with_canary else base
        H, _ = release_fisher(Z, np.ones(Z.shape[0]), np.zeros(d), plan, rng)
        x = H[upper]
        scores[t] = np.sum(np.abs(x) - np.abs(x - step))  # the likelihood-ratio statistic
    return scores, labels


def _plan(epsilon):
    return LogisticPlan.build(
        epsilon=epsilon,
        delta=0.0,
        eps_bounds=0.0,
        mechanism="objective",
        n_problems=1,
        C=1.0,
        inference=True,
    )


def test_fisher_release_audit_within_claim_and_broken_release_caught():
    plan = _plan(4.0)
    claim = plan.eps_fisher
    scores, labels = _scores(plan, 3000, 0)
    bound = threshold_audit(scores, labels).epsilon_lb
    assert bound <= claim
    broken = replace(plan, eps_fisher=4 * plan.eps_fisher)  # a quarter of the noise
    scores, labels = _scores(broken, 3000, 1)
    assert threshold_audit(scores, labels).epsilon_lb > claim
