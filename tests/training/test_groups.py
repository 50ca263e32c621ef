"""Patient-level DP-SGD in the engine: patients sampled, each patient's gradient sum (over
``k``) clipped once, exactly, by every method (vmap, loop, ghost), against a brute-force
loop over patients."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from skdp.flows._made import MaskedLinear
from skdp.training import (
    DPSGDTrainer,
    RecordGroups,
    ghost_group_clip_and_sum,
    group_clip_and_sum,
    per_sample_gradients,
    train_dpsgd,
)

K = 3


def _sq_loss(out, t):
    return (out[0] - t) ** 2


def _data(n_rows=11, d=3, seed=0, scale=3.0):
    gen = torch.Generator().manual_seed(seed)
    X = scale * torch.randn(n_rows, d, generator=gen, dtype=torch.float64)
    y = scale * torch.randn(n_rows, generator=gen, dtype=torch.float64)
    return X, y


def _mlp(d=3, seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(d, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1)
    ).double()


class _Masked(torch.nn.Module):
    """A masked linear layer (MADE's, a mask entry of 2 included), tanh, a linear head."""

    def __init__(self, d=3):
        super().__init__()
        torch.manual_seed(1)
        mask = torch.tensor([[1.0, 0, 1], [0, 1, 1], [1, 1, 0], [2.0, 0, 0]])
        self.hidden = MaskedLinear(mask).double()
        self.head = torch.nn.Linear(4, 1).double()

    def forward(self, x):
        return self.head(torch.tanh(self.hidden(x)))


def _brute(module, X, y, seg, n_groups, c, k):
    """Loop over patients: clip_C(grad of (1/k) sum of the patient's losses), summed."""
    params = [p for p in module.parameters() if p.requires_grad]
    total = [torch.zeros_like(p) for p in params]
    for g in range(n_groups):
        rows = np.flatnonzero(seg == g)
        loss = sum(_sq_loss(module(X[i : i + 1])[0], y[i]) for i in rows) / k
        grads = torch.autograd.grad(loss, params)
        norm = math.sqrt(sum(float((gr * gr).sum()) for gr in grads))
        f = min(1.0, c / norm) if norm > 0 else 1.0
        total = [t + f * gr for t, gr in zip(total, grads, strict=True)]
    names = [n for n, p in module.named_parameters() if p.requires_grad]
    return dict(zip(names, total, strict=True))


def _close(a, b, tol=1e-10):
    assert set(a) == set(b)
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=tol, atol=tol)


SEG = np.array([0, 0, 0, 1, 2, 2, 3, 1, 4, 4, 4])  # 1 to 3 rows each, interleaved


@pytest.mark.parametrize("make", [_mlp, _Masked], ids=["linear", "masked"])
@pytest.mark.parametrize("c", [0.5, 1e6], ids=["clipped", "unclipped"])
def test_per_patient_clipped_sum_equals_a_loop_over_patients(make, c):
    module = make()
    X, y = _data()
    ref = _brute(module, X, y, SEG, 5, c, K)
    ps = per_sample_gradients(module, _sq_loss, X, y)
    got, norms, n_bad = group_clip_and_sum(ps, SEG, 5, c, scale=1 / K)
    _close(got, ref)
    assert norms.shape == (5,) and n_bad == 0
    ghost, gnorms, n_bad = ghost_group_clip_and_sum(
        module, _sq_loss, X, y, seg=SEG, n_groups=5, max_grad_norm=c, scale=1 / K
    )
    _close(ghost, ref)
    torch.testing.assert_close(gnorms, norms, rtol=1e-10, atol=1e-12)
    assert n_bad == 0


def test_one_patient_changes_the_clipped_sum_by_at_most_c():
    """Add a patient with K extreme rows: the clipped sum moves by at most C (ghost and
    vmap), although the patient's rows together pull far harder than one row."""
    module, c = _mlp(), 0.7
    X, y = _data()
    Xb = torch.cat([X, 50 * torch.ones(K, 3, dtype=X.dtype)])
    yb = torch.cat([y, -50 * torch.ones(K, dtype=y.dtype)])
    segb = np.r_[SEG, [5] * K]
    for ghost in (False, True):
        if ghost:
            a = ghost_group_clip_and_sum(
                module, _sq_loss, X, y, seg=SEG, n_groups=5, max_grad_norm=c, scale=1 / K
            )[0]
            b = ghost_group_clip_and_sum(
                module, _sq_loss, Xb, yb, seg=segb, n_groups=6, max_grad_norm=c, scale=1 / K
            )[0]
        else:
            a = group_clip_and_sum(per_sample_gradients(module, _sq_loss, X, y), SEG, 5, c)[0]
            b = group_clip_and_sum(per_sample_gradients(module, _sq_loss, Xb, yb), segb, 6, c)[0]
        diff = math.sqrt(sum(float(((a[k] - b[k]) ** 2).sum()) for k in a))
        assert diff <= c * (1 + 1e-9)
        assert diff > 0.99 * c  # the extreme patient is clipped to exactly C


def test_a_non_finite_row_drops_its_patient_only():
    module = _mlp()
    X, y = _data()
    X[4, 0] = float("nan")  # patient 2 (rows 4 and 5)
    keep = SEG != 2
    ref = _brute(module, X[keep], y[keep], np.array([0, 0, 0, 1, 2, 1, 3, 3, 3]), 4, 0.5, K)
    for ghost in (False, True):
        if ghost:
            got, _, n_bad = ghost_group_clip_and_sum(
                module, _sq_loss, X, y, seg=SEG, n_groups=5, max_grad_norm=0.5, scale=1 / K
            )
        else:
            ps = per_sample_gradients(module, _sq_loss, X, y)
            got, _, n_bad = group_clip_and_sum(ps, SEG, 5, 0.5, scale=1 / K)
        assert n_bad == 1
        _close(got, ref)


def test_record_groups_maps_patients_to_their_rows():
    g = RecordGroups(SEG, K)
    assert (g.n_groups, g.n_rows, g.max_rows_per_group) == (5, 11, K)
    rows, seg = g.rows([4, 1])
    assert rows.tolist() == [8, 9, 10, 3, 7] and seg.tolist() == [0, 0, 0, 1, 1]
    rows, seg = g.rows(np.array([], dtype=int))
    assert rows.size == 0 and seg.size == 0
    with pytest.raises(ValueError, match="max_rows_per_group"):
        RecordGroups(SEG, 2)
    with pytest.raises(ValueError, match="codes"):
        RecordGroups(np.array([0.5, 1.0]), 2)


@pytest.mark.parametrize("method", ["ghost", "vmap", "loop"])
def test_the_trainer_samples_patients_and_divides_by_their_expected_count(method):
    module = _mlp()
    X, y = _data()
    trainer = DPSGDTrainer(
        module,
        _sq_loss,
        n_samples=11,
        sample_rate=0.4,
        noise_multiplier=0.0,
        max_grad_norm=0.5,
        method=method,
        random_state=0,
        groups=RecordGroups(SEG, K),
    )
    assert trainer.dp_step.sampler.n_samples == 5
    assert trainer.expected_batch_size == pytest.approx(0.4 * 5)
    idx = np.array([0, 2, 4])
    g_hat, size = trainer._noisy_gradient((X, y), idx=idx)
    assert size == 3 and trainer.method == method
    keep = np.isin(SEG, idx)
    seg = np.searchsorted(idx, SEG[keep])
    ref = _brute(module, X[keep], y[keep], seg, 3, 0.5, K)
    _close(g_hat, {k: v / 2.0 for k, v in ref.items()})
    trainer.step((X, y))
    assert trainer.accountant.n_steps == 1


def test_train_dpsgd_with_groups_meets_the_budget_per_patient():
    X, y = _data(n_rows=60, seed=1)
    codes = np.repeat(np.arange(20), 3)
    res = train_dpsgd(
        _mlp(),
        _sq_loss,
        (X, y),
        epsilon=2.0,
        delta=1e-5,
        n_iter=20,
        batch_size=5,  # patients
        learning_rate=0.05,
        random_state=0,
        groups=RecordGroups(codes, 3),
    )
    assert res.sample_rate == pytest.approx(5 / 20)
    assert res.n_steps == 20 and res.epsilon_spent <= 2.0
    with pytest.raises(ValueError, match="n_samples rows"):
        train_dpsgd(
            _mlp(), _sq_loss, (X[:59], y[:59]), epsilon=2.0, delta=1e-5, n_iter=1,
            batch_size=5, groups=RecordGroups(codes, 3),
        )  # fmt: skip
