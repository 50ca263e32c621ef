"""DP checkpoint selection and its parameter object (skdp.synthesis._gan._checkpoint)."""

from __future__ import annotations

import dataclasses
import math
import pickle

import numpy as np
import pytest
from sklearn.base import clone

from skdp.synthesis import CheckpointSelection, DPGANSynthesizer
from skdp.synthesis._gan._checkpoint import checkpoint_steps, select_checkpoints


def test_parameter_object_compares_by_value_and_survives_clone():
    a = CheckpointSelection(top_k=2, scorers=["random_forest"])
    b = CheckpointSelection(top_k=2, scorers=("random_forest",))
    assert a == b and hash(a) == hash(b) and a.scorers == ("random_forest",)
    assert pickle.loads(pickle.dumps(a)) == a
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.top_k = 3
    gan = DPGANSynthesizer(conditional="acgan", checkpoint_selection=a)
    c = clone(gan)
    assert c.get_params()["checkpoint_selection"] == a
    assert c.get_params() == gan.get_params()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_checkpoints": 0}, "n_checkpoints"),
        ({"top_k": 0}, "top_k"),
        ({"n_checkpoints": 2, "top_k": 3}, "top_k"),
        ({"scorers": ()}, "scorers"),
        ({"scorers": ("svm",)}, "scorers"),
        ({"n_samples": 1}, "n_samples"),
        ({"top_k": 2.0}, "top_k"),
    ],
)
def test_parameter_object_validates_itself(kwargs, match):
    with pytest.raises(ValueError, match=match):
        CheckpointSelection(**kwargs)


def test_checkpoint_steps_are_distinct_and_evenly_spaced():
    assert checkpoint_steps(8, 4) == [2, 4, 6, 8]
    assert checkpoint_steps(3, 10) == [1, 2, 3]  # fewer steps than checkpoints


class _Fake:
    """A stand-in generator: its rows are the one-hot of their label, or of the other
    label (``flip``), so a scorer trained on them labels the private rows all right or
    all wrong."""

    def __init__(self, flip):
        self.flip = flip


def _generate(gen, m, rng):
    ys = np.arange(m) % 2
    X = np.eye(2)[1 - ys if gen.flip else ys]
    return X, ys


def test_selection_picks_the_checkpoints_that_label_the_private_rows_best():
    # private rows: X one-hot of y; a scorer trained on a candidate's rows predicts well
    codes = np.r_[np.zeros(50, dtype=int), np.ones(50, dtype=int)]
    Z = np.eye(2)[codes]
    checkpoints = [(t, _Fake(flip=t % 2 == 1)) for t in range(1, 5)]
    gens, selected = select_checkpoints(
        checkpoints,
        _generate,
        Z,
        codes,
        math.inf,  # exact top-k
        np.random.default_rng(0),
        scorers=("logistic_regression",),
        top_k=2,
        n_samples=20,
    )
    assert sorted(s for s, _ in selected) == [2, 4]  # the two that label rows right
    assert [g.flip for g in gens] == [False, False]
    assert all(name == "logistic_regression" for _, name in selected)
    with pytest.raises(ValueError, match="checkpoints"):
        select_checkpoints(
            checkpoints[:1],
            _generate,
            Z,
            codes,
            1.0,
            np.random.default_rng(0),
            scorers=("logistic_regression",),
            top_k=2,
            n_samples=20,
        )


def test_noisy_selection_is_randomised_at_small_epsilon():
    codes = np.r_[np.zeros(5, dtype=int), np.ones(5, dtype=int)]
    Z = np.eye(2)[codes]
    checkpoints = [(t, _Fake(flip=t % 2 == 1)) for t in range(1, 7)]
    picks = set()
    for seed in range(20):
        _, selected = select_checkpoints(
            checkpoints,
            _generate,
            Z,
            codes,
            0.01,
            np.random.default_rng(seed),
            scorers=("logistic_regression",),
            top_k=1,
            n_samples=10,
        )
        picks.add(selected[0][0])
    assert len(picks) > 1  # Laplace noise of scale 100 on counts of at most 10


def test_too_few_critic_steps_for_top_k_is_refused_before_training(monkeypatch):
    from skdp.synthesis._gan import _training

    def boom(*a, **k):  # pragma: no cover - must not be reached
        raise AssertionError("training started")

    monkeypatch.setattr(_training.GANTraining, "train_gan", boom)
    X = np.random.default_rng(0).normal(size=(40, 2))
    y = np.arange(40) % 2
    gan = DPGANSynthesizer(
        epsilon=3.0,
        bounds=(-4, 4),
        conditional="acgan",
        classes=[0, 1],
        checkpoint_selection=CheckpointSelection(n_checkpoints=5, top_k=3),
        n_iter=2,
        hidden_size=4,
        latent_dim=2,
        device="cpu",
        random_state=0,
    )
    with pytest.raises(ValueError, match="n_iter"):
        gan.fit(X, y)
