"""The patient-level audit (skdp.auditing.group_audit) of DPFlowDensity: one patient with
K = 5 extreme rows in or out, claim epsilon = 1, scored by the log-density the released
flow gives the canary's rows. Patient-level DP-SGD (groups=) must stay at or below the
claim (95 % Clopper-Pearson, fixed seeds). The per-row control that exceeds the claim is
in test_attack_patient_level_dpsgd.py (the same engine step)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from skdp.auditing import group_audit
from skdp.density import DPFlowDensity

K, EPSILON, N = 5, 1.0, 40


@pytest.mark.slow
def test_flow_density_patient_level_guarantee_holds_under_the_group_audit():
    rng = np.random.default_rng(0)
    X = rng.normal(scale=0.3, size=(N, 2))
    est = DPFlowDensity(
        epsilon=EPSILON,
        bounds=(-4.0, 4.0),
        n_layers=1,
        hidden_size=4,
        n_iter=5,
        batch_size=N + 1,  # every patient in every step: the canary is always seen
        learning_rate=0.05,
        max_rows_per_group=K,
        device="cpu",
        dtype="float64",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = group_audit(
            est,
            X,
            groups=np.arange(N),
            canary_X=np.full((K, 2), 3.5),
            score=lambda e, Xc, yc: e.score_samples(Xc),
            n_trials=100,
            random_state=1,
        )
    assert res.details["canary_rows"] == K
    assert res.epsilon_lb <= EPSILON, res
