"""Attack: one patient with many rows against a patient-level fit on Dask input.

The game of ``test_attack_patient_level.py`` (D versus D plus one patient with K = 5
identical extreme rows, :func:`skdp.auditing.threshold_audit` at 95 % confidence), played
against :class:`~skdp.linear_model.DPLinearRegression` on Dask arrays with
``groups=`` and ``max_rows_per_group=1``. The canary's five rows lie in five different
partitions, so only Dask's shuffle by patient brings them together before the bound:
the fit must keep its promise (the empirical lower bound at or below epsilon), and the
same fit with the shuffle removed (each partition bounds its own rows: the canary keeps
five rows against a sensitivity of one) must break it -- the check that the audit can
see the failure it guards against. Each trial is a Dask fit (about a second on a loaded
2-core machine): marked slow.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
dask = pytest.importorskip("dask")

from skdp.auditing import threshold_audit  # noqa: E402
from skdp.linear_model import DPLinearRegression  # noqa: E402

K = 5
EPSILON = 1.0
CHUNK = 41


def _worlds(n=200, seed=0):
    """D (one row a patient) and D plus a patient with K extreme rows, one in each of
    the first K partitions of CHUNK rows."""
    rng = np.random.default_rng(seed)
    X0 = rng.uniform(-0.2, 0.2, (n, 1))
    y0 = rng.uniform(-0.2, 0.2, n)
    g0 = np.arange(n)
    X1, y1, g1 = X0.copy(), y0.copy(), g0.copy()
    at = np.arange(K) * CHUNK
    for i in at[::-1]:
        X1 = np.insert(X1, i, 1.0, axis=0)
        y1 = np.insert(y1, i, 1.0)
        g1 = np.insert(g1, i, n)
    return (X0, y0, g0), (X1, y1, g1)


def _audit(n_trials, seed=1):
    worlds = _worlds()
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n_trials) % 2)
    scores = np.empty(n_trials)
    with dask.config.set(scheduler="synchronous"):
        for t, label in enumerate(labels):
            X, y, g = worlds[label]
            est = DPLinearRegression(
                epsilon=EPSILON,
                delta=0.0,
                bounds_X=(-1.0, 1.0),
                bounds_y=(-1.0, 1.0),
                fit_intercept=False,  # the whole budget on the statistics, a stable
                regularization=100.0,  # solve: the slope follows the noisy sum x y
                max_rows_per_group=1,
                random_state=int(rng.integers(2**31)),
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(
                    da.from_array(X, chunks=(CHUNK, 1)),
                    da.from_array(y, chunks=CHUNK),
                    groups=da.from_array(g, chunks=CHUNK),
                )
            scores[t] = float(est.coef_[0])
    return threshold_audit(scores, labels, epsilon=EPSILON)


@pytest.mark.slow
def test_dask_patient_level_fit_keeps_its_promise():
    res = _audit(n_trials=200)
    assert res.epsilon_lb <= EPSILON, res


@pytest.mark.slow
def test_without_the_shuffle_the_audit_sees_the_patient(monkeypatch):
    """The mutant: each partition bounds its own rows (no shuffle by patient)."""
    monkeypatch.setattr(dd.DataFrame, "shuffle", lambda self, *args, **kwargs: self)
    res = _audit(n_trials=300)
    assert res.epsilon_lb > EPSILON, res
