"""Tests of DPMarginalSynthesizer (MST; McKenna, Miklau & Sheldon 2021)."""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pandas as pd
import pytest

from skdp.accounting import zcdp_delta, zcdp_rho
from skdp.metrics import marginal_total_variation
from skdp.synthesis import DPMarginalSynthesizer, marginal_n_bins
from tests._fixtures import CLINICAL_BOUNDS as BOUNDS
from tests._fixtures import CLINICAL_CATS as CATS
from tests._fixtures import clinical_frame as _frame


def _synth(**kw):
    params = {"epsilon": 1.0, "bounds": BOUNDS, "categories": CATS, "random_state": 0}
    params["selection"] = "mst"  # this file tests MST (test_marginal_aim.py: AIM)
    params.update(kw)
    if isinstance(params["bounds"], dict):  # whole-number columns are declared integer
        params.setdefault(
            "column_types", {c: "integer" for c in ("age", "visits") if c in params["bounds"]}
        )
    return DPMarginalSynthesizer(**params)


def _numeric(df):
    """Categorical columns as declared codes, everything as float (for TV metrics)."""
    out = df.copy()
    for c, levels in CATS.items():
        if c in out:
            out[c] = out[c].map({v: i for i, v in enumerate(levels)})
    return out.astype(float)


# ---------------------------------------------------------------- contract
def test_dataframe_round_trip_dtypes_and_domain():
    df = _frame()
    s = _synth().fit(df)
    fake = s.sample(3000, random_state=0)
    assert list(fake.columns) == list(df.columns)
    assert list(fake.dtypes) == list(df.dtypes)
    assert fake["age"].between(18, 90).all() and fake["bmi"].between(15, 50).all()
    assert fake["visits"].between(0, 9).all()
    assert set(fake["sex"]) <= set(CATS["sex"]) and set(fake["blood"]) <= set(CATS["blood"])
    # values are drawn within their bins, not at a representative point
    assert fake["bmi"].nunique() > 10 * s.n_bins_["bmi"]
    # age has 73 integers in its bounds: more than 32, so it is grouped; visits is not
    assert s.n_bins_["visits"] == 10
    assert s.n_bins_["age"] == marginal_n_bins(len(df), s.noise_scale_["two_way"])
    assert len(s.sample(0)) == 0


def test_numpy_input_gives_numpy_output():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(500, 3))
    s = DPMarginalSynthesizer(selection="mst", epsilon=2.0, bounds=(-1.0, 1.0), random_state=0).fit(
        X
    )
    Z = s.sample(50, random_state=0)
    assert isinstance(Z, np.ndarray) and Z.shape == (50, 3) and Z.dtype == X.dtype
    assert np.all((Z >= -1) & (Z <= 1))


def test_integer_values_stay_integer_and_within_bounds_when_grouped():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"a": rng.integers(0, 1000, 1000), "b": rng.integers(3, 7, 1000)})
    s = DPMarginalSynthesizer(
        selection="mst",
        epsilon=1.0,
        bounds={"a": (0, 999), "b": (3, 6)},
        column_types={"a": "integer", "b": "integer"},
        n_bins=5,
        random_state=0,
    ).fit(df)
    assert s.n_bins_ == {"a": 5, "b": 4}
    fake = s.sample(2000, random_state=0)
    assert fake["a"].dtype == df["a"].dtype
    assert fake["a"].between(0, 999).all() and fake["a"].nunique() > 50
    assert set(fake["b"]) <= {3, 4, 5, 6}


def test_missing_metadata_and_bad_parameters():
    df = _frame(300)
    with pytest.raises(ValueError, match="categor"):
        DPMarginalSynthesizer(selection="mst", bounds=BOUNDS).fit(df)
    for bad in [(1, 1), (1, 0, 1), (1, -1, 1), ("a", 1, 1)]:
        with pytest.raises(ValueError, match="budget_split"), pytest.warns(FutureWarning):
            _synth(budget_split=bad).fit(df)
    for bad in [0.0, -0.5, 1.5, "a"]:
        with pytest.raises(ValueError, match="one_way_fraction"):
            _synth(one_way_fraction=bad).fit(df)
    with pytest.raises(ValueError, match="must add up to 1"):
        _synth(one_way_fraction=0.5).fit(df)
    with pytest.raises(ValueError, match="n_bins"):
        _synth(n_bins={"nope": 3}).fit(df)


def test_determinism_and_order_invariance():
    df = _frame()
    a, b = _synth().fit(df), _synth().fit(df)
    assert a.tree_ == b.tree_
    for c in df.columns:
        np.testing.assert_array_equal(a.noisy_one_way_[c], b.noisy_one_way_[c])
    pd.testing.assert_frame_equal(a.sample(100, random_state=3), b.sample(100, random_state=3))
    # the release is a function of the multiset of rows
    shuffled = df.sample(frac=1.0, random_state=1).reset_index(drop=True)
    c = _synth().fit(shuffled)
    for col in df.columns:
        np.testing.assert_array_equal(a.noisy_one_way_[col], c.noisy_one_way_[col])
    # another seed, other noise; an unseeded sample draws fresh entropy
    d = _synth(random_state=1).fit(df)
    assert any(
        not np.array_equal(a.noisy_one_way_[col], d.noisy_one_way_[col]) for col in df.columns
    )
    assert not a.sample(50).equals(a.sample(50))


# ------------------------------------------------------------------ privacy
def test_privacy_facts_zcdp():
    df = _frame()
    s = _synth(epsilon=1.0, delta=1e-6).fit(df)
    assert (s.epsilon_spent_, s.delta_spent_, s.privacy_guarantee_) == (1.0, 1e-6, "exact")
    assert s.mechanism_ == "gaussian"
    # declared bounds: the whole budget is a zCDP budget, the exact conversion's rho
    assert s.privacy_breakdown_["bounds"] == 0.0
    assert s.rho_ == zcdp_rho(1.0, 1e-6)
    assert zcdp_delta(s.rho_, 1.0) <= 1e-6
    assert math.fsum(s.privacy_breakdown_.values()) == pytest.approx(s.epsilon_spent_, rel=1e-12)
    assert math.fsum(s.rho_breakdown_.values()) == pytest.approx(s.rho_, rel=1e-12)
    # the stages' noise composes to rho: d 1-way and d-1 2-way Gaussians, d-1 EM rounds
    d = df.shape[1]
    sig1, sig2 = s.noise_scale_["one_way"], s.noise_scale_["two_way"]
    eps_r = s._select_epsilon
    rho_1, rho_s, rho_2 = d / (2 * sig1**2), (d - 1) * eps_r**2 / 8, (d - 1) / (2 * sig2**2)
    assert [rho_1, rho_s, rho_2] == pytest.approx(list(s.rho_breakdown_.values()), rel=1e-12)
    assert rho_1 == pytest.approx(s.rho_ / 3) and rho_2 == pytest.approx(s.rho_ / 3)


def test_zcdp_rho_known_value():
    # rho for (1, 1e-5) from the tight conversion (40-digit check in tests/accounting)
    s = _synth(epsilon=1.0, delta=1e-5).fit(_frame(500))
    assert s.rho_ == pytest.approx(0.030556595197639563, rel=1e-9)


def test_privacy_facts_pure_dp_and_budget_fractions():
    df = _frame()
    s = _synth(
        epsilon=2.0, delta=0.0, one_way_fraction=0.5, selection_fraction=0.25, two_way_fraction=0.25
    ).fit(df)
    assert (s.epsilon_spent_, s.delta_spent_, s.privacy_guarantee_) == (2.0, 0.0, "exact")
    assert s.rho_ is None and s.mechanism_ == "laplace"
    d = df.shape[1]
    eps_1 = d / s.noise_scale_["one_way"]
    eps_s = (d - 1) * s._select_epsilon
    eps_2 = (d - 1) / s.noise_scale_["two_way"]
    assert [eps_1, eps_s, eps_2] == pytest.approx([1.0, 0.5, 0.5])
    bd = s.privacy_breakdown_
    assert [bd["one_way"], bd["selection"], bd["two_way"]] == pytest.approx([1.0, 0.5, 0.5])
    assert math.fsum(bd.values()) == pytest.approx(2.0, rel=1e-12)
    assert all(v.dtype.kind == "i" for v in s.noisy_one_way_.values())
    assert all(v.dtype.kind == "i" for v in s.noisy_two_way_.values())


@pytest.mark.filterwarnings("ignore::skdp.exceptions.BoundsEstimateWarning")
def test_private_bounds_are_charged_inside_the_budget():
    df = _frame()
    for delta in (0.0, 1e-5):
        s = DPMarginalSynthesizer(
            selection="mst",
            epsilon=1.0,
            delta=delta,
            bounds="private",  # the opt-in: too few rows for a reliable estimate
            categories=CATS,
            random_state=0,
        )
        s.fit(df)
        assert s.privacy_breakdown_["bounds"] == pytest.approx(0.1)
        assert math.fsum(s.privacy_breakdown_.values()) == pytest.approx(1.0, rel=1e-12)
        assert s.epsilon_spent_ == 1.0
        if delta:
            # the better of (0.1 then 0.9 in (eps, delta)) and (0.1^2/2 inside zCDP)
            seq = zcdp_rho(0.9, delta)
            inside = zcdp_rho(1.0, delta) - 0.1**2 / 2
            assert s.rho_ == pytest.approx(max(seq, inside), rel=1e-9)
            assert s.rho_ > seq
            assert zcdp_delta(s.rho_ + 0.1**2 / 2, 1.0) <= delta


def test_epsilon_inf_and_data_opt_in_are_not_private():
    df = _frame(300)
    s = _synth(epsilon=math.inf).fit(df)
    assert s.epsilon_spent_ == math.inf and s.privacy_guarantee_ == "none"
    assert s.mechanism_ == "none"


def test_selection_score_sensitivity_brute_force():
    """Adding or removing any one row moves every pair's score by at most 1."""
    from skdp.synthesis._marginal_model import _SCORE_SENSITIVITY, _selection_scores

    rng = np.random.default_rng(0)
    csizes = [3, 2, 4]
    pairs = [(0, 1), (0, 2), (1, 2)]
    for _ in range(20):
        Bc = np.column_stack([rng.integers(0, k, 15) for k in csizes])
        p1 = [rng.dirichlet(np.ones(k)) for k in csizes]  # a fixed (released) model
        n_hat = rng.uniform(5, 30)
        base = _selection_scores(Bc, csizes, p1, n_hat, pairs)
        neighbours = [np.delete(Bc, i, axis=0) for i in range(len(Bc))]
        neighbours += [np.vstack([Bc, row]) for row in itertools.product(*map(range, csizes))]
        for other in neighbours:
            diff = np.abs(_selection_scores(other, csizes, p1, n_hat, pairs) - base)
            assert diff.max() <= _SCORE_SENSITIVITY + 1e-12
    assert _SCORE_SENSITIVITY == 1.0


def test_one_way_noise_scale():
    # 8 categorical columns of 60 levels, 5 fits: 2400 residuals of the 1-way release
    rng = np.random.default_rng(0)
    levels = [f"l{i}" for i in range(60)]
    df = pd.DataFrame({f"c{j}": rng.choice(levels, 3000) for j in range(8)})
    cats = {c: levels for c in df.columns}
    for delta, expected_sd in ((1e-5, "gaussian"), (0.0, "laplace")):
        res = []
        for seed in range(5):
            s = DPMarginalSynthesizer(
                selection="mst", epsilon=1.0, delta=delta, categories=cats, random_state=seed
            ).fit(df)
            for c in df.columns:
                true = df[c].map({v: i for i, v in enumerate(levels)}).value_counts()
                true = true.reindex(range(60), fill_value=0).to_numpy()
                res.append(s.noisy_one_way_[c] - true)
        res = np.concatenate(res)
        scale = s.noise_scale_["one_way"]
        sd = scale if expected_sd == "gaussian" else math.sqrt(2) * scale
        assert abs(res.mean()) < 4 * sd / math.sqrt(len(res))
        assert res.std() == pytest.approx(sd, rel=0.08)
        if expected_sd == "laplace":  # heavier tails than a Gaussian of the same sd
            assert np.mean(np.abs(res)) == pytest.approx(scale, rel=0.08)


def test_two_way_noise_scale():
    rng = np.random.default_rng(1)
    levels = [f"l{i}" for i in range(20)]
    df = pd.DataFrame({f"c{j}": rng.choice(levels, 4000) for j in range(4)})
    cats = {c: levels for c in df.columns}
    res = []
    for seed in range(4):
        s = DPMarginalSynthesizer(
            selection="mst", epsilon=3.0, categories=cats, compress=False, random_state=seed
        ).fit(df)
        for (a, b), noisy in s.noisy_two_way_.items():
            ia = df[a].map({v: i for i, v in enumerate(levels)}).to_numpy()
            ib = df[b].map({v: i for i, v in enumerate(levels)}).to_numpy()
            true = np.bincount(ia * 20 + ib, minlength=400).reshape(20, 20)
            res.append((noisy - true).ravel())
    res = np.concatenate(res)
    assert res.std() == pytest.approx(s.noise_scale_["two_way"], rel=0.08)


# ------------------------------------------------------------------ model
def test_model_is_consistent_and_normalised():
    df = _frame()
    s = _synth().fit(df)
    for p in s.node_marginals_.values():
        assert np.all(p >= 0) and p.sum() == pytest.approx(1.0)
    for (a, b), t in s.edge_marginals_.items():
        assert np.all(t >= 0)
        np.testing.assert_allclose(t.sum(axis=1), s.node_marginals_[a], atol=1e-8)
        np.testing.assert_allclose(t.sum(axis=0), s.node_marginals_[b], atol=1e-8)
    assert len(s.tree_) == df.shape[1] - 1
    # a spanning tree: every column is reached
    assert {c for e in s.tree_ for c in e} == set(df.columns)


def test_score_samples_is_a_normalised_density_on_a_finite_domain():
    rng = np.random.default_rng(0)
    cats = {"a": ["x", "y", "z"], "b": ["u", "v"], "c": ["p", "q", "r", "s"]}
    df = pd.DataFrame({k: rng.choice(v, 500) for k, v in cats.items()})
    s = DPMarginalSynthesizer(selection="mst", epsilon=1.0, categories=cats, random_state=0).fit(df)
    grid = pd.DataFrame(list(itertools.product(*cats.values())), columns=list(cats))
    assert np.exp(s.score_samples(grid)).sum() == pytest.approx(1.0)
    assert np.isfinite(s.score(df))
    # numeric values outside the bounds have zero density
    s2 = _synth().fit(_frame(500))
    row = _frame(3)
    row.loc[0, "bmi"] = 99.0
    lp = s2.score_samples(row)
    assert lp[0] == -np.inf and np.all(np.isfinite(lp[1:]))


def test_two_way_structure_is_preserved_at_large_epsilon():
    df = _frame(20000, seed=2)
    s = _synth(epsilon=50.0).fit(df)
    fake = s.sample(20000, random_state=0)
    R, S = _numeric(df), _numeric(fake)
    pair = ["outcome", "visits"]
    tv = marginal_total_variation(R[pair], S[pair], way=2)
    # an independent model of the same 1-way marginals is far off
    indep, perm = S.copy(), np.random.default_rng(0)
    for c in indep.columns:
        indep[c] = perm.permutation(indep[c].to_numpy())
    tv_indep = marginal_total_variation(R[pair], indep[pair], way=2)
    assert tv < 0.04 < 0.2 < tv_indep
    assert ("outcome", "visits") in s.tree_ or ("visits", "outcome") in s.tree_
    assert marginal_total_variation(R, S, way=2) < 0.06
    assert marginal_total_variation(R, S, way=1) < 0.03


def test_no_collapse_every_declared_level_appears():
    df = _frame(5000, seed=3)
    for eps in (1.0, 20.0):
        s = _synth(epsilon=eps).fit(df)
        fake = s.sample(5000, random_state=0)
        assert set(fake["blood"]) == set(CATS["blood"])  # AB is 5 % of the rows
        assert set(fake["sex"]) == set(CATS["sex"])
        assert fake["smoker"].nunique() == 2 and fake["outcome"].nunique() == 2
        if eps > 10:
            assert set(fake["visits"]) == set(range(10))


def test_one_and_two_columns():
    rng = np.random.default_rng(0)
    one = pd.DataFrame({"x": rng.normal(0, 1, 500)})
    s = DPMarginalSynthesizer(selection="mst", epsilon=1.0, bounds=(-4.0, 4.0), random_state=0).fit(
        one
    )
    assert s.tree_ == [] and s.privacy_breakdown_["selection"] == 0.0
    assert s.rho_breakdown_["one_way"] == pytest.approx(s.rho_)
    assert len(s.sample(10)) == 10
    two = pd.DataFrame({"x": rng.normal(0, 1, 500), "y": rng.normal(0, 1, 500)})
    s = DPMarginalSynthesizer(selection="mst", epsilon=1.0, bounds=(-4.0, 4.0), random_state=0).fit(
        two
    )
    assert s.tree_ == [("x", "y")] and s.privacy_breakdown_["selection"] == 0.0
    assert math.fsum(s.privacy_breakdown_.values()) == pytest.approx(1.0, rel=1e-12)


def test_compression_merges_rare_levels_and_still_samples_them():
    rng = np.random.default_rng(0)
    levels = [f"l{i}" for i in range(40)]
    p = np.r_[np.full(4, 0.24), np.full(36, 0.04 / 36)]
    df = pd.DataFrame({"a": rng.choice(levels, 2000, p=p), "b": rng.choice(["u", "v"], 2000)})
    s = DPMarginalSynthesizer(
        selection="mst", epsilon=0.5, categories={"a": levels, "b": ["u", "v"]}, random_state=0
    ).fit(df)
    assert s.supports_["a"][:4].all() and s.supports_["a"].sum() < 40
    assert s.node_marginals_["a"].shape == (s.supports_["a"].sum() + 1,)
    fake = s.sample(20000, random_state=0)
    assert fake["a"].nunique() > 20
    # the merged levels' law given the rare value keeps the density normalised
    grid = pd.DataFrame(list(itertools.product(levels, ["u", "v"])), columns=["a", "b"])
    assert np.exp(s.score_samples(grid)).sum() == pytest.approx(1.0)


@pytest.mark.slow  # a speed target (about 0.4 s measured; benchmarks/marginal.py times it)
def test_fit_time_10000_by_10():
    rng = np.random.default_rng(0)
    n = 10000
    X = pd.DataFrame({f"x{j}": rng.normal(0, 1, n) for j in range(6)})
    X["x1"] = X["x0"] + 0.5 * X["x1"]
    for j in range(4):
        X[f"c{j}"] = rng.choice(["a", "b", "c", "d", "e"], n)
    cats = {f"c{j}": ["a", "b", "c", "d", "e"] for j in range(4)}
    for eps in (1.0, 100.0):
        t0 = time.perf_counter()
        s = DPMarginalSynthesizer(
            selection="mst", epsilon=eps, bounds=(-5.0, 5.0), categories=cats, random_state=0
        ).fit(X)
        s.sample(n, random_state=0)
        assert time.perf_counter() - t0 < 10.0


# ------------------------------------------------------------ systematic sampling
def test_systematic_draw_rounds_the_counts_of_every_parent_group():
    from skdp.synthesis._marginal_model import _draw_systematic

    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(7), size=3)
    cdf = np.cumsum(probs * 5.0, axis=1)  # unnormalised rows, as the model's CDFs may be
    parent = rng.permutation(np.repeat([0, 1, 2], [13, 50, 201]))
    out = _draw_systematic(rng, cdf, parent)
    for a, g in zip((0, 1, 2), (13, 50, 201), strict=True):
        counts = np.bincount(out[parent == a], minlength=7)
        expected = g * probs[a]
        assert counts.sum() == g
        assert np.all(counts >= np.floor(expected - 1e-9))
        assert np.all(counts <= np.ceil(expected + 1e-9))


def test_systematic_draw_each_row_is_an_exact_draw():
    # one row's value over many independent calls follows its CDF (the draws are
    # dependent across rows, never biased); a wrong offset would skew row 0's law
    from skdp.synthesis._marginal_model import _draw_systematic

    p = np.array([0.5, 0.3, 0.15, 0.05])
    cdf = np.cumsum(p)[None, :]
    rng = np.random.default_rng(1)
    reps = 20000
    first = np.array([_draw_systematic(rng, cdf, np.zeros(3, np.int64))[0] for _ in range(reps)])
    freq = np.bincount(first, minlength=4) / reps
    assert np.all(np.abs(freq - p) < 4 * np.sqrt(p * (1 - p) / reps))
    assert _draw_systematic(rng, cdf, np.zeros(0, np.int64)).shape == (0,)


@pytest.mark.parametrize("selection", ["mst", "aim"])
def test_systematic_sample_has_less_sampling_noise_than_iid(selection):
    # the sample's 1-way counts of the first column drawn match the model's expected
    # counts to one row; independent rows miss them by about sqrt(n p)
    df = _frame(3000, seed=4)
    fits = {s: _synth(selection=selection, sampling=s).fit(df) for s in ("systematic", "iid")}
    errs = {}
    for s, est in fits.items():
        if selection == "mst":
            col, p = est.schema_.names[0], est.node_marginals_[est.schema_.names[0]]
        else:
            sep, new, cdf = est._aim_order[0]
            assert not sep
            col, p = None, np.diff(np.r_[0.0, cdf[0]]) / cdf[0][-1]
        errs[s] = []
        for seed in range(5):
            comp = est._compressed_draw(400, np.random.default_rng(seed))
            j = 0 if col is not None else new[0]
            if col is None and len(new) > 1:
                sizes = [est._csizes[c] for c in new]
                flat = np.ravel_multi_index(tuple(comp[c] for c in new), sizes)
            else:
                flat = comp[j]
            counts = np.bincount(flat, minlength=len(p))
            errs[s].append(np.max(np.abs(counts - 400 * p)))
    assert max(errs["systematic"]) < 1 + 1e-9
    assert np.mean(errs["iid"]) > 2


def test_sampling_reads_only_the_fitted_model():
    # the same fitted model sampled both ways; the sample changes, the model does not
    df = _frame(1500, seed=5)
    est = _synth().fit(df)
    one_way = {c: v.copy() for c, v in est.noisy_one_way_.items()}
    systematic = est.sample(200, random_state=0)
    iid = est.set_params(sampling="iid").sample(200, random_state=0)
    assert not systematic.equals(iid)
    for c, v in one_way.items():
        np.testing.assert_array_equal(est.noisy_one_way_[c], v)
    with pytest.raises(ValueError, match="sampling"):
        _synth(sampling="stratified").fit(df)


@pytest.mark.parametrize("selection", ["mst", "aim"])
@pytest.mark.parametrize("delta", [0.0, 1e-5])
def test_verbose_logs_public_stages(caplog, capsys, selection, delta):
    # issue 31 item 9: one record per stage, the epsilon of the public budget split (not
    # AIM's number of rounds, which depends on the releases)
    caplog.set_level("INFO", logger="skdp")
    df = _frame(1000)
    params = dict(
        epsilon=1.0,
        delta=delta,
        bounds=BOUNDS,
        categories=CATS,
        column_types={"age": "integer", "visits": "integer"},
        selection=selection,
        random_state=0,
    )
    synth = DPMarginalSynthesizer(verbose=1, **params).fit(df)
    recs = [r.skdp_progress for r in caplog.records if hasattr(r, "skdp_progress")]
    phases = ["one_way", "selection", "two_way"] if selection == "mst" else ["one_way", "rounds"]
    assert [r["phase"] for r in recs] == phases
    assert [r["step"] for r in recs] == list(range(1, len(phases) + 1))
    assert all(r["total"] == len(phases) and r["loss"] is None for r in recs)
    spent = [r["epsilon_spent"] for r in recs]
    assert spent == sorted(spent) and spent[-1] == pytest.approx(synth.epsilon_spent_)
    assert spent[0] == pytest.approx(synth.privacy_breakdown_["one_way"])
    out = capsys.readouterr()
    assert out.out == "" and "eps so far" in out.err
    caplog.clear()
    DPMarginalSynthesizer(**params).fit(df.iloc[1:])  # a neighbour: the same records
    assert [r.skdp_progress for r in caplog.records if hasattr(r, "skdp_progress")] == recs


def test_deprecated_noise_reads_mechanism_and_noise_scale():
    """noise_ (the layout before the fitted vocabulary) still reads for one release."""
    df = pd.DataFrame({"x": [0, 1, 2, 3] * 50, "y": [0, 1] * 100})
    s = DPMarginalSynthesizer(
        epsilon=1.0, bounds={"x": (0, 3), "y": (0, 1)}, selection="mst", random_state=0
    ).fit(df)
    assert set(s.noise_scale_) == {"one_way", "two_way"} <= set(s.privacy_breakdown_)
    assert "selection" in s.privacy_breakdown_ and "select" not in s.privacy_breakdown_
    with pytest.warns(FutureWarning, match="noise_ is deprecated"):
        old = s.noise_
    assert old["mechanism"] == s.mechanism_
    assert old["one_way_scale"] == s.noise_scale_["one_way"]
    assert old["two_way_scale"] == s.noise_scale_["two_way"]
    assert "noise_" not in vars(s)
