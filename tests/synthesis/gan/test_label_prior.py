"""Labels and the class prior of the conditional GAN (skdp.synthesis._gan._label_prior)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skdp.exceptions import PrivacyLeakWarning
from skdp.synthesis._gan._label_prior import class_prior, encode_labels


def test_encode_labels_over_declared_classes():
    classes, codes = encode_labels(np.array(["b", "a", "b"]), ["a", "b"], n_rows=3)
    np.testing.assert_array_equal(classes, ["a", "b"])
    np.testing.assert_array_equal(codes, [1, 0, 1])
    _, codes = encode_labels(np.array([[1], [0]]), [0, 1], n_rows=2)  # a column vector
    np.testing.assert_array_equal(codes, [1, 0])


@pytest.mark.parametrize(
    "y, classes, match",
    [
        (None, [0, 1], "needs y"),
        (np.array([0, 1]), [0, 1], "one label per row"),
        (np.array([0, 1, 5]), [0, 1], "declared classes"),
        (np.array([0.0, np.nan, 1.0]), [0, 1], "NaN"),
        (np.array([0, 1, 1]), None, "classes"),
        (np.array([0, 1, 1]), [0, 0], "distinct"),
        (np.zeros((3, 2)), [0, 1], "1-dimensional"),
    ],
)
def test_encode_labels_refuses_bad_labels_without_echoing_them(y, classes, match):
    with pytest.raises(ValueError, match=match) as info:
        encode_labels(y, classes, n_rows=3)
    assert "5" not in str(info.value)


def test_classes_from_data_warns():
    with pytest.warns(PrivacyLeakWarning):
        classes, _ = encode_labels(np.array([3, 1, 3]), "data", n_rows=3)
    np.testing.assert_array_equal(classes, [1, 3])


def test_public_priors_read_no_labels_and_cost_nothing():
    classes = np.array(["a", "b", "c"])
    codes = np.zeros(10, dtype=int)  # every real label is "a"
    p, spent = class_prior("uniform", classes, codes, 1.0, np.random.default_rng(0))
    np.testing.assert_allclose(p, [1 / 3] * 3)
    assert spent == 0.0
    p, spent = class_prior({"b": 3.0, "c": 1.0}, classes, codes, 1.0, np.random.default_rng(0))
    np.testing.assert_allclose(p, [0.0, 0.75, 0.25])
    assert spent == 0.0
    with pytest.raises(ValueError, match="class_prior"):
        class_prior({"z": 1.0}, classes, codes, 1.0, np.random.default_rng(0))


def test_dp_prior_is_noisy_counts_and_charges_its_epsilon():
    classes = np.array([0, 1])
    codes = np.r_[np.zeros(300, dtype=int), np.ones(700, dtype=int)]
    draws = [
        class_prior("dp", classes, codes, 0.5, np.random.default_rng(s))[0][1] for s in range(200)
    ]
    # Laplace(1 / 0.5) on counts of 300 / 700: the prior varies, around 0.7
    assert np.std(draws) > 0 and abs(np.mean(draws) - 0.7) < 0.01
    p, spent = class_prior("dp", classes, codes, 0.5, np.random.default_rng(0))
    assert spent == 0.5 and p.sum() == pytest.approx(1.0) and (p >= 0).all()
    # epsilon=inf: the exact frequencies, nothing charged
    p, spent = class_prior("dp", classes, codes, math.inf, np.random.default_rng(0))
    np.testing.assert_allclose(p, [0.3, 0.7])
    assert spent == 0.0
