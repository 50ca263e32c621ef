"""Bad ``groups`` / ``max_rows_per_group`` on every estimator whose ``fit`` takes
``groups``: a clear ``ValueError`` or ``TypeError`` that names the parameter and never
shows a label (labels identify patients), raised before any training -- never a crash
from deep inside numpy, pandas or torch, and never a silent per-row fit.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

from skdp.density import DPFlowDensity

from ._configs import discover_estimators
from ._group_cases import CASES, K
from .test_group_audit import CASES as BASE_CASES
from .test_group_audit import _base

SECRET = "patient-SECRET-"


def _flow_density(k):
    return DPFlowDensity(
        epsilon=1.0, bounds=(-4.0, 4.0), n_layers=1, hidden_size=4, n_iter=2,
        max_rows_per_group=k, device="cpu", dtype="float64",
    )  # fmt: skip


def _setup(name):
    """``(estimator with max_rows_per_group=K, X, y)`` for ``name``."""
    if name in CASES:
        X, y, _, _, _ = CASES[name]["data"]()
        return CASES[name]["make"](K), X, y
    if name == "DPFlowDensity":
        return _flow_density(K), np.random.default_rng(0).normal(size=(40, 2)), None
    make, label, _ = BASE_CASES[name]
    X, y, _ = _base(label=bool(label))
    return make(), X, None if label is None else y


def _labels(n):
    return np.array([f"{SECRET}{i}" for i in range(n)], dtype=object)


def _with_missing(n):
    g = _labels(n)
    g[n // 2] = None
    return g


def _unhashable(n):
    g = np.empty(n, dtype=object)
    for i in range(n):
        g[i] = {SECRET: i}
    return g


#: bad groups (built from the row count): (id, groups(n), max_rows_per_group)
BAD = [
    ("too-long", lambda n: _labels(n + 1), K),
    ("too-short", lambda n: _labels(n - 1), K),
    ("nan-label", lambda n: np.r_[np.arange(n - 1), np.nan], K),
    ("none-label", _with_missing, K),
    ("unhashable", _unhashable, K),
    ("2-d", lambda n: np.arange(2 * n).reshape(n, 2), K),
    ("scalar", lambda n: 3, K),
    ("no-bound", _labels, None),
    ("bound-zero", _labels, 0),
    ("bound-negative", _labels, -2),
    ("bound-fraction", _labels, 1.5),
    ("bound-string", _labels, "3"),
    ("bound-bool", _labels, True),
]

NAMES = sorted(
    name for name, cls in discover_estimators() if "groups" in inspect.signature(cls.fit).parameters
)


@pytest.mark.parametrize("bad", BAD, ids=[b[0] for b in BAD])
@pytest.mark.parametrize("name", NAMES)
def test_bad_groups_raise_a_clear_error_naming_the_parameter(name, bad):
    _, make_groups, k = bad
    est, X, y = _setup(name)
    est.set_params(max_rows_per_group=k)
    n = len(X)
    args = (X,) if y is None else (X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises((ValueError, TypeError)) as info:
            est.fit(*args, groups=make_groups(n))
    msg = str(info.value)
    assert ("max_rows_per_group" if k != K else "groups") in msg, msg
    assert SECRET not in msg and "SECRET" not in msg, msg
    assert not hasattr(est, "epsilon_spent_")
