"""Attacks on DPGANSynthesizer's patient-level mechanisms: one patient with K = 10 extreme
rows in or out, claim epsilon = 1 for the mechanism under attack (K = 5 left the
row-level control of one Gaussian step at epsilon = 1 below what 400 trials can show).

* the critic's DP-SGD step, run by the GAN's own training loop
  (:meth:`GANTraining.train_gan`, one step at q = 1, sigma calibrated to epsilon = 1):
  the attacker reads the released (noisy) real-row gradient;
* the DP class prior (:func:`class_prior` at the plan's count sensitivity).

Each game has a row-level control (the same mechanism with the patient's rows as
independent rows, i.e. ``groups`` ignored) that must exceed the claim, so the audit can
fail; the patient-level release must stay at or below it. The bound is a one-sided
Clopper-Pearson bound at 95 % confidence on independent trials
(:func:`skdp.auditing.threshold_audit`); the seeds are fixed.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from skdp.auditing import threshold_audit  # noqa: E402
from skdp.synthesis._gan import _budget  # noqa: E402
from skdp.synthesis._gan._label_prior import class_prior  # noqa: E402
from skdp.synthesis._gan._patients import per_patient_weights  # noqa: E402
from skdp.synthesis._gan._training import GANTraining, TrainingConfig  # noqa: E402
from skdp.training import GaussianPrivatizer, RecordGroups  # noqa: E402

K, EPSILON, DELTA, N = 10, 1.0, 1e-5, 100
C = 0.05
DT = torch.float64


def _worlds():
    """D0: N patients with one row at 0 (zero gradient); D1: plus one patient with K
    rows at 1 (each row's gradient -1, clipped to -C)."""
    x0 = np.zeros((N, 1))
    g0 = np.arange(N)
    x1 = np.vstack([x0, np.ones((K, 1))])
    g1 = np.r_[g0, np.full(K, N)]
    return (x0, g0), (x1, g1)


def _config():
    return TrainingConfig(
        loss="wgan",
        n_critic=1,
        weight_clip=None,
        aux_loss_weight=1.0,
        clip_fake_gradients=True,
        latent_dim=2,
        latent_distribution="normal",
        max_grad_norm=C,
        lr_generator=1e-3,
        lr_critic=1e-3,
        lr_autoencoder=1e-3,
        betas=(0.5, 0.999),
        accountant="pld",
        delta=DELTA,
    )


class _Generator(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 1)

    def forward(self, z, c=None):
        return torch.sigmoid(self.lin(z))


def _released_real_gradient(x, groups, sigma, seed, monkeypatch_log):
    """One critic step of the GAN's loop; the privatised real-row gradient it released."""
    torch.manual_seed(0)
    critic = torch.nn.Linear(1, 1, bias=False).to(DT)
    with torch.no_grad():
        critic.weight.fill_(0.0)
    nets = {"critic": critic, "generator": _Generator().to(DT), "autoencoder": None}
    nets["decoder"] = None
    ss = np.random.SeedSequence(seed).spawn(3)
    streams = dict(
        zip(["autoencoder", "critic", "latent"], map(np.random.default_rng, ss), strict=True)
    )
    units = None
    weights = None
    if groups is not None:
        units = RecordGroups(groups, K)
        weights = torch.as_tensor(per_patient_weights(groups, K), dtype=DT)
    run = GANTraining(
        nets,
        torch.as_tensor(x, dtype=DT),
        None,
        None,
        torch.zeros(1, dtype=torch.bool),
        config=_config(),
        q=1.0,
        sigma=sigma,
        private=True,
        device=torch.device("cpu"),
        dtype=DT,
        streams=streams,
        groups=units,
        weights=weights,
    )
    monkeypatch_log.clear()
    run.train_gan(1)
    return float(monkeypatch_log[0]["weight"].reshape(-1)[0])


@pytest.fixture
def released(monkeypatch):
    log = []
    privatize = GaussianPrivatizer.privatize

    def spy(self, summed):
        out = privatize(self, summed)
        log.append({k: v.detach().clone() for k, v in out.items()})
        return out

    monkeypatch.setattr(GaussianPrivatizer, "privatize", spy)
    return log


def _critic_audit(use_groups, log, n_trials=400, seed=1):
    sigma = _budget.calibrate_noise(EPSILON, DELTA, 1.0, 1, noise_multiplier=None, accountant="pld")
    worlds = _worlds()
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n_trials) % 2)
    scores = np.empty(n_trials)
    for t, label in enumerate(labels):
        x, g = worlds[label]
        s = int(rng.integers(2**31))
        # the canary pulls the real-row gradient of -D(x) towards -C per unit
        scores[t] = -_released_real_gradient(x, g if use_groups else None, sigma, s, log)
    return threshold_audit(scores, labels, epsilon=EPSILON)


@pytest.mark.slow
def test_row_level_critic_step_breaks_the_claim_for_a_patient_with_many_rows(released):
    """Control: per-row clipping lets the patient's K rows move the sum by K C."""
    res = _critic_audit(use_groups=False, log=released)
    assert res.epsilon_lb > EPSILON, res


@pytest.mark.slow
def test_patient_level_critic_step_keeps_the_claim(released):
    res = _critic_audit(use_groups=True, log=released)
    assert res.epsilon_lb <= EPSILON, res


def test_one_patient_moves_the_critic_step_by_at_most_c(released):
    """Noise-free check of the same step (sigma = 0): the released real-row sum moves
    by C per patient with groups, by K C per row without."""
    (x0, g0), (x1, g1) = _worlds()
    B = float(N + 1)  # q = 1: expected units of D1 (rows == patients + K - 1 without groups)
    with_groups = [_released_real_gradient(x, g, 0.0, 0, released) for x, g in ((x0, g0), (x1, g1))]
    # divided by q n_patients: N for D0, N + 1 for D1
    assert with_groups[0] == 0.0 and with_groups[1] * B == pytest.approx(-C)
    per_row = _released_real_gradient(x1, None, 0.0, 0, released) * (N + K)
    assert per_row == pytest.approx(-K * C)


def _prior_audit(sensitivity, n_trials=600, seed=1):
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 2, 200)
    worlds = (base, np.r_[base, np.ones(K, dtype=int)])  # + one patient, K rows of class 1
    labels = rng.permutation(np.arange(n_trials) % 2)
    share = 0.05 * 20.0  # the prior's share of epsilon = 20: 1.0
    scores = np.empty(n_trials)
    for t, label in enumerate(labels):
        trial = np.random.default_rng(int(rng.integers(2**31)))
        p, _ = class_prior(
            "dp", np.array([0, 1]), worlds[label], share, trial, sensitivity=sensitivity
        )
        scores[t] = p[1]
    return threshold_audit(scores, labels, epsilon=share)


def test_row_level_class_prior_breaks_the_claim_for_a_patient_with_many_rows():
    plan = _budget.GANPlan(20.0, DELTA, 0.0, 1.0, 0.0)  # row level: sensitivity 1
    res = _prior_audit(plan.count_sensitivity)
    assert res.epsilon_lb > 1.0, res


def test_patient_level_class_prior_keeps_the_claim():
    plan = _budget.GANPlan(20.0, DELTA, 0.0, 1.0, 0.0, max_rows_per_group=K)
    res = _prior_audit(plan.count_sensitivity)
    assert res.epsilon_lb <= 1.0, res
