"""MADE masks: autoregressive property (spec dp_flow.md §8 A1, A7)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from skdp.flows import MADE, MaskedLinear


@st.composite
def made_configs(draw):
    d = draw(st.integers(1, 6))
    n_hidden = draw(st.integers(0, 3))
    widths = tuple(draw(st.integers(max(d - 1, 1), d + 6)) for _ in range(n_hidden))
    kind = draw(st.sampled_from(["none", "reversed", "perm"]))
    if kind == "none":
        order = None
    elif kind == "reversed":
        order = "reversed"
    else:
        order = torch.tensor(draw(st.permutations(list(range(d)))))
    k = draw(st.integers(1, 3))
    act = draw(st.sampled_from(["relu", "tanh"]))
    seed = draw(st.integers(0, 2**16))
    return d, widths, order, k, act, seed


@given(made_configs())
def test_made_jacobian_is_strictly_autoregressive(cfg):
    d, widths, order, k, act, seed = cfg
    g = torch.Generator().manual_seed(seed)
    made = MADE(d, widths, n_outputs_per_feature=k, order=order, activation=act, generator=g)
    made = made.double()
    x = torch.randn(d, dtype=torch.float64, generator=g)
    jac = torch.autograd.functional.jacobian(made, x)  # (k*d, d)
    assert jac.shape == (k * d, d)
    deg = made.input_degrees
    allowed = (deg[:, None] > deg[None, :]).repeat(
        k, 1
    )  # output i may depend on j iff deg_j < deg_i
    assert torch.all(jac[~allowed] == 0)
    # mask product: strictly lower triangular in degree order, and every allowed path exists
    prod = made.layers[0].mask
    for layer in made.layers[1:]:
        prod = layer.mask @ prod
    assert torch.equal(prod > 0, allowed)


def test_made_generic_weights_use_all_allowed_inputs():
    g = torch.Generator().manual_seed(3)
    made = MADE(4, (16, 16), order="reversed", activation="tanh", generator=g).double()
    x = torch.randn(4, dtype=torch.float64, generator=g)
    jac = torch.autograd.functional.jacobian(made, x)
    deg = made.input_degrees
    allowed = (deg[:, None] > deg[None, :]).repeat(2, 1)
    assert torch.all(jac[allowed] != 0)  # tanh: generic weights give nonzero partials


def test_made_d1_is_bias_only():
    made = MADE(1, (5,)).double()
    x = torch.randn(7, 1, dtype=torch.float64)
    out = made(x)
    assert out.shape == (7, 2)
    assert torch.allclose(out, out[:1].expand(7, 2))
    assert torch.all(made.layers[-1].mask == 0)


def test_made_masks_are_buffers_not_parameters():
    made = MADE(3, (8, 8))
    param_names = {n for n, _ in made.named_parameters()}
    buffer_names = {n for n, _ in made.named_buffers()}
    assert not any("mask" in n for n in param_names)
    assert {"layers.0.mask", "layers.1.mask", "layers.2.mask", "input_degrees"} <= buffer_names
    made = made.double()
    assert made.layers[0].mask.dtype == torch.float64
    assert made.input_degrees.dtype == torch.long


def test_masked_weights_get_zero_gradient():
    made = MADE(3, (6,)).double()
    made(torch.randn(4, 3, dtype=torch.float64)).sum().backward()
    for layer in made.layers:
        assert torch.all(layer.weight.grad[layer.mask == 0] == 0)


@pytest.mark.parametrize("widths", [(1,), (8, 2)])
def test_hidden_width_guard(widths):
    with pytest.raises(ValueError, match="n_features - 1"):
        MADE(4, widths)


def test_bad_arguments():
    with pytest.raises(ValueError):
        MADE(0, (4,))
    with pytest.raises(ValueError):
        MADE(3, (4,), order=[0, 0, 1])
    with pytest.raises(ValueError):
        MADE(3, (4,), order="sideways")
    with pytest.raises(ValueError):
        MADE(3, (4,), activation="sigmoid")


def test_deterministic_degrees_and_seeded_init():
    a = MADE(4, (9,), generator=torch.Generator().manual_seed(5))
    b = MADE(4, (9,), generator=torch.Generator().manual_seed(5))
    for (na, ta), (nb, tb) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert na == nb and torch.equal(ta, tb)


def test_masked_linear_no_hidden():
    made = MADE(3, ()).double()
    assert len(made.layers) == 1 and isinstance(made.layers[0], MaskedLinear)
    jac = torch.autograd.functional.jacobian(made, torch.randn(3, dtype=torch.float64))
    allowed = (torch.arange(3)[:, None] > torch.arange(3)[None, :]).repeat(2, 1)
    assert torch.all(jac[~allowed] == 0)
