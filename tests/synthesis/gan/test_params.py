"""DPGANSynthesizer's parameters and fitted vocabulary (issue 17 §3/§4): n_iter,
learning_rate, checkpoint_selection, sample / sample_labeled, n_iter_, loss_curve_,
privacy_breakdown_; and the per-record losses."""

from __future__ import annotations

import inspect
import math
import warnings

import numpy as np
import pandas as pd
import pytest
import torch

from skdp.exceptions import PrivacyLeakWarning
from skdp.synthesis import DPGANSynthesizer
from skdp.synthesis._gan import _fit, _training
from skdp.synthesis._gan._losses import gan_losses
from tests._fixtures import GAN_FAST

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _X(n=60):
    return np.random.default_rng(0).normal(size=(n, 2))


def test_old_parameter_names_are_gone():
    params = set(DPGANSynthesizer().get_params())
    old = {"epochs", "ae_epochs", "max_steps", "lr_generator", "lr_critic", "lr_autoencoder"}
    old |= {"n_checkpoints", "selection_top_k", "selection_scorers", "selection_n_samples"}
    assert not params & old
    assert {"n_iter", "learning_rate", "checkpoint_selection", "schema"} <= params


def test_learning_rates_resolve_float_dict_and_defaults():
    assert _fit.learning_rates(None) == {"generator": 1e-3, "critic": 1e-3, "autoencoder": 1e-3}
    assert set(_fit.learning_rates(0.01).values()) == {0.01}
    lr = _fit.learning_rates({"critic": 0.05})
    assert lr == {"generator": 1e-3, "critic": 0.05, "autoencoder": 1e-3}
    with pytest.raises(ValueError, match="learning_rate keys"):
        _fit.learning_rates({"discriminator": 0.1})
    with pytest.raises(ValueError, match="positive"):
        _fit.learning_rates({"critic": -1.0})


def test_learning_rate_reaches_the_optimizers(monkeypatch):
    seen = []
    real = _training.GANTraining.__init__

    def spy(self, *args, **kwargs):
        seen.append(kwargs["config"])
        real(self, *args, **kwargs)

    monkeypatch.setattr(_training.GANTraining, "__init__", spy)
    DPGANSynthesizer(
        epsilon=2.0, bounds=(-4, 4), learning_rate={"generator": 0.03}, **GAN_FAST
    ).fit(_X())
    assert (seen[-1].lr_generator, seen[-1].lr_critic) == (0.03, 1e-3)
    with pytest.raises(ValueError, match="learning_rate"):
        DPGANSynthesizer(epsilon=2.0, bounds=(-4, 4), learning_rate={"g": 1.0}, **GAN_FAST).fit(
            _X()
        )


def test_default_step_counts_come_from_public_n_and_batch_size():
    params = DPGANSynthesizer(batch_size=20, autoencoder=True).get_params()
    batch, q, t_ae, t_critic = _fit.step_counts(params, 100)
    assert (batch, q, t_critic, t_ae) == (20, 0.2, 250, 50)  # 50 and 10 expected passes
    params.update(n_iter=7, n_iter_autoencoder=3)
    assert _fit.step_counts(params, 100)[2:] == (3, 7)
    params.update(autoencoder=False)
    assert _fit.step_counts(params, 100)[2] == 0  # no autoencoder, no autoencoder steps


def test_default_schedule_adapts_to_n_and_model_size():
    from skdp.accounting._schedule import default_batch_size

    params = DPGANSynthesizer().get_params()
    assert [default_batch_size(n) for n in (50, 500, 2000, 9000, 10**6)] == [
        50, 64, 128, 256, 1024,
    ]  # fmt: skip
    # the GAN's expected batch: BATCH_FACTOR = 4 times the shared default while the 50
    # expected passes still take MIN_LARGE_BATCH_STEPS = 300 steps, else the default
    assert (_fit.BATCH_FACTOR, _fit.MIN_LARGE_BATCH_STEPS) == (4, 300)
    assert [_fit.default_batch(n) for n in (50, 500, 2000, 3750, 9000)] == [
        50, 64, 128, 512, 1024,
    ]  # fmt: skip
    # the compute term binds on a large table: 3 B P T stays within 2**32
    big = _fit.step_counts(params, 9000, n_params={"gan": 5_000, "autoencoder": 0})
    B = 4 * 256
    assert big[0] == B and 3 * B * 5_000 * big[3] <= 2**32 < 3 * B * 5_000 * (big[3] + 1)
    assert big[3] < math.ceil(50 * 9000 / B)
    # a small table and model: the shared batch, 50 expected passes bind
    small = _fit.step_counts(params, 600, n_params={"gan": 5000})
    assert small[:2] == (64, 64 / 600) and small[3] == math.ceil(50 * 600 / 64)
    mid = _fit.step_counts(params, 3750, n_params={"gan": 5000})
    assert mid[:2] == (512, 512 / 3750) and mid[3] == math.ceil(50 * 3750 / 512)
    # a tiny table: at least 100 steps
    assert _fit.step_counts(params, 60, n_params={"gan": 5000})[3] == 100
    # the MLP width is a public constant; the WGAN clipping norm follows weight_clip
    from skdp.synthesis._gan._nets import MLP_WIDTH, build_networks

    nets = build_networks(
        7, [], 0, architecture="mlp", feature_shape=None, hidden_size=None,
        autoencoder=False, code_dim=4, latent_dim=5, label_embedding="concat",
    )  # fmt: skip
    assert nets["critic"].net[0].out_features == MLP_WIDTH == 32
    assert _fit.max_grad_norm(params) == pytest.approx(5 * params["weight_clip"])
    assert _fit.max_grad_norm({**params, "loss": "gan"}) == 1.0
    assert _fit.max_grad_norm({**params, "weight_clip": None}) == 1.0
    assert _fit.max_grad_norm({**params, "max_grad_norm": 0.3}) == 0.3
    assert _fit.n_critic(params) == 1 and _fit.n_critic({**params, "n_critic": 5}) == 5


def test_default_clipping_norm_is_per_private_module(monkeypatch):
    """max_grad_norm=None: the WGAN critic clips at 5 * weight_clip, the autoencoder at
    1.0 (its reconstruction gradients are not bounded by the critic's weight clipping);
    a given value applies to both."""
    import skdp.training

    seen = []
    real = skdp.training.DPSGDTrainer

    def recording(module, loss_fn, **kw):
        seen.append(kw["max_grad_norm"])
        return real(module, loss_fn, **kw)

    monkeypatch.setattr(skdp.training, "DPSGDTrainer", recording)
    kw = dict(epsilon=2.0, bounds=(-4, 4), autoencoder=True, n_iter_autoencoder=2, **GAN_FAST)
    DPGANSynthesizer(**kw).fit(_X())
    assert seen == [1.0, pytest.approx(5 * 0.01)]  # autoencoder first, then the critic
    seen.clear()
    DPGANSynthesizer(**kw, max_grad_norm=0.3).fit(_X())
    assert seen == [0.3, 0.3]
    params = DPGANSynthesizer().get_params()
    assert _fit.max_grad_norm(params, "autoencoder") == 1.0


def test_fitted_vocabulary():
    gan = DPGANSynthesizer(epsilon=2.0, bounds=(-4, 4), **GAN_FAST).fit(_X())
    assert isinstance(gan.n_iter_, int) and gan.n_iter_ == 3
    assert gan.n_iter_autoencoder_ == 0
    assert gan.loss_curve_.shape == (3,) and gan.loss_curve_.dtype == float
    assert np.isfinite(gan.loss_curve_).all()
    assert all(isinstance(v, float) for v in gan.privacy_breakdown_.values())
    assert sum(gan.privacy_breakdown_.values()) == pytest.approx(gan.epsilon_spent_)


def test_breakdown_of_a_data_opt_in_adds_up_to_inf():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        gan = DPGANSynthesizer(epsilon=2.0, bounds="data", **GAN_FAST).fit(_X())
    assert gan.epsilon_spent_ == math.inf
    assert sum(gan.privacy_breakdown_.values()) == math.inf
    assert gan.privacy_breakdown_["nonprivate"] == math.inf


def test_sample_signature_and_one_return_type():
    params = inspect.signature(DPGANSynthesizer.sample).parameters
    assert list(params) == ["self", "n_samples", "random_state"]
    assert params["n_samples"].default == 1
    assert params["random_state"].kind is inspect.Parameter.KEYWORD_ONLY
    X = pd.DataFrame(_X(), columns=["a", "b"])
    y = (X["a"] > 0).astype(int).to_numpy()
    gan = DPGANSynthesizer(
        epsilon=2.0, bounds=(-4, 4), conditional="acgan", classes=[0, 1], loss="gan", **GAN_FAST
    ).fit(X, y)
    S = gan.sample(5, random_state=0)  # a conditional model too: X only
    assert isinstance(S, pd.DataFrame) and list(S.columns) == ["a", "b"]
    assert gan.sample().shape == (1, 2)
    Xs, ys = gan.sample_labeled(5, random_state=0)
    assert isinstance(Xs, pd.DataFrame) and set(ys) <= {0, 1}
    pd.testing.assert_frame_equal(Xs, S)  # the same draw, labels kept


def test_checkpoint_selection_needs_acgan():
    from skdp.synthesis import CheckpointSelection

    with pytest.raises(ValueError, match="acgan"):
        DPGANSynthesizer(epsilon=2.0, checkpoint_selection=CheckpointSelection(), **GAN_FAST).fit(
            _X()
        )


def test_losses_wgan_signs_and_gan_bce():
    real, fake, gen = gan_losses("wgan", 1.0, conditional=False)
    out = torch.tensor([0.7])
    assert float(real(out)) == pytest.approx(-0.7) and float(fake(out)) == pytest.approx(0.7)
    assert float(gen(out)) == pytest.approx(-0.7)
    real, fake, gen = gan_losses("gan", 1.0, conditional=False)
    zero = torch.tensor([0.0])
    assert float(real(zero)) == pytest.approx(math.log(2)) == float(fake(zero))
    # the auxiliary term of the AC-GAN: a confident right label costs little, a wrong one much
    real, _, _ = gan_losses("wgan", 2.0, conditional=True)
    out = torch.tensor([0.0, 5.0, -5.0])
    right, wrong = float(real(out, torch.tensor(0))), float(real(out, torch.tensor(1)))
    assert right < 0.01 < 19.0 < wrong
