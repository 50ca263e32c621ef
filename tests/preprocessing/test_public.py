"""PublicBoundsScaler and PublicOneHotEncoder: declared metadata only, no privacy cost."""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline

from skdp.exceptions import PrivacyLeakWarning
from skdp.preprocessing import PublicBoundsScaler, PublicOneHotEncoder

SECRET = "SENTINEL_SECRET"


def _frame(n=50, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.uniform(20, 90, n),
            "sbp": rng.uniform(90, 200, n),
            "sex": rng.choice(["F", "M"], n),
            "smoker": rng.choice(["never", "former", "current"], n),
        }
    )


BOUNDS = {"age": (18.0, 100.0), "sbp": (80.0, 220.0)}
CATS = {"sex": ["F", "M"], "smoker": ["never", "former", "current"]}


def _state(est):
    return pickle.dumps({k: v for k, v in vars(est).items() if k.endswith("_")})


# ---------------------------------------------------------------------- scaler
@pytest.mark.parametrize("feature_range", [(0.0, 1.0), (-1.0, 1.0)])
def test_scaler_maps_declared_bounds_onto_the_range(feature_range):
    X = np.array([[18.0, 80.0], [100.0, 220.0], [59.0, 150.0]])
    Z = (
        PublicBoundsScaler(bounds=([18, 80], [100, 220]), feature_range=feature_range)
        .fit(X)
        .transform(X)
    )
    a, b = feature_range
    np.testing.assert_allclose(Z[0], [a, a])
    np.testing.assert_allclose(Z[1], [b, b])
    np.testing.assert_allclose(Z[2], [(a + b) / 2, (a + b) / 2])


def test_scaler_clips_and_inverts():
    X = np.array([[-5.0], [0.5], [7.0]])
    s = PublicBoundsScaler(bounds=(0.0, 1.0)).fit(X)
    Z = s.transform(X)
    np.testing.assert_allclose(Z.ravel(), [0.0, 0.5, 1.0])
    np.testing.assert_allclose(s.inverse_transform(Z).ravel(), [0.0, 0.5, 1.0])
    X_in = np.random.default_rng(0).uniform(0, 1, (20, 1))
    np.testing.assert_allclose(s.inverse_transform(s.transform(X_in)), X_in)


def test_scaler_clip_false_names_the_column_not_the_value():
    df = _frame()[["age", "sbp"]]
    df.loc[3, "sbp"] = 123456.789
    s = PublicBoundsScaler(bounds=BOUNDS, clip=False)
    with pytest.raises(ValueError, match="'sbp'") as info:
        s.fit(df)
    assert "23456" not in str(info.value)


def test_scaler_facts_and_zero_dp():
    df = _frame()[["age", "sbp"]]
    a = PublicBoundsScaler(bounds=BOUNDS).fit(df)
    b = PublicBoundsScaler(bounds=BOUNDS).fit(df.iloc[1:])  # a neighbour: one row removed
    assert a.epsilon_spent_ == 0.0 and a.delta_spent_ == 0.0
    assert a.privacy_guarantee_ == "exact" and a.nonprivate_options_ == []
    assert _state(a) == _state(b)


def test_scaler_needs_declared_bounds():
    with pytest.raises(ValueError, match="needs declared bounds"):
        PublicBoundsScaler().fit(np.zeros((3, 2)))


def test_scaler_data_bounds_is_a_leak():
    with pytest.warns(PrivacyLeakWarning):
        s = PublicBoundsScaler(bounds="data").fit(np.arange(6.0).reshape(3, 2))
    assert s.epsilon_spent_ == math.inf and s.privacy_guarantee_ == "none"
    assert s.nonprivate_options_ == ["bounds"]


def test_scaler_dataframe_output_and_names():
    df = _frame()[["age", "sbp"]]
    s = PublicBoundsScaler(bounds=BOUNDS).set_output(transform="pandas").fit(df)
    out = s.transform(df)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == ["age", "sbp"] == list(s.get_feature_names_out())
    assert out.index.equals(df.index)


def test_scaler_bad_feature_range():
    with pytest.raises(ValueError, match="feature_range"):
        PublicBoundsScaler(bounds=(0, 1), feature_range=(1.0, 0.0)).fit(np.zeros((2, 1)))


# --------------------------------------------------------------------- encoder
def test_encoder_declared_categories_and_names():
    df = _frame()[["sex", "smoker"]]
    enc = PublicOneHotEncoder(categories=CATS).fit(df)
    Zf = enc.transform(df)  # a DataFrame in, a DataFrame out (issue 31 item 8)
    assert isinstance(Zf, pd.DataFrame) and list(Zf.index) == list(df.index)
    assert list(Zf.columns) == list(enc.get_feature_names_out())
    Z = Zf.to_numpy()
    np.testing.assert_array_equal(Z, enc.transform(df.to_numpy(dtype=object)))
    assert Z.shape == (len(df), 5)
    np.testing.assert_array_equal(Z.sum(axis=1), 2.0)
    names = list(enc.get_feature_names_out())
    assert names == ["sex_F", "sex_M", "smoker_never", "smoker_former", "smoker_current"]
    np.testing.assert_array_equal(Z[:, 1], (df["sex"] == "M").to_numpy())
    back = enc.inverse_transform(Z)
    np.testing.assert_array_equal(back, df.to_numpy(dtype=object))
    assert enc.epsilon_spent_ == 0.0 and enc.privacy_guarantee_ == "exact"


def test_encoder_list_categories_for_arrays():
    X = np.array([[0, 2], [1, 0], [1, 1]])
    enc = PublicOneHotEncoder(categories=[[0, 1], [0, 1, 2, 3]]).fit(X)
    np.testing.assert_array_equal(enc.transform(X)[0], [1, 0, 0, 0, 1, 0])
    assert list(enc.get_feature_names_out()) == ["x0_0", "x0_1", "x1_0", "x1_1", "x1_2", "x1_3"]


def test_encoder_unknown_category_names_the_column_not_the_value():
    df = _frame()[["sex", "smoker"]]
    enc = PublicOneHotEncoder(categories=CATS).fit(df)
    bad = df.copy()
    bad.loc[4, "smoker"] = SECRET
    with pytest.raises(ValueError) as info:
        enc.transform(bad)
    assert "1" in str(info.value) or "smoker" in str(info.value)
    assert SECRET not in str(info.value)


def test_encoder_handle_unknown_ignore():
    df = _frame()[["sex", "smoker"]]
    enc = PublicOneHotEncoder(categories=CATS, handle_unknown="ignore").fit(df)
    bad = df.copy()
    bad.loc[4, "smoker"] = SECRET
    Z = enc.transform(bad).to_numpy()
    np.testing.assert_array_equal(Z[4, 2:], 0.0)
    np.testing.assert_array_equal(
        np.delete(Z, 4, axis=0), np.delete(enc.transform(df).to_numpy(), 4, 0)
    )
    assert enc.inverse_transform(Z)[4, 1] is None


def test_encoder_drop():
    df = _frame()[["sex", "smoker"]]
    enc = PublicOneHotEncoder(categories=CATS, drop="if_binary").fit(df)
    assert list(enc.get_feature_names_out()) == [
        "sex_M",
        "smoker_never",
        "smoker_former",
        "smoker_current",
    ]
    np.testing.assert_array_equal(enc.inverse_transform(enc.transform(df)), df.to_numpy(object))
    first = PublicOneHotEncoder(categories=CATS, drop="first").fit(df)
    assert first.transform(df).shape == (len(df), 3)
    np.testing.assert_array_equal(first.inverse_transform(first.transform(df)), df.to_numpy(object))


def test_encoder_pandas_category_dtype_is_not_a_declaration():
    df = _frame()[["sex", "smoker"]].astype("category")
    with pytest.raises(ValueError, match="not a declaration"):
        PublicOneHotEncoder().fit(df)
    # a level the dtype carries (read off other rows) does not widen the output
    wide = df.copy()
    wide["smoker"] = wide["smoker"].cat.add_categories(["rare"])
    a = PublicOneHotEncoder(categories=CATS).fit(df)
    b = PublicOneHotEncoder(categories=CATS).fit(wide)
    assert a.transform(df).shape == b.transform(wide).shape == (len(df), 5)
    assert list(a.get_feature_names_out()) == list(b.get_feature_names_out())


def test_encoder_zero_dp():
    df = _frame()[["sex", "smoker"]]
    a = PublicOneHotEncoder(categories=CATS).fit(df)
    b = PublicOneHotEncoder(categories=CATS).fit(df.iloc[: len(df) // 2])
    assert _state(a) == _state(b)


def test_encoder_data_categories_is_a_leak():
    with pytest.warns(PrivacyLeakWarning):
        enc = PublicOneHotEncoder(categories="data").fit(np.array([["a"], ["b"]]))
    assert enc.epsilon_spent_ == math.inf and enc.nonprivate_options_ == ["categories"]


def test_encoder_rejects_mixed_types_and_missing_values():
    X = np.array([["a", 1.0], ["b", 2.0]], dtype=object)
    X[0, 1] = SECRET
    with pytest.raises(ValueError, match="mixes strings and numbers") as info:
        PublicOneHotEncoder(categories=[["a", "b"], [1.0, 2.0]]).fit(X)
    assert SECRET not in str(info.value)
    Xn = np.array([["a"], [None]], dtype=object)
    with pytest.raises(ValueError, match="missing values"):
        PublicOneHotEncoder(categories=[["a"]]).fit(Xn)
    with pytest.raises(ValueError, match="NaN"):
        PublicOneHotEncoder(categories=[[1.0]]).fit([[1.0], [np.nan]])


def test_encoder_categories_must_cover_every_column():
    df = _frame()[["sex", "smoker"]]
    with pytest.raises(ValueError, match="missing \\['smoker'\\]"):
        PublicOneHotEncoder(categories={"sex": ["F", "M"]}).fit(df)
    with pytest.raises(ValueError, match="unique"):
        PublicOneHotEncoder(categories=[["F", "F"], ["never"]]).fit(df)


# ------------------------------------------------------------ in scikit-learn
def test_public_transformers_in_a_column_transformer_with_pandas_output():
    df = _frame()
    ct = ColumnTransformer(
        [
            ("num", PublicBoundsScaler(bounds=BOUNDS, feature_range=(-1, 1)), ["age", "sbp"]),
            ("cat", PublicOneHotEncoder(categories=CATS), ["sex", "smoker"]),
        ]
    ).set_output(transform="pandas")
    out = ct.fit_transform(df)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns)[:3] == ["num__age", "num__sbp", "cat__sex_F"]
    assert out.shape == (len(df), 7)
    assert out[["num__age", "num__sbp"]].abs().to_numpy().max() <= 1.0


def test_public_scaler_in_a_pipeline():
    from skdp.linear_model import DPLinearRegression

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 10, size=(2000, 2))
    y = X @ [0.1, -0.05] + rng.normal(0, 0.05, 2000)
    pipe = make_pipeline(
        PublicBoundsScaler(bounds=(0.0, 10.0), feature_range=(-1, 1)),
        DPLinearRegression(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(-2, 2), random_state=0),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        pipe.fit(X, y)
    assert pipe[0].epsilon_spent_ == 0.0 and pipe[1].epsilon_spent_ == 1.0
    assert pipe.predict(X[:3]).shape == (3,)
