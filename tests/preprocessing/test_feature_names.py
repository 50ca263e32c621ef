"""Issue 31 item 8: feature names through skdp's transformers, and per-column constants.

A DataFrame in gives a DataFrame out (named by ``get_feature_names_out``, same index), so
``DPSimpleImputer`` -> ``PublicBoundsScaler(bounds={...})`` works without
``set_output``; an array in still gives an array out, as in scikit-learn.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline

from skdp.linear_model import DPLinearRegression
from skdp.pipeline import DPPipeline
from skdp.preprocessing import (
    DPSimpleImputer,
    DPStandardScaler,
    PublicBoundsScaler,
    PublicOneHotEncoder,
)

BOUNDS = {"age": (18, 100), "sbp": (80, 220)}
ARRAY_BOUNDS = ([18, 80], [100, 220])  # the same, per column in column order


def _frame(n=400, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.uniform(20, 90, n), "sbp": rng.normal(130, 15, n)})
    df.loc[rng.random(n) < 0.2, "sbp"] = np.nan
    df.index = np.arange(100, 100 + n)  # not a RangeIndex: the index is kept
    return df


@pytest.mark.parametrize("pipeline", [DPPipeline, Pipeline])
def test_imputer_then_named_scaler_without_set_output(pipeline):
    df = _frame()
    y = (df["age"].to_numpy() - 18) / 82
    pipe = pipeline(
        [
            ("imp", DPSimpleImputer(strategy="constant", fill_value={"age": 50, "sbp": 120})),
            ("scale", PublicBoundsScaler(bounds=BOUNDS, feature_range=(-1, 1))),
            ("reg", DPLinearRegression(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(0, 1))),
        ]
    ).fit(df, y)
    Z = pipe[:-1].transform(df)
    assert isinstance(Z, pd.DataFrame)
    assert list(Z.columns) == ["age", "sbp"] and Z.index.equals(df.index)
    assert list(pipe[-1].feature_names_in_) == ["age", "sbp"]
    np.testing.assert_allclose(Z["sbp"][df["sbp"].isna()], (120 - 150) / 70)
    assert pipe.predict(df.head(5)).shape == (5,)
    if pipeline is DPPipeline:
        assert pipe.epsilon_spent_ == 1.0  # 0 + 0 + 1


@pytest.mark.parametrize(
    "make",
    [
        lambda: DPSimpleImputer(strategy="constant", add_indicator=True),
        lambda: DPSimpleImputer(epsilon=1.0, bounds=ARRAY_BOUNDS, random_state=0),
        lambda: PublicBoundsScaler(bounds=ARRAY_BOUNDS),
        lambda: DPStandardScaler(epsilon=1.0, bounds=ARRAY_BOUNDS, random_state=0),
    ],
)
def test_dataframe_in_dataframe_out_array_in_array_out(make):
    df = _frame()
    if not isinstance(make(), DPSimpleImputer):
        df = df.fillna(130.0)
    est = make().fit(df)
    out = est.transform(df)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(est.get_feature_names_out())
    assert out.index.equals(df.index)
    arr = make().fit(df.to_numpy()).transform(df.to_numpy())
    assert isinstance(arr, np.ndarray)
    np.testing.assert_allclose(out.to_numpy(dtype=float), arr)
    # set_output still decides when asked
    assert isinstance(make().set_output(transform="default").fit(df).transform(df), pd.DataFrame)
    pandas_out = make().set_output(transform="pandas").fit(df.to_numpy()).transform(df.to_numpy())
    assert isinstance(pandas_out, pd.DataFrame)


def test_one_hot_encoder_and_column_transformer():
    df = pd.DataFrame({"sex": ["F", "M", "F"], "age": [30.0, 60.0, np.nan]})
    enc = PublicOneHotEncoder(categories={"sex": ["F", "M"]}).fit(df[["sex"]])
    assert list(enc.transform(df[["sex"]]).columns) == ["sex_F", "sex_M"]
    ct = ColumnTransformer(
        [
            ("cat", PublicOneHotEncoder(categories={"sex": ["F", "M"]}), ["sex"]),
            ("num", DPSimpleImputer(strategy="constant", fill_value=[45.0]), ["age"]),
        ]
    )
    Z = ct.fit_transform(df)
    np.testing.assert_allclose(np.asarray(Z, dtype=float)[:, 2], [30.0, 60.0, 45.0])
    Zp = ct.set_output(transform="pandas").fit_transform(df)
    assert list(Zp.columns) == ["cat__sex_F", "cat__sex_M", "num__age"]


def test_dict_bounds_without_names_say_what_to_do():
    X = _frame().fillna(130.0).to_numpy()
    with pytest.raises(ValueError, match="no column names") as exc:
        PublicBoundsScaler(bounds=BOUNDS).fit(X)
    assert "DataFrame" in str(exc.value) and "set_output" in str(exc.value)


def test_constant_fill_value_per_column():
    df = pd.DataFrame(
        {"sbp": [np.nan, 120.0, 140.0], "smoker": [None, "no", "yes"], "bmi": [25.0, np.nan, 30]}
    )
    fills = {"sbp": 130, "smoker": "not recorded", "bmi": 26.5}
    imp = DPSimpleImputer(strategy="constant", fill_value=fills).fit(df)
    assert imp.epsilon_spent_ == 0.0 and imp.privacy_breakdown_ == {}
    out = imp.transform(df)
    assert out.loc[0, "sbp"] == 130 and out.loc[0, "smoker"] == "not recorded"
    assert out.loc[1, "bmi"] == 26.5
    assert out["sbp"].dtype.kind == "f" and out["bmi"].dtype.kind == "f"
    # a list: one per column, in column order (numpy input)
    X = np.array([[np.nan, 1.0], [2.0, np.nan]])
    imp = DPSimpleImputer(strategy="constant", fill_value=[10, 20]).fit(X)
    np.testing.assert_array_equal(imp.statistics_, [10.0, 20.0])
    np.testing.assert_array_equal(imp.transform(X), [[10.0, 1.0], [2.0, 20.0]])
    # a None entry is the default for the column's type
    imp = DPSimpleImputer(strategy="constant", fill_value=[None, 5]).fit(X)
    np.testing.assert_array_equal(imp.statistics_, [0.0, 5.0])


@pytest.mark.parametrize(
    ("fill", "err", "match"),
    [
        ({"sbp": 1}, ValueError, r"every column.*missing \['bmi'\]"),
        ({"sbp": 1, "bmi": 2, "x": 3}, ValueError, r"unknown \['x'\]"),
        ([1, 2, 3], ValueError, "3 values for 2 column"),
        ({"sbp": "high", "bmi": 2}, ValueError, "'sbp' is a string"),
        ({"sbp": np.inf, "bmi": 2}, ValueError, "'sbp' must be finite"),
        ({"sbp": [1], "bmi": 2}, TypeError, "'sbp' must be a string or a number"),
    ],
)
def test_constant_fill_value_errors_name_the_column(fill, err, match):
    df = pd.DataFrame({"sbp": [np.nan, 120.0], "bmi": [25.0, np.nan]})
    with pytest.raises(err, match=match):
        DPSimpleImputer(strategy="constant", fill_value=fill).fit(df)
