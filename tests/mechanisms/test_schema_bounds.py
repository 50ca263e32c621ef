import math

import numpy as np
import pandas as pd
import pytest

from skdp.mechanisms import resolve_schema_bounds
from skdp.utils.schema import TabularSchema


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"a": rng.uniform(0, 10, 5000), "b": rng.normal(50, 5, 5000)})


def test_declared_bounds_cost_nothing_and_are_kept(frame):
    schema = TabularSchema.from_data(frame, bounds={"a": (0, 10), "b": (0, 100)})
    out, used = resolve_schema_bounds(schema, frame, epsilon=1.0, rng=np.random.default_rng(1))
    assert used == 0.0
    assert out.to_dict() == schema.to_dict()


def test_missing_bounds_spend_the_fraction_and_fill(frame):
    schema = TabularSchema.from_data(frame, bounds={"a": (0, 10)})
    assert schema.missing_bounds()
    out, used = resolve_schema_bounds(
        schema, frame, epsilon=2.0, rng=np.random.default_rng(1), fraction=0.1
    )
    assert used == pytest.approx(0.2)
    assert not out.missing_bounds()
    spec = {c["name"]: c for c in out.to_dict()["columns"]}
    assert spec["a"]["bounds"] == [0.0, 10.0] or tuple(spec["a"]["bounds"]) == (0.0, 10.0)
    lo, hi = spec["b"]["bounds"]
    assert lo < 50 < hi


def test_infinite_epsilon_spends_nothing(frame):
    schema = TabularSchema.from_data(frame, bounds=None)
    out, used = resolve_schema_bounds(schema, frame, epsilon=math.inf, rng=np.random.default_rng(1))
    assert used == 0.0
    assert not out.missing_bounds()


def test_unreliable_private_bounds_warn_from_public_quantities_only():
    from skdp.exceptions import BoundsEstimateWarning
    from skdp.mechanisms import resolve_bounds

    small = np.random.default_rng(0).uniform(0, 1, size=(300, 10))
    # None refuses the unreliable estimate; "private" opts in to it, with the warning
    with pytest.raises(ValueError, match="Declare public bounds"):
        resolve_bounds(None, small, epsilon=1.0, rng=np.random.default_rng(1))
    with pytest.warns(BoundsEstimateWarning, match="Declare public bounds"):
        resolve_bounds("private", small, epsilon=1.0, rng=np.random.default_rng(1))
    large = np.random.default_rng(0).uniform(0, 1, size=(100_000, 2))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", BoundsEstimateWarning)
        resolve_bounds(None, large, epsilon=1.0, rng=np.random.default_rng(1))
    # declared bounds never warn
    with warnings.catch_warnings():
        warnings.simplefilter("error", BoundsEstimateWarning)
        resolve_bounds((0, 1), small, epsilon=1.0, rng=np.random.default_rng(1))


def test_only_the_missing_columns_are_read_and_filled(frame, monkeypatch):
    from skdp.mechanisms import _bounds

    schema = TabularSchema.from_data(frame, bounds={"a": (0, 10)})
    seen = {}

    def resolve(bounds, V, **kw):
        seen["shape"], seen["columns"], seen["kinds"] = V.shape, kw["columns"], kw["kinds"]
        return np.array([10.0]), np.array([60.0]), 0.25

    monkeypatch.setattr(_bounds, "resolve_bounds", resolve)
    out, used = resolve_schema_bounds(schema, frame, epsilon=2.5, rng=np.random.default_rng(1))
    assert seen == {"shape": (len(frame), 1), "columns": ["b"], "kinds": ["continuous"]}
    assert out["b"].bounds == (10.0, 60.0) and out["a"].bounds == (0.0, 10.0)
    assert used == 0.25


def test_the_fill_is_resolve_bounds_on_the_missing_columns(frame):
    from skdp.mechanisms import resolve_bounds

    schema = TabularSchema.from_data(frame, bounds={"a": (0, 10)})
    out, used = resolve_schema_bounds(schema, frame, epsilon=2.0, rng=np.random.default_rng(7))
    lo, hi, spent = resolve_bounds(
        None, frame[["b"]].to_numpy(), epsilon=2.0, rng=np.random.default_rng(7)
    )
    assert out["b"].bounds == (float(lo[0]), float(hi[0])) and used == spent
