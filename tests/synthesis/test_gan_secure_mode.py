"""DPGANSynthesizer(secure_mode=True): the noise released outside DP-SGD (the DP class
prior's counts, checkpoint selection's report-noisy-max) is exact and from os.urandom;
the default releases exactly what it released before the parameter existed."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from skdp.mechanisms import report_noisy_max
from skdp.synthesis import CheckpointSelection, DPGANSynthesizer
from skdp.synthesis._gan._label_prior import class_prior
from skdp.utils import _random
from tests._fixtures import GAN_FAST

_secure_noisy_max = functools.partial(report_noisy_max, secure_mode=True)

FAST = {**GAN_FAST, "n_iter": 6, "n_iter_autoencoder": 4, "n_critic": 2}


def _data(n=120, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, 3))
    return X, (X[:, 0] > 0).astype(int)


def _gan(**kw):
    return DPGANSynthesizer(
        epsilon=4.0,
        bounds=(-4.0, 4.0),
        conditional="acgan",
        classes=[0, 1],
        loss="gan",
        checkpoint_selection=CheckpointSelection(n_checkpoints=3, top_k=2, n_samples=40),
        **{**FAST, **kw},
    )


def test_secure_mode_default_is_not_seed_material():
    X, y = _data()
    est = _gan()
    assert est.get_params()["secure_mode"] is False
    a = _random.fit_streams(0, ["x"], estimator=est, X=X, y=y)["x"].random()
    b = _random.fit_streams(0, ["x"], estimator=_gan(secure_mode=True), X=X, y=y)["x"].random()
    assert a != b  # a set secure_mode is hashed: its fit never shares noise with the default
    # the default stays out of the seed material (tests/test_release_digests.py pins it)
    assert type(est)._later_parameters == {"secure_mode": False, "calibrate_marginals": True}


def test_secure_class_prior_is_on_the_grid_and_reads_no_rng(monkeypatch):
    from skdp.synthesis._gan import _label_prior

    released = []

    def spy(*args, **kwargs):
        out = _label_prior_add_laplace(*args, **kwargs)
        released.append(np.asarray(out))
        return out

    _label_prior_add_laplace = _label_prior.add_laplace
    monkeypatch.setattr(_label_prior, "add_laplace", spy)
    classes, codes = np.array([0, 1, 2]), np.array([0] * 50 + [1] * 30 + [2] * 20)
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    p, spent = class_prior("dp", classes, codes, 1.0, rng, secure_mode=True)
    assert rng.bit_generator.state == before  # os.urandom, not the seeded stream
    # the noisy counts are exact multiples of a power-of-two grid (Mironov 2012's gaps
    # cannot open), unlike the floating-point Laplace draw of the default
    (counts,) = released
    assert np.array_equal(counts * 2.0**30, np.round(counts * 2.0**30))
    class_prior("dp", classes, codes, 1.0, np.random.default_rng(0))  # the control
    assert not np.array_equal(released[1] * 2.0**30, np.round(released[1] * 2.0**30))
    assert spent == 1.0 and p.shape == (3,) and math.isclose(p.sum(), 1.0)
    # the default draws from rng (floating-point Laplace), unchanged
    p0, _ = class_prior("dp", classes, codes, 1.0, np.random.default_rng(0))
    p1, _ = class_prior("dp", classes, codes, 1.0, np.random.default_rng(0))
    np.testing.assert_array_equal(p0, p1)


def test_secure_noisy_max_refuses_what_it_cannot_make_exact():
    with pytest.raises(ValueError, match="integer"):
        _secure_noisy_max([1.5, 2.0], epsilon=1.0, sensitivity=1.0, rng=None, monotonic=True,
                          exclude=None)  # fmt: skip
    with pytest.raises(ValueError, match="monotone"):
        _secure_noisy_max([1, 2], epsilon=1.0, sensitivity=1.0, rng=None, monotonic=False,
                          exclude=None)  # fmt: skip


def test_secure_noisy_max_exact_at_infinity_and_respects_exclude():
    u = [3.0, 9.0, 9.0, 1.0]
    kw = dict(epsilon=math.inf, sensitivity=1.0, rng=None, monotonic=True)
    assert _secure_noisy_max(u, exclude=None, **kw) == 1  # the first maximiser
    assert _secure_noisy_max(u, exclude=[1], **kw) == 2
    assert _secure_noisy_max(u, exclude=[1, 2], **kw) == 0
    picks = {_secure_noisy_max(u, epsilon=50.0, sensitivity=1.0, rng=None, monotonic=True,
                               exclude=[1, 2]) for _ in range(20)}  # fmt: skip
    assert picks == {0}


@pytest.mark.slow
def test_secure_noisy_max_distribution_within_the_claim():
    """Neighbouring utilities (each count moves by at most 1, all the same way): the
    frequency of every outcome changes by at most e^eps (with sampling slack)."""
    eps, n = 1.0, 1500
    u, v = np.array([5.0, 5.0, 3.0]), np.array([6.0, 5.0, 4.0])  # monotone neighbours

    def freq(w):
        picks = [
            _secure_noisy_max(
                w, epsilon=eps, sensitivity=1.0, rng=None, monotonic=True, exclude=None
            )  # fmt: skip
            for _ in range(n)
        ]
        return np.bincount(picks, minlength=3) / n

    fu, fv = freq(u), freq(v)
    assert fu[0] > fu[1]  # ties go to the first maximiser, noise spreads the rest
    for a, b in ((fu, fv), (fv, fu)):
        for i in range(3):
            if a[i] > 0.05:
                assert b[i] >= math.exp(-eps) * a[i] - 0.05


@pytest.mark.slow
def test_secure_mode_fit_releases_the_same_facts():
    X, y = _data()
    plain = _gan().fit(X, y)
    secure = _gan(secure_mode=True).fit(X, y)
    assert secure.privacy_breakdown_ == plain.privacy_breakdown_
    assert secure.noise_scale_ == plain.noise_scale_
    assert len(secure.selected_checkpoints_) == len(plain.selected_checkpoints_) == 2
    assert math.isclose(secure.class_prior_.sum(), 1.0)
    assert secure.sample(5, random_state=0).shape == (5, 3)
