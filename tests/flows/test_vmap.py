"""Per-sample gradients through LogProbModule with torch.func (what DP-SGD needs)."""

from __future__ import annotations

import pytest
import torch
from torch.func import functional_call, grad, vmap

from skdp.flows import LogProbModule, make_flow
from tests.flows.conftest import build


def _per_sample_grads(module, x):
    params = {k: v.detach() for k, v in module.named_parameters()}
    buffers = {k: v for k, v in module.named_buffers()}

    def loss(p, xi):
        return -functional_call(module, (p, buffers), (xi.unsqueeze(0),)).sum()

    return vmap(grad(loss), in_dims=(None, 0), randomness="error")(params, x)


@pytest.mark.parametrize("kind", ["maf", "realnvp", "iaf"])
@pytest.mark.parametrize("d", [1, 2, 4])
@pytest.mark.parametrize("normalization", ["none", "affine"])
def test_vmap_grad_matches_per_row_autograd(kind, d, normalization):
    flow = build(kind, d, seed=d, normalization=normalization)
    module = LogProbModule(flow)
    x = torch.randn(7, d, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    grads = _per_sample_grads(module, x)
    for i in range(len(x)):
        module.zero_grad()
        (-module(x[i : i + 1]).sum()).backward()
        for name, p in module.named_parameters():
            ref = p.grad if p.grad is not None else torch.zeros_like(p)
            torch.testing.assert_close(grads[name][i], ref, atol=1e-10, rtol=1e-8)


def test_vmap_single_row_batch_and_unbatched_rows():
    flow = build("maf", 3)
    module = LogProbModule(flow)
    params = {k: v.detach() for k, v in module.named_parameters()}
    x = torch.randn(1, 3, dtype=torch.float64)
    g1 = vmap(grad(lambda p, xi: functional_call(module, p, (xi,))), in_dims=(None, 0))(params, x)
    assert all(v.shape[0] == 1 for v in g1.values())
    lp = vmap(lambda xi: functional_call(module, params, (xi,)))(x)
    torch.testing.assert_close(lp, flow.log_prob(x))


def test_log_prob_module_parameter_names():
    flow = make_flow("maf", 2, n_layers=1, hidden_features=(4,))
    module = LogProbModule(flow)
    names = [n for n, _ in module.named_parameters()]
    assert names and all(n.startswith("flow.") for n in names)
    assert not any("mask" in n for n in names)
    with pytest.raises(TypeError):
        LogProbModule(torch.nn.Linear(2, 2))


def test_no_batchnorm_anywhere():
    for kind in ("maf", "realnvp"):
        for norm in ("none", "affine"):
            flow = make_flow(kind, 3, normalization=norm)
            bad = (torch.nn.modules.batchnorm._BatchNorm, torch.nn.LayerNorm, torch.nn.GroupNorm)
            assert not any(isinstance(m, bad) for m in flow.modules())
    with pytest.raises(ValueError, match="BatchNorm"):
        make_flow("maf", 3, normalization="batchnorm")


def test_make_flow_kinds():
    assert type(make_flow("MAF", 2)).__name__ == "MAF"
    assert type(make_flow("realnvp", 2)).__name__ == "RealNVP"
    assert type(make_flow("iaf", 2)).__name__ == "IAF"
    with pytest.raises(ValueError):
        make_flow("glow", 2)
    with pytest.raises(ValueError):
        make_flow("maf", 0)
    with pytest.raises(ValueError):
        make_flow("maf", 2, n_layers=0)
