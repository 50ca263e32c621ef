"""The p-values of summary (DPLinearRegression, DPLogisticRegression): a parametric
bootstrap test through the mechanism under the null (doc/inference.rst)."""

import numpy as np
import pytest
from scipy import stats

from skdp.linear_model import DPLogisticRegression
from skdp.linear_model import _inference_linear as L
from skdp.linear_model import _inference_null as N
from tests.linear_model.test_inference_linear_se import _fit


def _linear(n=2000, epsilon=1.0, seed=0, beta=(0.5, 0.0), **kw):
    return _fit(n, epsilon, seed, beta=beta, **kw)


def test_tail_p_values_are_uniform_when_the_observed_comes_from_the_null():
    rng = np.random.default_rng(0)
    p = np.array(
        [N.tail_pvalues(rng.laplace(size=1), rng.laplace(size=(1000, 1)))[0] for _ in range(1000)]
    )
    assert stats.kstest(p, "uniform").pvalue > 0.01
    assert np.all((p > 0) & (p <= 1))


def test_tail_p_value_extremes():
    null = np.random.default_rng(1).standard_normal((1000, 2))
    p = N.tail_pvalues(np.array([0.0, 12.0]), null)
    assert p[0] > 0.9  # the middle of the null distribution
    assert p[1] < 1e-20  # far beyond the replicates: the normal tail, not 2 / (B + 1)


def test_null_draws_solve_the_release_as_the_fit_did():
    # the released X~^T u solved with the released M + ridge I gives the released
    # coef_: what the null draws repeat; then a real slope is significant, a null one not
    reg = _linear(seed=3)
    spec = L._Spec.of(reg)
    stats_ = reg.released_statistics_
    M = stats_["gram"] + reg.regularization_ * np.eye(3)
    w = np.linalg.solve(M, stats_["target"])
    np.testing.assert_allclose(w[:2] * spec.scaling.ax / spec.scaling.ay, reg.coef_, rtol=1e-8)
    rng = np.random.default_rng(0)
    centre, _, (spec, design, estimate, variance) = L.bootstrap(reg, 200, rng, parts=True)
    p = N.linear_null_pvalues(reg, spec, design, centre, estimate, variance, 1000, rng)
    assert p.shape == (3,) and p[0] < 0.01 and p[1] > 0.05


@pytest.mark.parametrize("inference", [False, True])
def test_summary_p_values_come_from_the_null_test_and_are_post_processing(inference):
    reg = _linear(n=5000, epsilon=3.0, seed=4, inference=inference)
    spent = reg.epsilon_spent_
    released = {k: np.copy(v) for k, v in reg.released_statistics_.items() if v is not None}
    table = reg.summary()
    assert table.loc["x0", "P>|z|"] < 1e-6
    assert table.loc["x1", "P>|z|"] > 0.01
    assert reg.epsilon_spent_ == spent
    for k, v in released.items():
        np.testing.assert_array_equal(reg.released_statistics_[k], v)
    np.testing.assert_array_equal(reg.summary()["P>|z|"], table["P>|z|"])  # default seed


def test_logistic_p_values_from_the_null_test():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(4000, 2))
    y = (rng.uniform(size=4000) < 1 / (1 + np.exp(-(X @ [1.5, 0.0] + 0.2)))).astype(int)
    clf = DPLogisticRegression(
        epsilon=3.0, classes=[0, 1], bounds_X=(-1, 1), inference=True, random_state=0
    ).fit(X, y)
    p = clf.summary()["P>|z|"]
    assert p["x0"] < 1e-4 and p["x1"] > 0.01
    assert np.all((p > 0) & (p <= 1))


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [0.3, 1.0])
def test_null_p_values_are_roughly_uniform(epsilon):
    p = [
        _linear(n=2000, epsilon=epsilon, seed=s).summary(n_bootstrap=200)["P>|z|"]["x1"]
        for s in range(60)
    ]
    assert stats.kstest(p, "uniform").pvalue > 0.001
