"""Tests of DPHistogramSynthesizer, spec lantz.md §1.5."""

from __future__ import annotations

import math
import warnings
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from skdp.exceptions import BoundsEstimateWarning, PrivacyLeakWarning
from skdp.synthesis import DPHistogramSynthesizer, lei_n_bins
from skdp.synthesis._histogram_cells import noise_mass

BOUNDS = {"age": (18, 90), "bmi": (15.0, 50.0)}
CATS = {"sex": ["F", "M"], "blood": ["A", "B", "AB", "O"]}


def _frame(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    age = rng.integers(20, 85, size=n)
    return pd.DataFrame(
        {
            "age": age,
            "sex": rng.choice(["F", "M"], size=n),
            "bmi": np.clip(rng.normal(22 + age / 10, 3), 15, 50),
            "blood": rng.choice(["A", "B", "AB", "O"], size=n, p=[0.4, 0.1, 0.05, 0.45]),
            "smoker": rng.random(n) < 0.3,
        }
    )


# whole-number columns are declared integer (an int64 dtype alone gives "continuous")
INTEGER = ("age", "visits", "stage", "score")


def _synth(**kw):
    params = {"epsilon": 1.0, "bounds": BOUNDS, "categories": CATS, "random_state": 0}
    params.update(kw)
    params.setdefault("column_types", {c: "integer" for c in INTEGER if c in params["bounds"]})
    return DPHistogramSynthesizer(**params)


def test_lei_heuristic():
    """Invariant 8 (ceil rule)."""
    assert lei_n_bins(2644, 8) == 2
    assert all(lei_n_bins(2644, d) == 2 for d in range(8, 30))
    assert lei_n_bins(2644, 7) == 3 and lei_n_bins(2644, 6) == 3
    assert lei_n_bins(1, 3) == 1
    assert lei_n_bins(10**6, 1) > lei_n_bins(10**3, 1)


def test_filtered_counts_and_synthetic_size():
    """Invariant 1: stored values are > tau; |D_eps| = sum rint(counts)."""
    df = _frame()
    s = _synth().fit(df)
    (h,) = s.histograms_
    tau = 0.5 * math.log(len(df)) / 1.0
    assert h["threshold"] == pytest.approx(tau)
    assert np.all(h["counts"] > tau)
    assert np.all(np.diff(h["cells"]) > 0)
    D = s.sample(None)
    assert len(D) == int(np.rint(h["counts"]).sum()) == s.n_synthetic_
    assert s.epsilon_spent_ == 1.0 and s.delta_spent_ == 0.0
    assert s.privacy_guarantee_ == "exact"


@pytest.mark.parametrize("representative", ["midpoint", "uniform"])
def test_synthetic_values_are_valid(representative):
    """Invariant 2 and the DataFrame round trip (columns, order, dtypes)."""
    df = _frame()
    s = _synth(representative=representative, n_bins=5).fit(df)
    out = s.sample(500)
    assert list(out.columns) == list(df.columns)
    assert list(out.dtypes) == list(df.dtypes)
    assert out["age"].between(18, 90).all() and out["bmi"].between(15, 50).all()
    assert set(out["sex"]) <= {"F", "M"} and set(out["blood"]) <= set(CATS["blood"])
    edges = s.bin_edges_["bmi"]
    if representative == "midpoint":
        mids = (edges[:-1] + edges[1:]) / 2
        assert np.isin(out["bmi"].to_numpy(), mids).all()
        starts = s.bin_edges_["age"]
        reps = starts[:-1] + (starts[1:] - starts[:-1] - 1) // 2
        assert np.isin(out["age"].to_numpy(), reps).all()
    else:
        assert len(np.unique(out["bmi"])) > 50


def test_bin_edges_depend_only_on_public_metadata():
    """Invariant 3."""
    a = _synth(random_state=1).fit(_frame(800, seed=1))
    b = _synth(random_state=2).fit(_frame(800, seed=2))
    for c in ("age", "bmi"):
        np.testing.assert_array_equal(a.bin_edges_[c], b.bin_edges_[c])
    np.testing.assert_allclose(a.bin_edges_["bmi"], np.linspace(15, 50, a.n_bins_["bmi"] + 1))
    assert a.n_bins_ == b.n_bins_
    # n_public fixes them independently of len(X)
    c = _synth(n_public=5000).fit(_frame(300))
    d = _synth(n_public=5000).fit(_frame(900))
    assert c.n_bins_ == d.n_bins_ and c.histograms_[0]["threshold"] == d.histograms_[0]["threshold"]


def _bins(s, df):
    """Per-row tuple of bin indices (the discretised table)."""
    from skdp.utils.schema import TabularEncoder

    C = TabularEncoder(s.schema_, categorical="ordinal").codes(df)
    cols = [s._binners[c].index(C[:, j]) for j, c in enumerate(s.schema_.names)]
    return [tuple(r) for r in np.column_stack(cols).tolist()]


def _discretised(s, df):
    return Counter(_bins(s, df))


def test_huge_epsilon_reproduces_the_discretised_data():
    """Invariant 4."""
    df = _frame(400)
    s = _synth(epsilon=1e12, n_bins=4).fit(df)
    D = s.sample(None)
    assert _discretised(s, D) == _discretised(s, df)


def test_per_cell_privacy_check():
    """Invariant 5: density and survival ratios for counts c and c+1 within e^eps."""
    s = _synth(epsilon=0.8).fit(_frame(300))
    h = s.histograms_[0]
    scale = 1 / h["epsilon"]
    assert h["epsilon"] == 0.8
    z = np.linspace(-20, 40, 2001)
    for c in range(0, 10):
        lr = stats.laplace.logpdf(z, c, scale) - stats.laplace.logpdf(z, c + 1, scale)
        assert np.max(np.abs(lr)) <= h["epsilon"] + 1e-9
        s0 = stats.laplace.sf(h["threshold"], c, scale)
        s1 = stats.laplace.sf(h["threshold"], c + 1, scale)
        assert s1 / s0 <= math.exp(h["epsilon"]) + 1e-9
        assert (1 - s0) / (1 - s1) <= math.exp(h["epsilon"]) + 1e-9


def test_sparse_sampler_matches_dense_in_distribution():
    """Invariant 6: survivors among empty cells ~ Binomial(E, exp(-eps tau)/2) and
    (value - tau) ~ Exp(eps); dense and sparse agree on a small domain."""
    df = _frame(200)
    kw = dict(
        epsilon=1.0,
        mechanism="laplace",
        n_bins={"age": 30, "bmi": 30},
        projections=[["age", "bmi"]],
    )
    n_cells = 30 * 30
    dense_counts, sparse_counts, excess = [], [], []
    for seed in range(60):
        d = _synth(random_state=seed, **kw).fit(df)
        sp = _synth(random_state=seed, max_cells=100, **kw).fit(df)
        hd, hs = d.histograms_[0], sp.histograms_[0]
        assert not hd["sparse"] and hs["sparse"]
        occupied = np.unique(
            np.ravel_multi_index(
                (
                    d._binners["age"].index(df["age"].to_numpy()),
                    d._binners["bmi"].index(df["bmi"].to_numpy()),
                ),
                (30, 30),
            )
        )
        for h, out in ((hd, dense_counts), (hs, sparse_counts)):
            empty_surv = ~np.isin(h["cells"], occupied)
            out.append(empty_surv.sum())
            if h is hs:
                excess.extend(h["counts"][empty_surv] - h["threshold"])
    tau = 0.5 * math.log(200)
    p = 0.5 * math.exp(-tau)
    n_empty = n_cells - len(occupied)
    expected = n_empty * p
    for counts in (dense_counts, sparse_counts):
        total = sum(counts)
        # two-sided binomial test on the pooled survivor count
        pval = stats.binomtest(int(total), n_empty * 60, p).pvalue
        assert pval > 1e-3, (total, expected * 60)
    assert stats.kstest(excess, stats.expon(scale=1.0).cdf).pvalue > 1e-3


def test_row_order_invariance():
    """Invariant 7."""
    df = _frame(500)
    a = _synth(random_state=3).fit(df)
    b = _synth(random_state=3).fit(df.sample(frac=1.0, random_state=1).reset_index(drop=True))
    np.testing.assert_array_equal(a.histograms_[0]["cells"], b.histograms_[0]["cells"])
    np.testing.assert_array_equal(a.histograms_[0]["counts"], b.histograms_[0]["counts"])


def test_out_of_bounds_and_nan():
    """Invariant 9."""
    df = _frame(200)
    df.loc[0, "bmi"] = 80.0
    s = _synth(epsilon=1e12, n_bins=4).fit(df)
    assert _bins(s, df.iloc[:1])[0][2] == s.n_bins_["bmi"] - 1  # clipped into the top bin
    assert _discretised(s, s.sample(None)) == _discretised(s, df)
    with pytest.raises(ValueError, match="'bmi'") as exc:
        _synth(clip=False).fit(df)
    assert "80" not in str(exc.value)
    df.loc[1, "age"] = np.nan
    with pytest.raises(ValueError, match="'age'"):
        _synth().fit(df)
    bad = _frame(20)
    bad.loc[0, "blood"] = "Q"
    with pytest.raises(ValueError, match="'blood'"):
        _synth().fit(bad)


def test_missing_metadata():
    df = _frame(300)
    with pytest.raises(ValueError, match="categor"):
        DPHistogramSynthesizer(bounds=BOUNDS).fit(df)
    with pytest.warns(PrivacyLeakWarning):
        DPHistogramSynthesizer(bounds="data", categories=CATS).fit(df)
    # 300 rows are too few for a reliable bound estimate: refused unless opted in
    with pytest.raises(ValueError, match='bounds="private"'):
        DPHistogramSynthesizer(epsilon=2.0, categories=CATS, random_state=0).fit(df)
    with pytest.warns(BoundsEstimateWarning):
        s = DPHistogramSynthesizer(
            epsilon=2.0, bounds="private", categories=CATS, random_state=0
        ).fit(df)
    assert s.epsilon_spent_ == 2.0
    assert 0 < s.privacy_breakdown_["bounds"] < 2.0
    assert sum(s.privacy_breakdown_.values()) == pytest.approx(2.0)
    assert set(s.bounds_) == {"age", "bmi"}
    out = s.sample(50)
    lo, hi = s.bounds_["bmi"]
    assert out["bmi"].between(lo, hi).all()


def test_projections_split_the_budget_and_draw_unlisted_uniformly():
    df = _frame(2000)
    s = _synth(projections=[["age", "bmi"], ["sex", "blood"]], epsilon=2.0).fit(df)
    assert [h["epsilon"] for h in s.histograms_] == [1.0, 1.0]
    assert s.uniform_columns_ == ["smoker"]
    assert s.n_synthetic_ is None
    out = s.sample(4000)
    assert abs(out["smoker"].mean() - 0.5) < 0.05  # uniform, not the data's 0.3
    assert abs((out["blood"] == "O").mean() - 0.45) < 0.05
    with pytest.raises(ValueError, match="single projection"):
        s.sample(None)
    with pytest.raises(ValueError, match="disjoint"):
        _synth(projections=[["age"], ["age", "sex"]]).fit(df)
    with pytest.raises(ValueError, match="unknown"):
        _synth(projections=[["nope"]]).fit(df)


def test_score_samples():
    df = _frame(2000)
    s = _synth(n_bins=6).fit(df)
    ll = s.score_samples(df)
    assert ll.shape == (2000,) and np.all(np.isfinite(ll))
    assert s.score(df) == pytest.approx(ll.mean())
    # density integrates to ~1 over the domain: Monte Carlo with uniform proposals
    rng = np.random.default_rng(0)
    m = 40000
    U = pd.DataFrame(
        {
            "age": rng.integers(18, 91, m),
            "sex": rng.choice(["F", "M"], m),
            "bmi": rng.uniform(15, 50, m),
            "blood": rng.choice(CATS["blood"], m),
            "smoker": rng.random(m) < 0.5,
        }
    )
    vol = 73 * 2 * 35 * 4 * 2
    assert np.mean(np.exp(s.score_samples(U))) * vol == pytest.approx(1.0, rel=0.05)
    out = df.iloc[:2].copy()
    out.loc[0, "bmi"] = 70.0
    ll = s.score_samples(out)
    assert ll[0] == -np.inf and np.isfinite(ll[1])
    # it prefers real-looking rows to uniform ones
    assert s.score(df) > s.score(U)


def test_all_cells_filtered():
    df = _frame(30)
    s = _synth(epsilon=1e-4, n_bins=50, threshold=50.0).fit(df)
    assert len(s.histograms_[0]["cells"]) == 0
    with pytest.warns(UserWarning, match="empty"):
        D = s.sample(None)
    assert len(D) == 0 and list(D.columns) == list(df.columns)
    with pytest.warns(UserWarning, match="uniformly"):
        out = s.sample(10)
    assert len(out) == 10
    assert np.all(np.isfinite(s.score_samples(df)))


def test_too_many_cells_raise_a_clear_error():
    df = _frame(50)
    with pytest.raises(ValueError, match="fewer bins"):
        _synth(n_bins=10**5, threshold=0.0, max_cells=10).fit(df)


def test_numpy_input_and_sample_reproducibility():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(500, 3))
    s = DPHistogramSynthesizer(bounds=(0.0, 1.0), random_state=0).fit(X)
    a = s.sample(20, random_state=5)
    assert isinstance(a, np.ndarray) and a.shape == (20, 3)
    np.testing.assert_array_equal(a, s.sample(20, random_state=5))
    s2 = DPHistogramSynthesizer(bounds=(0.0, 1.0), random_state=0).fit(X)
    np.testing.assert_array_equal(s.histograms_[0]["counts"], s2.histograms_[0]["counts"])
    # the fitted model keeps no generator: unseeded draws use fresh OS entropy
    assert not np.array_equal(s.sample(50), s2.sample(50))
    assert s.sample(0).shape == (0, 3)


@given(st.integers(0, 2**32 - 1), st.floats(0.1, 10))
def test_property_histogram_invariants(seed, eps):
    df = _frame(150, seed=seed % 1000)
    s = _synth(epsilon=eps, random_state=seed).fit(df)
    h = s.histograms_[0]
    assert np.all(h["counts"] > h["threshold"]) and np.all(h["counts"] > 0)
    assert np.all((h["cells"] >= 0) & (h["cells"] < math.prod(h["shape"])))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        out = s.sample(30)
    assert out["age"].between(18, 90).all() and set(out["sex"]) <= {"F", "M"}


def test_sparse_placement_is_uniform_over_empty_cells():
    from skdp.synthesis._histogram_cells import _sample_absent

    rng = np.random.default_rng(0)
    occupied = np.array([0, 3, 7])
    hits = np.zeros(12)
    for _ in range(3000):
        cells = _sample_absent(rng, 12, occupied, 4)
        assert len(np.unique(cells)) == 4 and not np.isin(cells, occupied).any()
        hits[cells] += 1
    free = np.setdiff1d(np.arange(12), occupied)
    assert stats.chisquare(hits[free]).pvalue > 1e-3


def test_geometric_noise_dense_and_sparse():
    df = _frame(200)
    kw = dict(
        epsilon=1.0,
        mechanism="geometric",
        n_bins={"age": 30, "bmi": 30},
        projections=[["age", "bmi"]],
    )
    s = _synth(**kw).fit(df)
    h = s.histograms_[0]
    assert np.all(h["counts"] == np.rint(h["counts"])) and np.all(h["counts"] > h["threshold"])
    # per-cell privacy: pmf ratio of c + G and c + 1 + G is within e^eps
    r = math.exp(-1.0)
    k = np.arange(-30, 31)
    pmf = lambda c: (1 - r) / (1 + r) * r ** np.abs(k - c)  # noqa: E731
    assert np.max(np.abs(np.log(pmf(3)) - np.log(pmf(4)))) <= 1.0 + 1e-12
    # sparse survivors among empty cells ~ Binomial(E, r^m / (1 + r)), m = floor(tau) + 1
    occupied = np.unique(
        np.ravel_multi_index(
            (
                s._binners["age"].index(df["age"].to_numpy()),
                s._binners["bmi"].index(df["bmi"].to_numpy()),
            ),
            (30, 30),
        )
    )
    tau = h["threshold"]
    m = math.floor(tau) + 1
    p = r**m / (1 + r)
    surv, excess = 0, []
    for seed in range(60):
        hs = _synth(random_state=seed, max_cells=100, **kw).fit(df).histograms_[0]
        assert hs["sparse"]
        new = ~np.isin(hs["cells"], occupied)
        surv += new.sum()
        excess.extend(hs["counts"][new] - m)
    n_empty = 900 - len(occupied)
    assert stats.binomtest(int(surv), n_empty * 60, p).pvalue > 1e-3
    excess = np.array(excess)
    assert np.all(excess >= 0) and np.all(excess == np.rint(excess))
    ex = excess.astype(int)
    observed = [np.sum(ex == 0), np.sum(ex == 1), np.sum(ex == 2), np.sum(ex >= 3)]
    probs = np.array([(1 - r), (1 - r) * r, (1 - r) * r**2, r**3])
    assert stats.chisquare(observed, len(ex) * probs).pvalue > 1e-3
    assert abs(excess.mean() - r / (1 - r)) < 0.2


def test_fitted_synthesizer_stores_only_noisy_counts():
    df = _frame(500)
    s = _synth(epsilon=1.0, mechanism="laplace").fit(df)
    h = s.histograms_[0]
    true = Counter(np.ravel_multi_index(np.array(_bins(s, df)).T, h["shape"]).tolist())
    stored = dict(zip(h["cells"].tolist(), h["counts"].tolist(), strict=True))
    assert all(v != true.get(c, 0) for c, v in stored.items())  # Laplace: a.s. non-integer
    assert not any(
        isinstance(v, np.ndarray) and v.dtype.kind in "iu" and v.size == len(df)
        for v in vars(s).values()
    )


# ------------------------------------------------- bins per integer value, uniform draws
VISITS_BOUNDS = {**BOUNDS, "visits": (0, 9)}


def _visits_frame(n=3000, seed=0):
    """_frame plus a 10-level integer column that depends on smoking."""
    df = _frame(n, seed)
    rng = np.random.default_rng(seed + 1)
    df["visits"] = np.clip(rng.poisson(2 + 4 * df["smoker"].to_numpy()), 0, 9)
    return df


def test_small_integer_domain_gets_one_bin_per_value():
    df = _visits_frame()
    s = _synth(bounds=VISITS_BOUNDS, epsilon=10.0).fit(df)
    lei = lei_n_bins(len(df), df.shape[1])
    assert lei < 10
    assert s.n_bins_["visits"] == 10
    np.testing.assert_array_equal(s.bin_edges_["visits"], np.arange(11))
    assert s.n_bins_["age"] == lei  # 73 integers > max(lei, 32): Lei's groups
    assert s.n_bins_["bmi"] == lei
    out = s.sample(len(df), random_state=0)
    assert out["visits"].dtype == df["visits"].dtype
    assert set(out["visits"]) == set(range(10))  # not 3 representatives
    # the 2-way marginal (visits, smoker) is kept, not only the 1-way ones
    real = pd.crosstab(df["visits"], df["smoker"], normalize=True)
    fake = pd.crosstab(out["visits"], out["smoker"], normalize=True)
    tv = 0.5 * real.sub(fake, fill_value=0).abs().to_numpy().sum()
    assert tv < 0.08
    # the previous rule (Lei's groups, midpoints) loses it
    old = _synth(
        bounds=VISITS_BOUNDS, epsilon=10.0, max_integer_levels=0, representative="midpoint"
    ).fit(df)
    assert old.n_bins_["visits"] == lei
    assert len(np.unique(old.sample(500, random_state=0)["visits"])) <= lei


def test_integer_bin_rule_options():
    df = _visits_frame(1000)
    lei = lei_n_bins(1000, df.shape[1])
    assert _synth(bounds=VISITS_BOUNDS, max_integer_levels=0).fit(df).n_bins_["visits"] == lei
    assert _synth(bounds=VISITS_BOUNDS, max_integer_levels=9).fit(df).n_bins_["visits"] == lei
    assert _synth(bounds=VISITS_BOUNDS, max_integer_levels=10).fit(df).n_bins_["visits"] == 10
    # an explicit bin count is used as given (at most one bin per integer)
    assert _synth(bounds=VISITS_BOUNDS, n_bins=4).fit(df).n_bins_["visits"] == 4
    assert _synth(bounds=VISITS_BOUNDS, n_bins=40).fit(df).n_bins_["visits"] == 10
    s = _synth(bounds=VISITS_BOUNDS, n_bins={"visits": 5}).fit(df)
    assert s.n_bins_["visits"] == 5 and s.n_bins_["bmi"] == lei
    # a dict leaves the other columns to "auto", the per-value rule included
    s = _synth(bounds={**VISITS_BOUNDS, "age": (30, 39)}, n_bins={"bmi": 7}, epsilon=100.0)
    s = s.fit(df)
    assert s.n_bins_["bmi"] == 7 and s.n_bins_["visits"] == 10 and s.n_bins_["age"] == 10
    # a domain at most Lei's bin count was one bin per value before and still is
    df2 = df.assign(visits=df["visits"] % 2)
    s = _synth(bounds={**VISITS_BOUNDS, "visits": (0, 1)}).fit(df2)
    assert s.n_bins_["visits"] == 2
    # integer columns drawn uniformly get one bin per value (no cells are noised)
    s = _synth(bounds=VISITS_BOUNDS, projections=[["age", "bmi"]], max_integer_levels=0).fit(df)
    assert s.n_bins_["visits"] == lei_n_bins(1000, df.shape[1])
    s = _synth(bounds=VISITS_BOUNDS, projections=[["age", "bmi"]]).fit(df)
    assert s.uniform_columns_[-1] == "visits" and s.n_bins_["visits"] == 10
    counts = np.bincount(s.sample(20000, random_state=0)["visits"], minlength=10)
    assert stats.chisquare(counts).pvalue > 1e-3


def _noise_mass(s, n_cells, h):
    """The fitted histogram ``h``'s expected noise-only mass on ``n_cells`` cells."""
    return noise_mass(
        n_cells, h["epsilon"], h["threshold"], mechanism=s.mechanism, secure_mode=s.secure_mode
    )


def _noise_mass_bound(s, n):
    h = s.histograms_[0]
    return _noise_mass(s, math.prod(h["shape"]), h)


def test_per_value_bins_stay_within_the_noise_budget():
    """The expansion stops where noise alone would add more than 0.1 n rows."""
    df = _visits_frame(1000)
    rng = np.random.default_rng(3)
    df["stage"] = rng.integers(1, 6, len(df))
    df["score"] = rng.integers(0, 31, len(df))
    bounds = {**VISITS_BOUNDS, "stage": (1, 5), "score": (0, 30)}
    n, d = len(df), df.shape[1]
    lei = lei_n_bins(n, d)
    for eps in (0.3, 1.0, 3.0, 30.0):
        s = _synth(bounds=bounds, epsilon=eps).fit(df)
        h = s.histograms_[0]
        grid = {"stage": 5, "visits": 10, "score": 31}
        # expansions happen smallest domain first
        expanded = [c for c in grid if s.n_bins_[c] == grid[c]]
        assert expanded == list(grid)[: len(expanded)]
        assert all(s.n_bins_[c] == lei for c in grid if c not in expanded)
        lei_cells = math.prod(h["shape"])
        for c in expanded:
            lei_cells = lei_cells // grid[c] * lei
        budget = max(0.1 * n, _noise_mass(s, lei_cells, h))
        assert _noise_mass_bound(s, n) <= budget
        if len(expanded) < len(grid):  # the next one would break the budget
            nxt = list(grid)[len(expanded)]
            cells = math.prod(h["shape"]) // lei * grid[nxt]
            assert _noise_mass(s, cells, h) > budget
        if eps == 0.3:
            assert expanded == []
        if eps == 30.0:
            assert expanded == list(grid)
    # without noise every small domain gets its values
    s = _synth(bounds=bounds, epsilon=math.inf).fit(df)
    assert [s.n_bins_[c] for c in ("stage", "visits", "score")] == [5, 10, 31]
    # the rule reads n only through n_public: two data sets of different sizes agree
    a = _synth(bounds=bounds, epsilon=1.0, n_public=1000).fit(df.iloc[:400])
    b = _synth(bounds=bounds, epsilon=1.0, n_public=1000).fit(
        _visits_frame(900, seed=5).assign(stage=1, score=0)
    )
    assert a.n_bins_ == b.n_bins_


@pytest.mark.parametrize(
    "mechanism,secure", [("geometric", False), ("laplace", False), ("laplace", True)]
)
def test_noise_mass_matches_simulation(mechanism, secure):
    """noise_mass is the mean total of the surviving counts on empty cells."""
    df = pd.DataFrame({"x": np.zeros(100), "y": np.zeros(100)})
    kw = {"bounds": (0.0, 1.0), "n_bins": 30, "mechanism": mechanism, "secure_mode": secure}
    totals = []
    for seed in range(200):
        s = DPHistogramSynthesizer(epsilon=1.0, random_state=seed, **kw).fit(df)
        h = s.histograms_[0]
        totals.append(h["counts"][h["cells"] != 0].sum())
    expected = _noise_mass(s, 899, h)
    se = np.std(totals) / math.sqrt(len(totals))
    assert abs(np.mean(totals) - expected) < 4 * se + 1e-9
    assert expected > 1  # the check has power


def test_uniform_draws_within_bins_are_the_default():
    assert DPHistogramSynthesizer().representative == "uniform"
    df = _visits_frame(2000)
    s = _synth(bounds=VISITS_BOUNDS, epsilon=1e6).fit(df)
    out = s.sample(20000, random_state=1)
    # continuous: uniform within the bin, never at the midpoint only
    edges = s.bin_edges_["bmi"]
    assert len(np.unique(out["bmi"])) > 1000
    j = np.clip(np.searchsorted(edges, out["bmi"], side="right") - 1, 0, len(edges) - 2)
    u = (out["bmi"] - edges[j]) / (edges[j + 1] - edges[j])
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    # integer groups (age: Lei's groups): uniform among the group's integers
    starts = s.bin_edges_["age"].astype(int)
    assert len(starts) - 1 < 73
    a = out["age"].to_numpy()
    g = np.searchsorted(starts, a, side="right") - 1
    for i in range(len(starts) - 1):
        counts = np.bincount(a[g == i] - starts[i], minlength=starts[i + 1] - starts[i])
        assert len(counts) == starts[i + 1] - starts[i]
        assert stats.chisquare(counts).pvalue > 1e-4
    # every value an integer within the declared bounds, dtype kept
    assert out["age"].dtype == df["age"].dtype and out["age"].between(18, 90).all()
    assert set(out["visits"]) <= set(range(10))


def test_values_within_declared_bounds_and_dtypes_that_hold_them():
    rng = np.random.default_rng(0)
    n = 2000
    df = pd.DataFrame(
        {
            "small": rng.integers(0, 100, n).astype(np.int8),  # int8 data, bound up to 300
            "dose": rng.integers(3, 8, n).astype(np.int64),  # int data declared continuous
            "level": rng.integers(1, 10, n),  # integer bounds that are not integers
        }
    )
    s = DPHistogramSynthesizer(
        epsilon=1e6,
        bounds={"small": (0, 300), "dose": (2.5, 7.5), "level": (0.5, 9.7)},
        column_types={"small": "integer", "dose": "continuous", "level": "integer"},
        n_bins={"small": 4},
        random_state=0,
    ).fit(df)
    out = s.sample(5000, random_state=0)
    # int8 cannot hold 300: the values come back exactly, in a wider integer dtype
    assert out["small"].max() > 127 and out["small"].between(0, 300).all()
    assert out["small"].dtype.kind == "i"
    # a continuous column of int dtype: fractional values are not truncated (2.7 -> 2
    # would leave the bounds), they come back as float
    assert out["dose"].dtype == np.float64
    assert out["dose"].between(2.5, 7.5).all() and (out["dose"] % 1 != 0).any()
    # integer columns: the integers inside the bounds
    assert out["level"].dtype == df["level"].dtype and out["level"].between(1, 9).all()
    assert s.n_bins_["level"] == 9 and set(out["level"]) == set(range(1, 10))
    # midpoint representatives stay within the bounds too, and keep int8 where it holds
    m = DPHistogramSynthesizer(
        epsilon=1e6,
        bounds={"small": (0, 100), "dose": (2.5, 7.5), "level": (0.5, 9.7)},
        column_types={"small": "integer", "dose": "continuous", "level": "integer"},
        representative="midpoint",
        random_state=0,
    ).fit(df.assign(small=df["small"]))
    mid = m.sample(500, random_state=0)
    assert mid["small"].dtype == np.int8 and mid["small"].between(0, 100).all()
    assert mid["dose"].between(2.5, 7.5).all()
    # numpy input: an int array declared continuous comes back as float, not truncated
    X = rng.integers(0, 10, size=(500, 2))
    a = DPHistogramSynthesizer(
        epsilon=1e6, bounds=(0.0, 9.0), column_types=["continuous", "integer"], random_state=0
    ).fit(X)
    Y = a.sample(200, random_state=0)
    assert Y.dtype == np.float64 and (Y[:, 0] % 1 != 0).any()
    assert np.all(Y[:, 1] % 1 == 0) and Y.min() >= 0 and Y.max() <= 9


@pytest.mark.parametrize("sampling", ["systematic", "iid"])
def test_sampled_cell_counts(sampling):
    # systematic: every surviving cell gets its expected number of rows rounded up or
    # down; iid: multinomial counts, off by about sqrt(m p) rows
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.integers(0, 4, 3000), "b": rng.choice(["x", "y"], 3000)})
    est = DPHistogramSynthesizer(
        epsilon=2.0,
        bounds={"a": (0, 3)},
        categories={"b": ["x", "y"]},
        column_types={"a": "integer"},
        sampling=sampling,
        random_state=0,
    ).fit(df)
    (h,) = est.histograms_
    assert h["columns"] == ["a", "b"] and tuple(h["shape"]) == (4, 2)
    m = 333
    worst = []
    for seed in range(5):
        fake = est.sample(m, random_state=seed)
        cell = fake["a"].to_numpy() * 2 + (fake["b"] == "y").to_numpy()
        got = np.bincount(cell, minlength=8)
        want = np.zeros(8)
        want[h["cells"]] = m * h["counts"] / h["counts"].sum()
        worst.append(np.max(np.abs(got - want)))
    if sampling == "systematic":
        assert max(worst) < 1 + 1e-9
    else:
        assert np.mean(worst) > 2


def test_verbose_logs_one_public_record_per_histogram(caplog, capsys):
    # issue 31 item 9: the shared verbose convention through the "skdp" logger
    caplog.set_level("INFO", logger="skdp")
    df = _frame(1000)
    _synth(projections=[["age", "bmi"], ["sex", "blood"]], epsilon=2.0, verbose=1).fit(df)
    recs = [r.skdp_progress for r in caplog.records if hasattr(r, "skdp_progress")]
    assert [(r["estimator"], r["phase"], r["step"], r["total"]) for r in recs] == [
        ("DPHistogramSynthesizer", "histogram", 1, 2),
        ("DPHistogramSynthesizer", "histogram", 2, 2),
    ]
    # the epsilon of the public schedule, no loss, nothing on standard output
    assert [r["epsilon_spent"] for r in recs] == pytest.approx([1.0, 2.0])
    assert all(r["loss"] is None for r in recs)
    out = capsys.readouterr()
    assert out.out == "" and "eps so far" in out.err
    # the same records on a neighbouring data set: nothing in them reads the rows
    caplog.clear()
    _synth(projections=[["age", "bmi"], ["sex", "blood"]], epsilon=2.0).fit(df.iloc[1:])
    again = [r.skdp_progress for r in caplog.records if hasattr(r, "skdp_progress")]
    assert again == recs
    assert capsys.readouterr().err == ""  # verbose=0: logged, not shown
