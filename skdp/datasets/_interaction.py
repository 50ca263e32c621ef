"""A mixed table whose outcome hides in a higher-order interaction (numpy only; layer 0).

The outcome depends on the parity of the signs of ``order - 1`` columns, so every marginal
of fewer than ``order`` columns is independent of that part of it: a synthesizer that keeps
only 2-way marginals cannot carry it. A benchmark for choosing between marginal-based
and deep synthesizers (:doc:`/benchmarks_synthesis`).
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from skdp.utils._random import make_rng
from skdp.utils.validation import check_n_samples

__all__ = ["interaction_table_schema", "make_interaction_table"]

_X3_LEVELS = ("a", "b", "c", "d")  # x3's sign is + on the first two
_GROUP_LEVELS = ("g0", "g1", "g2")
_GROUP_P = (0.5, 0.3, 0.2)
_ORDINARY = ("age", "bmi", "smoker", "group")  # then z5, z6, ...


def _check(n_features, order):
    if order not in (3, 4) or isinstance(order, bool):
        raise ValueError(f"order must be 3 or 4, got {order!r}")
    if (
        isinstance(n_features, bool)
        or not isinstance(n_features, Integral)
        or not order - 1 <= n_features <= 50
    ):
        raise ValueError(f"n_features must be an integer in [order - 1, 50], got {n_features!r}")


def _columns(n_features, order):
    inputs = ["x1", "x2", "x3"][: order - 1]
    extra = int(n_features) - len(inputs)
    ordinary = list(_ORDINARY[:extra]) + [f"z{k}" for k in range(5, extra + 1)]
    return inputs, ordinary


def interaction_table_schema(n_features=6, *, order=3):
    """Public description of :func:`make_interaction_table`'s columns.

    Parameters
    ----------
    n_features : int, default=6
    order : {3, 4}, default=3

    Returns
    -------
    schema : dict
        ``"columns"`` (the feature names in order), ``"bounds"`` ({column: (lo, hi)},
        numeric columns), ``"categories"`` ({column: levels}, categorical columns),
        ``"column_types"`` ({column: "integer"}, whole-number columns) and
        ``"interaction"`` (the ``order`` columns whose joint marginal carries the
        interaction, the outcome ``"label"`` last). ``smoker`` and ``label`` are bool
        columns (binary by their dtype). Nothing here is read from data.

    Examples
    --------
    >>> from skdp.datasets import interaction_table_schema
    >>> s = interaction_table_schema(5, order=4)
    >>> s["columns"], s["interaction"]
    (['x1', 'x2', 'x3', 'age', 'bmi'], ('x1', 'x2', 'x3', 'label'))
    """
    _check(n_features, order)
    inputs, ordinary = _columns(n_features, order)
    cols = inputs + ordinary
    bounds = {"x1": (-1.0, 1.0), "x2": (-5, 4), "age": (20, 80), "bmi": (12.0, 45.0)}
    bounds.update({c: (-5.0, 5.0) for c in ordinary if c.startswith("z")})
    cats = {"x3": list(_X3_LEVELS), "group": list(_GROUP_LEVELS)}
    return {
        "columns": cols,
        "bounds": {c: b for c, b in bounds.items() if c in cols},
        "categories": {c: v for c, v in cats.items() if c in cols},
        "column_types": {c: "integer" for c in ("x2", "age") if c in cols},
        "interaction": (*inputs, "label"),
    }


def _ordinary_columns(rng, n, names):
    """The ordinary columns (pairwise structure only): age -> bmi -> z5, z6, ...;
    group -> smoker."""
    age = rng.integers(20, 81, n)
    bmi = np.clip(22.0 + 0.1 * (age - 50) + rng.normal(0.0, 3.0, n), 12.0, 45.0)
    group = rng.choice(len(_GROUP_LEVELS), n, p=_GROUP_P)
    smoker = rng.random(n) < 0.2 + 0.2 * (group == 2)
    out = {"age": age, "bmi": bmi, "smoker": smoker, "group": group}
    for c in names[len(_ORDINARY) :]:
        out[c] = np.clip(0.3 * (bmi - 22.0) + rng.normal(0.0, 1.0, n), -5.0, 5.0)
    return {c: out[c] for c in names}


def make_interaction_table(
    n_samples=5000, *, n_features=6, order=3, strength=3.0, random_state=None, as_frame=True
):
    """Simulate a mixed table whose label depends on an ``order``-way interaction.

    The interaction inputs are ``x1 ~ U(-1, 1)`` (continuous), ``x2`` uniform on the
    integers ``-5..4`` and, for ``order=4``, ``x3`` uniform on the levels ``a, b, c, d``;
    their signs are ``s1 = +1 if x1 >= 0``, ``s2 = +1 if x2 >= 0``, ``s3 = +1 if x3 in
    {a, b}`` (else -1), each +1 with probability 1/2, and ``s = s1 s2 (s3)``. The
    remaining ``n_features - order + 1`` columns have ordinary pairwise structure:
    ``age`` (integer, U{20..80}), ``bmi = 22 + 0.1 (age - 50) + N(0, 3^2)`` clipped to
    [12, 45], ``smoker`` (bool, probability 0.2, 0.4 in ``group`` ``g2``), ``group``
    (``g0, g1, g2`` with probabilities 0.5, 0.3, 0.2), then ``z5, z6, ... =
    0.3 (bmi - 22) + N(0, 1)`` clipped to [-5, 5]. The label is Bernoulli with

    ``logit = strength * s + 0.06 (age - 50) + (smoker - 0.3)``

    (the terms of missing columns dropped). ``s`` is independent of every proper subset
    of the inputs and of the ordinary columns, so every marginal of fewer than ``order``
    columns among ``x1, x2, (x3), label`` is exactly independent; the marginal of all
    ``order`` of them is strongly dependent (``order=3``: a 3-way marginal carries it;
    ``order=4``: only a 4-way marginal does, which no 2- or 3-way marginal synthesizer
    measures).

    Parameters
    ----------
    n_samples : int, default=5000
    n_features : int, default=6
        Number of feature columns, the ``order - 1`` inputs included (at most 50).
    order : {3, 4}, default=3
        Size of the smallest marginal that carries the interaction, the label included
        (``order=4`` is a three-way interaction of features).
    strength : float, default=3.0
        Coefficient of ``s`` in the logit (0: no interaction).
    random_state : None, int, SeedSequence or Generator
        ``None`` draws fresh OS entropy.
    as_frame : bool, default=True
        ``True``: ``X`` a DataFrame (``x3`` and ``group`` strings, ``smoker`` bool, ``x2``
        and ``age`` int64) and ``y`` a bool Series named ``"label"``. ``False``: float
        arrays, categorical columns as level codes and bools as 0/1.

    Returns
    -------
    X : DataFrame or ndarray of shape (n_samples, n_features)
        Columns ``interaction_table_schema(n_features, order=order)["columns"]``.
    y : Series or ndarray of shape (n_samples,)
        The label.

    Notes
    -----
    :func:`interaction_table_schema` returns the columns' public bounds, categories and
    kinds and the interacting columns. With ``strength=3`` and the default columns the
    Bayes AUC of the label is about 0.96 (gradient boosting on 40,000 rows: 0.95-0.96);
    the ordinary columns alone reach about 0.57, and so does any model that sees only the
    marginals of fewer than ``order`` of the interacting columns.

    Examples
    --------
    >>> from skdp.datasets import make_interaction_table
    >>> X, y = make_interaction_table(1000, order=4, random_state=0)
    >>> list(X.columns), y.name, X.shape
    (['x1', 'x2', 'x3', 'age', 'bmi', 'smoker'], 'label', (1000, 6))
    """
    _check(n_features, order)
    check_n_samples(n_samples, int(n_features) + 1)
    if isinstance(strength, bool) or not isinstance(strength, Real) or not math.isfinite(strength):
        raise ValueError("strength must be a finite number")
    rng = make_rng(random_state)
    n = int(n_samples)
    inputs, ordinary = _columns(n_features, order)
    cols = {"x1": rng.uniform(-1.0, 1.0, n), "x2": rng.integers(-5, 5, n)}
    s = np.where(cols["x1"] >= 0, 1.0, -1.0) * np.where(cols["x2"] >= 0, 1.0, -1.0)
    if order == 4:
        cols["x3"] = rng.integers(0, len(_X3_LEVELS), n)
        s *= np.where(cols["x3"] < 2, 1.0, -1.0)
    cols.update(_ordinary_columns(rng, n, ordinary))
    logit = float(strength) * s
    if "age" in cols:
        logit += 0.06 * (cols["age"] - 50)
    if "smoker" in cols:
        logit += 1.0 * (cols["smoker"] - 0.3)
    y = rng.random(n) < 1.0 / (1.0 + np.exp(-logit))
    names = inputs + ordinary
    if not as_frame:
        return np.column_stack([cols[c].astype(float) for c in names]), y.astype(float)
    import pandas as pd

    levels = {"x3": np.array(_X3_LEVELS), "group": np.array(_GROUP_LEVELS)}
    frame = pd.DataFrame({c: levels[c][cols[c]] if c in levels else cols[c] for c in names})
    return frame, pd.Series(y, name="label")
