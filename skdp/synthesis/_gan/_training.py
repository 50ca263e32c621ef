"""Training loops of :class:`~skdp.synthesis.DPGANSynthesizer`.

One fit runs DP autoencoder pre-training (RDP-CGAN, Torfi et al. 2022), then the critic /
generator loop. The loops receive plain values (modules, tensors, floats, random
generators, a frozen :class:`TrainingConfig`), never the estimator.

Only the private modules (the autoencoder and the critic) read real rows, and only
through :class:`skdp.training.DPSGDTrainer` and its :class:`skdp.training.DPStep` (Poisson
sampling, per-record clipping, noise once on the clipped sum, division by the expected
batch size, one accountant step per executed step; Abadi et al. 2016; with ``groups``
patients are sampled and clipped instead, :mod:`skdp.synthesis._gan._patients`). The noisy critic
step is :meth:`GANTraining.critic_step`, whose fake-row gradient enters the step as its
public ``extra_grad`` term;
the generator step (:meth:`GANTraining.generator_step`) takes no data argument: the
generator is post-processing of the private critic.
"""

from __future__ import annotations

import copy
import logging
import math
import warnings
from dataclasses import dataclass

from skdp.synthesis._gan._losses import gan_losses, reconstruction_loss
from skdp.synthesis._gan._sampling import latent
from skdp.utils._logging import get_logger, log_progress

_logger = get_logger(__name__)


def _progress_every(steps):
    """The progress cadence of a training phase: ten records (its curves are logged at
    the loop's own cadence)."""
    return max(1, steps // 10)


__all__ = ["GANTraining", "TrainingConfig"]


@dataclass(frozen=True)
class TrainingConfig:
    """Plain hyper-parameters of the training loops (resolved from the estimator)."""

    loss: str
    n_critic: int
    weight_clip: float | None
    aux_loss_weight: float
    clip_fake_gradients: bool
    latent_dim: int
    latent_distribution: str
    max_grad_norm: float
    lr_generator: float
    lr_critic: float
    lr_autoencoder: float
    betas: tuple
    accountant: str
    delta: float
    #: clipping norm of the autoencoder's DP-SGD steps (``None``: ``max_grad_norm``)
    max_grad_norm_autoencoder: float | None = None


class GANTraining:
    """One fit's training loops (autoencoder pre-training, then critic/generator).

    Parameters
    ----------
    nets : dict
        ``"critic"``, ``"generator"``, ``"autoencoder"`` and ``"decoder"`` modules (the
        last two may be None).
    Zt : torch.Tensor of shape (n, width)
        The encoded private rows.
    yt : torch.Tensor of int or None
        Their label codes (conditional models).
    prior : torch.Tensor or None
        The DP, uniform or public class prior the fake labels are drawn from.
    discrete : torch.Tensor of bool
        Binary / one-hot coordinates of the encoded row (autoencoder loss).
    config : TrainingConfig
    q : float
        Poisson sampling rate.
    sigma : float
        Noise multiplier of every DP-SGD step.
    private : bool
        ``False`` (``epsilon=inf``): no clipping, no noise.
    device, dtype
        Torch device and floating dtype.
    streams : dict of numpy.random.Generator
        ``"autoencoder"``, ``"critic"`` (batches and noise) and ``"latent"`` streams.
    groups : RecordGroups or None, default=None
        A patient-level fit: every DP-SGD step samples patients at rate ``q`` and clips
        one term per patient (:mod:`skdp.synthesis._gan._patients`); ``B`` is then the
        expected number of sampled patients.
    weights : torch.Tensor or None, default=None
        With ``groups``: each row's ``k / |p|`` (the critic's per-patient mean).
    """

    def __init__(
        self,
        nets,
        Zt,
        yt,
        prior,
        discrete,
        *,
        config,
        q,
        sigma,
        private,
        device,
        dtype,
        streams,
        groups=None,
        weights=None,
    ):
        import torch

        from skdp.accounting import get_accountant
        from skdp.utils._torch import torch_generator

        self.nets = nets
        self.config = config
        self.Zt, self.yt, self.prior = Zt, yt, prior
        self.q, self.sigma, self.private = q, sigma, private
        self.device, self.dtype = device, dtype
        self.streams = streams
        self.n_critic = int(config.n_critic)
        self.n = int(Zt.shape[0])
        self.groups, self.weights = groups, weights
        #: the sampled units (rows, or patients) and their expected number per step
        self.n_units = self.n if groups is None else int(groups.n_groups)
        self.B = q * self.n_units
        self.m_fake = max(2, int(round(self.B)))
        self.conditional = yt is not None
        self.latent_gen = torch_generator(streams["latent"], device)
        self.guarantee = get_accountant(config.accountant).guarantee if private else "exact"
        self.n_ae_steps = self.n_critic_steps = self.n_generator_steps = 0
        self.curves = {"step": [], "epsilon": [], "generator": [], "critic_fake": []}
        if not private:
            self.curves.update({"autoencoder": [], "critic_real": []})
        #: critic loss on each step's fake rows (one value per critic step; no real row)
        self.critic_loss = []
        self._trainers = []
        self._accountant = None
        self._torch = torch
        self.disc = discrete.to(device)

    # -------------------------------------------------------------- helpers
    def _clip_norm(self, stream):
        """The clipping norm ``C`` of the module trained from ``stream``: the noise is
        ``sigma C`` for each module, so a per-module ``C`` leaves the accounting as is."""
        c = self.config
        if stream == "autoencoder" and c.max_grad_norm_autoencoder is not None:
            return float(c.max_grad_norm_autoencoder)
        return float(c.max_grad_norm)

    def _trainer(self, module, loss_fn, lr, stream):
        import torch

        from skdp.training import DPSGDTrainer

        optimizer = torch.optim.Adam(
            [p for p in module.parameters() if p.requires_grad],
            lr=lr,
            betas=tuple(float(b) for b in self.config.betas),
        )
        trainer = DPSGDTrainer(
            module,
            loss_fn,
            n_samples=self.n,
            sample_rate=self.q,
            noise_multiplier=self.sigma,
            max_grad_norm=self._clip_norm(stream) if self.private else None,
            private=self.private,
            optimizer=optimizer,
            accountant=self.config.accountant,
            random_state=self.streams[stream],
            groups=self.groups,
        )
        self._trainers.append(trainer)
        return trainer

    def step_history(self):
        """Every executed DP-SGD step of the fit (autoencoder, then critic) as the
        accountants record them: a list of ``(noise_multiplier, sample_rate, steps)``."""
        return [h for tr in self._trainers for h in tr.accountant.history]

    def epsilon(self, delta):
        """Epsilon of every executed DP-SGD step, composed by one accountant."""
        from skdp.accounting import get_accountant

        if self._accountant is None:  # kept: the PLD accountant caches its compositions
            self._accountant = get_accountant(self.config.accountant)
        acc = self._accountant.reset()
        for sigma, q, steps in self.step_history():
            acc.step(noise_multiplier=sigma, sample_rate=q, num_steps=steps)
        if acc.n_steps == 0:
            return 0.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(acc.get_epsilon(delta))

    def _progress(self, phase, t, total):
        """A progress record on the "skdp" logger (step, DP-SGD epsilon so far; no loss)."""
        if not _logger.isEnabledFor(logging.INFO):
            return  # the epsilon so far is not computed for nobody
        eps = self.epsilon(self.config.delta) if self.private else None
        log_progress(
            _logger,
            estimator="DPGANSynthesizer",
            step=t,
            total=total,
            phase=phase,
            epsilon_spent=eps,
            private=self.private,
        )

    def record(self, estimator, *, breakdown, delta):
        """Write the fit's DP-SGD facts on ``estimator``
        (:func:`skdp.training._fit_context.record_dpsgd_fit`): ``n_iter_`` counts the
        critic steps and ``n_iter_autoencoder_`` the autoencoder's; ``history_`` holds
        the curves as lists (as every DP-SGD estimator's, :doc:`/glossary`);
        ``loss_curve_`` is the critic's loss on fake rows, a loss of public rows that a
        private fit keeps."""
        from skdp.training._fit_context import record_dpsgd_fit

        estimator.n_iter_autoencoder_ = int(self.n_ae_steps)
        record_dpsgd_fit(
            estimator,
            noise_multiplier=self.sigma,
            sample_rate=self.q,
            n_iter=self.n_critic_steps,
            history={k: list(v) for k, v in self.curves.items()},
            loss_curve=self.critic_loss,
            loss_reads_data=False,
            device=self.device,
            breakdown=breakdown,
            delta=delta,
            guarantee=self.guarantee,
            private=self.private,
        )

    # ---------------------------------------------------------- autoencoder
    def train_autoencoder(self, steps, lr):
        """``steps`` DP-SGD steps of the autoencoder at learning rate ``lr``; then the
        decoder is frozen and the encoder dropped."""
        from skdp.training._loop import run_steps

        if steps <= 0 or self.nets["autoencoder"] is None:
            return
        torch = self._torch
        recon_loss = reconstruction_loss(self.disc)
        ae = self.nets["autoencoder"]
        ae.train()
        trainer = self._trainer(ae, recon_loss, float(lr), "autoencoder")
        data = (self.Zt, self.Zt)

        def step(t):
            trainer.step(data)
            self.n_ae_steps += 1

        def record_loss(t):  # non-private fits only: a loss of the training rows
            with torch.no_grad():
                x = self.Zt[:4096]
                self.curves["autoencoder"].append(float(torch.vmap(recon_loss)(ae(x), x).mean()))

        run_steps(
            step,
            steps,
            on_log=None if self.private else record_loss,
            progress=lambda t: self._progress("autoencoder", t, steps),
            progress_every=_progress_every(steps),
        )
        ae.eval()
        for p in ae.decoder.parameters():
            p.requires_grad_(False)  # frozen: the generator does not fine-tune it
        self.nets["autoencoder"] = None  # the encoder is dropped

    # ------------------------------------------------------------------ GAN
    def _fakes(self, generator, m, grad=False):
        """``m`` fake rows (data space) and their labels from the prior: no real data."""
        torch = self._torch
        cfg = self.config
        z = latent(m, cfg.latent_dim, cfg.latent_distribution, self.latent_gen, self.dtype)
        z = z.to(self.device)
        c = None
        if self.conditional:
            c = torch.multinomial(self.prior, m, replacement=True, generator=self.latent_gen)
        with torch.set_grad_enabled(grad):
            h = generator(z, c)
            if self.nets["decoder"] is not None:
                h = self.nets["decoder"](h)
        return h, c

    def generate(self, generator, m, rng):
        """``m`` encoded fake rows and label codes as numpy (checkpoint scoring)."""
        from skdp.utils._torch import to_numpy, torch_generator

        torch = self._torch
        cfg = self.config
        gen = torch_generator(rng, self.device)
        p = next(generator.parameters())
        z = latent(m, cfg.latent_dim, cfg.latent_distribution, gen, p.dtype)
        c = torch.multinomial(self.prior.to(gen.device), m, replacement=True, generator=gen)
        generator.eval()
        with torch.no_grad():
            h = generator(z.to(p.device), c)
            if self.nets["decoder"] is not None:
                h = self.nets["decoder"](h)
        return to_numpy(h), c.cpu().numpy()

    def _fake_gradient(self, critic, trainer, fake_loss, x, c):
        """Sum of (optionally clipped) per-fake-row critic gradients / B, the mean critic
        output and the mean critic loss on the fake rows (fake-side diagnostics)."""
        torch = self._torch
        from skdp.training import clip_and_sum, per_sample_gradients

        params = {k: p.detach() for k, p in trainer.params.items()}
        targets = (c,) if c is not None else ()
        if self.private and self.config.clip_fake_gradients:
            ps = per_sample_gradients(critic, fake_loss, x, *targets, params=params)
            summed, _, _ = clip_and_sum(ps, float(self.config.max_grad_norm))
        else:
            out = critic(x)
            losses = torch.vmap(fake_loss)(out, *targets)
            grads = torch.autograd.grad(
                losses.sum(), list(trainer.params.values()), allow_unused=True
            )
            summed = {
                k: (g if g is not None else torch.zeros_like(p))
                for (k, p), g in zip(trainer.params.items(), grads, strict=True)
            }
        with torch.no_grad():
            out = critic(x)
            mean_out = float(out[:, 0].mean())
            mean_loss = float(torch.vmap(fake_loss)(out, *targets).mean())
        return {k: v / self.B for k, v in summed.items()}, mean_out, mean_loss

    def critic_step(self, trainer, critic, generator, fake_loss, data, clip):
        """One DP-SGD step of the critic: the only read of real rows in the GAN phase.

        ``trainer.step`` releases the real side (Poisson batch, per-record clipping to
        ``C``, ``N(0, sigma^2 C^2)`` once on the sum, division by the expected batch size,
        one accountant step); the fake side depends on no real row and is the step's
        ``extra_grad`` term, added after the noise and before the Adam step. Then WGAN
        weight clipping (post-processing). Returns the mean critic output and the mean
        critic loss on the step's fake rows.
        """
        torch = self._torch
        fake = {}

        def fake_side():  # drawn after the real side's noise, from the latent stream only
            with torch.no_grad():
                x_fake, c_fake = self._fakes(generator, self.m_fake)
            g_fake, fake["mean"], fake["value"] = self._fake_gradient(
                critic, trainer, fake_loss, x_fake, c_fake
            )
            return g_fake

        trainer.step(data, extra_grad=fake_side)  # one accounted release
        fake_mean, fake_value = fake["mean"], fake["value"]
        self.n_critic_steps += 1
        if clip is not None:
            with torch.no_grad():
                for p in critic.parameters():
                    p.clamp_(-float(clip), float(clip))
        return fake_mean, fake_value

    def generator_step(self, generator, critic, g_opt, gen_loss):
        """One generator update: reads only G, the critic, the decoder, the prior and the
        latent stream (no data argument: post-processing of the private critic)."""
        torch = self._torch
        critic.requires_grad_(False)
        generator.train()
        x, c = self._fakes(generator, self.m_fake, grad=True)
        out = critic(x)
        targets = (c,) if c is not None else ()
        loss = torch.vmap(gen_loss)(out, *targets).mean()
        g_opt.zero_grad(set_to_none=True)
        loss.backward()
        g_opt.step()
        critic.requires_grad_(True)
        self.n_generator_steps += 1
        return float(loss.detach())

    def train_gan(self, steps, checkpoint_at=()):
        """``steps`` critic steps (a generator step every ``n_critic``); returns
        ``[(step, generator snapshot)]`` at the steps in ``checkpoint_at``."""
        from skdp.training._loop import run_steps

        torch = self._torch
        cfg = self.config
        critic, generator = self.nets["critic"], self.nets["generator"]
        real_loss, fake_loss, gen_loss = gan_losses(cfg.loss, cfg.aux_loss_weight, self.conditional)
        critic.train()
        data = (self.Zt,) if not self.conditional else (self.Zt, self.yt)
        private_loss = real_loss
        if self.weights is not None:  # per patient: the mean of the patient's rows
            from skdp.synthesis._gan._patients import per_patient_mean

            data, private_loss = (*data, self.weights), per_patient_mean(real_loss)
        trainer = self._trainer(critic, private_loss, float(cfg.lr_critic), "critic")
        g_opt = torch.optim.Adam(
            generator.parameters(),
            lr=float(cfg.lr_generator),
            betas=tuple(float(b) for b in cfg.betas),
        )
        clip = cfg.weight_clip if cfg.loss == "wgan" else None
        ckpt_at = set(checkpoint_at)
        checkpoints = []
        last = {"generator": math.nan, "critic_fake": math.nan}

        def step(t):
            last["critic_fake"], fake_value = self.critic_step(
                trainer, critic, generator, fake_loss, data, clip
            )
            self.critic_loss.append(fake_value)
            if t % self.n_critic == 0:
                last["generator"] = self.generator_step(generator, critic, g_opt, gen_loss)
            if t in ckpt_at:
                checkpoints.append((t, copy.deepcopy(generator).eval()))

        def record_curves(t):
            self.curves["generator"].append(last["generator"])
            self.curves["critic_fake"].append(last["critic_fake"])
            if not self.private:  # a loss of the training rows: non-private fits only
                with torch.no_grad():
                    out = critic(self.Zt[:4096])
                    tg = (self.yt[:4096],) if self.conditional else ()
                    self.curves["critic_real"].append(float(torch.vmap(real_loss)(out, *tg).mean()))

        run_steps(
            step,
            steps,
            epsilon=(lambda: self.epsilon(cfg.delta)) if self.private else None,
            history=self.curves,
            on_log=record_curves,
            progress=lambda t: self._progress("critic", t, steps),
            progress_every=_progress_every(steps),
        )
        generator.eval()
        return checkpoints
