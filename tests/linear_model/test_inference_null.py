"""The p-values of DPLogisticRegression.summary: a parametric bootstrap test through the
linearised mechanism under the null (doc/inference.rst)."""

import numpy as np
from scipy import stats

from skdp.linear_model import DPLogisticRegression
from skdp.linear_model import _inference_null as N


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
