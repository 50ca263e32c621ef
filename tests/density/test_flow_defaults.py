"""DPFlowDensity's default schedule (``batch_size=None``, ``n_iter=None``), issue 18 item 3.

The schedule reads public quantities only (``n``, the flow's parameter count). The
regression test fits the defaults on :func:`skdp.datasets.make_nonlinear_repeated_measures`
over a grid of ``epsilon`` and asserts that the held-out mean log-likelihood does not
fall as the budget grows, within ``LL_TOLERANCE`` nats (the spread between seeds of one
setting was at most 0.15 nats in the measurement that set it: n = 300, 3 seeds; the
gaps between neighbouring epsilons were 0.5 to 1 nat).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from skdp.accounting._schedule import SCHEDULE_RULE, default_batch_size, default_n_iter
from skdp.datasets import make_nonlinear_repeated_measures
from skdp.density import DPFlowDensity

#: Allowed drop of held-out log-likelihood (nats per record) from one epsilon to a larger one.
LL_TOLERANCE = 0.25
#: Declared public bounds of the simulator's columns (w1..w4 from the design, x wide).
BOUNDS = [(0.0, 1.0), (0.0, 3.0), (0.0, 0.5), (0.0, 2.0)] + [(-1.0, 7.0)] * 5


def _data(n, cols, seed):
    X = make_nonlinear_repeated_measures(n + 2000, random_state=seed)[:, cols]
    return X[:n], X[n:], {i: BOUNDS[c] for i, c in enumerate(cols)}


def _diag_gauss_ll(Xtr, Xte):
    m, s = Xtr.mean(0), Xtr.std(0)
    return float(
        np.mean(np.sum(-0.5 * ((Xte - m) / s) ** 2 - np.log(s) - 0.5 * np.log(2 * np.pi), 1))
    )


def test_default_schedule_is_a_public_function_of_n_and_model_size():
    assert [default_batch_size(n) for n in (10, 300, 724, 2000, 9000, 10**6)] == [
        10, 64, 64, 128, 256, 1024,
    ]  # fmt: skip
    # 30 passes bind on a small table, the compute budget on a large one, 100 at least
    assert default_n_iter(2000, 128, epochs=30, n_parameters=10_000) == math.ceil(30 * 2000 / 128)
    t = default_n_iter(100_000, 1024, epochs=30, n_parameters=10_000)
    assert 1024 * 10_000 * t <= SCHEDULE_RULE["work_budget"] < 1024 * 10_000 * (t + 1)
    assert default_n_iter(50, 50, epochs=30, n_parameters=10_000) == 100


def test_fit_reports_the_default_schedule():
    X, _, bounds = _data(300, [0, 4], seed=0)
    est = DPFlowDensity(epsilon=math.inf, bounds=bounds, n_layers=1, hidden_size=8, device="cpu")
    est.fit(X)
    n_par = sum(p.numel() for p in est.flow_.parameters())
    assert est.sample_rate_ == 64 / 300
    assert est.n_iter_ == default_n_iter(300, 64, epochs=30, n_parameters=n_par) == 141
    # given values win
    est.set_params(epsilon=2.0, n_iter=7, batch_size=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X)
    assert (est.n_iter_, est.sample_rate_) == (7, 0.1) and est.epsilon_spent_ <= 2.0


def _monotone(lls):
    return all(b >= a - LL_TOLERANCE for a, b in zip(lls, lls[1:], strict=False))


def test_more_budget_does_not_make_the_default_fit_worse_tiny():
    """Fast version: 200 rows, 4 columns, a small flow, the default schedule."""
    Xtr, Xte, bounds = _data(200, [0, 1, 4, 5], seed=100)
    lls = []
    for eps in (0.5, 4.0, math.inf):
        est = DPFlowDensity(
            epsilon=eps, bounds=bounds, n_layers=2, hidden_size=16, device="cpu", random_state=0
        ).fit(Xtr)
        lls.append(est.score(Xte))
    assert _monotone(lls), lls
    assert lls[-1] > lls[0]  # and the budget buys something


@pytest.mark.slow
@pytest.mark.parametrize("n", [1000, 5000])
def test_more_budget_does_not_make_the_default_fit_worse(n):
    """The real defaults (5-layer MAF, default schedule) on the 9-column simulator; at
    epsilon >= 3 and n >= 5,000 also above a non-private diagonal Gaussian."""
    Xtr, Xte, bounds = _data(n, list(range(9)), seed=200 + n)
    grid = (0.3, 1.0, 3.0, 10.0, math.inf)
    lls = []
    for eps in grid:
        est = DPFlowDensity(epsilon=eps, bounds=bounds, device="cpu", random_state=0).fit(Xtr)
        lls.append(est.score(Xte))
    assert _monotone(lls), dict(zip(grid, lls, strict=True))
    if n >= 5000:
        gauss = _diag_gauss_ll(Xtr, Xte)
        assert all(ll > gauss for eps, ll in zip(grid, lls, strict=True) if eps >= 3), (gauss, lls)
