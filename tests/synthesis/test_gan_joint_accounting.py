"""Joint accounting (RDP, PLD) of a Gaussian release plus DP-SGD steps (skdp.accounting._mixed)."""

import math

import numpy as np
import pytest

from skdp.accounting import rdp_to_epsilon
from skdp.accounting._mixed import calibrate_joint_noise, joint_gaussian_epsilon
from skdp.accounting._rdp import DEFAULT_ORDERS


def _independent_epsilon(g, s, q, steps, delta):
    # recompute the composed RDP by the closed forms, not through the module
    a = np.asarray(DEFAULT_ORDERS, dtype=float)
    rdp = a / (2.0 * g**2)
    from skdp.accounting import rdp_subsampled_gaussian

    rdp = rdp + steps * np.asarray(
        rdp_subsampled_gaussian(noise_multiplier=s, sample_rate=q, orders=a)
    )
    return float(rdp_to_epsilon(rdp, a, delta=delta))


@pytest.mark.parametrize("epsilon", [1.0, 10.0])
@pytest.mark.parametrize("k", [1, 5])  # row level, and a patient with k rows (sens. k)
def test_calibrated_noise_meets_the_total(epsilon, k):
    d, delta, q, steps = 8, 1e-5, 0.02, 300
    g = 150.0 / (math.sqrt(d) * k)  # noise sd 150 over the L2 sensitivity sqrt(d) * k
    s = calibrate_joint_noise(
        epsilon=epsilon, delta=delta, sample_rate=q, steps=steps, gaussian_noise_multiplier=g
    )
    spent = _independent_epsilon(g, s, q, steps, delta)
    assert spent <= epsilon + 1e-9
    assert spent >= 0.98 * epsilon  # tight: the smallest noise within the ratio


def test_joint_is_tighter_than_splitting():
    delta, q, steps, eps = 1e-5, 0.02, 300, 1.0
    g = 6.0
    joint = calibrate_joint_noise(
        epsilon=eps, delta=delta, sample_rate=q, steps=steps, gaussian_noise_multiplier=g
    )
    # the split: the Gaussian release's own epsilon at 0.1 delta, the rest to DP-SGD
    eps_g = joint_gaussian_epsilon(
        gaussian_noise_multiplier=g,
        noise_multiplier=math.inf,
        sample_rate=q,
        steps=0,
        delta=0.1 * delta,
    )
    split = calibrate_joint_noise(
        epsilon=eps - eps_g,
        delta=0.9 * delta,
        sample_rate=q,
        steps=steps,
        gaussian_noise_multiplier=math.inf,
    )
    assert joint < split


def _independent_pld(g, s, q, steps, delta):
    # a fresh PLD accountant: the release as one step at sampling rate 1
    from skdp.accounting import PLDAccountant

    acc = PLDAccountant().step(noise_multiplier=g, sample_rate=1.0, num_steps=1)
    return acc.step(noise_multiplier=s, sample_rate=q, num_steps=steps).get_epsilon(delta)


@pytest.mark.parametrize("epsilon", [1.0, 10.0])
def test_pld_calibration_meets_the_total_with_less_noise_than_rdp(epsilon):
    d, delta, q, steps = 8, 1e-5, 0.02, 300
    g = 30.0 / math.sqrt(d)
    kw = dict(epsilon=epsilon, delta=delta, sample_rate=q, steps=steps, gaussian_noise_multiplier=g)
    s_pld = calibrate_joint_noise(**kw, accountant="pld")
    s_rdp = calibrate_joint_noise(**kw, accountant="rdp")
    assert s_pld < s_rdp
    spent = _independent_pld(g, s_pld, q, steps, delta)
    assert 0.98 * epsilon <= spent <= epsilon + 1e-9
    assert _independent_epsilon(g, s_pld, q, steps, delta) > epsilon  # RDP would refuse it


def test_unknown_joint_accountant_is_refused():
    with pytest.raises(ValueError, match="accountant"):
        joint_gaussian_epsilon(
            gaussian_noise_multiplier=5.0, noise_multiplier=1.0, sample_rate=0.1, steps=10,
            delta=1e-5, accountant="gdp_clt",
        )  # fmt: skip


def test_budget_spent_by_the_release_alone_is_refused():
    with pytest.raises(ValueError, match="Gaussian release alone"):
        calibrate_joint_noise(
            epsilon=0.1, delta=1e-5, sample_rate=0.01, steps=10, gaussian_noise_multiplier=0.5
        )


def _gan_fit(groups=None, **kw):
    import warnings

    from skdp.synthesis import DPGANSynthesizer
    from tests._fixtures import GAN_FAST

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (120, 2))
    params = {**GAN_FAST, "epsilon": 2.0, "delta": 1e-5, "bounds": (-1.0, 1.0), **kw}
    if groups is not None:
        params["max_rows_per_group"] = 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DPGANSynthesizer(**params).fit(X, groups=groups)


def _executed_steps(est):
    return int(est.n_iter_) * max(1, int(est.n_critic)) + int(est.n_iter_autoencoder_)


@pytest.mark.parametrize("accountant", ["pld", "rdp"])
@pytest.mark.parametrize("groups", [None, np.repeat(np.arange(40), 3)])
def test_gan_fit_spends_at_most_its_total_in_one_account(groups, accountant):
    est = _gan_fit(groups, accountant=accountant)
    k = 1 if groups is None else 3
    parts = est.privacy_breakdown_
    assert sum(parts.values()) == pytest.approx(est.epsilon_spent_)
    assert est.epsilon_spent_ <= 2.0 + 1e-9
    # recompute the joint part from the fitted facts alone, by an independent account
    g = est.noise_scale_["marginals"] / (math.sqrt(est.n_features_in_) * k)
    recompute = _independent_pld if accountant == "pld" else _independent_epsilon
    joint = recompute(g, est.noise_multiplier_, est.sample_rate_, _executed_steps(est), 1e-5)
    assert parts["dpsgd"] + parts["marginals"] == pytest.approx(joint, rel=1e-6)
    # the marginals' entry is the Gaussian release's own epsilon at delta (closed form)
    from skdp.accounting import gdp_epsilon

    assert parts["marginals"] == pytest.approx(gdp_epsilon(1e-5, 1.0 / g), rel=1e-6)


def test_secure_mode_keeps_the_rdp_joint_account():
    est = _gan_fit(secure_mode=True)
    g = est.noise_scale_["marginals"] / math.sqrt(est.n_features_in_)
    joint = _independent_epsilon(
        g, est.noise_multiplier_, est.sample_rate_, _executed_steps(est), 1e-5
    )
    parts = est.privacy_breakdown_
    assert parts["dpsgd"] + parts["marginals"] == pytest.approx(joint, rel=1e-6)


def test_gan_joint_account_gives_dpsgd_less_noise_than_its_share_alone():
    from skdp.synthesis._gan import _budget

    est = _gan_fit()
    parts = est.privacy_breakdown_
    split = _budget.calibrate_noise(
        2.0 - parts["marginals"] - parts["prior"] - parts["selection"] - parts["bounds"],
        0.9e-5,
        est.sample_rate_,
        _executed_steps(est),
        noise_multiplier=None,
        accountant="pld",
    )
    assert est.noise_multiplier_ < split


def test_paper_preset_and_given_multiplier_keep_the_split_account():
    est = _gan_fit(calibrate_marginals=False)
    assert est.privacy_breakdown_["marginals"] == 0.0
    est = _gan_fit(noise_multiplier=3.0)
    assert est.noise_multiplier_ == 3.0
