"""The noisy 1-way marginals of DPGANSynthesizer and the calibration of its generators."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from skdp.accounting import zcdp_rho
from skdp.synthesis import DPGANSynthesizer
from skdp.synthesis._gan import _budget, _marginals

FAST = dict(n_iter=6, batch_size=32, hidden_size=8, latent_dim=4, device="cpu")


def _table(n=400, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "x": rng.normal(size=n).clip(-3, 3),
            "flag": rng.random(n) < 0.1,  # a rare level
            "c": rng.choice(["a", "b", "c"], size=n, p=[0.7, 0.2, 0.1]),
        }
    )


def _gan(**kw):
    return DPGANSynthesizer(
        epsilon=kw.pop("epsilon", 5.0),
        bounds={"x": (-3.0, 3.0)},
        categories={"c": ["a", "b", "c"]},
        random_state=0,
        **{**FAST, **kw},
    )


def test_calibrate_matches_every_block_mean():
    rng = np.random.default_rng(0)
    H = rng.normal(size=(2000, 5)) * 2.0
    blocks = [(0, 3), (3, 4)]
    targets = [np.array([0.6, 0.3, 0.1]), np.array([0.95, 0.05])]
    off = _marginals.calibrate(H, np.zeros(5), blocks, targets)
    mean = _marginals._softmax(H[:, :3] + off[:3]).mean(axis=0)
    assert mean == pytest.approx(targets[0], abs=1e-4)
    assert _marginals._sigmoid(H[:, 3] + off[3]).mean() == pytest.approx(0.05, abs=1e-4)
    assert off[4] == 0.0  # outside the blocks: untouched


def test_release_is_on_the_simplex_and_exact_without_noise():
    Z = np.array([[1, 0, 1.0], [0, 1, 0.0], [1, 0, 1.0], [1, 0, 0.0]])
    blocks = [(0, 2), (2, 3)]
    exact = _marginals.release_marginals(Z, blocks, 0.0, np.random.default_rng(0))
    assert exact[0] == pytest.approx([0.75, 0.25]) and exact[1] == pytest.approx([0.5, 0.5])
    noisy = _marginals.release_marginals(Z, blocks, 50.0, np.random.default_rng(0))
    for p in noisy:
        assert np.all(p >= 0) and p.sum() == pytest.approx(1.0)


def test_plan_charges_the_marginals_and_scales_their_noise_by_k():
    row = _budget.GANPlan(1.0, 1e-5, 0.0, 0.0, 0.0, eps_marginals=0.2, n_marginals=4)
    rho = zcdp_rho(0.2, 1e-6)
    assert row.delta_marginals == pytest.approx(1e-6) and row.delta_dpsgd == pytest.approx(9e-6)
    assert row.marginals_sigma == pytest.approx(math.sqrt(4 / (2 * rho)))
    assert row.eps_dpsgd == pytest.approx(0.8)
    assert sum(row.breakdown(0.8).values()) == pytest.approx(1.0)
    patient = _budget.GANPlan(
        1.0, 1e-5, 0.0, 0.0, 0.0, max_rows_per_group=3, eps_marginals=0.2, n_marginals=4
    )
    assert patient.marginals_sigma == pytest.approx(3 * row.marginals_sigma)
    off = _budget.GANPlan(1.0, 1e-5, 0.0, 0.0, 0.0)
    assert off.marginals_sigma == 0.0 and off.delta_dpsgd == 1e-5


@pytest.mark.parametrize("k", [None, 3])
def test_joint_plan_takes_a_share_of_the_gaussian_dp_budget(k):
    from skdp.accounting import gdp_epsilon, gdp_mu

    eps_m = _budget.joint_marginals_epsilon(0.9, 1e-5)  # 1.0 less a 0.1 bound share
    plan = _budget.GANPlan(
        1.0, 1e-5, 0.1, 0.0, 0.0, max_rows_per_group=k, eps_marginals=eps_m, n_marginals=4,
        joint_accountant="pld",
    )  # fmt: skip
    mu = gdp_mu(0.9, 1e-5)
    assert plan.joint and plan.eps_joint == pytest.approx(0.9)
    share = math.sqrt(_budget.joint_marginals_fraction(mu))
    assert mu < 0.5 and _budget.joint_marginals_fraction(mu) == 0.5
    assert plan.marginals_noise_multiplier == pytest.approx(1 / (share * mu))
    scale = math.sqrt(4) * (k or 1)  # L2 sensitivity of the 4 counts' changes per unit
    assert plan.marginals_sigma == pytest.approx(scale * plan.marginals_noise_multiplier)
    # the breakdown entry is the release's own epsilon at the whole delta (closed form)
    assert eps_m == pytest.approx(gdp_epsilon(1e-5, share * mu))
    assert 0 < eps_m < 0.9 and plan.delta_marginals == 0.0 and plan.delta_dpsgd == 1e-5
    # a smaller noise than the split account's zCDP share at (0.2, 0.1 delta)
    split = _budget.GANPlan(1.0, 1e-5, 0.1, 0.0, 0.0, max_rows_per_group=k,
                            eps_marginals=0.2, n_marginals=4)  # fmt: skip
    assert plan.marginals_sigma < 0.5 * split.marginals_sigma


def test_fit_calibrates_the_generator_to_the_noisy_marginals():
    X = _table()
    gan = _gan().fit(X)
    b = gan.privacy_breakdown_
    assert b["marginals"] == pytest.approx(_budget.joint_marginals_epsilon(5.0, 1e-5))
    assert sum(b.values()) == pytest.approx(gan.epsilon_spent_)
    assert gan.epsilon_spent_ <= 5.0 + 1e-9 and gan.noise_scale_["marginals"] > 0
    assert len(gan.noisy_marginals_) == 3  # x's bins, flag, c
    # after six noisy critic steps the generator knows little, but its mean output is the
    # release: the rare flag and the skewed category come out near their noisy frequencies
    syn = gan.sample(20_000, random_state=1)
    c_target, flag_target = gan.noisy_marginals_[1], gan.noisy_marginals_[2][1]
    assert syn["c"].value_counts(normalize=True).reindex(["a", "b", "c"]).to_numpy() == (
        pytest.approx(c_target, abs=0.03)
    )
    assert syn["flag"].mean() == pytest.approx(flag_target, abs=0.03)


def test_off_is_the_papers_method():
    X = _table()
    gan = _gan(calibrate_marginals=False).fit(X)
    assert gan.noisy_marginals_ is None and gan.privacy_breakdown_["marginals"] == 0.0
    assert gan.noise_scale_["marginals"] == 0.0
    act = _marginals.output_activation(gan.generator_)
    assert torch.count_nonzero(act.offset) == 0
    for name in ("sprint_acgan", "rdp_cgan"):
        assert DPGANSynthesizer.from_paper(name).calibrate_marginals is False


def test_secure_mode_draws_the_marginal_noise_exactly(monkeypatch):
    import skdp.mechanisms as mech

    calls = []
    real = mech.discrete_gaussian_noise

    def spy(size, *, sigma, rng=None, secure_mode=False):
        calls.append((rng, secure_mode))
        return real(size, sigma=sigma, rng=rng, secure_mode=secure_mode)

    monkeypatch.setattr(mech, "discrete_gaussian_noise", spy)
    _gan(secure_mode=True).fit(_table())
    assert calls and all(rng is None and secure for rng, secure in calls)


def test_patient_level_fit_scales_the_marginal_noise_by_k():
    X = _table(300)
    groups = np.repeat(np.arange(100), 3)
    row = _gan().fit(X)
    patient = _gan(max_rows_per_group=3).fit(X, groups=groups)
    assert patient.privacy_unit_ == "group"
    assert patient.noise_scale_["marginals"] == pytest.approx(3 * row.noise_scale_["marginals"])
    assert sum(patient.privacy_breakdown_.values()) == pytest.approx(patient.epsilon_spent_)


def test_joint_marginals_share_falls_as_the_gaussian_dp_budget_grows():
    from skdp.accounting import gdp_mu

    f = _budget.joint_marginals_fraction
    assert f(0.1) == f(0.5) == 0.5 and f(2.0) == f(50.0) == 0.2
    assert f(1.0) == pytest.approx(0.35)  # halfway in log mu
    grid = [f(m) for m in (0.5, 0.7, 1.0, 1.4, 2.0)]
    assert grid == sorted(grid, reverse=True)
    # epsilon = 1 keeps half, epsilon = 10 takes 0.2 (delta = 1e-5)
    assert f(gdp_mu(1.0, 1e-5)) == 0.5 and f(gdp_mu(10.0, 1e-5)) == pytest.approx(0.2, abs=1e-3)
