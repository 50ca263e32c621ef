"""DPFlowVI with groups=: a patient's record is the sum of their rows' likelihood terms,
clipped once (brute-force reference: autograd over each patient's rows)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from skdp.accounting import compute_epsilon
from skdp.flows import make_flow
from skdp.sampling import DPFlowVI
from skdp.sampling._free_energy import _FreeEnergyGradients
from skdp.training import GaussianPrivatizer, RecordGroups

FAST = dict(n_iter=15, n_mc=8, batch_size=10, device="cpu", dtype="float64")


def _gauss_loglik(theta, X):
    """x_i ~ N(theta, I): log p of every (draw, row), shape (m, b)."""
    r = X[None, :, :] - theta[:, None, :]
    return -0.5 * (r * r).sum(-1)


def _patients(n_patients=30, seed=0):
    rng = np.random.default_rng(seed)
    rows = rng.integers(1, 5, n_patients)
    groups = np.repeat(np.arange(n_patients), rows)
    return rng.normal(loc=1.0, size=(groups.size, 2)), groups


@pytest.mark.parametrize("full", [True, False])
def test_per_patient_terms_equal_a_loop_over_patients(full):
    X, groups = _patients(8)
    Xt = torch.as_tensor(X)
    g = torch.Generator().manual_seed(0)
    flow = make_flow("iaf", 2, n_layers=1, hidden_features=(4,), generator=g).double()
    grads = _FreeEnergyGradients(flow, _gauss_loglik, None, 8)
    grads.module.z = torch.randn(5, 2, generator=g, dtype=torch.float64)
    c = 0.3
    priv = GaussianPrivatizer(
        noise_multiplier=1.0, max_grad_norm=c, expected_batch_size=1.0, generator=g
    )
    units = RecordGroups(groups, 4)
    grad_sum, _ = grads.private_terms(Xt, priv, full=full, groups=units)
    idx = np.array([1, 4, 6])
    got, n_bad = grad_sum(idx)
    assert n_bad == 0
    params = list(grads.params.values())
    free = grads.data_free_gradient()
    ref = {k: torch.zeros_like(v) for k, v in grads.params.items()}
    for p in idx:  # brute force: autograd of the patient's summed likelihood terms
        rows = torch.as_tensor(np.flatnonzero(groups == p))
        term = grads.module(Xt[rows]).sum()
        per = dict(zip(grads.params, torch.autograd.grad(term, params), strict=True))
        if full:
            per = {k: v + free[k] for k, v in per.items()}
        norm = math.sqrt(sum(float((v * v).sum()) for v in per.values()))
        f = min(1.0, c / norm)
        ref = {k: ref[k] + f * per[k] for k in ref}
    for k in ref:
        torch.testing.assert_close(got[k], ref[k], rtol=1e-9, atol=1e-11)


def test_patient_level_fit_spends_per_patient():
    X, groups = _patients()
    vi = DPFlowVI(
        log_lik=_gauss_loglik, n_params=2, epsilon=2.0, max_rows_per_group=2,
        random_state=0, **FAST,
    )  # fmt: skip
    vi.fit(X, groups=groups)
    assert vi.privacy_unit_ == "group" and vi.max_rows_per_group_ == 2
    assert vi.sample_rate_ == pytest.approx(10 / 30)
    eps = compute_epsilon(
        noise_multiplier=vi.noise_multiplier_, sample_rate=10 / 30, steps=15, delta=1e-5,
        accountant="pld",
    )  # fmt: skip
    assert vi.epsilon_spent_ == pytest.approx(eps, rel=1e-9) and eps <= 2.0
    assert vi.sample(3).shape == (3, 2)
    row = DPFlowVI(log_lik=_gauss_loglik, n_params=2, epsilon=2.0, random_state=0, **FAST)
    assert row.fit(X).privacy_unit_ == "row" and row.max_rows_per_group_ is None
    plain = DPFlowVI(
        log_lik=_gauss_loglik, n_params=2, epsilon=math.inf, max_rows_per_group=2,
        random_state=0, **FAST,
    ).fit(X, groups=groups)  # fmt: skip
    assert plain.privacy_unit_ == "group" and np.isfinite(plain.loss_curve_).all()


def test_groups_without_a_bound_is_refused():
    X, groups = _patients()
    with pytest.raises(ValueError, match="max_rows_per_group"):
        DPFlowVI(log_lik=_gauss_loglik, n_params=2, **FAST).fit(X, groups=groups)
