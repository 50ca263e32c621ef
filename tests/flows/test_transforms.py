"""Invertibility and log-determinants of every transform (spec dp_flow.md §8 A2, A3, A6)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from skdp.flows import (
    IAF,
    MAF,
    Affine,
    AffineCoupling,
    InverseTransform,
    MAFLayer,
    Permutation,
    RealNVP,
    make_flow,
)
from tests.flows.conftest import build

DIMS = [1, 2, 3, 5]


def _layers(d: int):
    g = torch.Generator().manual_seed(10 + d)
    layers = [
        MAFLayer(d, (8, 8), generator=g),
        MAFLayer(d, (8,), order="reversed", activation="tanh", alpha_clamp=None, generator=g),
        Affine(d, loc=0.3, log_scale=-0.4),
        Permutation(d, "reversed"),
    ]
    if d >= 2:
        layers.append(AffineCoupling(d, [i % 2 for i in range(d)], (8,), generator=g))
        layers.append(AffineCoupling(d, [0] * d, (8,), generator=g))
    return layers


def _all_transforms(d: int):
    return [
        *_layers(d),
        build("maf", d),
        build("realnvp", d),
        build("maf", d, order="random"),
        build("iaf", d),
        build("maf", d, normalization="affine"),
        build("realnvp", d, normalization="affine"),
    ]


def _randomise_affines(module, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, Affine):
                m.loc.copy_(torch.randn(m.loc.shape, generator=g, dtype=m.loc.dtype))
                m.log_scale.copy_(0.5 * torch.randn(m.loc.shape, generator=g, dtype=m.loc.dtype))


@pytest.mark.parametrize("d", DIMS)
def test_invertible_both_directions(d):
    g = torch.Generator().manual_seed(d)
    for t in _all_transforms(d):
        t = t.double()
        _randomise_affines(t)
        x = 2.0 * torch.randn(16, d, dtype=torch.float64, generator=g)
        z, ladj_f = t(x)
        assert z.shape == x.shape and ladj_f.shape == (16,)
        x_back, ladj_i = t.inverse_and_ladj(z)
        torch.testing.assert_close(x_back, x, atol=1e-9, rtol=1e-9)
        torch.testing.assert_close(ladj_i, -ladj_f, atol=1e-9, rtol=1e-9)
        torch.testing.assert_close(t.inverse(z), x_back)
        u = torch.randn(16, d, dtype=torch.float64, generator=g)
        torch.testing.assert_close(t(t.inverse(u))[0], u, atol=1e-9, rtol=1e-9)


@pytest.mark.parametrize("d", DIMS)
def test_log_det_matches_autograd_jacobian(d):
    g = torch.Generator().manual_seed(100 + d)
    for t in _all_transforms(d):
        t = t.double()
        _randomise_affines(t, seed=d)
        for _ in range(3):
            x = 1.5 * torch.randn(d, dtype=torch.float64, generator=g)
            jac = torch.autograd.functional.jacobian(lambda v, t=t: t(v)[0], x)
            _, ladj = t(x)
            torch.testing.assert_close(ladj, torch.linalg.slogdet(jac)[1], atol=1e-8, rtol=0)
            z = torch.randn(d, dtype=torch.float64, generator=g)
            jac_inv = torch.autograd.functional.jacobian(t.inverse, z)
            _, ladj_inv = t.inverse_and_ladj(z)
            torch.testing.assert_close(
                ladj_inv, torch.linalg.slogdet(jac_inv)[1], atol=1e-8, rtol=0
            )


def test_single_row_and_batch_agree():
    flow = build("maf", 3)
    x = torch.randn(6, 3, dtype=torch.float64)
    batch = flow.log_prob(x)
    rows = torch.stack([flow.log_prob(r) for r in x])
    assert flow.log_prob(x[0]).shape == ()
    torch.testing.assert_close(batch, rows)


def test_rows_are_independent():
    """No transform mixes the records of a batch (DP-SGD requirement)."""
    for kind in ("maf", "realnvp", "iaf", "planar", "sylvester"):
        flow = make_flow(kind, 3, n_layers=2).double()
        x = torch.randn(5, 3, dtype=torch.float64)
        x2 = x.clone()
        x2[1:] = 100.0 * torch.randn(4, 3, dtype=torch.float64)
        torch.testing.assert_close(flow.log_prob(x)[0], flow.log_prob(x2)[0])


@pytest.mark.parametrize("kind", ["maf", "realnvp", "iaf"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_dtypes(kind, dtype):
    flow = build(kind, 3, dtype=dtype)
    x = torch.randn(8, 3, dtype=dtype)
    z, ladj = flow(x)
    assert z.dtype == dtype and ladj.dtype == dtype
    tol = 1e-4 if dtype == torch.float32 else 1e-10
    torch.testing.assert_close(flow.inverse(z), x, atol=tol, rtol=tol)
    s = flow.sample(5, generator=torch.Generator().manual_seed(0))
    assert s.dtype == dtype and s.shape == (5, 3) and torch.isfinite(s).all()


def test_alpha_clamp_bounds_the_log_scale():
    layer = MAFLayer(2, (8,), alpha_clamp=0.5).double()
    with torch.no_grad():
        layer.made.layers[-1].bias.fill_(50.0)
    _, ladj = layer(torch.randn(4, 2, dtype=torch.float64))
    assert torch.all(ladj.abs() <= 2 * 0.5 + 1e-12)
    with pytest.raises(ValueError):
        MAFLayer(2, (8,), alpha_clamp=0.0)


def test_zero_init_is_identity():
    for kind in ("maf", "realnvp"):
        flow = build(kind, 3, zero_init_output=True)
        x = torch.randn(4, 3, dtype=torch.float64)
        z, ladj = flow(x)
        torch.testing.assert_close(z, x)
        torch.testing.assert_close(ladj, torch.zeros(4, dtype=torch.float64))


def test_realnvp_d1_falls_back_to_affine():
    flow = RealNVP(1, n_layers=3)
    assert all(isinstance(t, Affine) for t in flow.transforms)


def test_coupling_bad_masks():
    with pytest.raises(ValueError):
        AffineCoupling(3, [1, 1, 1])
    with pytest.raises(ValueError):
        AffineCoupling(3, [1, 0])
    with pytest.raises(ValueError):
        AffineCoupling(3, [2, 0, 1])


@st.composite
def flow_configs(draw):
    kind = draw(st.sampled_from(["maf", "realnvp", "iaf"]))
    d = draw(st.integers(1, 5))
    n_layers = draw(st.integers(1, 3))
    widths = tuple(draw(st.integers(max(d - 1, 1), 10)) for _ in range(draw(st.integers(0, 2))))
    extra = {}
    if kind in ("maf", "iaf"):
        extra["order"] = draw(st.sampled_from(["reversed", "random"]))
    return dict(
        kind=kind,
        d=d,
        seed=draw(st.integers(0, 1000)),
        n_layers=n_layers,
        hidden_features=widths,
        activation=draw(st.sampled_from(["relu", "tanh"])),
        alpha_clamp=draw(st.sampled_from([1.0, 3.0])),  # unclamped can overflow by design
        normalization=draw(st.sampled_from(["none", "affine"])),
        **extra,
    )


@given(flow_configs())
def test_flow_properties_hypothesis(cfg):
    kind, d = cfg.pop("kind"), cfg.pop("d")
    flow = build(kind, d, **cfg)
    _randomise_affines(flow, seed=cfg["seed"])
    g = torch.Generator().manual_seed(cfg["seed"])
    x = torch.randn(4, d, dtype=torch.float64, generator=g)
    z, ladj = flow(x)
    torch.testing.assert_close(flow.inverse(z), x, atol=1e-8, rtol=1e-8)
    jac = torch.autograd.functional.jacobian(lambda v: flow(v)[0], x[0])
    torch.testing.assert_close(ladj[0], torch.linalg.slogdet(jac)[1], atol=1e-8, rtol=0)
    xs, lp = flow.sample_and_log_prob(3, generator=g)
    torch.testing.assert_close(lp, flow.log_prob(xs), atol=1e-6, rtol=0)


def test_iaf_is_maf_with_directions_swapped():
    g1, g2 = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    maf = MAF(3, n_layers=2, hidden_features=(8,), generator=g1).double()
    iaf = IAF(3, n_layers=2, hidden_features=(8,), generator=g2).double()
    assert all(isinstance(t, InverseTransform) for t in iaf.transforms)
    x = torch.randn(5, 3, dtype=torch.float64)
    z_maf, l_maf = maf(x)
    x_iaf, l_iaf = iaf.inverse_and_ladj(x)
    torch.testing.assert_close(x_iaf, z_maf)
    torch.testing.assert_close(l_iaf, l_maf)


@pytest.mark.parametrize("kind", ["maf", "realnvp", "iaf", "planar", "sylvester"])
def test_device_agnostic_on_meta(kind):
    """Every tensor the flows create follows the module's device/dtype (no stray CPU tensors):
    the "meta" device raises on any cross-device op, standing in for CUDA on a CPU machine."""
    kwargs = {"normalization": "affine"} if kind in ("maf", "realnvp", "iaf") else {}
    flow = make_flow(kind, 3, n_layers=2, **kwargs).to("meta", torch.float64)
    x = torch.empty(4, 3, device="meta", dtype=torch.float64)
    z, ladj = flow(x)
    assert z.device.type == "meta" and ladj.shape == (4,)
    assert flow.inverse(z).device.type == "meta"
    s, lp = flow.sample_and_log_prob(5)
    assert s.device.type == "meta" and s.dtype == torch.float64 and lp.shape == (5,)
