"""DPCoxPH's privacy: the per-patient sensitivities hold (white box, brute force on
neighbouring data sets), the plan spends what it claims, and a distinguishing attack
(one patient with many extreme episodes) stays at or below the claimed epsilon."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from skdp.accounting import zcdp_epsilon
from skdp.auditing import threshold_audit
from skdp.survival import DPCoxPH, make_survival_target
from skdp.survival._cox_fit import (
    baseline_sum,
    centre_sum,
    gradient_sum,
    hessian_sum,
    pe_data,
)
from skdp.survival._cox_plan import CoxPlan, cox_sensitivities
from skdp.survival._grid import time_grid_edges

K = 10  # the canary patient's episodes (white box)
K_ATTACK = 30  # the attack's canary: enough episodes for the control to be caught
EDGES = time_grid_edges(10.0, n_intervals=5)


def _base(n=200, d=2, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.uniform(-1, 1, (n, d))
    time = rng.uniform(0, 12, n)
    event = rng.random(n) < 0.5
    return Z, event, time


def _canary(d, kind, rng):
    """K extreme episodes of one patient: at a corner of the box, with an early event
    (large event term) or a full follow-up (large exposure term)."""
    Z = np.where(rng.random((K, d)) < 0.5, -1.0, 1.0)
    if kind == "early":
        return Z, np.ones(K, bool), np.full(K, 0.01)
    return Z, np.zeros(K, bool), np.full(K, 10.0)


def _neighbours(kind, seed):
    rng = np.random.default_rng(seed)
    Z, e, t = _base(seed=seed)
    cz, ce, ct = _canary(Z.shape[1], kind, rng)
    codes0 = np.arange(len(t))
    codes1 = np.r_[codes0, np.full(K, len(t))]
    d0 = pe_data(Z, e, t, EDGES, codes0)
    d1 = pe_data(np.vstack([Z, cz]), np.r_[e, ce], np.r_[t, ct], EDGES, codes1)
    return d0, d1


@pytest.mark.parametrize("kind", ["early", "late"])
@pytest.mark.parametrize("seed", range(4))
def test_the_clipped_sums_move_by_at_most_their_sensitivity(kind, seed):
    """Brute force: D versus D plus one patient of K extreme rows, at random released
    points (alpha, beta), with every patient's rows summed and clipped together."""
    sens = cox_sensitivities(EDGES, 2, max_grad_norm=2.0, hessian_clip=3.5)
    d0, d1 = _neighbours(kind, seed)
    for name, stat in (("baseline", baseline_sum), ("centre", centre_sum)):
        diff = stat(d1, sens[name]) - stat(d0, sens[name])
        assert np.linalg.norm(diff) <= sens[name] * (1 + 1e-12), name
    rng = np.random.default_rng(seed)
    for _ in range(5):
        alpha = rng.normal(0, 2, EDGES.size - 1)
        beta = rng.normal(0, 2, 2)
        g = gradient_sum(d1, alpha, beta, 2.0) - gradient_sum(d0, alpha, beta, 2.0)
        assert np.linalg.norm(g) <= 2.0 * (1 + 1e-12)
        h = hessian_sum(d1, alpha, beta, 3.5) - hessian_sum(d0, alpha, beta, 3.5)
        assert np.linalg.norm(np.triu(h)) <= np.linalg.norm(h) <= 3.5 * (1 + 1e-12)


def test_row_level_clipping_would_let_a_many_row_patient_move_the_sums_more():
    """Control (why rows are summed per patient before clipping): clipped per row, the
    K-row patient moves the gradient sum by far more than one clipping norm."""
    d0, d1 = _neighbours("early", 0)
    d0.codes = d1.codes = None
    d1.n_units, d0.n_units = d1.Z.shape[0], d0.Z.shape[0]
    alpha, beta = np.zeros(EDGES.size - 1), np.zeros(2)
    g = gradient_sum(d1, alpha, beta, 2.0) - gradient_sum(d0, alpha, beta, 2.0)
    assert np.linalg.norm(g) > 3 * 2.0


def test_the_plan_composes_to_the_budget_under_zcdp():
    plan = CoxPlan.build(
        epsilon=1.0,
        delta=1e-5,
        edges=EDGES,
        n_features=2,
        n_iter=8,
        max_grad_norm=2.0,
        hessian_clip=3.5,
        baseline_fraction=0.1,
        hessian_fraction=0.3,
    )
    sens = plan.sensitivities
    rho = (
        sens["centre"] ** 2 / (2 * plan.sigma_centre**2)
        + sens["baseline"] ** 2 / (2 * plan.sigma_baseline**2)
        + sens["hessian"] ** 2 / (2 * plan.sigma_hessian**2)
        + plan.n_iter * sens["gradient"] ** 2 / (2 * plan.sigma_gradient**2)
    )
    assert math.isclose(rho, plan.rho, rel_tol=1e-12)
    assert zcdp_epsilon(rho, 1e-5) <= 1.0 + 1e-9


# ------------------------------------------------------------------ the attack
def _worlds(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X0 = rng.uniform(-0.2, 0.2, (n, 1))
    t0 = rng.exponential(5.0, n)
    e0 = t0 < 10
    g0 = np.arange(n)
    # one patient, K_ATTACK episodes at the top of the box, each failing at once
    X1 = np.vstack([X0, np.ones((K_ATTACK, 1))])
    t1 = np.r_[t0, np.full(K_ATTACK, 0.01)]
    e1 = np.r_[e0, np.ones(K_ATTACK, bool)]
    g1 = np.r_[g0, np.full(K_ATTACK, n)]
    y0 = make_survival_target(e0, np.minimum(t0, 10))
    y1 = make_survival_target(e1, np.minimum(t1, 10))
    return (X0, y0, g0), (X1, y1, g1)


def _audit(use_groups, n_trials=600, seed=1):
    worlds = _worlds()
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n_trials) % 2)
    scores = np.empty(n_trials)
    for t, label in enumerate(labels):
        X, y, g = worlds[label]
        est = DPCoxPH(
            epsilon=1.0,
            bounds_X=(-1.0, 1.0),
            max_time=10.0,
            n_intervals=4,
            max_rows_per_group=K_ATTACK if use_groups else None,
            random_state=int(rng.integers(2**31)),
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y, groups=g if use_groups else None)
        scores[t] = est.coef_[0]  # the canary's pull on the hazard ratio
    return threshold_audit(scores, labels, epsilon=1.0)


@pytest.mark.slow
def test_row_level_fit_breaks_its_promise_for_a_patient_with_many_episodes():
    """Control: clipped per row, the patient of many episodes is protected at about
    that many times the claim, and the audit proves more than the claimed epsilon."""
    res = _audit(use_groups=False)
    assert res.epsilon_lb > 1.0, res


@pytest.mark.slow
def test_patient_level_fit_keeps_its_promise():
    res = _audit(use_groups=True)
    assert res.epsilon_lb <= 1.0, res
