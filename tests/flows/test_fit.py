"""Maximum-likelihood sanity: the flows learn a non-Gaussian 2-D density (utility, not privacy)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from skdp.flows import make_flow


def _two_moons(n, rng):
    t = rng.uniform(0, math.pi, n)
    upper = rng.random(n) < 0.5
    x = np.where(upper, np.cos(t), 1 - np.cos(t))
    y = np.where(upper, np.sin(t), 0.5 - np.sin(t))
    data = np.stack([x, y], 1) + 0.08 * rng.standard_normal((n, 2))
    return torch.tensor((data - [0.5, 0.25]) / 0.7, dtype=torch.float64)


def _gaussian_loglik(train, test):
    mu = train.mean(0)
    cov = torch.cov(train.T)
    return torch.distributions.MultivariateNormal(mu, cov).log_prob(test).mean().item()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["maf", "realnvp", "iaf"])
def test_flow_beats_gaussian_on_two_moons(kind):
    rng = np.random.default_rng(0)
    train, test = _two_moons(2000, rng), _two_moons(2000, rng)
    g = torch.Generator().manual_seed(0)
    layers = 4 if kind == "realnvp" else 3
    flow = make_flow(
        kind, 2, n_layers=layers, hidden_features=(32, 32), generator=g, zero_init_output=True
    ).double()
    opt = torch.optim.Adam(flow.parameters(), lr=5e-3)
    for _ in range(400):
        idx = torch.randint(0, len(train), (256,), generator=g)
        opt.zero_grad()
        loss = -flow.log_prob(train[idx]).mean()
        loss.backward()
        opt.step()
    with torch.no_grad():
        ll_flow = flow.log_prob(test).mean().item()
        samples = flow.sample(20000, generator=torch.Generator().manual_seed(1))
    ll_gauss = _gaussian_loglik(train, test)
    assert ll_flow > ll_gauss + 0.3, (ll_flow, ll_gauss)
    assert torch.isfinite(samples).all()
    # samples roughly reproduce the first two moments (Adam noise: loose tolerance)
    torch.testing.assert_close(samples.mean(0), test.mean(0), atol=0.15, rtol=0)
    torch.testing.assert_close(samples.std(0), test.std(0), atol=0.15, rtol=0)
