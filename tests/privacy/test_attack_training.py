"""Attacks on the DP-SGD engine's plumbing (issue: privacy hardening, items 12 and 13).

Each attack succeeded against the code before the fix:

* ghost clipping normed a masked layer's gradient with the mask ``M`` where the norm needs
  ``M * M``: with a mask of 3s one record moved the clipped sum by ``1.73 C``;
* ghost clipping took record ``i``'s output gradient from one backward pass over the whole
  batch, so a layer that mixes the rows of a batch (``h - h.mean(0)``) let one record move
  every other record's clipped term: ``42.9 C`` for one added record;
* ``DPSGDTrainer.noisy_gradient`` released a gradient without stepping the accountant, and
  returned the (private) realised batch size;
* an empty Poisson batch crashed the conv1d GAN (``reshape(b, -1)`` with ``b = 0`` under
  ``vmap``): the ``sprint_acgan`` preset (batch 1) failed on every fit.

The sensitivity attacks are white box: noise off (``noise_multiplier=0``), sample rate 1,
so ``noisy_gradient(D) * n`` is the clipped sum over ``D``; the record's influence is the
norm of the difference between the clipped sums with and without it.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import math
import pathlib
import warnings

import numpy as np
import pytest
from sklearn.base import is_classifier, is_regressor
from sklearn.utils.validation import check_is_fitted

from skdp.discovery import all_estimators

torch = pytest.importorskip("torch")
training = pytest.importorskip("skdp.training")
nn = torch.nn
F = torch.nn.functional

DT = torch.float64
C = 0.5
TOL = 1e-9


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _sq_loss(out, y):
    return (out[0] - y) ** 2


def _clipped_sum(module, data, method):
    """The clipped gradient sum the trainer releases (before noise) over all of ``data``."""
    n = int(data[0].shape[0])
    tr = training.DPSGDTrainer(
        module,
        _sq_loss,
        n_samples=n,
        sample_rate=1.0,
        noise_multiplier=0.0,
        max_grad_norm=C,
        random_state=0,
        method=method,
    )
    g = tr.noisy_gradient(data)
    return torch.cat([g[k].reshape(-1) for k in sorted(g)]) * tr.expected_batch_size, tr


def _max_influence(module, x, y, method):
    """``max_j ||S(D) - S(D without j)||``: the largest add/remove change of the sum."""
    full, tr = _clipped_sum(module, (x, y), method)
    worst = 0.0
    for j in range(x.shape[0]):
        keep = [i for i in range(x.shape[0]) if i != j]
        part, _ = _clipped_sum(module, (x[keep], y[keep]), method)
        worst = max(worst, float((full - part).norm()))
    return worst, tr


def _data(n=12, d=3, seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = 3.0 * torch.randn(n, d, generator=gen, dtype=DT)
    y = 5.0 * torch.randn(n, generator=gen, dtype=DT)  # large losses: every record is clipped
    return x, y


class _MaskedLinear(nn.Module):
    """Declares ``F.linear(x, weight * mask, bias)`` (a ``mask`` buffer); ``scale`` lies."""

    def __init__(self, d_in, d_out, mask_value, scale=1.0, seed=0):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        self.weight = nn.Parameter(torch.randn(d_out, d_in, generator=gen, dtype=DT))
        self.bias = nn.Parameter(torch.randn(d_out, generator=gen, dtype=DT))
        self.register_buffer("mask", torch.full((d_out, d_in), float(mask_value), dtype=DT))
        self.scale = scale

    def forward(self, x):
        return F.linear(x, self.scale * self.weight * self.mask, self.bias)


def _masked_mlp(mask_value, scale=1.0):
    return nn.Sequential(
        _MaskedLinear(3, 4, mask_value, scale, seed=1),
        nn.Tanh(),
        _MaskedLinear(4, 1, mask_value, scale, seed=2),
    )


# ----------------------------------------------------------------- (a) mask of 3s
@pytest.mark.parametrize("method", ["auto", "ghost"])
def test_mask_of_threes_moves_the_clipped_sum_by_at_most_c(method):
    module = _masked_mlp(3.0)
    x, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the layer computes what it declares: no fallback
        worst, tr = _max_influence(module, x, y, method)
    assert tr.method == "ghost"  # the ghost path itself is what is measured
    assert worst <= C * (1 + TOL), f"one record moved the clipped sum by {worst / C:.3f} C"
    assert worst > 0.5 * C  # the measurement sees a clipped record's whole term


def test_ghost_clip_and_sum_norms_a_masked_layer_with_the_square_of_its_mask():
    module = _masked_mlp(3.0)
    x, y = _data()
    _, norms, _ = training.ghost_clip_and_sum(module, _sq_loss, x, y, max_grad_norm=C)
    ps = training.per_sample_gradients(module, _sq_loss, x, y, method="loop")
    _, ref_norms, _ = training.clip_and_sum(ps, C)
    torch.testing.assert_close(norms, ref_norms, atol=0, rtol=1e-10)


def test_a_masked_layer_that_lies_is_detected_and_still_bounded():
    """The layer's forward scales by 5 behind its declaration: the trainer's public probe
    sees ghost != per-sample, warns and falls back; ghost alone still clips each term."""
    module = _masked_mlp(1.0, scale=5.0)
    x, y = _data()
    s_full, _, _ = training.ghost_clip_and_sum(module, _sq_loss, x, y, max_grad_norm=C)
    s_part, _, _ = training.ghost_clip_and_sum(module, _sq_loss, x[1:], y[1:], max_grad_norm=C)
    diff = torch.cat([(s_full[k] - s_part[k]).reshape(-1) for k in s_full])
    assert diff.norm() <= C * (1 + TOL)
    with pytest.warns(UserWarning, match="ghost clipping does not match"):
        worst, tr = _max_influence(module, x, y, "auto")
    assert tr.method == "vmap"
    assert worst <= C * (1 + TOL)


# ---------------------------------------------------------- (b) record-mixing layer
class _Mixing(nn.Module):
    """All parameters in ``nn.Linear`` layers (ghost applies); the batch is centred between
    them, so each row's output depends on every row. ``straight_through`` keeps the
    forward values per record and mixes only the gradients (invisible to a forward check)."""

    def __init__(self, straight_through=False):
        super().__init__()
        gen = torch.Generator().manual_seed(3)
        self.lin1 = nn.Linear(3, 8).to(DT)
        self.lin2 = nn.Linear(8, 1).to(DT)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=gen, dtype=DT))
        self.straight_through = straight_through

    def forward(self, x):
        h = torch.tanh(self.lin1(x))
        m = h.mean(0, keepdim=True)
        h = h + (10 * (m - m.detach())) if self.straight_through else h - m
        return self.lin2(h)


@pytest.mark.parametrize("method", ["auto", "ghost", "vmap"])
def test_record_mixing_layer_moves_the_clipped_sum_by_at_most_c(method):
    module = _Mixing()
    x, y = _data(n=30)
    assert training.linear_layers(module) is not None
    with pytest.warns(UserWarning, match="mixes the records"):
        worst, _ = _max_influence(module, x, y, method)
    assert worst <= C * (1 + TOL), f"one record moved the clipped sum by {worst / C:.1f} C"


def test_gradient_only_mixing_is_bounded_without_any_warning():
    module = _Mixing(straight_through=True)
    x, y = _data(n=30)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the forward values are per record: nothing to see
        worst, tr = _max_influence(module, x, y, "auto")
    assert tr.method == "ghost"
    assert worst <= C * (1 + TOL), f"one record moved the clipped sum by {worst / C:.1f} C"


# -------------------------------------------------------- (c) noisy_gradient is a release
def test_noisy_gradient_steps_the_accountant_and_returns_no_batch_size():
    x, y = _data(n=50)
    tr = training.DPSGDTrainer(
        nn.Linear(3, 1).to(DT),
        _sq_loss,
        n_samples=50,
        sample_rate=0.2,
        noise_multiplier=1.0,
        max_grad_norm=C,
        random_state=0,
    )
    assert "idx" not in inspect.signature(tr.noisy_gradient).parameters  # batch is Poisson
    g = tr.noisy_gradient((x, y))
    assert isinstance(g, dict) and set(g) == set(tr.params)
    assert all(isinstance(v, torch.Tensor) and v.shape == tr.params[k].shape for k, v in g.items())
    assert tr.accountant.n_steps == 1 and tr.n_steps == 1
    assert 0 < tr.epsilon(1e-5) < math.inf
    assert tr.step((x, y)) is None  # step releases nothing private either
    assert tr.accountant.n_steps == 2 and tr.n_steps == 2
    eps2 = training.DPSGDTrainer(
        nn.Linear(3, 1).to(DT),
        _sq_loss,
        n_samples=50,
        sample_rate=0.2,
        noise_multiplier=1.0,
        max_grad_norm=C,
    )
    eps2.accountant.step(noise_multiplier=1.0, sample_rate=0.2, num_steps=2)
    assert tr.epsilon(1e-5) == pytest.approx(eps2.epsilon(1e-5), rel=1e-12)


# ------------------------------------------------------------- (d) empty Poisson batches
def test_empty_batch_through_a_conv_critic_is_a_noisy_accounted_step():
    nets = pytest.importorskip("skdp.synthesis._gan._nets")
    critic = nets.ConvCritic(3, 12, 4, n_classes=2).to(DT)
    x = torch.rand(5, 36, dtype=DT)
    c = torch.zeros(5, dtype=torch.long)
    ps = training.per_sample_gradients(critic, lambda out, ci: out[0], x[:0], c[:0])
    assert all(v.shape[0] == 0 for v in ps.values())
    tr = training.DPSGDTrainer(
        critic,
        lambda out, ci: out[0],
        n_samples=5,
        sample_rate=0.2,
        noise_multiplier=1.0,
        max_grad_norm=C,
        random_state=0,
    )
    g, b = tr._noisy_gradient((x, c), idx=np.array([], dtype=int))  # white box: empty batch
    assert b == 0
    flat = torch.cat([v.reshape(-1) for v in g.values()])
    assert torch.isfinite(flat).all() and flat.abs().max() > 0  # zero sum + noise


_gan = pytest.importorskip("skdp.synthesis._gan")
GAN_PRESETS = sorted(_gan._presets.PRESETS)  # discovered: a new preset is covered without edits


def _fit_quietly(est, X, y=None):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=UserWarning)
        return est.fit(X) if y is None else est.fit(X, y)


@pytest.mark.parametrize("name", GAN_PRESETS)
def test_every_gan_preset_fits_tiny_data(name):
    est = _gan.DPGANSynthesizer.from_paper(
        name,
        n_iter=8,
        n_iter_autoencoder=8,
        hidden_size=4,
        latent_dim=4,
        code_dim=4,
        bounds=(0.0, 1.0),
        device="cpu",
        dtype="float64",
        random_state=0,
    )
    rng = np.random.default_rng(0)
    X = rng.random((30, 36))
    y = None
    if est.conditional:
        y = np.arange(30) % 2
        est.set_params(classes=[0, 1])
    if est.checkpoint_selection:
        sel = dataclasses.replace(est.checkpoint_selection, n_checkpoints=2, top_k=1)
        est.set_params(checkpoint_selection=sel)
    _fit_quietly(est, X, y)  # sprint_acgan keeps batch_size=1: most batches are empty
    assert math.isfinite(est.epsilon_spent_)
    if est.conditional:
        _, ys = est.sample_labeled(5, y=np.array([0, 1, 0, 1, 0]))
        assert ys.tolist() == [0, 1, 0, 1, 0]
    assert np.asarray(est.sample(5)).shape == (5, 36)


def _test_params():
    path = pathlib.Path(__file__).resolve().parents[1] / "test_common.py"
    spec = importlib.util.spec_from_file_location("_skdp_test_common_training", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TEST_PARAMS


_BATCHED = [(n, c) for n, c in all_estimators() if "batch_size" in c().get_params()]


@pytest.mark.parametrize("cls", [c for _, c in _BATCHED], ids=[n for n, _ in _BATCHED])
def test_every_batched_estimator_survives_empty_batches(cls):
    """Expected batch size 1 on 20 rows over 12 steps: empty batches all but surely occur
    (and are legal steps: zero sum, noise, accountant step)."""
    est = cls(**_test_params().get(cls.__name__, {}))
    params = est.get_params()
    over = {"batch_size": 1}
    for key in ("data_batch_size",):
        if key in params:
            over[key] = 1
    for key in ("n_iter",):
        if key in params:
            over[key] = 12
    if "classes" in params and not isinstance(params["classes"], list | tuple):
        over["classes"] = [0, 1]  # declared labels (None / "data" would read them off y)
    est.set_params(**over)
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, size=(20, 2))
    y = None
    if is_classifier(est):
        y = (X[:, 0] > 0).astype(int)
        y[:2] = [0, 1]
    elif is_regressor(est):
        y = np.clip(X[:, 0] - 0.5 * X[:, 1], -1, 1)
    _fit_quietly(est, X, y)
    check_is_fitted(est)
