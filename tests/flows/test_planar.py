"""Planar and Sylvester flows (spec expm_flow.md §2.3): closed-form sampling direction exposed
as ``inverse``, numerical density direction, enforced invertibility."""

from __future__ import annotations

import pytest
import torch
from scipy import integrate
from torch.func import functional_call, grad, vmap

from skdp.flows import LogProbModule, Planar, Sylvester, make_flow, planar_flow, sylvester_flow


def _layers(d, seed=0):
    g = torch.Generator().manual_seed(seed)
    out = [Planar(d, generator=g), Sylvester(d, generator=g)]
    if d >= 3:
        out.append(Sylvester(d, n_components=2, n_householder=3, generator=g))
    return [m.double() for m in out]


def _stretch(layer, factor=30.0):
    """Push parameters far from init (violating the raw invertibility conditions)."""
    g = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(factor * torch.randn(p.shape, generator=g, dtype=p.dtype))


@pytest.mark.parametrize("d", [1, 2, 3, 5])
@pytest.mark.parametrize("stretch", [False, True])
def test_invertible_and_log_det(d, stretch):
    g = torch.Generator().manual_seed(d)
    for layer in _layers(d, seed=d):
        if stretch:
            _stretch(layer, 5.0)
        z = torch.randn(8, d, dtype=torch.float64, generator=g)
        x, ladj_s = layer.inverse_and_ladj(z)
        z_back, ladj_d = layer(x)
        torch.testing.assert_close(z_back, z, atol=1e-9, rtol=1e-9)
        torch.testing.assert_close(ladj_d, -ladj_s, atol=1e-9, rtol=1e-9)
        jac = torch.autograd.functional.jacobian(layer.inverse, z[0])
        torch.testing.assert_close(ladj_s[0], torch.linalg.slogdet(jac)[1], atol=1e-8, rtol=0)
        jac_f = torch.autograd.functional.jacobian(lambda v, m=layer: m(v)[0], x[0])
        torch.testing.assert_close(ladj_d[0], torch.linalg.slogdet(jac_f)[1], atol=1e-7, rtol=0)


def test_planar_constraint_enforced():
    layer = Planar(3).double()
    with torch.no_grad():
        layer.w.copy_(torch.tensor([1.0, 2.0, -1.0], dtype=torch.float64))
        layer.u.copy_(-50.0 * layer.w)  # raw w^T u << -1: not invertible without the fix
    assert float(torch.dot(layer.w, layer.u_hat()).detach()) > -1.0
    z = torch.randn(100, 3, dtype=torch.float64)
    torch.testing.assert_close(layer(layer.inverse(z))[0], z, atol=1e-9, rtol=0)


@pytest.mark.parametrize("factory", [planar_flow, sylvester_flow])
def test_density_integrates_to_one_2d(factory):
    flow = factory(2, 3, generator=torch.Generator().manual_seed(2)).double()
    for layer in flow.transforms:
        _stretch(layer, 1.0)
    with torch.no_grad():
        s = flow.sample(20000, generator=torch.Generator().manual_seed(0))
        lo, hi = s.min(0).values - 3.0, s.max(0).values + 3.0
        n = 200
        gx = torch.linspace(float(lo[0]), float(hi[0]), n, dtype=torch.float64)
        gy = torch.linspace(float(lo[1]), float(hi[1]), n, dtype=torch.float64)
        xx, yy = torch.meshgrid(gx, gy, indexing="ij")
        pts = torch.stack([xx.reshape(-1), yy.reshape(-1)], 1)
        dens = torch.exp(flow.log_prob(pts)).reshape(n, n).numpy()
    total = integrate.trapezoid(integrate.trapezoid(dens, gy.numpy(), axis=1), gx.numpy())
    assert abs(total - 1.0) < 0.01, total


@pytest.mark.parametrize("kind", ["planar", "sylvester"])
def test_sample_and_log_prob_consistent(kind):
    flow = make_flow(kind, 3, n_layers=3, generator=torch.Generator().manual_seed(4)).double()
    with torch.no_grad():
        x, lp = flow.sample_and_log_prob(50, generator=torch.Generator().manual_seed(5))
        torch.testing.assert_close(lp, flow.log_prob(x), atol=1e-8, rtol=0)


@pytest.mark.parametrize("kind", ["planar", "sylvester"])
def test_parameter_gradients_through_numerical_forward(kind):
    """log_prob's parameter gradients (via the implicit Newton step) match finite differences."""
    extra = {"n_components": 2, "n_householder": 2} if kind == "sylvester" else {}
    flow = make_flow(kind, 3, n_layers=2, generator=torch.Generator().manual_seed(6), **extra)
    flow = flow.double()
    x = torch.randn(2, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    names = [n for n, _ in flow.named_parameters()]
    params = {n: p.detach().clone() for n, p in flow.named_parameters()}

    def f(*flat):
        return (
            functional_call(flow, dict(zip(names, flat, strict=True)), (x,))[1].sum()
            + (functional_call(flow, dict(zip(names, flat, strict=True)), (x,))[0] ** 2).sum()
        )

    assert torch.autograd.gradcheck(f, tuple(p.requires_grad_() for p in params.values()))


@pytest.mark.parametrize("kind", ["planar", "sylvester"])
def test_vmap_per_sample_gradients(kind):
    flow = make_flow(kind, 3, n_layers=2, generator=torch.Generator().manual_seed(8)).double()
    module = LogProbModule(flow)
    params = {k: v.detach() for k, v in module.named_parameters()}
    x = torch.randn(5, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    grads = vmap(grad(lambda p, xi: functional_call(module, p, (xi,))), in_dims=(None, 0))(
        params, x
    )
    for i in range(5):
        module.zero_grad()
        module(x[i]).backward()
        for n, p in module.named_parameters():
            torch.testing.assert_close(grads[n][i], p.grad, atol=1e-9, rtol=1e-7)


def test_float32_and_bad_arguments():
    flow = sylvester_flow(4, 2, generator=torch.Generator().manual_seed(0))
    z = torch.randn(6, 4)
    torch.testing.assert_close(flow(flow.inverse(z))[0], z, atol=1e-4, rtol=1e-4)
    with pytest.raises(ValueError):
        Sylvester(3, n_components=4)
    with pytest.raises(ValueError):
        Sylvester(3, n_householder=0)
    with pytest.raises(ValueError):
        planar_flow(3, 0)
