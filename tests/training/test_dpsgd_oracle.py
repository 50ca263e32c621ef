"""One oracle for every DP-SGD step in skdp (issue 17 §1).

The reference is a plain Python loop: one ordinary autograd backward per sampled record,
that record's gradient clipped to flat L2 norm ``C``, the clipped gradients summed, ``sigma C``
times a standard normal draw added once per coordinate (drawn from a clone of the step's own
noise generator, in parameter order), the result divided by the expected batch size ``q n``,
and, where the estimator has one, the exact gradient of its data-free term added after the
noise. Checked here:

* :class:`skdp.training.DPStep` through :class:`~skdp.training.DPSGDTrainer` (ghost, vmap and
  loop per-sample paths) and directly with its two hooks;
* the noise SD of ``g_hat`` (zero gradients: the empirical SD is ``sigma C / (q n)``);
* Poisson batch sizes and inclusion frequencies;
* one accountant step per noise draw;
* a white-box one-step audit of each DP-SGD estimator's own module, run through the
  estimator's ``fit``: :class:`~skdp.density.DPFlowDensity`'s flow and
  :class:`~skdp.sampling.DPFlowVI`'s variational flow (both ``privatize`` options). The
  step's module, data, batch and noise-generator state are captured by spies; the gradient
  the optimizer receives must equal the reference.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch
from torch import nn

from skdp.accounting import get_accountant
from skdp.training import (
    DPSGDTrainer,
    DPStep,
    GaussianPrivatizer,
    PoissonSampler,
    per_sample_gradients,
    train_dpsgd,
)

DT = torch.float64
ATOL = 1e-10


# --------------------------------------------------------------------------- the oracle
def _reference_clipped_sum(params, record_loss, records, c):
    """Python loop: ``sum_i g_i min(1, C / ||g_i||)`` with ``g_i`` from one backward each."""
    names = list(params)
    total = {k: torch.zeros_like(p) for k, p in params.items()}
    for rec in records:
        loss = record_loss(rec)
        gs = torch.autograd.grad(loss, [params[k] for k in names], allow_unused=True)
        gs = [
            torch.zeros_like(params[k]) if g is None else g for k, g in zip(names, gs, strict=True)
        ]
        norm = math.sqrt(sum(float((g * g).sum()) for g in gs))
        factor = min(1.0, c / norm) if norm > 0 else 1.0
        for k, g in zip(names, gs, strict=True):
            total[k] = total[k] + factor * g
    return total


def _reference_noisy(summed, gen_state, device, sigma, c, expected_batch):
    """``(summed + sigma C N(0, I)) / B``: noise from a clone of the step's generator."""
    gen = torch.Generator(device=device)
    gen.set_state(gen_state)
    return {
        k: (s + sigma * c * torch.randn(s.shape, generator=gen, device=device, dtype=s.dtype))
        / expected_batch
        for k, s in summed.items()
    }


def _assert_dicts_close(got, ref, atol=ATOL):
    assert list(got) == list(ref)
    for k in ref:
        torch.testing.assert_close(got[k], ref[k], atol=atol, rtol=0, msg=k)


@pytest.fixture
def spy_steps(monkeypatch):
    """Record every step's Poisson batch, noise-generator state and applied ``g_hat``."""
    log = {"idx": [], "gen_state": [], "g_hat": [], "params_before": []}
    sample, privatize, apply = PoissonSampler.sample, GaussianPrivatizer.privatize, DPStep.apply

    def sample_spy(self):
        idx = sample(self)
        log["idx"].append(idx)
        return idx

    def privatize_spy(self, summed):
        log["gen_state"].append(self._generator.get_state() if self.private else None)
        return privatize(self, summed)

    def apply_spy(self, g_hat):
        log["params_before"].append({k: p.detach().clone() for k, p in self.params.items()})
        log["g_hat"].append({k: v.detach().clone() for k, v in g_hat.items()})
        return apply(self, g_hat)

    monkeypatch.setattr(PoissonSampler, "sample", sample_spy)
    monkeypatch.setattr(GaussianPrivatizer, "privatize", privatize_spy)
    monkeypatch.setattr(DPStep, "apply", apply_spy)
    return log


def _mlp(d_in, hidden, seed=0):
    gen = torch.Generator().manual_seed(seed)
    m = nn.Sequential(nn.Linear(d_in, hidden), nn.Tanh(), nn.Linear(hidden, 1)).to(DT)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=DT))
    return m


def _sq_loss(out, y):
    return (out[0] - y) ** 2


def _module_loss(module, loss_fn):
    def record_loss(rec):
        x, *t = rec
        return loss_fn(module(x[None])[0], *t)

    return record_loss


# ------------------------------------------------------------ the step object itself
@pytest.mark.parametrize("method", ["ghost", "vmap", "loop"])
def test_trainer_step_equals_the_per_record_loop(method, spy_steps):
    n, q, sigma, c, lr = 40, 0.3, 0.8, 0.5, 0.1
    gen = torch.Generator().manual_seed(1)
    x = 3 * torch.randn(n, 2, generator=gen, dtype=DT)
    y = 3 * torch.randn(n, generator=gen, dtype=DT)
    module = _mlp(2, 4, seed=2)
    ref_module = copy.deepcopy(module)
    tr = DPSGDTrainer(
        module,
        _sq_loss,
        n_samples=n,
        sample_rate=q,
        noise_multiplier=sigma,
        max_grad_norm=c,
        optimizer="sgd",
        learning_rate=lr,
        random_state=3,
        method=method,
    )
    tr.step((x, y))
    assert tr.method == method and tr.n_steps == 1 and tr.accountant.n_steps == 1
    idx = spy_steps["idx"][0]
    assert 0 < len(idx) < n  # a real subsample (the seed is fixed)
    params = dict(ref_module.named_parameters())
    summed = _reference_clipped_sum(
        params, _module_loss(ref_module, _sq_loss), [(x[i], y[i]) for i in idx], c
    )
    ref = _reference_noisy(summed, spy_steps["gen_state"][0], "cpu", sigma, c, q * n)
    _assert_dicts_close(spy_steps["g_hat"][0], ref)
    # the optimizer applied exactly that gradient (plain SGD: w <- w - lr g_hat)
    for k, p in module.named_parameters():
        torch.testing.assert_close(p.detach(), params[k].detach() - lr * ref[k], atol=ATOL, rtol=0)


def test_step_hooks_are_added_after_the_noise_unclipped(spy_steps):
    """``data_free_grad`` and ``extra_grad`` enter ``g_hat`` as they are, after the noise."""
    n, q, sigma, c = 30, 0.5, 1.3, 0.2
    module = _mlp(3, 2, seed=4)
    params = {k: p for k, p in module.named_parameters()}
    x = torch.randn(n, 3, generator=torch.Generator().manual_seed(5), dtype=DT)
    y = torch.zeros(n, dtype=DT)
    privatizer = GaussianPrivatizer(
        noise_multiplier=sigma,
        max_grad_norm=c,
        expected_batch_size=q * n,
        generator=torch.Generator().manual_seed(6),
    )
    step = DPStep(
        params,
        torch.optim.SGD(module.parameters(), lr=0.0),
        sampler=PoissonSampler(n, q, np.random.default_rng(7)),
        privatizer=privatizer,
        accountant=get_accountant("rdp"),
    )
    big = {k: 1e3 * torch.ones_like(p) for k, p in params.items()}  # far above C: not clipped
    small = {k: -0.5 * torch.ones_like(p) for k, p in params.items()}

    def grad_sum(idx):
        ps = per_sample_gradients(module, _sq_loss, x[idx], y[idx])
        return privatizer.clip_and_sum(ps)

    step.step(grad_sum, data_free_grad=lambda: big, extra_grad=lambda: small)
    idx = spy_steps["idx"][0]
    summed = _reference_clipped_sum(
        dict(module.named_parameters()),
        _module_loss(module, _sq_loss),
        [(x[i], y[i]) for i in idx],
        c,
    )
    noisy = _reference_noisy(summed, spy_steps["gen_state"][0], "cpu", sigma, c, q * n)
    _assert_dicts_close(spy_steps["g_hat"][0], {k: noisy[k] + big[k] + small[k] for k in noisy})
    assert step.n_steps == step.accountant.n_steps == 1


def test_step_refuses_what_would_break_the_guarantee():
    module = nn.Linear(2, 1).to(DT)
    params = dict(module.named_parameters())
    rng = np.random.default_rng(0)
    priv = GaussianPrivatizer(
        noise_multiplier=1.0,
        max_grad_norm=1.0,
        expected_batch_size=5.0,
        generator=torch.Generator(),
    )
    opt = torch.optim.SGD(module.parameters(), lr=0.1)
    with pytest.raises(ValueError, match="accountant"):
        DPStep(params, opt, sampler=PoissonSampler(10, 0.5, rng), privatizer=priv)
    with pytest.raises(ValueError, match="expected batch size"):
        DPStep(
            params,
            opt,
            sampler=PoissonSampler(10, 0.4, rng),
            privatizer=priv,
            accountant=get_accountant("rdp"),
        )
    with pytest.raises(ValueError, match="every trainable parameter"):
        DPStep(
            params,
            torch.optim.SGD([module.weight], lr=0.1),
            sampler=PoissonSampler(10, 0.5, rng),
            privatizer=priv,
            accountant=get_accountant("rdp"),
        )
    step = DPStep(
        params,
        opt,
        sampler=PoissonSampler(10, 0.5, rng),
        privatizer=priv,
        accountant=get_accountant("rdp"),
    )
    with pytest.raises(ValueError, match="one tensor per trainable parameter"):
        step.noisy_gradient(lambda idx: ({"weight": torch.zeros(1, 2, dtype=DT)}, 0))
    assert step.n_steps == 0 and step.accountant.n_steps == 0  # nothing released


# ------------------------------------------------------------------ noise and batches
def test_noise_sd_is_sigma_c_over_the_expected_batch_size():
    """All gradients zero: ``g_hat ~ N(0, (sigma C / (q n))^2)`` per coordinate, whatever the
    realised batch size (the noise is added once to the sum, not per record).

    30,300 draws: the relative standard error of the SD estimate is ``1 / sqrt(2 N)``
    = 0.4%; the tolerance is 2% (5 standard errors).
    """
    m = nn.Linear(100, 100).to(DT)
    n, q, sigma, c = 400, 0.05, 1.7, 0.3
    x = torch.randn(n, 100, dtype=DT)
    y = torch.zeros(n, dtype=DT)
    tr = DPSGDTrainer(
        m,
        lambda out, yi: 0.0 * out.sum(),
        n_samples=n,
        sample_rate=q,
        noise_multiplier=sigma,
        max_grad_norm=c,
        random_state=0,
    )
    vals, sizes = [], []
    for _ in range(3):
        g, b = tr._noisy_gradient((x, y))  # white box: the realised size is private
        vals.append(torch.cat([v.reshape(-1) for v in g.values()]))
        sizes.append(b)
    v = torch.cat(vals)
    expected = sigma * c / (q * n)
    assert abs(v.std().item() / expected - 1) < 0.02
    assert abs(v.mean().item()) < 5 * expected / math.sqrt(v.numel())
    assert len(set(sizes)) > 1


def test_poisson_batch_sizes_and_inclusion():
    """Batch sizes are Binomial(n, q); every record is included with frequency q; the batch
    depends on the seed only (not on the module)."""
    n, q, trials = 200, 0.1, 2000
    sampler = PoissonSampler(n, q, np.random.default_rng(1))
    counts = np.zeros(n)
    sizes = np.empty(trials)
    for t in range(trials):
        idx = sampler.sample()
        counts[idx] += 1
        sizes[t] = len(idx)
    # mean nq = 20 (5 standard errors), variance nq(1-q) = 18 (sampling SD of the variance
    # estimate about 3% here: 20%), inclusion frequency q (SE 0.0005: 0.005)
    assert abs(sizes.mean() - n * q) < 5 * math.sqrt(n * q * (1 - q) / trials)
    assert 0.8 < sizes.var() / (n * q * (1 - q)) < 1.2
    assert abs(counts.mean() / trials - q) < 0.005
    per_record_sd = math.sqrt(q * (1 - q) / trials)
    assert np.all(np.abs(counts / trials - q) < 5 * per_record_sd)
    kw = dict(n_samples=n, sample_rate=q, noise_multiplier=1.0, max_grad_norm=1.0)
    a = DPSGDTrainer(nn.Linear(1, 1).to(DT), _sq_loss, random_state=1, **kw)
    b = DPSGDTrainer(_mlp(1, 3), _sq_loss, random_state=1, **kw)
    assert np.array_equal(a.sample_batch(), b.sample_batch())
    empty = PoissonSampler(3, 1e-9, np.random.default_rng(0))
    assert empty.sample().size == 0  # an empty batch is a legal step


def test_one_accountant_step_per_noise_draw(spy_steps):
    """B7: accountant steps == n_iter == noisy gradients drawn == optimizer steps."""
    seen = {}

    def callback(step, trainer, history):
        seen["acc"] = trainer.accountant.n_steps

    x = torch.randn(30, 2, dtype=DT)
    res = train_dpsgd(
        _mlp(2, 3),
        _sq_loss,
        (x, x[:, 0]),
        epsilon=2.0,
        delta=1e-5,
        n_iter=13,
        batch_size=5,
        random_state=0,
        callback=callback,
        log_every=13,
    )
    assert len(spy_steps["gen_state"]) == len(spy_steps["g_hat"]) == 13
    assert res.n_steps == seen["acc"] == 13


# ------------------------------------------------- white-box audits of the estimators
def test_dp_flow_density_one_step_audit(spy_steps, monkeypatch):
    """DPFlowDensity's own flow, one step of its own fit: g_hat equals the oracle."""
    from skdp.density import DPFlowDensity

    captured = {}
    grad_sum = DPSGDTrainer._grad_sum

    def grad_sum_spy(self, data):
        captured.update(
            module=copy.deepcopy(self.module),
            loss_fn=self.loss_fn,
            data=[t.detach().clone() for t in data],
            transform=self.batch_transform,
            sigma=self.noise_multiplier,
            c=self.max_grad_norm,
            B=self.expected_batch_size,
        )
        return grad_sum(self, data)

    monkeypatch.setattr(DPSGDTrainer, "_grad_sum", grad_sum_spy)
    X = np.random.default_rng(0).normal(size=(60, 2))
    est = DPFlowDensity(
        epsilon=3.0,
        bounds=(-4.0, 4.0),
        n_layers=2,
        hidden_size=4,
        batch_size=20,
        n_iter=1,
        max_grad_norm=0.7,
        device="cpu",
        dtype="float64",
        random_state=0,
    ).fit(X)
    assert len(spy_steps["g_hat"]) == 1  # n_iter=1: one step
    assert captured["transform"] is None  # continuous columns: no dequantisation noise
    module, (Z,) = captured["module"], captured["data"]
    params = dict(module.named_parameters())
    for k, p in spy_steps["params_before"][0].items():
        torch.testing.assert_close(params[k].detach(), p, atol=0, rtol=0)
    idx = spy_steps["idx"][0]
    summed = _reference_clipped_sum(
        params, _module_loss(module, captured["loss_fn"]), [(Z[i],) for i in idx], captured["c"]
    )
    assert captured["sigma"] == est.noise_multiplier_ > 0
    ref = _reference_noisy(
        summed, spy_steps["gen_state"][0], "cpu", captured["sigma"], captured["c"], captured["B"]
    )
    assert captured["B"] == pytest.approx(est.sample_rate_ * 60)
    _assert_dicts_close(spy_steps["g_hat"][0], ref)


@pytest.mark.parametrize("privatize", ["per_record_full", "likelihood_only"])
def test_dp_flow_vi_one_step_audit(privatize, spy_steps, monkeypatch):
    """DPFlowVI's own variational flow, one step of its own fit: per-record free-energy
    gradients clipped (the whole term ``l_i``, or its likelihood part), noise once, ``/ B``,
    and (``likelihood_only``) the exact data-free gradient added after the noise."""
    from skdp.flows import standard_normal_log_prob
    from skdp.sampling import DPFlowVI
    from skdp.sampling._free_energy import _FreeEnergyGradients

    captured = {}
    private_terms = _FreeEnergyGradients.private_terms

    def private_terms_spy(self, Xt, privatizer, *, full, groups=None):
        assert groups is None  # a row-level fit
        captured.update(module=copy.deepcopy(self.module), X=Xt.clone(), full=full, n=self.n)
        return private_terms(self, Xt, privatizer, full=full)

    monkeypatch.setattr(_FreeEnergyGradients, "private_terms", private_terms_spy)

    def log_prior(theta):
        return -0.5 * (theta * theta).sum(-1) / 4.0

    n, c = 50, 0.8
    X = np.random.default_rng(1).normal(loc=0.5, size=(n, 2))
    est = DPFlowVI(
        log_prior=log_prior,
        epsilon=3.0,
        n_iter=1,
        n_mc=5,
        batch_size=15,
        max_grad_norm=c,
        privatize=privatize,
        optimizer="sgd",
        device="cpu",
        dtype="float64",
        random_state=0,
    ).fit(X)
    assert est.n_iter_ == 1 and captured["full"] == (privatize == "per_record_full")
    module, Xt = captured["module"], captured["X"]
    params = dict(module.named_parameters())
    for k, p in spy_steps["params_before"][0].items():
        torch.testing.assert_close(params[k].detach(), p, atol=0, rtol=0)
    z, flow, log_lik = module.z, module.flow, module.log_lik_fn

    def data_free():  # (1/n) mean_j[log q0(z_j) - log|det|_j - log p(theta_j)]
        theta, ladj = flow.inverse_and_ladj(z)
        return (standard_normal_log_prob(z) - ladj - log_prior(theta)).mean() / n

    def record_loss(rec):
        theta, _ = flow.inverse_and_ladj(z)
        loss = -log_lik(theta, rec[0][None])[:, 0].mean()
        return loss + data_free() if captured["full"] else loss

    idx = spy_steps["idx"][0]
    summed = _reference_clipped_sum(params, record_loss, [(Xt[i],) for i in idx], c)
    sigma, B = est.noise_multiplier_, est.sample_rate_ * n
    ref = _reference_noisy(summed, spy_steps["gen_state"][0], "cpu", sigma, c, B)
    if not captured["full"]:
        exact = torch.autograd.grad(data_free(), list(params.values()), allow_unused=True)
        for (k, p), g in zip(params.items(), exact, strict=True):
            ref[k] = ref[k] + (torch.zeros_like(p) if g is None else g)
    _assert_dicts_close(spy_steps["g_hat"][0], ref)


@pytest.mark.parametrize("clip_fake", [True, False])
def test_dp_gan_critic_one_step_audit(clip_fake, spy_steps, monkeypatch):
    """DPGANSynthesizer's own critic, one critic step of its own fit: the real rows' clipped
    sum with noise once, ``/ B``, plus the fake rows' gradient (clipped per fake row when
    ``clip_fake_gradients``) ``/ B`` added after the noise as the step's ``extra_grad``."""
    from skdp.synthesis import DPGANSynthesizer
    from skdp.synthesis._gan._training import GANTraining

    captured = {}
    grad_sum, fake_gradient = DPSGDTrainer._grad_sum, GANTraining._fake_gradient

    def grad_sum_spy(self, data):
        captured.setdefault(
            "real",
            dict(
                module=copy.deepcopy(self.module),
                loss_fn=self.loss_fn,
                data=[t.detach().clone() for t in data],
                sigma=self.noise_multiplier,
                c=self.max_grad_norm,
                B=self.expected_batch_size,
            ),
        )
        return grad_sum(self, data)

    def fake_gradient_spy(self, critic, trainer, fake_loss, x, c):
        captured.setdefault("fake", dict(x=x.detach().clone(), c=c, loss_fn=fake_loss))
        return fake_gradient(self, critic, trainer, fake_loss, x, c)

    monkeypatch.setattr(DPSGDTrainer, "_grad_sum", grad_sum_spy)
    monkeypatch.setattr(GANTraining, "_fake_gradient", fake_gradient_spy)
    X = np.random.default_rng(2).normal(size=(80, 2))
    DPGANSynthesizer(
        epsilon=3.0,
        bounds=(-4.0, 4.0),
        hidden_size=8,
        latent_dim=4,
        n_iter=1,
        batch_size=20,
        clip_fake_gradients=clip_fake,
        device="cpu",
        dtype="float64",
        random_state=0,
    ).fit(X)
    assert len(spy_steps["g_hat"]) == 1  # no autoencoder: the one step is the critic's
    real, fake = captured["real"], captured["fake"]
    assert fake["c"] is None  # unconditional
    critic = real["module"]
    params = dict(critic.named_parameters())
    for k, p in spy_steps["params_before"][0].items():
        torch.testing.assert_close(params[k].detach(), p, atol=0, rtol=0)
    c, B = real["c"], real["B"]
    (Z,) = real["data"]
    idx = spy_steps["idx"][0]
    summed = _reference_clipped_sum(params, _module_loss(critic, real["loss_fn"]), Z[idx, None], c)
    ref = _reference_noisy(summed, spy_steps["gen_state"][0], "cpu", real["sigma"], c, B)
    fake_records = fake["x"][:, None]
    fake_sum = _reference_clipped_sum(
        params, _module_loss(critic, fake["loss_fn"]), fake_records, c if clip_fake else math.inf
    )
    _assert_dicts_close(spy_steps["g_hat"][0], {k: ref[k] + fake_sum[k] / B for k in ref})
