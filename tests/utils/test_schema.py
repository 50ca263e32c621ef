"""Tests of the shared tabular schema and encoder (skdp.utils.schema)."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skdp.exceptions import PrivacyLeakWarning
from skdp.utils.schema import (
    ColumnSpec,
    TabularEncoder,
    TabularSchema,
)

BOUNDS = {"age": (18, 90), "bmi": (15.0, 50.0)}
# "grp" has a pandas category dtype, whose categories are not trusted: declared here too
CATS = {"sex": ["F", "M"], "grp": ["a", "b", "c"]}


def _frame(n=6, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 91, size=n),
            "sex": rng.choice(["F", "M"], size=n),
            "bmi": rng.uniform(15, 50, size=n),
            "smoker": rng.integers(0, 2, size=n).astype(bool),
            "grp": pd.Categorical(rng.choice(["a", "b"], size=n), categories=["a", "b", "c"]),
        }
    )


# "age" is declared integer: an int64 dtype alone would give "continuous" (issue 30)
TYPES = {"age": "integer"}


def _schema(df=None):
    return TabularSchema.from_data(
        _frame() if df is None else df, bounds=BOUNDS, categories=CATS, column_types=TYPES
    )


def test_kinds_come_from_dtype_families_and_declared_metadata():
    undeclared = TabularSchema.from_data(_frame(), bounds=BOUNDS, categories=CATS)
    # an integer dtype is not a declaration (pandas infers it from the values)
    assert (undeclared["age"].kind, undeclared["age"].dtype) == ("continuous", "float64")
    s = _schema()
    assert undeclared == TabularSchema.from_data(
        _frame().astype({"age": float}), bounds=BOUNDS, categories=CATS
    )
    assert [(c.name, c.kind) for c in s] == [
        ("age", "integer"),
        ("sex", "categorical"),
        ("bmi", "continuous"),
        ("smoker", "binary"),
        ("grp", "categorical"),
    ]
    assert s["age"].bounds == (18.0, 90.0)
    assert s["sex"].categories == ("F", "M")
    # the declared categories, including the level "c" that no row has
    assert s["grp"].categories == ("a", "b", "c")
    assert s["smoker"].categories == (False, True)
    assert s.numeric_names == ["age", "bmi"]
    assert s.categorical_names == ["sex", "grp"]


def test_column_types_override_and_list_forms():
    df = pd.DataFrame({"x": [0, 1, 1], "y": [1, 2, 3], "z": [0.5, 0.1, 0.2]})
    s = TabularSchema.from_data(
        df,
        column_types={"x": "binary", "y": "categorical"},
        categories={"y": [1, 2, 3]},
        bounds=(0.0, 1.0),
    )
    assert [c.kind for c in s] == ["binary", "categorical", "continuous"]
    assert s["z"].bounds == (0.0, 1.0)
    s2 = TabularSchema.from_data(
        df,
        column_types=["binary", "categorical", "continuous"],
        categories=[[1, 2, 3]],
        bounds={"z": (0, 1)},
    )
    assert s2 == s


def test_missing_categories_raise_naming_the_column():
    df = pd.DataFrame({"city": ["Oslo", "Rome"], "v": [1.0, 2.0]})
    with pytest.raises(ValueError, match="'city'") as exc:
        TabularSchema.from_data(df, bounds=(0, 3))
    assert "Oslo" not in str(exc.value)


def test_categories_data_opt_in_warns():
    df = pd.DataFrame({"city": ["Rome", "Oslo", "Rome"], "v": [1.0, 2.0, 3.0]})
    with pytest.warns(PrivacyLeakWarning):
        s = TabularSchema.from_data(df, bounds=(0, 3), categories="data")
    assert s["city"].categories == ("Oslo", "Rome")


def test_bounds_data_opt_in_warns_and_none_leaves_missing():
    df = _frame()
    with pytest.warns(PrivacyLeakWarning):
        s = TabularSchema.from_data(df, bounds="data", categories=CATS)
    assert s["bmi"].bounds == (df["bmi"].min(), df["bmi"].max())
    s = TabularSchema.from_data(df, categories=CATS)
    assert s.missing_bounds() == ["age", "bmi"]
    with pytest.raises(ValueError, match="no bounds"):
        TabularEncoder(s)
    # a partial dict leaves the rest missing; declared metadata never warns
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = TabularSchema.from_data(df, bounds={"age": (0, 100)}, categories=CATS)
    assert s.missing_bounds() == ["bmi"]


def test_to_dict_is_json_and_round_trips():
    s = _schema()
    d = json.loads(json.dumps(s.to_dict()))
    assert TabularSchema.from_dict(d) == s
    arr = np.zeros((3, 2))
    sa = TabularSchema.from_data(arr, bounds=([0, -1], [1, 1]))
    assert TabularSchema.from_dict(json.loads(json.dumps(sa.to_dict()))) == sa
    assert sa[1].bounds == (-1.0, 1.0)


@pytest.mark.parametrize("categorical", ["onehot", "ordinal"])
@pytest.mark.parametrize("numeric_range", [(0, 1), (-1, 1)])
def test_round_trip_dataframe_same_columns_order_dtypes(categorical, numeric_range):
    df = _frame(50)
    enc = TabularEncoder(_schema(df), categorical=categorical, numeric_range=numeric_range)
    Z = enc.transform(df)
    assert Z.shape == (50, enc.n_encoded_features_)
    assert Z.dtype == np.float64
    back = enc.inverse_transform(Z)
    assert list(back.columns) == list(df.columns)
    assert list(back.dtypes) == list(df.dtypes)
    for col in ["age", "sex", "smoker", "grp"]:
        assert back[col].tolist() == df[col].tolist()
    np.testing.assert_allclose(back["bmi"], df["bmi"], rtol=0, atol=1e-12)
    expected_width = 1 + (2 if categorical == "onehot" else 1) + 1 + 1
    expected_width += 3 if categorical == "onehot" else 1
    assert enc.n_encoded_features_ == expected_width


def test_numeric_scaling_and_slices():
    df = _frame(20)
    enc = TabularEncoder(_schema(df), numeric_range=(-1, 1))
    Z = enc.transform(df)
    sl = enc.slices_["bmi"]
    np.testing.assert_allclose(Z[:, sl.start], 2 * (df["bmi"] - 15) / 35 - 1)
    assert np.all(np.abs(Z) <= 1 + 1e-12)
    onehot = Z[:, enc.slices_["grp"]]
    assert np.all((onehot == 1).sum(axis=1) == 1) and set(np.unique(onehot)) <= {-1.0, 1.0}


def test_log_jacobian_matches_finite_difference():
    df = _frame(5)
    enc = TabularEncoder(_schema(df), numeric_range=(-1, 1), integer_margin=0.5)
    expected = math.log(2 / 35) + math.log(2 / 73)  # bmi width 35; age 18-0.5..90+0.5
    assert enc.log_jacobian_ == pytest.approx(expected)
    eps = 1e-3
    df2 = df.copy()
    df2["bmi"] = df2["bmi"] + eps
    dz = enc.transform(df2)[:, enc.slices_["bmi"]] - enc.transform(df)[:, enc.slices_["bmi"]]
    np.testing.assert_allclose(dz / eps, 2 / 35, rtol=1e-6)


def test_errors_name_the_column_never_the_value():
    df = _frame(5)
    enc = TabularEncoder(_schema(df), clip=False)
    bad = df.copy()
    bad.loc[2, "bmi"] = 77.123
    with pytest.raises(ValueError, match="'bmi'") as exc:
        enc.transform(bad)
    assert "77.123" not in str(exc.value)
    bad = df.copy()
    bad.loc[1, "bmi"] = np.nan
    with pytest.raises(ValueError, match="'bmi'.*NaN"):
        enc.transform(bad)
    bad = df.astype({"sex": object})
    bad.loc[0, "sex"] = "Zorblax"
    with pytest.raises(ValueError, match="'sex'") as exc:
        enc.transform(bad)
    assert "Zorblax" not in str(exc.value)
    bad = df.astype({"sex": object})
    bad.loc[0, "sex"] = None
    with pytest.raises(ValueError, match="'sex'.*missing"):
        enc.transform(bad)
    with pytest.raises(ValueError, match="columns"):
        enc.transform(df.drop(columns="bmi"))


def test_clip_true_clips_silently():
    df = _frame(5)
    df.loc[0, "bmi"] = 1000.0
    df.loc[1, "age"] = -5
    enc = TabularEncoder(_schema(df))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Z = enc.transform(df)
    assert Z[0, enc.slices_["bmi"].start] == 1.0
    assert Z[1, enc.slices_["age"].start] == 0.0


def test_other_level_absorbs_unknown_values():
    df = pd.DataFrame({"c": ["a", "b", "zzz"]})
    s = TabularSchema.from_data(
        df.iloc[:2], categories={"c": ["a", "b", "other"]}, other={"c": "other"}
    )
    out = TabularEncoder(s, categorical="ordinal").transform(df)
    assert out[:, 0].tolist() == [0, 1, 2]


def test_column_order_of_dataframe_is_normalised():
    df = _frame(8)
    enc = TabularEncoder(_schema(df))
    np.testing.assert_array_equal(enc.transform(df[df.columns[::-1]]), enc.transform(df))


def test_numpy_arrays():
    X = np.array([[0.5, 2.0, 1.0], [1.0, 4.0, 0.0]])
    s = TabularSchema.from_data(
        X, bounds=(0.0, 4.0), column_types=["continuous", "integer", "binary"]
    )
    assert s.names == [0, 1, 2] and s.input_type == "array"
    enc = TabularEncoder(s)
    back = enc.inverse_transform(enc.transform(X))
    assert isinstance(back, np.ndarray) and back.dtype == X.dtype
    np.testing.assert_allclose(back, X)
    with pytest.raises(ValueError, match="columns"):
        enc.transform(X[:, :2])
    with pytest.raises(ValueError, match="column 1"):
        enc.transform(np.array([[0.5, np.inf, 1.0]]))


def test_column_spec_validation():
    with pytest.raises(ValueError, match="kind"):
        ColumnSpec("a", "text")
    with pytest.raises(ValueError, match="low < high"):
        ColumnSpec("a", "continuous", bounds=(1, 1))
    with pytest.raises(ValueError, match="unique"):
        ColumnSpec("a", "categorical", categories=["x", "x"])
    assert ColumnSpec("b", "binary").categories == (0, 1)


# ----------------------------------------------------------------- properties
_frames = st.integers(min_value=1, max_value=30).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(18, 90), min_size=n, max_size=n),
        st.lists(st.sampled_from(["F", "M"]), min_size=n, max_size=n),
        st.lists(st.floats(15, 50), min_size=n, max_size=n),
        st.lists(st.booleans(), min_size=n, max_size=n),
        st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n),
    )
)


def _df_from(t):
    age, sex, bmi, smk, grp = t
    return pd.DataFrame(
        {
            "age": np.array(age, dtype=np.int64),
            "sex": sex,
            "bmi": np.array(bmi, dtype=float),
            "smoker": np.array(smk, dtype=bool),
            "grp": pd.Categorical(grp, categories=["a", "b", "c"]),
        }
    )


@given(_frames, st.sampled_from(["onehot", "ordinal"]), st.data())
def test_property_per_record_and_round_trip(t, categorical, data):
    """D1 (per record) and D2 (round trip) of the flow spec, for both encodings."""
    df = _df_from(t)
    enc = TabularEncoder(_schema(df), categorical=categorical, numeric_range=(-1, 1))
    Z = enc.transform(df)
    back = enc.inverse_transform(Z)
    assert list(back.dtypes) == list(df.dtypes)
    for col in ["age", "sex", "smoker", "grp"]:
        assert back[col].tolist() == df[col].tolist()
    np.testing.assert_allclose(back["bmi"], df["bmi"], atol=1e-9)
    # change one row: every other encoded row is unchanged
    j = data.draw(st.integers(0, len(df) - 1))
    df2 = df.copy()
    df2.loc[j, "bmi"] = 33.0
    df2.loc[j, "grp"] = "c"
    Z2 = enc.transform(df2)
    others = np.arange(len(df)) != j
    np.testing.assert_array_equal(Z2[others], Z[others])


@given(
    st.integers(1, 20).flatmap(
        lambda n: st.lists(
            st.lists(st.floats(-5, 5, allow_nan=False), min_size=8, max_size=8),
            min_size=n,
            max_size=n,
        )
    )
)
def test_property_inverse_of_any_matrix_is_valid(rows):
    """D3: decoding any matrix gives in-bounds numerics, integral integers, declared levels."""
    enc = TabularEncoder(_schema(), numeric_range=(-1, 1))
    assert enc.n_encoded_features_ == 8
    out = enc.inverse_transform(np.array(rows))
    assert out["age"].between(18, 90).all() and out["age"].dtype == np.int64
    assert out["bmi"].between(15, 50).all()
    assert set(out["sex"]) <= {"F", "M"}
    assert set(out["grp"]) <= {"a", "b", "c"}
    assert out["smoker"].dtype == bool


def test_assemble_never_casts_into_a_dtype_that_cannot_hold_the_values():
    """Fractions are not truncated and integers do not wrap around (int8 300 -> 44)."""
    import pandas as pd

    from skdp.utils.schema import ColumnSpec, TabularSchema, assemble

    specs = [
        ColumnSpec("a", "integer", bounds=(0, 300), dtype="int8"),
        ColumnSpec("b", "continuous", bounds=(2.5, 7.5), dtype="int64"),
        ColumnSpec("c", "integer", bounds=(0, 9), dtype="uint8"),
        ColumnSpec("d", "continuous", bounds=(0, 9), dtype="Int64"),
    ]
    schema = TabularSchema(tuple(specs), input_type="dataframe")
    out = assemble(
        schema,
        [np.array([300.0, 1.0]), np.array([2.7, 7.5]), np.array([3.0, 9.0]), np.array([0.5, 2.0])],
    )
    assert isinstance(out, pd.DataFrame)
    assert out["a"].tolist() == [300, 1] and out["a"].dtype == np.int64
    assert out["b"].tolist() == [2.7, 7.5] and out["b"].dtype == np.float64
    assert out["c"].tolist() == [3, 9] and out["c"].dtype == np.uint8  # holds: kept
    assert out["d"].tolist() == [0.5, 2.0] and out["d"].dtype == np.float64
