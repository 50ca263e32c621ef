"""The standard error of DPLinearRegression.conf_int is the delta method's spread of
the centre it reports (the Jacobian of the bias correction, at the estimate)."""

import numpy as np
import pytest

from skdp.linear_model import DPLinearRegression
from skdp.linear_model import _inference_linear as L


def _fit(n, epsilon, seed, beta=(0.5, -0.3, 0.2, 0.1, 0.0), **kw):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, len(beta)))
    y = X @ np.asarray(beta) + 0.1 + rng.standard_normal(n)
    params = {"bounds_X": (-4, 4), "bounds_y": (-6, 6), "random_state": seed}
    return DPLinearRegression(epsilon=epsilon, **{**params, **kw}).fit(X, y)


def test_standard_error_uses_the_jacobian_of_the_centre():
    reg = _fit(1000, 1.0, seed=1)
    centre, se = L.bootstrap(reg, 200, np.random.default_rng(5))
    rng = np.random.default_rng(5)  # the same stages by hand, the same random numbers
    spec, design, estimate, variance = L._setup(reg, rng)
    mean, J, _ = L._linearised(spec, design, estimate, variance, 200, rng)
    J_inv = L._stable_inverse(J)
    np.testing.assert_allclose(centre, estimate + J_inv @ (estimate - mean))
    cov = L._spread(spec, design, centre, variance, 200, rng)
    np.testing.assert_allclose(se, np.sqrt(np.diag(J_inv @ cov @ J_inv.T)))


def test_spread_simulates_rows_where_the_corrected_model_clips():
    reg = _fit(2000, 1.0, seed=2, beta=(0.5, -0.3))
    spec, design, estimate, variance = L._setup(reg, np.random.default_rng(0))
    assert design.exact
    big = estimate.copy()
    big[:-1] = 3.0  # a model whose targets leave (-6, 6): the rows must be simulated
    calls = []
    original = L.replicates

    def spy(spec_, design_, *args):
        calls.append(design_.exact)
        return original(spec_, design_, *args)

    L.replicates = spy
    try:
        cov = L._spread(spec, design, big, variance, 60, np.random.default_rng(1))
    finally:
        L.replicates = original
    assert calls == [False] and cov.shape == (3, 3)


@pytest.mark.slow
def test_width_follows_the_spread_of_the_centre_where_the_noise_swamps():
    # n = 500, epsilon = 0.3, d = 5: the released slopes are shrunk almost to 0 and the
    # centre is spread widely; the interval's mean width tracks that spread (the
    # Jacobian at the corrected model gave 1.4 times it, covering every truth; 30
    # repetitions: the mean ratio over the coefficients, each ratio noisy by ~13 %)
    centres, ses = [], []
    for seed in range(30):
        reg = _fit(500, 0.3, seed=100 + seed)
        centre, se = L.bootstrap(reg, 400, np.random.default_rng(seed))
        centres.append(centre)
        ses.append(se)
    ratio = np.mean(ses, axis=0) / np.std(centres, axis=0, ddof=1)
    assert 0.8 < ratio.mean() < 1.3
