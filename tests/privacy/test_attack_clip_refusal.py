"""clip=False against privately estimated bounds: the refusal must not depend on the data.

Before the fix, ``clip=False`` with ``bounds_X=None`` (DPLinearRegression,
DPLogisticRegression) estimated the bounds privately and then raised exactly when some
record lay outside the noisy estimate: whether ``fit`` fails was an un-noised function of
the extreme records. The attacker fits two neighbouring data sets (one with an outlier)
under the same settings and reads the outcome; now both refuse before reading any row.
"""

from __future__ import annotations

import numpy as np
import pytest

from skdp.linear_model import DPLinearRegression, DPLogisticRegression


def _neighbours():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, size=(400, 2))
    X_out = X.copy()
    X_out[0, 0] = 1e6  # one record far outside any range the bulk suggests
    return X, X_out


def _outcome(est, X, y):
    try:
        est.fit(X, y)
    except ValueError as exc:
        return str(exc)
    return "fitted"


@pytest.mark.parametrize(
    "make",
    [
        lambda: DPLinearRegression(epsilon=1.0, bounds_y=(-5.0, 5.0), clip=False, random_state=0),
        lambda: DPLogisticRegression(epsilon=1.0, classes=[0, 1], clip=False, random_state=0),
    ],
    ids=["DPLinearRegression", "DPLogisticRegression"],
)
def test_clip_refusal_does_not_depend_on_the_records(make):
    X, X_out = _neighbours()
    y = (X[:, 1] > 0).astype(float)
    a, b = _outcome(make(), X, y), _outcome(make(), X_out, y)
    assert a == b  # the same outcome on neighbouring data sets ...
    assert "clip=False needs declared bounds_X" in a  # ... a refusal before any row is read


def test_declared_bounds_keep_the_documented_refusal():
    X, X_out = _neighbours()
    y = (X[:, 1] > 0).astype(int)
    est = DPLogisticRegression(
        epsilon=1.0, classes=[0, 1], bounds_X=(-1.0, 1.0), clip=False, random_state=0
    )
    assert _outcome(est, X, y) == "fitted"
    with pytest.raises(ValueError, match="outside the declared bounds"):
        est.fit(X_out, y)
