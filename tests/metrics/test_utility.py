"""Tests of the synthetic-data utility metrics (spec dp_gan.md §4.1)."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr
from sklearn.linear_model import LogisticRegression

from skdp.metrics import (
    correlation_distance,
    correlation_similarity,
    dimension_wise_prediction,
    dimension_wise_probability,
    dimension_wise_statistics,
    marginal_total_variation,
    maximum_mean_discrepancy,
    tstr_score,
)
from skdp.metrics._utility import numeric_view


def _correlated(n, rho, rng, d=4):
    cov = np.full((d, d), rho) + (1 - rho) * np.eye(d)
    return rng.multivariate_normal(np.zeros(d), cov, size=n)


def test_numeric_view_dataframe_one_hot_union_of_levels():
    a = pd.DataFrame({"x": [1.0, 2.0], "c": ["a", "b"]})
    b = pd.DataFrame({"x": [3.0, 4.0, 5.0], "c": ["b", "z", "z"]})
    R, S, names = numeric_view(a, b)
    assert names == ["x", "c=a", "c=b", "c=z"]
    np.testing.assert_array_equal(R, [[1, 1, 0, 0], [2, 0, 1, 0]])
    np.testing.assert_array_equal(S[:, 3], [0, 1, 1])


def test_numeric_view_rejects_bad_input():
    with pytest.raises(ValueError, match="same number of columns"):
        numeric_view(np.zeros((3, 2)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="NaN"):
        numeric_view(np.array([[np.nan, 1.0]]), np.zeros((1, 2)))
    with pytest.raises(ValueError, match="same columns"):
        numeric_view(pd.DataFrame({"a": [1]}), pd.DataFrame({"b": [1]}))


def test_dimension_wise_statistics_and_probability_by_hand():
    R = np.array([[1, 0, 1.0], [1, 0, 0], [1, 1, 0], [1, 0, 0]])
    S = np.array([[1, 1, 1.0], [0, 1, 1]])
    st = dimension_wise_statistics(R, S)
    np.testing.assert_allclose(st["mean"]["real"], [1, 0.25, 0.25])
    np.testing.assert_allclose(st["mean"]["synthetic"], [0.5, 1, 1])
    np.testing.assert_allclose(st["median"]["synthetic"], [0.5, 1, 1])
    assert st["mean_abs_diff"] == pytest.approx((0.5 + 0.75 + 0.75) / 3)
    pr = dimension_wise_probability(R, S)
    assert pr["rmse"] == pytest.approx(np.sqrt((0.25 + 0.5625 + 0.5625) / 3))
    assert pr["pearson"] == pytest.approx(np.corrcoef([1, 0.25, 0.25], [0.5, 1, 1])[0, 1])
    same = dimension_wise_probability(R, R)
    assert same["rmse"] == 0.0 and same["pearson"] == pytest.approx(1.0)


def test_correlation_distance_and_similarity():
    rng = np.random.default_rng(0)
    A = _correlated(2000, 0.8, rng)
    B = _correlated(2000, 0.8, rng)
    C = _correlated(2000, 0.0, rng)
    assert correlation_distance(A, A) == 0.0
    assert correlation_distance(A, B) < 0.15 < correlation_distance(A, C)
    # Frobenius: 12 off-diagonal entries each off by about 0.8
    assert correlation_distance(A, C) == pytest.approx(np.sqrt(12) * 0.8, abs=0.2)
    assert correlation_distance(A, C, norm="mean_abs") == pytest.approx(0.8, abs=0.06)
    with pytest.raises(ValueError, match="norm"):
        correlation_distance(A, B, norm="l1")
    # similarity = Spearman of the strict upper triangles (002: 630 pairs for 36 columns)
    X = rng.normal(size=(300, 6))
    X[:, 1] += X[:, 0]
    X[:, 3] -= 0.5 * X[:, 2]
    Y = X + rng.normal(scale=0.5, size=X.shape)
    rho, p = correlation_similarity(X, Y)
    iu = np.triu_indices(6, 1)
    ref = spearmanr(np.corrcoef(X, rowvar=False)[iu], np.corrcoef(Y, rowvar=False)[iu])
    assert rho == pytest.approx(ref.statistic) and p == pytest.approx(ref.pvalue)


def test_constant_column_gives_zero_correlation_not_nan():
    X = np.column_stack([np.arange(10.0), np.ones(10)])
    assert np.isfinite(correlation_distance(X, X + np.array([0, 1.0])))


def test_mmd_zero_for_identical_and_grows_with_shift():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(400, 3))
    assert maximum_mean_discrepancy(A, A) == pytest.approx(0.0, abs=1e-6)
    m1 = maximum_mean_discrepancy(A, rng.normal(size=(400, 3)))
    m2 = maximum_mean_discrepancy(A, rng.normal(size=(400, 3)) + 1.0)
    m3 = maximum_mean_discrepancy(A, rng.normal(size=(400, 3)) + 3.0)
    assert m1 < m2 < m3


def test_mmd_matches_direct_formula():
    rng = np.random.default_rng(2)
    A, B = rng.normal(size=(30, 2)), rng.normal(size=(20, 2)) + 0.5

    def k(x, y, s):
        return np.exp(-np.sum((x - y) ** 2) / (2 * s))

    s = np.mean([np.sum((a - b) ** 2) for a in A for b in A])
    kxx = np.mean([k(a, b, s) for a in A for b in A])
    kyy = np.mean([k(a, b, s) for a in B for b in B])
    kxy = np.mean([k(a, b, s) for a in A for b in B])
    assert maximum_mean_discrepancy(A, B) == pytest.approx(np.sqrt(kxx + kyy - 2 * kxy))


def test_marginal_tv_by_hand():
    R = np.array([[0, 0], [0, 1], [1, 1], [1, 1]])
    S = np.array([[0, 0], [0, 0], [0, 0], [1, 1]])
    # column 0: real (.5, .5), syn (.75, .25) -> .25; column 1: (.25, .75) vs (.75, .25) -> .5
    assert marginal_total_variation(R, S) == pytest.approx(0.375)
    # pair: real cells (00:.25, 01:.25, 11:.5), syn (00:.75, 11:.25) -> .5 * (.5 + .25 + .25)
    assert marginal_total_variation(R, S, way=2) == pytest.approx(0.5)
    assert marginal_total_variation(R, R, way=2) == 0.0


def test_marginal_tv_continuous_and_validation():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(2000, 3))
    close = marginal_total_variation(A, rng.normal(size=(2000, 3)), bins=10)
    far = marginal_total_variation(A, rng.normal(size=(2000, 3)) + 2.0, bins=10)
    assert close < 0.08 < 0.5 < far <= 1.0
    assert 0 <= marginal_total_variation(A, A + 0.1, way=2, max_pairs=2) <= 1
    with pytest.raises(ValueError, match="way"):
        marginal_total_variation(A, A, way=3)
    with pytest.raises(ValueError, match="bins"):
        marginal_total_variation(A, A, bins=1)


def test_marginal_tv_dataframe_categorical():
    a = pd.DataFrame({"c": ["a", "a", "b", "b"]})
    b = pd.DataFrame({"c": ["a", "a", "a", "a"]})
    # one-hot columns c=a and c=b each have TV .5
    assert marginal_total_variation(a, b) == pytest.approx(0.5)


def test_tstr_score_good_synthetic_beats_label_noise():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(1200, 3))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    Xs, ys, Xt, yt = X[:600], y[:600], X[600:], y[600:]
    good = tstr_score(LogisticRegression(), Xs, ys, Xt, yt)
    bad = tstr_score(LogisticRegression(), Xs, rng.permutation(ys), Xt, yt)
    assert good > 0.95 and bad < 0.7
    both = tstr_score(LogisticRegression(), Xs, ys, Xt, yt, X_train=Xs, y_train=ys)
    assert both["tstr"] == pytest.approx(good) and both["trtr"] == pytest.approx(good)
    acc = tstr_score(LogisticRegression(), Xs, ys, Xt, yt, scoring="accuracy")
    assert 0.9 < acc <= 1.0


def test_tstr_single_class_synthetic_is_chance():
    rng = np.random.default_rng(5)
    Xt = rng.normal(size=(100, 2))
    yt = np.r_[np.zeros(50, int), np.ones(50, int)]
    Xs = rng.normal(size=(20, 2))
    assert tstr_score(LogisticRegression(), Xs, np.ones(20, int), Xt, yt) == 0.5
    acc = tstr_score(LogisticRegression(), Xs, np.ones(20, int), Xt, yt, scoring="accuracy")
    assert acc == 0.5


def test_dimension_wise_prediction_recovers_dependence():
    rng = np.random.default_rng(6)
    n = 1500
    a = rng.random(n) < 0.5
    b = np.where(rng.random(n) < 0.9, a, ~a)  # b ~ a
    c = rng.random(n) < 0.3  # independent
    X = np.column_stack([a, b, c]).astype(float)
    Xtr, Xte = X[:1000], X[1000:]
    out = dimension_wise_prediction(Xtr, Xte, X_train=Xtr, top_k=3)
    assert sorted(out["columns"]) == [0, 1, 2]
    f = dict(zip(out["columns"], out["f1_synthetic"], strict=True))
    assert f[0] > 0.8 and f[1] > 0.8
    assert out["mean_real"] == pytest.approx(out["mean_synthetic"])
    # synthetic data with the dependence reversed predicts much worse
    Xs = Xtr.copy()
    Xs[:, 1] = 1.0 - Xs[:, 0]
    broken = dimension_wise_prediction(Xs, Xte, columns=[0, 1])
    good = dimension_wise_prediction(Xtr, Xte, columns=[0, 1])
    assert broken["mean_synthetic"] < 0.3 < 0.8 < good["mean_synthetic"]
