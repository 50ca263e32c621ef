"""Normalisation, sample/score consistency and reproducible sampling (spec §8 A4-A6)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import integrate

from skdp.flows import Flow, MAFLayer, standard_normal_log_prob
from tests.flows.conftest import build


def _density_1d(flow):
    def f(v):
        x = torch.tensor([[v]], dtype=torch.float64)
        with torch.no_grad():
            return float(torch.exp(flow.log_prob(x))[0])

    return f


@pytest.mark.parametrize("kind", ["maf", "realnvp"])
def test_density_integrates_to_one_1d(kind):
    flow = build(kind, 1, seed=3)
    with torch.no_grad():  # non-trivial affine parameters
        for p in flow.parameters():
            p.add_(0.3)
    total, err = integrate.quad(_density_1d(flow), -np.inf, np.inf, limit=200)
    assert abs(total - 1.0) < 1e-6, (total, err)


def test_unclamped_1d_layer_integrates_to_one():
    """In 1-D every flow is affine (MADE outputs are bias-only): the density is the Gaussian
    N(mu, exp(2 alpha)), checked here without the soft clamp and against the closed form."""
    flow = Flow([MAFLayer(1, (4,), alpha_clamp=None)]).double()
    with torch.no_grad():
        flow.transforms[0].made.layers[-1].bias.copy_(
            torch.tensor([0.7, -1.2], dtype=torch.float64)
        )
    total, _ = integrate.quad(_density_1d(flow), -np.inf, np.inf)
    assert abs(total - 1.0) < 1e-6
    x = torch.linspace(-3, 3, 7, dtype=torch.float64)[:, None]
    expected = torch.distributions.Normal(
        torch.tensor(0.7, dtype=torch.float64), torch.tensor(math.exp(-1.2), dtype=torch.float64)
    ).log_prob(x[:, 0])
    torch.testing.assert_close(flow.log_prob(x).detach(), expected)


@pytest.mark.parametrize("kind", ["maf", "realnvp"])
def test_density_integrates_to_one_2d_grid(kind):
    flow = build(kind, 2, seed=7, n_layers=3, hidden_features=(16, 16))
    # choose the box from the flow's own samples (the flow is public: no data involved)
    with torch.no_grad():
        s = flow.sample(20000, generator=torch.Generator().manual_seed(0))
    lo = s.min(0).values - 3.0
    hi = s.max(0).values + 3.0
    n = 600
    gx = torch.linspace(float(lo[0]), float(hi[0]), n, dtype=torch.float64)
    gy = torch.linspace(float(lo[1]), float(hi[1]), n, dtype=torch.float64)
    xx, yy = torch.meshgrid(gx, gy, indexing="ij")
    pts = torch.stack([xx.reshape(-1), yy.reshape(-1)], dim=1)
    with torch.no_grad():
        dens = torch.exp(flow.log_prob(pts)).reshape(n, n).numpy()
    total = integrate.trapezoid(integrate.trapezoid(dens, gy.numpy(), axis=1), gx.numpy())
    assert abs(total - 1.0) < 0.01, total


@pytest.mark.parametrize("kind", ["maf", "realnvp", "iaf"])
@pytest.mark.parametrize("d", [2, 3])
def test_importance_sampling_normalisation(kind, d):
    """mean_{x ~ N(0, s^2 I)} q(x) / N(x; 0, s^2 I) = 1 within 4 standard errors."""
    flow = build(kind, d, seed=d, hidden_features=(8,))
    # shrink the flow so that N(0, 3^2 I) covers it well
    with torch.no_grad():
        for p in flow.parameters():
            p.mul_(0.5)
    s = 3.0
    g = torch.Generator().manual_seed(99)
    x = s * torch.randn(200_000, d, dtype=torch.float64, generator=g)
    log_prop = standard_normal_log_prob(x / s) - d * math.log(s)
    with torch.no_grad():
        w = torch.exp(flow.log_prob(x) - log_prop)
    mean, se = float(w.mean()), float(w.std() / math.sqrt(len(w)))
    assert abs(mean - 1.0) < 4 * se + 1e-3, (mean, se)


@pytest.mark.parametrize("kind", ["maf", "realnvp", "iaf"])
@pytest.mark.parametrize("d", [1, 2, 4])
def test_sample_and_log_prob_consistent(kind, d):
    flow = build(kind, d, seed=5)
    with torch.no_grad():
        x, lp = flow.sample_and_log_prob(64, generator=torch.Generator().manual_seed(1))
        torch.testing.assert_close(lp, flow.log_prob(x), atol=1e-6, rtol=0)
    assert x.shape == (64, d) and lp.shape == (64,)


def test_sample_shapes_and_zero():
    flow = build("maf", 3)
    assert flow.sample(0).shape == (0, 3)
    x, lp = flow.sample_and_log_prob(0)
    assert x.shape == (0, 3) and lp.shape == (0,)
    with pytest.raises(ValueError):
        flow.sample(-1)
    with pytest.raises(ValueError):
        flow.sample(2.5)


@pytest.mark.parametrize("kind", ["maf", "realnvp"])
def test_sampling_reproducible_with_seeded_generator(kind):
    flow = build(kind, 3)
    with torch.no_grad():
        a = flow.sample(10, generator=torch.Generator().manual_seed(42))
        b = flow.sample(10, generator=torch.Generator().manual_seed(42))
        c = flow.sample(10, generator=torch.Generator().manual_seed(43))
    assert torch.equal(a, b)
    assert not torch.equal(a, c)


def test_seeded_construction_reproducible():
    a = build("maf", 3, seed=8, order="random")
    b = build("maf", 3, seed=8, order="random")
    for ta, tb in zip(a.state_dict().values(), b.state_dict().values(), strict=True):
        assert torch.equal(ta, tb)


def test_samples_follow_the_density_1d():
    """Samples of a 1-D flow have the mean/variance of its density (quadrature)."""
    flow = build("maf", 1, seed=2)
    with torch.no_grad():
        for p in flow.parameters():
            p.add_(0.2)
        x = flow.sample(200_000, generator=torch.Generator().manual_seed(3))[:, 0].numpy()
    f = _density_1d(flow)
    mean = integrate.quad(lambda v: v * f(v), -np.inf, np.inf)[0]
    var = integrate.quad(lambda v: (v - mean) ** 2 * f(v), -np.inf, np.inf)[0]
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / len(x))
    assert abs(x.var() / var - 1) < 0.02


@pytest.mark.parametrize("kind", ["maf", "realnvp", "iaf", "planar", "sylvester"])
def test_empty_batches(kind):
    from skdp.flows import make_flow

    flow = make_flow(kind, 3, n_layers=2).double()
    x = torch.zeros(0, 3, dtype=torch.float64)
    assert flow.log_prob(x).shape == (0,)
    z, ladj = flow(x)
    assert z.shape == (0, 3) and ladj.shape == (0,)
    assert flow.sample(0).shape == (0, 3)


def test_identity_flow_is_standard_normal():
    flow = Flow([], n_features=2)
    x = torch.randn(5, 2, dtype=torch.float64)
    torch.testing.assert_close(flow.log_prob(x), standard_normal_log_prob(x))
    assert flow.sample(3, generator=torch.Generator().manual_seed(0)).shape == (3, 2)
    with pytest.raises(ValueError):
        Flow([])
