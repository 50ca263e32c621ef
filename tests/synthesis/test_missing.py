"""Issue 31 item 3b: ``missing="category"`` on the tabular synthesizers.

Missingness is a *declared* level of every column (one more bin beside a numeric
column's value bins, one more level after a categorical column's categories), counted and
noised with the other cells under the same budget; ``sample()`` writes NaN (``None`` in
object columns) back. Checked here: the round trip of the missing rates at a large
epsilon, that neighbouring data sets (one more row, with missing cells, or none at all)
get the identical public structure, that the accounting is unchanged, and the refusals.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp.density import DPFlowDensity
from skdp.synthesis import DPGANSynthesizer, DPHistogramSynthesizer, DPMarginalSynthesizer
from skdp.synthesis._gan._encoding import BinnedEncoder
from skdp.utils.schema import ColumnSpec, TabularEncoder, TabularSchema

RATES = {"age": 0.10, "bmi": 0.25, "sex": 0.05, "smoker": 0.15, "grade": 0.0}
META = dict(
    bounds={"age": (18, 90), "bmi": (15, 50)},
    categories={"sex": ["F", "M"], "grade": [1, 2, 3], "smoker": ["no", "yes"]},
    column_types={"age": "integer", "grade": "categorical"},
)


def _frame(n, seed=0, rates=RATES):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": rng.integers(20, 80, n).astype(float),
            "bmi": rng.normal(27, 4, n),
            "sex": pd.Series(rng.choice(["F", "M"], n), dtype=object),
            "smoker": pd.Series(rng.choice(["no", "yes"], n), dtype=object),
            "grade": rng.choice([1, 2, 3], n),
        }
    )
    for c, r in rates.items():
        k = int(round(r * n))
        if k:
            rows = rng.choice(n, size=k, replace=False)
            df.loc[rows, c] = np.nan if df[c].dtype.kind == "f" else None
    return df


def _hist(**kw):
    return DPHistogramSynthesizer(**{**META, "missing": "category", "random_state": 0, **kw})


def _marg(**kw):
    kw = {**META, "missing": "category", "delta": 1e-5, "random_state": 0, **kw}
    return DPMarginalSynthesizer(**kw)


@pytest.mark.parametrize("make", [_hist, _marg], ids=["histogram", "marginal"])
def test_missing_rates_round_trip_at_large_epsilon(make):
    df = _frame(6000)
    est = make(epsilon=200.0).fit(df)
    out = est.sample(20000, random_state=1)
    for c, r in RATES.items():
        assert out[c].isna().mean() == pytest.approx(r, abs=0.01), c
    # present values keep their domain; missing values come back as NaN / None
    assert out["bmi"].dropna().between(15, 50).all()
    assert out["age"].dropna().between(18, 90).all()
    assert (out["age"].dropna() == np.rint(out["age"].dropna())).all()
    assert set(out["sex"].dropna()) <= {"F", "M"}
    assert out["age"].dtype == np.float64  # an integer column with a missing level
    assert out["bmi"].dtype == np.float64
    missing_sex = out["sex"][out["sex"].isna()]
    assert all(v is None for v in missing_sex)  # object column: None
    # a column without missing cells still has the (declared) level: noise may give it
    # a few rows; integer-coded levels come back as float64 so that NaN fits
    assert out["grade"].dtype == np.float64 and set(out["grade"].dropna()) <= {1.0, 2.0, 3.0}
    # the missing level is joint with the other columns, not just a marginal rate
    assert np.isfinite(est.score_samples(df.head(200))).all()


def test_missing_level_of_every_kind_in_the_schema():
    est = _hist(epsilon=1.0).fit(_frame(500))
    assert est.schema_.missing_names == ["age", "bmi", "sex", "smoker", "grade"]
    d = est.schema_.to_dict()
    assert all(c["missing"] is True for c in d["columns"])
    again = TabularSchema.from_dict(d)
    assert again == est.schema_
    # one more level per column, after the value bins / declared levels
    plain = DPHistogramSynthesizer(**META, random_state=0).fit(_frame(500, rates={}))
    for c in plain.n_bins_:
        assert est.n_bins_[c] == plain.n_bins_[c] + 1
        if c in plain.bin_edges_:
            np.testing.assert_array_equal(est.bin_edges_[c], plain.bin_edges_[c])


def _structure(est):
    out = {"schema": est.schema_, "n_bins": dict(est.n_bins_)}
    if hasattr(est, "bin_edges_"):
        out["edges"] = {c: e.tolist() for c, e in est.bin_edges_.items()}
    if hasattr(est, "histograms_"):
        out["shapes"] = [h["shape"] for h in est.histograms_]
        out["threshold"] = [h["threshold"] for h in est.histograms_]
    if hasattr(est, "n_encoded_features_"):
        out["width"] = est.n_encoded_features_
    return out


@pytest.mark.parametrize("make", [_hist, _marg], ids=["histogram", "marginal"])
def test_neighbouring_data_sets_get_the_same_structure(make):
    """D without any missing cell, D' = D minus a row plus a row with missing cells: the
    missing level is declared, so the schema, the grid and the bins do not move."""
    D = _frame(400, rates={})
    extra = pd.DataFrame(
        {"age": [np.nan], "bmi": [np.nan], "sex": [None], "smoker": [None], "grade": [2]}
    ).astype({"sex": object, "smoker": object})
    D1 = pd.concat([D.iloc[1:], extra], ignore_index=True)  # same n (n is public)
    D2 = pd.concat([D, extra], ignore_index=True)  # add one row
    a, b, c = (make(epsilon=1.0).fit(X) for X in (D, D1, D2))
    assert _structure(a) == _structure(b)
    for key in ("schema", "edges"):
        assert _structure(a)[key] == _structure(c)[key]


def test_gan_neighbouring_structure_and_missing_round_trip():
    D = _frame(300, rates={})
    extra = pd.DataFrame(
        {"age": [np.nan], "bmi": [np.nan], "sex": [None], "smoker": [None], "grade": [2]}
    ).astype({"sex": object, "smoker": object})
    D1 = pd.concat([D.iloc[1:], extra], ignore_index=True)
    kw = dict(**META, missing="category", n_iter=20, device="cpu", random_state=0)
    a = DPGANSynthesizer(epsilon=3.0, **kw).fit(D)
    b = DPGANSynthesizer(epsilon=3.0, **kw).fit(D1)
    assert a.schema_ == b.schema_ and a.n_encoded_features_ == b.n_encoded_features_
    assert a.n_bins_ == b.n_bins_
    plain = DPGANSynthesizer(epsilon=3.0, **{**kw, "missing": "error"}).fit(D)
    # accounting unchanged: same steps, same noise, same total and parts
    assert a.epsilon_spent_ == pytest.approx(plain.epsilon_spent_)
    assert a.noise_multiplier_ == pytest.approx(plain.noise_multiplier_)
    assert a.privacy_breakdown_.keys() == plain.privacy_breakdown_.keys()
    assert a.epsilon_spent_ <= 3.0 + 1e-9
    # one more coordinate per column (a binary column: a softmax block of 3, not 1)
    assert a.n_encoded_features_ == plain.n_encoded_features_ + 5
    out = a.sample(50, random_state=0)
    assert list(out.columns) == list(D.columns)


def test_gan_encoding_round_trips_missing_cells():
    df = _frame(200)
    schema = TabularSchema.from_data(df, **META, missing="category")
    enc = BinnedEncoder(schema, 8)
    Z = enc.transform(df)
    assert enc.n_encoded_features_ == Z.shape[1]
    back = enc.inverse_transform(Z)  # argmax: the missing coordinate decodes to missing
    for c in df.columns:
        np.testing.assert_array_equal(back[c].isna().to_numpy(), df[c].isna().to_numpy())
    bin_blocks = [b - a for a, b in enc.softmax_blocks_]
    assert bin_blocks[:2] == [enc._binners["age"].n_levels + 1, 9]  # bins + the missing level


@pytest.mark.parametrize("make", [_hist, _marg], ids=["histogram", "marginal"])
def test_accounting_is_unchanged(make):
    df = _frame(800)
    est = make(epsilon=1.5).fit(df)
    plain = make(epsilon=1.5, missing="error").fit(_frame(800, rates={}))
    assert est.epsilon_spent_ == plain.epsilon_spent_ == 1.5
    assert est.privacy_guarantee_ == plain.privacy_guarantee_ == "exact"
    assert est.privacy_breakdown_.keys() == plain.privacy_breakdown_.keys()
    assert sum(est.privacy_breakdown_.values()) == pytest.approx(1.5)
    if hasattr(est, "one_way_scale_"):
        assert est.one_way_scale_ == plain.one_way_scale_


def test_numpy_input_with_missing_category():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (3000, 2))
    X[rng.random(3000) < 0.3, 1] = np.nan
    est = DPHistogramSynthesizer(
        epsilon=100.0, bounds=(0, 1), missing="category", random_state=0
    ).fit(X)
    out = est.sample(10000, random_state=0)
    assert out.dtype == np.float64
    assert np.isnan(out[:, 0]).mean() == 0.0
    assert np.isnan(out[:, 1]).mean() == pytest.approx(0.3, abs=0.02)


def test_schema_may_declare_missing_per_column():
    df = _frame(500, rates={"bmi": 0.2})
    schema = TabularSchema.from_data(df, **META, missing=["bmi"])
    est = DPHistogramSynthesizer(epsilon=50.0, schema=schema, random_state=0).fit(df)
    assert est.schema_.missing_names == ["bmi"]
    out = est.sample(4000, random_state=0)
    assert out["bmi"].isna().mean() == pytest.approx(0.2, abs=0.03)
    assert out["age"].dtype == np.int64  # no missing level: the declared kind's dtype
    assert not out.drop(columns="bmi").isna().any().any()
    with pytest.raises(ValueError, match=r"'age'.*missing"):
        DPHistogramSynthesizer(epsilon=1.0, schema=schema).fit(_frame(500, rates={"age": 0.1}))


@pytest.mark.parametrize(
    "cls", [DPHistogramSynthesizer, DPMarginalSynthesizer, DPGANSynthesizer], ids=str
)
def test_missing_error_is_the_default_and_says_what_to_do(cls):
    df = _frame(300)
    df.loc[0, "age"] = 987654.0
    est = cls(**META, random_state=0)
    assert est.missing == "error"
    with pytest.raises(ValueError) as exc:
        est.fit(df)
    msg = str(exc.value)
    assert "'age'" in msg and "'bmi'" in msg and "missing='category'" in msg
    assert "DPSimpleImputer" in msg and "987654" not in msg


def test_refusals():
    df = _frame(300)
    # a numeric column with a missing level needs declared bounds
    with pytest.raises(ValueError, match=r"needs declared bounds"):
        DPHistogramSynthesizer(
            categories=META["categories"], column_types=META["column_types"], missing="category"
        ).fit(df)
    # infinity is never a missing value
    bad = _frame(300)
    bad.loc[3, "bmi"] = np.inf
    with pytest.raises(ValueError, match=r"'bmi' contains infinity"):
        _hist().fit(bad)
    # an estimator without a missing level refuses a schema that declares one
    schema = TabularSchema.from_data(df, **META, missing="category")
    with pytest.raises(ValueError, match="DPFlowDensity does not model"):
        DPFlowDensity(schema=schema).fit(df)
    # the GAN's scaled encoding has no coordinate for the level
    with pytest.raises(ValueError, match="numeric_encoding='bins'"):
        DPGANSynthesizer(**META, missing="category", numeric_encoding="scaled").fit(df)
    with pytest.raises(ValueError, match="missing"):
        _hist(missing="drop").fit(df)
    with pytest.raises(TypeError, match="missing must be true or false"):
        ColumnSpec(name="a", kind="continuous", missing="yes")
    # the one-hot/scaled encoder cannot hold the level
    enc = TabularEncoder(schema, categorical="onehot")
    with pytest.raises(ValueError, match="cannot hold"):
        enc.transform(df)


def test_integer_coded_categories_message_says_what_to_declare():
    df = _frame(100, rates={})
    with pytest.raises(ValueError, match=r"column_types=\{'grade': 'categorical'\}"):
        DPHistogramSynthesizer(
            bounds=META["bounds"], categories={"grade": [1, 2, 3], "sex": ["F", "M"]}
        ).fit(df)


def test_data_opt_ins_skip_missing_cells():
    df = _frame(400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        schema = TabularSchema.from_data(
            df, bounds="data", categories="data", column_types={"age": "integer"},
            missing="category",
        )  # fmt: skip
    assert schema["sex"].categories == ("F", "M")
    lo, hi = schema["bmi"].bounds
    assert math.isfinite(lo) and math.isfinite(hi)
