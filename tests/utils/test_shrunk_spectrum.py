"""The spectrum estimate of a noisy symmetric release used by the interval bootstraps
(``skdp.utils._inference.shrunk_spectrum``)."""

from __future__ import annotations

import numpy as np
import pytest

from skdp.utils._inference import shrunk_spectrum


def _noisy(G, sd, rng):
    upper = np.triu(rng.normal(0.0, sd, size=G.shape))
    return G + upper + np.triu(upper, 1).T


def _spread(M):
    lam = np.linalg.eigvalsh(M)
    return float(np.sum((lam - lam.mean()) ** 2))


def test_without_noise_the_release_is_returned():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((4, 4))
    G = A @ A.T + 4.0 * np.eye(4)
    np.testing.assert_allclose(shrunk_spectrum(G, 0.0, 1e-6), G, rtol=1e-12, atol=1e-12)


def test_keeps_eigenvectors_and_the_mean_eigenvalue():
    rng = np.random.default_rng(1)
    G = np.diag([100.0, 150.0, 200.0, 250.0, 300.0])
    P = _noisy(G, 20.0, rng)
    S = shrunk_spectrum(P, 20.0, 1.0)
    assert np.trace(S) == pytest.approx(np.trace(P), rel=1e-12)
    _, V = np.linalg.eigh(P)
    # S is diagonal in P's eigenbasis
    D = V.T @ S @ V
    np.testing.assert_allclose(D - np.diag(np.diag(D)), 0.0, atol=1e-9)


@pytest.mark.parametrize("spectrum", [[125.0] * 5, [60.0, 90.0, 125.0, 160.0, 190.0]])
def test_the_spread_is_unbiased_where_the_raw_release_overstates_it(spectrum):
    """Averaged over releases the shrunk spread is near the true one (within 15 % of
    the noise's excess); the raw release's exceeds it by ``(d^2 - 1) sd^2``."""
    rng = np.random.default_rng(2)
    d, sd = len(spectrum), 26.0
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    G = (Q * np.asarray(spectrum)) @ Q.T
    raw, shrunk = [], []
    for _ in range(400):
        P = _noisy(G, sd, rng)
        raw.append(_spread(P))
        shrunk.append(_spread(shrunk_spectrum(P, sd, 1.0)))
    excess = (d * d - 1) * sd**2
    assert np.mean(raw) == pytest.approx(_spread(G) + excess, rel=0.1)
    assert abs(np.mean(shrunk) - _spread(G)) < 0.15 * excess + 0.1 * _spread(G)


def test_floor_holds_for_a_release_that_is_mostly_noise():
    rng = np.random.default_rng(3)
    P = _noisy(np.eye(5) * 10.0, 100.0, rng)
    lam = np.linalg.eigvalsh(shrunk_spectrum(P, 100.0, 50.0))
    assert lam.min() >= 50.0 - 1e-9
