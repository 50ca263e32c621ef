"""Tests of the DP-SGD engine's pieces (spec dp_flow.md §2.5, §8 B1-B8; dp_gan.md §8 A1-A8).

The step against the per-record oracle, the noise SD, Poisson batches and one accountant
step per noise draw are in test_dpsgd_oracle.py.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch import nn

from skdp.accounting import calibrate_noise_multiplier, compute_epsilon
from skdp.training import (
    DPSGDTrainer,
    check_per_record_module,
    clip_and_sum,
    per_sample_gradients,
    train_dpsgd,
)

DT = torch.float64


def _mlp(d_in, hidden, seed=0):
    gen = torch.Generator().manual_seed(seed)
    m = nn.Sequential(nn.Linear(d_in, hidden), nn.Tanh(), nn.Linear(hidden, 1)).to(DT)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=DT))
    return m


def _sq_loss(out, y):
    return (out[0] - y) ** 2


def _microbatch_loop(module, loss_fn, x, y):
    """Reference: one ordinary autograd backward per record."""
    out = {k: [] for k, _ in module.named_parameters()}
    for i in range(x.shape[0]):
        module.zero_grad()
        loss = loss_fn(module(x[i : i + 1])[0], y[i])
        loss.backward()
        for k, p in module.named_parameters():
            out[k].append(p.grad.detach().clone())
    return {
        k: torch.stack(v) if v else torch.zeros((0, *p.shape), dtype=DT)
        for (k, v), (_, p) in zip(out.items(), module.named_parameters(), strict=True)
    }


@given(
    n=st.integers(0, 7),
    d=st.integers(1, 4),
    hidden=st.integers(1, 5),
    seed=st.integers(0, 2**16),
)
def test_per_sample_gradients_match_microbatch_loop(n, d, hidden, seed):
    m = _mlp(d, hidden, seed)
    gen = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(n, d, generator=gen, dtype=DT)
    y = torch.randn(n, generator=gen, dtype=DT)
    ref = _microbatch_loop(m, _sq_loss, x, y)
    for method in ("vmap", "loop"):
        got = per_sample_gradients(m, _sq_loss, x, y, method=method)
        assert set(got) == set(ref)
        for k in ref:
            assert got[k].shape == ref[k].shape
            torch.testing.assert_close(got[k], ref[k], atol=1e-6, rtol=0)
    # the unclipped sum equals the gradient of the summed loss
    if n:
        m.zero_grad()
        sum(_sq_loss(m(x[i : i + 1])[0], y[i]) for i in range(n)).backward()
        got = per_sample_gradients(m, _sq_loss, x, y)
        for k, p in m.named_parameters():
            torch.testing.assert_close(got[k].sum(0), p.grad, atol=1e-10, rtol=0)


def test_per_sample_gradients_of_a_flow_match_loop():
    flows = pytest.importorskip("skdp.flows")
    torch.manual_seed(0)
    flow = flows.make_flow("maf", 3, n_layers=2, hidden_features=(6,)).to(DT)
    module = flows.LogProbModule(flow)
    x = torch.randn(5, 3, dtype=DT)

    def nll(out):
        return -out

    ref = {k: [] for k, _ in module.named_parameters()}
    for i in range(5):
        module.zero_grad()
        (-module(x[i : i + 1])[0]).backward()
        for k, p in module.named_parameters():
            ref[k].append(p.grad.clone())
    got = per_sample_gradients(module, nll, x)
    for k, v in ref.items():
        torch.testing.assert_close(got[k], torch.stack(v), atol=1e-6, rtol=0)


@given(
    b=st.integers(1, 6),
    scale=st.sampled_from([0.0, 1e-30, 1e-3, 1.0, 1e3, 1e30]),
    c=st.floats(1e-4, 10.0),
    seed=st.integers(0, 1000),
)
def test_clip_bound_direction_and_identity(b, scale, c, seed):
    gen = torch.Generator().manual_seed(seed)
    g = {
        "a": scale * torch.randn(b, 3, 2, generator=gen, dtype=DT),
        "b": scale * torch.randn(b, 4, generator=gen, dtype=DT),
    }
    for i in range(b):
        one = {k: v[i : i + 1] for k, v in g.items()}
        clipped, norms, bad = clip_and_sum(one, c)
        assert bad == 0
        flat = torch.cat([v.reshape(-1) for v in clipped.values()])
        orig = torch.cat([v.reshape(-1) for v in one.values()])
        assert torch.all(torch.isfinite(flat))
        assert flat.norm() <= c * (1 + 1e-9)
        if orig.norm() <= c:
            torch.testing.assert_close(flat, orig, atol=0, rtol=0)
        elif orig.norm() > 0:
            cos = torch.dot(flat, orig) / (flat.norm() * orig.norm())
            assert abs(cos.item() - 1) < 1e-9


def test_clipping_is_global_not_per_layer():
    # each layer's norm is below C, the total is above: the whole vector is scaled by C/||g||
    g = {"a": torch.full((1, 4), 0.4, dtype=DT), "b": torch.full((1, 4), 0.4, dtype=DT)}
    total = math.sqrt(8 * 0.16)
    clipped, _, _ = clip_and_sum(g, 1.0)
    for k in g:
        torch.testing.assert_close(clipped[k], g[k][0] / total)


def test_nonfinite_gradients_are_zeroed_and_counted():
    g = {"a": torch.tensor([[1.0, 0.0], [math.nan, 1.0], [math.inf, 0.0]], dtype=DT)}
    summed, _, bad = clip_and_sum(g, 10.0)
    assert bad == 2
    torch.testing.assert_close(summed["a"], torch.tensor([1.0, 0.0], dtype=DT))


def test_sensitivity_of_clipped_sum_under_add_remove():
    """D' = D minus one row, same inclusion for the shared rows: sums differ by <= C."""
    m = _mlp(3, 4, seed=3)
    x = 5 * torch.randn(12, 3, dtype=DT)
    y = 5 * torch.randn(12, dtype=DT)
    c = 0.7
    full, _, _ = clip_and_sum(per_sample_gradients(m, _sq_loss, x, y), c)
    for drop in range(12):
        keep = [i for i in range(12) if i != drop]
        part, _, _ = clip_and_sum(per_sample_gradients(m, _sq_loss, x[keep], y[keep]), c)
        diff = torch.cat([(full[k] - part[k]).reshape(-1) for k in full])
        assert diff.norm() <= c * (1 + 1e-9)


def test_empty_batches_are_steps_and_are_accounted():
    m = nn.Linear(2, 1).to(DT)
    x = torch.randn(3, 2, dtype=DT)
    y = torch.zeros(3, dtype=DT)
    tr = DPSGDTrainer(
        m,
        _sq_loss,
        n_samples=3,
        sample_rate=1e-9,
        noise_multiplier=1.0,
        max_grad_norm=1.0,
        random_state=0,
    )
    before = [p.detach().clone() for p in m.parameters()]
    for _ in range(4):
        tr.step((x, y))
    assert tr.n_steps == 4
    assert tr.accountant.n_steps == 4
    after = list(m.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(before, after, strict=True))  # pure noise


def test_train_uses_calibration_and_reports_accountant_epsilon():
    m = _mlp(2, 3)
    x = torch.randn(100, 2, dtype=DT)
    y = torch.randn(100, dtype=DT)
    res = train_dpsgd(
        m, _sq_loss, (x, y), epsilon=1.5, delta=1e-5, n_iter=20, batch_size=10, random_state=0
    )
    sigma = calibrate_noise_multiplier(epsilon=1.5, delta=1e-5, sample_rate=0.1, steps=20)
    assert res.noise_multiplier == sigma
    assert res.n_steps == 20
    assert res.sample_rate == 0.1
    eps = compute_epsilon(noise_multiplier=sigma, sample_rate=0.1, steps=20, delta=1e-5)
    assert res.epsilon_spent == pytest.approx(eps, rel=1e-12)
    assert res.epsilon_spent <= 1.5
    assert res.guarantee == "exact"
    assert res.history["step"][-1] == 20
    assert "loss" not in res.history  # no real-data quantity in a private history


def test_given_noise_multiplier_too_small_raises_before_training():
    m = _mlp(2, 3)
    before = [p.detach().clone() for p in m.parameters()]
    x = torch.randn(50, 2, dtype=DT)
    with pytest.raises(ValueError, match="more than the budget"):
        train_dpsgd(
            m,
            _sq_loss,
            (x, x[:, 0]),
            epsilon=0.5,
            delta=1e-5,
            n_iter=100,
            batch_size=25,
            noise_multiplier=0.5,
        )
    assert all(torch.equal(a, b) for a, b in zip(before, m.parameters(), strict=True))


def test_reproducible_with_random_state():
    x = torch.randn(60, 2, dtype=DT)
    y = torch.randn(60, dtype=DT)

    def run(seed):
        m = _mlp(2, 3)
        train_dpsgd(
            m,
            _sq_loss,
            (x, y),
            epsilon=2.0,
            delta=1e-5,
            n_iter=15,
            batch_size=10,
            random_state=seed,
        )
        return torch.cat([p.detach().reshape(-1) for p in m.parameters()])

    assert torch.equal(run(3), run(3))
    assert not torch.equal(run(3), run(4))
    # training leaves the global torch RNG untouched
    m = _mlp(2, 3)
    state = torch.random.get_rng_state()
    train_dpsgd(
        m, _sq_loss, (x, y), epsilon=2.0, delta=1e-5, n_iter=5, batch_size=10, random_state=5
    )
    assert torch.equal(state, torch.random.get_rng_state())


def test_non_private_full_batch_equals_gradient_descent():
    x = torch.randn(30, 2, dtype=DT)
    y = torch.randn(30, dtype=DT)
    m1, m2 = _mlp(2, 3), _mlp(2, 3)
    train_dpsgd(
        m1,
        _sq_loss,
        (x, y),
        epsilon=math.inf,
        delta=0.0,
        n_iter=5,
        sample_rate=1.0,
        optimizer="sgd",
        learning_rate=0.01,
        random_state=0,
    )
    opt = torch.optim.SGD(m2.parameters(), lr=0.01)
    for _ in range(5):
        opt.zero_grad()
        ((m2(x)[:, 0] - y) ** 2).mean().backward()
        opt.step()
    for a, b in zip(m1.parameters(), m2.parameters(), strict=True):
        torch.testing.assert_close(a, b, atol=1e-12, rtol=0)


def test_non_private_training_reports_infinite_epsilon():
    m = _mlp(2, 3)
    x = torch.randn(30, 2, dtype=DT)
    res = train_dpsgd(
        m,
        _sq_loss,
        (x, x[:, 0]),
        epsilon=math.inf,
        delta=0.0,
        n_iter=3,
        batch_size=10,
        random_state=0,
    )
    assert res.epsilon_spent == math.inf
    assert res.noise_multiplier == 0.0
    assert len(res.history["loss"]) == len(res.history["step"])


@pytest.mark.parametrize(
    "layer",
    [nn.BatchNorm1d(3), nn.LazyBatchNorm1d(), nn.InstanceNorm1d(3, track_running_stats=True)],
)
def test_cross_record_layers_are_refused(layer):
    m = nn.Sequential(nn.Linear(3, 3), layer, nn.Linear(3, 1)).to(DT)
    with pytest.raises(ValueError, match="DP-SGD"):
        check_per_record_module(m)
    with pytest.raises(ValueError, match="DP-SGD"):
        DPSGDTrainer(
            m, _sq_loss, n_samples=5, sample_rate=0.5, noise_multiplier=1.0, max_grad_norm=1.0
        )


def test_per_record_layers_are_accepted():
    m = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.GroupNorm(2, 4), nn.Linear(4, 1))
    assert check_per_record_module(m) is m


def test_batch_transform_is_applied_outside_vmap():
    """Per-record noise drawn outside vmap (as DPFlowDensity dequantises) reaches the loss."""
    m = nn.Linear(1, 1, bias=False).to(DT)
    with torch.no_grad():
        m.weight.fill_(1.0)
    x = torch.zeros(4, 1, dtype=DT)
    y = torch.zeros(4, dtype=DT)
    seen = []

    def shift(batch):
        seen.append(batch[0].shape[0])
        return [batch[0] + 1.0, batch[1]]

    tr = DPSGDTrainer(
        m,
        _sq_loss,
        n_samples=4,
        sample_rate=1.0,
        noise_multiplier=0.0,
        max_grad_norm=1e6,
        random_state=0,
        batch_transform=shift,
    )
    g = tr.noisy_gradient((x, y))
    # loss (w * 1 - 0)^2 -> grad 2 w = 2 per record, sum 8, / B = 4 -> 2
    torch.testing.assert_close(g["weight"], torch.tensor([[2.0]], dtype=DT))
    assert seen == [4]


def test_invalid_arguments():
    m = nn.Linear(1, 1)
    with pytest.raises(ValueError, match="sample_rate"):
        DPSGDTrainer(
            m, _sq_loss, n_samples=3, sample_rate=0.0, noise_multiplier=1.0, max_grad_norm=1.0
        )
    with pytest.raises(ValueError, match="max_grad_norm"):
        DPSGDTrainer(
            m, _sq_loss, n_samples=3, sample_rate=0.5, noise_multiplier=1.0, max_grad_norm=None
        )
    with pytest.raises(ValueError, match="optimizer"):
        DPSGDTrainer(
            m,
            _sq_loss,
            n_samples=3,
            sample_rate=0.5,
            noise_multiplier=1.0,
            max_grad_norm=1.0,
            optimizer="lbfgs",
        )


# ------------------------------------------------------------------ ghost clipping
from skdp.training import GhostClippingUnsupported, ghost_clip_and_sum, linear_layers  # noqa: E402


def _reference_clipped_sum(module, loss_fn, x, c, *targets):
    """Microbatch autograd loop, then flat clipping and the sum (the oracle)."""
    names = [k for k, _ in module.named_parameters()]
    total = {k: torch.zeros_like(p) for k, p in module.named_parameters()}
    for i in range(x.shape[0]):
        module.zero_grad()
        loss_fn(module(x[i : i + 1])[0], *(t[i] for t in targets)).backward()
        gs = [p.grad.detach().clone() for p in module.parameters()]
        norm = torch.sqrt(sum((g * g).sum() for g in gs))
        f = min(1.0, c / norm.item()) if norm > 0 else 1.0
        for k, g in zip(names, gs, strict=True):
            total[k] += f * g
    return total


@given(
    n=st.integers(0, 7),
    d=st.integers(1, 4),
    hidden=st.integers(1, 5),
    c=st.floats(0.01, 5.0),
    seed=st.integers(0, 2**16),
)
def test_ghost_clipping_matches_microbatch_oracle_mlp(n, d, hidden, c, seed):
    m = _mlp(d, hidden, seed)
    gen = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(n, d, generator=gen, dtype=DT)
    y = torch.randn(n, generator=gen, dtype=DT)
    ref = _reference_clipped_sum(m, _sq_loss, x, c, y)
    got, norms, bad = ghost_clip_and_sum(m, _sq_loss, x, y, max_grad_norm=c)
    assert bad == 0 and norms.shape == (n,)
    assert set(got) == set(ref)
    for k in ref:
        torch.testing.assert_close(got[k], ref[k], atol=1e-6, rtol=0)


@given(
    n=st.integers(0, 6),
    d=st.integers(1, 4),
    kind=st.sampled_from(["maf", "realnvp"]),
    c=st.floats(0.01, 5.0),
    seed=st.integers(0, 2**16),
)
def test_ghost_clipping_matches_microbatch_oracle_flows(n, d, kind, c, seed):
    flows = pytest.importorskip("skdp.flows")
    gen = torch.Generator().manual_seed(seed)
    flow = flows.make_flow(kind, d, n_layers=2, hidden_features=(max(d, 3),), generator=gen)
    module = flows.LogProbModule(flow).to(DT)
    x = 2 * torch.randn(n, d, generator=gen).to(DT)

    def nll(lp):
        return -lp

    if linear_layers(module) is None:  # a 1-d RealNVP has an elementwise (non-linear) layer
        assert kind == "realnvp" and d == 1
        return
    ref = _reference_clipped_sum(module, nll, x, c)
    got, _, _ = ghost_clip_and_sum(module, nll, x, max_grad_norm=c)
    for k in ref:
        torch.testing.assert_close(got[k], ref[k], atol=1e-6, rtol=0)


class _Shared(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)

    def forward(self, x):
        return self.lin(torch.tanh(self.lin(x))).sum(-1, keepdim=True)


def test_ghost_refuses_reused_layers_and_trainer_falls_back_to_vmap():
    m = _Shared().to(DT)
    x = torch.randn(5, 2, dtype=DT)
    y = torch.zeros(5, dtype=DT)
    with pytest.raises(GhostClippingUnsupported):
        ghost_clip_and_sum(m, _sq_loss, x, y, max_grad_norm=1.0)
    tr = DPSGDTrainer(
        m,
        _sq_loss,
        n_samples=5,
        sample_rate=1.0,
        noise_multiplier=0.0,
        max_grad_norm=0.3,
        random_state=0,
    )
    assert tr.method == "ghost"
    g = tr.noisy_gradient((x, y))
    assert tr.method == "vmap"
    ref = _reference_clipped_sum(m, _sq_loss, x, 0.3, y)
    for k in ref:
        torch.testing.assert_close(g[k], ref[k] / 5, atol=1e-10, rtol=0)


def test_auto_uses_vmap_when_a_parameter_is_outside_linear_layers():
    m = nn.Sequential(nn.Linear(2, 3), nn.LayerNorm(3), nn.Linear(3, 1)).to(DT)
    assert linear_layers(m) is None
    tr = DPSGDTrainer(
        m, _sq_loss, n_samples=4, sample_rate=1.0, noise_multiplier=1.0, max_grad_norm=1.0
    )
    assert tr.method == "vmap"
    with pytest.raises(ValueError, match="ghost"):
        DPSGDTrainer(
            m,
            _sq_loss,
            n_samples=4,
            sample_rate=1.0,
            noise_multiplier=1.0,
            max_grad_norm=1.0,
            method="ghost",
        )


@pytest.mark.parametrize("method", ["ghost", "vmap", "loop"])
def test_every_method_gives_the_same_training(method):
    x = torch.randn(40, 2, dtype=DT)
    y = torch.randn(40, dtype=DT)
    m = _mlp(2, 3)
    train_dpsgd(
        m,
        _sq_loss,
        (x, y),
        epsilon=2.0,
        delta=1e-5,
        n_iter=5,
        batch_size=10,
        random_state=0,
        method=method,
    )
    ref = _mlp(2, 3)
    train_dpsgd(
        ref,
        _sq_loss,
        (x, y),
        epsilon=2.0,
        delta=1e-5,
        n_iter=5,
        batch_size=10,
        random_state=0,
        method="vmap",
    )
    for a, b in zip(m.parameters(), ref.parameters(), strict=True):
        torch.testing.assert_close(a, b, atol=1e-10, rtol=0)
