"""The GAN's binned numeric encoding (skdp.synthesis._gan._encoding)."""

from __future__ import annotations

import io
import math
import pickle

import numpy as np
import pandas as pd
import pytest
import torch

from skdp.synthesis import DPGANSynthesizer
from skdp.synthesis._gan._encoding import (
    MAX_BINS,
    MIN_BINS,
    BinnedEncoder,
    default_n_bins,
    spread_positions,
)
from skdp.utils.schema import TabularSchema

BOUNDS = {"age": (18, 90), "bmi": (15.0, 45.0), "visits": (0, 5)}
CATS = {"sex": ["F", "M"], "site": ["a", "b", "c"]}
TYPES = {"age": "integer", "visits": "integer"}  # an int64 dtype alone gives "continuous"


def _table(n=200, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 91, size=n),
            "sex": rng.choice(["F", "M"], size=n),
            "smoker": rng.random(n) < 0.3,
            "bmi": rng.normal(27, 4, size=n),
            "visits": rng.integers(0, 6, size=n),
            "site": rng.choice(["a", "b", "c"], size=n),
        }
    )


def _pickled_types(obj):
    """Every type the pickle of ``obj`` reaches."""
    seen = set()

    class Spy(pickle.Pickler):
        def reducer_override(self, o):
            seen.add(type(o))
            return NotImplemented

    Spy(io.BytesIO()).dump(obj)
    return seen


def _encoder(df, n_bins=8):
    schema = TabularSchema.from_data(df, bounds=BOUNDS, categories=CATS, column_types=TYPES)
    return BinnedEncoder(schema, n_bins)


def test_default_n_bins_is_public_monotone_and_bounded():
    grid_n, grid_eps = [10, 100, 426, 3750, 10**5, 10**7], [0.1, 0.3, 1, 3, 10, 100]
    for n in grid_n:
        ks = [default_n_bins(n, e) for e in grid_eps]
        assert ks == sorted(ks)  # more budget never fewer bins
    for e in grid_eps:
        ks = [default_n_bins(n, e) for n in grid_n]
        assert ks == sorted(ks)
    for n in grid_n:
        for e in [*grid_eps, math.inf]:
            k = default_n_bins(n, e)
            assert MIN_BINS <= k <= MAX_BINS and k & (k - 1) == 0  # a power of two
    assert default_n_bins(426, math.inf) == MAX_BINS
    assert (default_n_bins(426, 1.0), default_n_bins(426, 10.0)) == (8, 16)


def test_layout_is_a_function_of_the_schema_only():
    a, b = _encoder(_table(seed=0)), _encoder(_table(n=50, seed=1))
    assert a.slices_ == b.slices_ and a.softmax_blocks_ == b.softmax_blocks_
    assert np.array_equal(a.discrete_, b.discrete_)
    # age: 8 bins + position; sex: 2 levels; smoker: 1; bmi: 8 + 1;
    # visits: 6 values <= 8 bins -> one bin per value, no position; site: 3
    widths = {k: s.stop - s.start for k, s in a.slices_.items()}
    assert widths == {"age": 9, "sex": 2, "smoker": 1, "bmi": 9, "visits": 6, "site": 3}
    assert a.n_encoded_features_ == 30
    assert not a.discrete_[a.slices_["bmi"].stop - 1]  # the position is not an indicator


def test_round_trip_types_and_exact_values():
    df = _table()
    df["bmi"] = df["bmi"].clip(15.0, 45.0)
    enc = _encoder(df)
    Z = enc.transform(df)
    assert Z.shape == (len(df), enc.n_encoded_features_) and np.isfinite(Z).all()
    for a, b in enc.softmax_blocks_:
        assert np.all(Z[:, a:b].sum(axis=1) == 1.0)  # one hot
    back = enc.inverse_transform(Z)
    assert list(back.columns) == list(df.columns)
    assert (back.dtypes == df.dtypes).all()
    np.testing.assert_allclose(back["bmi"], df["bmi"], atol=1e-9)  # bin + position
    for c in ("age", "visits", "sex", "smoker", "site"):
        assert (back[c] == df[c]).all(), c


def test_values_outside_the_bounds_are_clipped_and_unknown_levels_refused():
    df = _table(n=20)
    df.loc[0, "bmi"], df.loc[1, "bmi"] = 1e6, -1e6
    back = _encoder(df).inverse_transform(_encoder(df).transform(df))
    assert back["bmi"].max() <= 45.0 and back["bmi"].min() >= 15.0
    df.loc[2, "site"] = "zzz"
    with pytest.raises(ValueError, match="site"):
        _encoder(_table(n=20)).transform(df)


def test_decode_of_any_generator_output_respects_the_schema():
    df = _table()
    enc = _encoder(df)
    rng = np.random.default_rng(0)
    Z = rng.normal(scale=3.0, size=(500, enc.n_encoded_features_))
    Z[::7, 3] = np.nan
    out = enc.decode(Z, np.random.default_rng(1))
    for c, (lo, hi) in BOUNDS.items():
        assert out[c].between(lo, hi).all(), c
    assert np.all(out["age"] == np.round(out["age"])) and out["age"].dtype == df["age"].dtype
    assert set(out["site"]) <= set(CATS["site"]) and set(out["sex"]) <= set(CATS["sex"])
    assert out["smoker"].dtype == bool


def test_decode_draws_bins_and_levels_from_the_generator_probabilities():
    enc = _encoder(_table())
    n = 20_000
    Z = np.zeros((n, enc.n_encoded_features_))
    a, b = enc.slices_["visits"].start, enc.slices_["visits"].stop
    p = np.array([0.05, 0.0, 0.0, 0.0, 0.15, 0.8])
    Z[:, a:b] = p
    s = enc.slices_["site"]
    Z[:, s.start : s.stop] = [0.9, 0.1, 0.0]
    out = enc.decode(Z, np.random.default_rng(0))
    freq = out["visits"].value_counts(normalize=True).reindex(range(6), fill_value=0.0)
    np.testing.assert_allclose(freq.to_numpy(), p, atol=0.01)  # a 5 % bin still appears
    assert abs((out["site"] == "b").mean() - 0.1) < 0.01
    # without a generator: the argmax
    assert (enc.decode(Z[:5])["visits"] == 5).all()


def test_spread_positions_keep_the_order_and_are_uniform_within_each_bin():
    rng = np.random.default_rng(0)
    n = 6000
    bins = rng.integers(0, 3, size=n)
    t = 0.7 + 0.01 * rng.standard_normal(n)  # a generator stuck near one position
    out = spread_positions(bins, t, np.random.default_rng(1))
    for j in range(3):
        i = np.flatnonzero(bins == j)
        np.testing.assert_array_equal(np.argsort(t[i]), np.argsort(out[i]))  # same order
        q = np.quantile(out[i], [0.1, 0.5, 0.9])
        np.testing.assert_allclose(q, [0.1, 0.5, 0.9], atol=0.02)
    assert out.min() >= 0.0 and out.max() <= 1.0
    assert spread_positions(np.zeros(0, int), np.zeros(0), rng).shape == (0,)


def test_decode_spreads_a_stuck_position_over_the_bin():
    enc = _encoder(_table())
    n = 4000
    Z = np.zeros((n, enc.n_encoded_features_))
    s = enc.slices_["bmi"]
    Z[:, s.start] = 1.0  # the first of 8 bins over (15, 45): [15, 18.75)
    Z[:, s.stop - 1] = 0.9  # every row's position at 0.9
    drawn = enc.decode(Z, np.random.default_rng(0))["bmi"]
    assert drawn.between(15.0, 18.75).all()
    np.testing.assert_allclose(drawn.median(), 16.875, atol=0.1)  # uniform in the bin
    # without a generator (inverse_transform): the generator's own position
    np.testing.assert_allclose(enc.decode(Z[:3])["bmi"], 15.0 + 0.9 * 3.75)


@pytest.mark.usefixtures("one_torch_thread")
def test_estimator_default_is_binned_and_keeps_no_seed_material():
    df = _table(n=150)
    gan = DPGANSynthesizer(
        epsilon=10.0,
        bounds=BOUNDS,
        categories=CATS,
        column_types=TYPES,
        n_iter=3,
        latent_dim=4,
        device="cpu",
        random_state=0,
    ).fit(df)
    k = default_n_bins(150, 10.0)
    assert gan.numeric_encoding == "bins" and k == 16
    # n_bins_: the bins of every discretised column (glossary): visits has 6 values <= k,
    # one bin each; the categorical and binary columns count their levels
    assert gan.n_bins_ == {"age": k, "sex": 2, "smoker": 2, "bmi": k, "visits": 6, "site": 3}
    assert all(type(v) is int for v in gan.n_bins_.values())
    assert isinstance(gan._encoder, BinnedEncoder)
    assert gan.n_encoded_features_ == gan._encoder.n_encoded_features_
    S = gan.sample(300, random_state=1)
    assert list(S.columns) == list(df.columns) and (S.dtypes == df.dtypes).all()
    for c, (lo, hi) in BOUNDS.items():
        assert S[c].between(lo, hi).all()
    # no random generator or seed material in the fitted object (the encoder included)
    assert not _pickled_types(gan) & {
        np.random.Generator, np.random.SeedSequence, np.random.PCG64, np.random.RandomState,
        torch.Generator,
    }  # fmt: skip
    assert not any(isinstance(v, np.random.Generator | torch.Generator) for v in vars(gan).values())
    assert not any(isinstance(v, np.random.Generator) for v in vars(gan._encoder).values())
    # the encoder holds the public layout only: no row-derived statistic
    assert set(vars(gan._encoder)) <= {
        "schema", "n_bins", "_base", "slices_", "_binners", "softmax_blocks_",
        "n_encoded_features_", "discrete_",
    }  # fmt: skip
    # the privacy accounting is unchanged in kind: only DP-SGD is charged here
    assert gan.privacy_breakdown_["prior"] == 0.0 and gan.privacy_breakdown_["bounds"] == 0.0
    assert gan.epsilon_spent_ <= 10.0


@pytest.mark.usefixtures("one_torch_thread")
def test_scaled_encoding_is_still_available():
    df = _table(n=100)
    gan = DPGANSynthesizer(
        epsilon=10.0, bounds=BOUNDS, categories=CATS, numeric_encoding="scaled",
        n_iter=2, latent_dim=4, device="cpu", random_state=0,
    ).fit(df)  # fmt: skip
    assert gan.n_encoded_features_ == 9  # one column per numeric
    assert gan.n_bins_ == {"sex": 2, "smoker": 2, "site": 3}  # numerics not discretised
    assert gan.sample(5, random_state=0).shape == (5, 6)
    with pytest.raises(ValueError, match="n_bins"):
        DPGANSynthesizer(epsilon=1.0, bounds=BOUNDS, categories=CATS, n_bins=1).fit(df)
