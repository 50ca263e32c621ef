"""make_interaction_table: a label that only the ``order``-way marginal carries."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from skdp.datasets import interaction_table_schema, make_interaction_table

N = 20_000


def _signs(X, order):
    """The interaction inputs as 0/1 sign indicators (x1 >= 0, x2 >= 0, x3 in {a, b})."""
    out = [X["x1"].to_numpy() >= 0, X["x2"].to_numpy() >= 0]
    if order == 4:
        out.append(X["x3"].isin(["a", "b"]).to_numpy())
    return [v.astype(int) for v in out]


def _dependence(cols):
    """TV between the joint law of the 0/1 columns and the product of its margins."""
    k = len(cols)
    codes = np.ravel_multi_index(tuple(cols), (2,) * k)
    joint = np.bincount(codes, minlength=2**k).reshape((2,) * k) / len(codes)
    prod = np.ones((2,) * k)
    for j, c in enumerate(cols):
        m = np.bincount(c, minlength=2) / len(c)
        prod = prod * m.reshape([2 if i == j else 1 for i in range(k)])
    return 0.5 * float(np.abs(joint - prod).sum())


@pytest.mark.parametrize("order", [3, 4])
def test_shape_schema_and_reproducibility(order):
    X, y = make_interaction_table(500, n_features=8, order=order, random_state=3)
    schema = interaction_table_schema(8, order=order)
    assert list(X.columns) == schema["columns"] and X.shape == (500, 8)
    assert y.name == "label" and y.dtype == bool and len(y) == 500
    assert schema["interaction"][-1] == "label" and len(schema["interaction"]) == order
    for c, (lo, hi) in schema["bounds"].items():
        assert X[c].between(lo, hi).all(), c
    for c, levels in schema["categories"].items():
        assert set(X[c]) <= set(levels), c
    for c in schema["column_types"]:
        assert pd.api.types.is_integer_dtype(X[c].dtype), c
    X2, y2 = make_interaction_table(500, n_features=8, order=order, random_state=3)
    pd.testing.assert_frame_equal(X, X2)
    pd.testing.assert_series_equal(y, y2)
    assert not X.equals(make_interaction_table(500, n_features=8, order=order, random_state=4)[0])
    A, b = make_interaction_table(500, n_features=8, order=order, random_state=3, as_frame=False)
    assert A.shape == (500, 8) and A.dtype == float
    np.testing.assert_array_equal(b, y.to_numpy().astype(float))
    np.testing.assert_array_equal(A[:, 0], X["x1"].to_numpy())
    assert make_interaction_table(0, order=order, random_state=0)[0].shape == (0, 6)


@pytest.mark.parametrize("order", [3, 4])
def test_smaller_marginals_independent_full_marginal_dependent(order):
    X, y = make_interaction_table(N, order=order, random_state=0)
    cols = [*_signs(X, order), y.to_numpy().astype(int)]
    # every marginal of fewer than ``order`` interacting columns: independent (sampling
    # noise alone, about 0.005 at this n)
    for k in range(2, order):
        for sub in combinations(cols, k):
            assert _dependence(list(sub)) < 0.02
    # the full marginal: the label follows the parity of the signs
    parity = np.sum(cols[:-1], axis=0) % 2
    agree = np.mean(parity == cols[-1])
    assert max(agree, 1 - agree) > 0.85
    # and the raw columns carry no linear signal either
    for c in ["x1", "x2"]:
        assert abs(np.corrcoef(X[c].to_numpy(), y.to_numpy())[0, 1]) < 0.03


def test_ordinary_columns_have_pairwise_structure_and_strength_zero_removes_interaction():
    X, y = make_interaction_table(N, order=3, random_state=1)
    assert np.corrcoef(X["age"], X["bmi"])[0, 1] > 0.2
    assert np.corrcoef(X["age"], y)[0, 1] > 0.05  # a main effect a 2-way marginal carries
    X0, y0 = make_interaction_table(N, order=3, strength=0.0, random_state=1)
    parity = (np.sum(_signs(X0, 3), axis=0) % 2) == y0.to_numpy()
    assert abs(parity.mean() - 0.5) < 0.03


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"order": 2}, "order"),
        ({"order": 5}, "order"),
        ({"order": True}, "order"),
        ({"n_features": 1}, "n_features"),
        ({"order": 4, "n_features": 2}, "n_features"),
        ({"n_features": 6.0}, "n_features"),
        ({"n_samples": -1}, "n_samples"),
        ({"n_samples": 10.5}, "n_samples"),
        ({"strength": float("nan")}, "strength"),
        ({"strength": "3"}, "strength"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_interaction_table(**{"n_samples": 10, **kwargs})


def test_minimal_table_has_inputs_only():
    X, _ = make_interaction_table(50, n_features=2, order=3, random_state=0)
    assert list(X.columns) == ["x1", "x2"]
    assert interaction_table_schema(2)["column_types"] == {"x2": "integer"}
