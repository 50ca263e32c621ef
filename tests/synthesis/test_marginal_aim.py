"""Tests of DPMarginalSynthesizer(selection="aim"): AIM's annealed adaptive rounds
(McKenna et al. 2022) and the graphical model on a junction tree fitted to them."""

from __future__ import annotations

import io
import itertools
import math
import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from skdp.accounting import zcdp_delta, zcdp_rho
from skdp.synthesis import DPMarginalSynthesizer
from skdp.synthesis._marginal_aim import (
    _ANNEAL_FACTOR,
    _ANNEAL_FACTOR_PURE,
    MAX_CLIQUE_CELLS,
    MAX_MODEL_CELLS,
    candidate_sets,
    fits_caps,
    marginal_counts,
    quality_scores,
    select_admissible,
)
from skdp.synthesis._marginal_pgm import JunctionTree, fit_model, triangulate
from skdp.synthesis._marginal_plan import _ROUNDS_PER_COLUMN
from tests._fixtures import CLINICAL_BOUNDS as BOUNDS
from tests._fixtures import CLINICAL_CATS as CATS
from tests._fixtures import clinical_frame as _frame
from tests._fixtures import clinical_table, collapse_problems


def _synth(**kw):
    params = {
        "epsilon": 1.0,
        "bounds": BOUNDS,
        "categories": CATS,
        "random_state": 0,
        "selection": "aim",
    }
    params.update(kw)
    if isinstance(params["bounds"], dict):  # whole-number columns are declared integer
        params.setdefault(
            "column_types", {c: "integer" for c in ("age", "visits") if c in params["bounds"]}
        )
    return DPMarginalSynthesizer(**params)


def _xor_frame(n, seed=0):
    """Four 4-level columns; ``c = (a + b) mod 4``: pairwise independent, jointly
    determined (a strong 3-column dependency that no tree of 2-way marginals holds)."""
    rng = np.random.default_rng(seed)
    a, b, e = rng.integers(0, 4, n), rng.integers(0, 4, n), rng.integers(0, 4, n)
    levels = ["0", "1", "2", "3"]
    cols = {"a": a, "b": b, "c": (a + b) % 4, "e": e}
    df = pd.DataFrame({k: np.array(levels)[v] for k, v in cols.items()})
    return df, {k: levels for k in cols}


# ---------------------------------------------------------------- budget
def _check_schedule(charges, total, d, factor):
    """AIM's annealing: the first round gets ``total / (16 d)``; each later one the
    same, ``factor`` times more, or (the last) all that is left; nothing is left over."""
    first = total / (_ROUNDS_PER_COLUMN * d)
    assert charges[0] == pytest.approx(first, rel=1e-9)
    assert math.fsum(charges) == pytest.approx(total, rel=1e-9)
    for prev, cur in zip(charges[:-2], charges[1:-1], strict=True):
        assert cur == pytest.approx(prev, rel=1e-9) or cur == pytest.approx(factor * prev, rel=1e-9)
    assert charges[-1] > 0


def test_budget_adds_up_zcdp():
    df = _frame()
    s = _synth(epsilon=1.0, delta=1e-6).fit(df)
    d = df.shape[1]
    assert (s.epsilon_spent_, s.delta_spent_, s.privacy_guarantee_) == (1.0, 1e-6, "exact")
    assert s.rho_ == zcdp_rho(1.0, 1e-6) and zcdp_delta(s.rho_, 1.0) <= 1e-6
    assert math.fsum(s.privacy_breakdown_.values()) == pytest.approx(1.0, rel=1e-12)
    assert math.fsum(s.rho_breakdown_.values()) == pytest.approx(s.rho_, rel=1e-12)
    per_round = [r["rho_selection"] + r["rho_measurement"] for r in s.rounds_]
    rho_1 = d / (2 * s.noise_scale_["one_way"] ** 2)
    assert rho_1 == pytest.approx(s.rho_ / 3, rel=1e-12)
    assert rho_1 + math.fsum(per_round) == pytest.approx(s.rho_, rel=1e-12)
    _check_schedule(per_round, s.rho_ * 2 / 3, d, _ANNEAL_FACTOR)
    assert len(s.rounds_) > d  # the annealed schedule starts with 16 d rounds' budget
    # the noise realises the charged rho: a Gaussian of sigma is 1/(2 sigma^2)-zCDP,
    # an exponential mechanism of epsilon_r is epsilon_r^2/8-zCDP (sensitivity 1)
    for r in s.rounds_:
        assert 1 / (2 * r["noise_scale"] ** 2) == pytest.approx(r["rho_measurement"], rel=1e-9)
        assert r["rho_measurement"] == pytest.approx(9 * r["rho_selection"], rel=1e-9)
    r0 = s.rounds_[0]
    assert s.noise_scale_["two_way"] == r0["noise_scale"]
    assert s._select_epsilon**2 / 8 == pytest.approx(r0["rho_selection"], rel=1e-9)
    # every released measurement is an integer table
    assert all(t.dtype.kind == "i" for ts in s.noisy_marginals_.values() for t in ts)
    assert sum(len(ts) for ts in s.noisy_marginals_.values()) == len(s.rounds_)
    assert s.tree_ is None and s.edge_marginals_ is None and s.noisy_two_way_ is None


def test_budget_adds_up_pure_dp():
    df = _frame()
    s = _synth(
        epsilon=2.0, delta=0.0, one_way_fraction=0.5, selection_fraction=0.25, two_way_fraction=0.25
    ).fit(df)
    d = df.shape[1]
    assert (s.epsilon_spent_, s.delta_spent_, s.rho_) == (2.0, 0.0, None)
    assert s.mechanism_ == "laplace"
    bd = s.privacy_breakdown_
    assert bd["one_way"] == pytest.approx(1.0) and d / s.noise_scale_["one_way"] == 1.0
    per_round = [r["epsilon_selection"] + r["epsilon_measurement"] for r in s.rounds_]
    _check_schedule(per_round, 1.0, d, _ANNEAL_FACTOR_PURE)
    for r in s.rounds_:
        assert r["rho_measurement"] is None if "rho_measurement" in r else True
        assert 1 / r["noise_scale"] == pytest.approx(r["epsilon_measurement"])
    assert s._select_epsilon == pytest.approx(s.rounds_[0]["epsilon_selection"])
    assert bd["one_way"] + math.fsum(per_round) == pytest.approx(2.0, rel=1e-12)
    assert math.fsum(bd.values()) == pytest.approx(2.0, rel=1e-12)


def test_without_noise_there_are_d_rounds_and_nothing_is_charged():
    df = _frame(800)
    s = _synth(epsilon=math.inf).fit(df)
    assert len(s.rounds_) == df.shape[1]
    assert all(r["rho_measurement"] is None and r["noise_scale"] == 0.0 for r in s.rounds_)
    assert s.epsilon_spent_ == math.inf


# --------------------------------------------------------- randomness
def test_determinism_under_an_int_seed_and_fresh_noise_otherwise():
    df = _frame()
    a, b = _synth().fit(df), _synth().fit(df)
    assert a.cliques_ == b.cliques_ and a.rounds_ == b.rounds_
    for k, ts in a.noisy_marginals_.items():
        for t, u in zip(ts, b.noisy_marginals_[k], strict=True):
            np.testing.assert_array_equal(t, u)
    pd.testing.assert_frame_equal(a.sample(200, random_state=3), b.sample(200, random_state=3))
    c = _synth(random_state=1).fit(df)
    assert any(
        not np.array_equal(a.noisy_one_way_[col], c.noisy_one_way_[col]) for col in df.columns
    )
    assert not a.sample(50).equals(a.sample(50))


class _Audit(pickle.Unpickler):
    def __init__(self, data):
        super().__init__(io.BytesIO(data))
        self.loaded = []

    def find_class(self, module, name):
        self.loaded.append(f"{module}.{name}")
        return super().find_class(module, name)


def test_pickle_and_clone_carry_no_seed_material():
    df = _frame(500)
    for seed in (0, None):
        s = _synth(random_state=seed).fit(df)
        audit = _Audit(pickle.dumps(s))
        restored = audit.load()
        assert not [c for c in audit.loaded if c.startswith("numpy.random")], audit.loaded
        pd.testing.assert_frame_equal(
            restored.sample(20, random_state=1), s.sample(20, random_state=1)
        )
        fresh = clone(s)
        assert fresh.get_params()["random_state"] == seed
        assert fresh.get_params()["selection"] == "aim"
        assert not [k for k in vars(fresh) if k.endswith("_") and not k.startswith("_")]


# ------------------------------------------------------------ sampling
def test_sampling_validity_and_model():
    df = _frame(3000, seed=1)
    s = _synth(epsilon=3.0).fit(df)
    fake = s.sample(3000, random_state=0)
    assert list(fake.columns) == list(df.columns)
    assert list(fake.dtypes) == list(df.dtypes)
    assert fake["age"].between(18, 90).all() and fake["bmi"].between(15, 50).all()
    assert set(fake["blood"]) <= set(CATS["blood"]) and set(fake["sex"]) == {"F", "M"}
    assert fake["visits"].isin(range(10)).all()
    assert fake["outcome"].nunique() == 2 and fake["smoker"].nunique() == 2
    for c, t in s.clique_marginals_.items():
        assert t.ndim == len(c) and t.size <= MAX_CLIQUE_CELLS
        assert np.all(t >= 0) and t.sum() == pytest.approx(1.0)
    assert sum(t.size for t in s.clique_marginals_.values()) <= MAX_MODEL_CELLS
    # every measured marginal lies in a clique; every column in exactly the cliques
    # of one connected subtree (checked on the model in test_junction_tree_*)
    picks = {r["marginal"] for r in s.rounds_}
    assert picks == set(s.noisy_marginals_)
    assert all(any(set(p) <= set(c) for c in s.cliques_) for p in picks)
    assert sorted({col for c in s.cliques_ for col in c}) == sorted(df.columns)
    # the model agrees with itself: a column's distribution is the same in every clique
    for col in df.columns:
        margins = [
            t.sum(axis=tuple(i for i, x in enumerate(c) if x != col))
            for c, t in s.clique_marginals_.items()
            if col in c
        ]
        for m in margins:
            np.testing.assert_allclose(m, s.node_marginals_[col], atol=1e-9)
    assert np.all(np.isfinite(s.score_samples(df)))


def test_score_samples_is_a_normalised_density_on_a_finite_domain():
    df, cats = _xor_frame(2000)
    s = DPMarginalSynthesizer(epsilon=5.0, categories=cats, selection="aim", random_state=0).fit(df)
    grid = pd.DataFrame(list(itertools.product(*cats.values())), columns=list(cats))
    assert np.exp(s.score_samples(grid)).sum() == pytest.approx(1.0)


def _brute_joint(tree, theta):
    sizes = tree.sizes
    full = np.zeros(sizes)
    for x in itertools.product(*[range(k) for k in sizes]):
        full[x] = np.exp(
            sum(t[tuple(x[j] for j in c)] for c, t in zip(tree.cliques, theta, strict=True))
        )
    return full / full.sum()


def _margin(full, cols):
    return full.sum(axis=tuple(i for i in range(full.ndim) if i not in cols))


def test_triangulation_gives_a_junction_tree():
    sizes = [2, 3, 4, 2, 3, 2, 2]
    sets = [(0, 1), (1, 2), (2, 3), (0, 3), (4, 5), (1, 2, 4)]  # a 4-cycle: needs a chord
    tree = JunctionTree(triangulate(sizes, sets), sizes)
    assert all(any(set(s) <= set(c) for c in tree.cliques) for s in sets)
    assert (6,) in tree.cliques  # a column in no set is its own clique
    assert not any(set(a) < set(b) for a in tree.cliques for b in tree.cliques)
    # running intersection: the cliques holding a column form a connected subtree
    for j in range(len(sizes)):
        holders = {k for k, c in enumerate(tree.cliques) if j in c}
        tops = [k for k in holders if tree.parent[k] not in holders]
        assert len(tops) == 1
        for k in holders - set(tops):
            assert j in tree.sep[k]


def test_belief_propagation_and_marginals_are_exact():
    rng = np.random.default_rng(0)
    sizes = [2, 3, 4, 2, 3, 2]
    tree = JunctionTree(
        triangulate(sizes, [(0, 1), (1, 2), (2, 3), (0, 3), (4, 5), (1, 2, 4)]), sizes
    )
    theta = [rng.normal(size=s) for s in tree.shapes]
    mu = tree.calibrate(theta)
    full = _brute_joint(tree, theta)
    for c, m in zip(tree.cliques, mu, strict=True):
        np.testing.assert_allclose(m, _margin(full, c), atol=1e-12)
    # any set of columns, also across cliques (the subtree elimination)
    shared = {}  # one cache across queries of the same model, as the scores use it
    for cols in [(0, 5), (3, 4), (0, 2, 5), (1, 3, 5), (0, 4), (5,)]:
        np.testing.assert_allclose(tree.marginal(mu, cols), _margin(full, cols), atol=1e-12)
        np.testing.assert_allclose(tree.marginal(mu, cols, shared), _margin(full, cols), atol=1e-12)
    # a star: the centre clique has several children on the query's subtree
    star = JunctionTree(
        triangulate([3, 2, 2, 2, 2], [(0, 1), (0, 2), (0, 3), (0, 4)]), [3, 2, 2, 2, 2]
    )
    theta_s = [rng.normal(size=s) for s in star.shapes]
    mu_s, full_s = star.calibrate(theta_s), _brute_joint(star, theta_s)
    shared = {}
    for cols in [(1, 2), (1, 2, 3), (2, 4), (1, 3, 4), (0, 4)]:
        got = star.marginal(mu_s, cols, shared)
        np.testing.assert_allclose(got, _margin(full_s, cols), atol=1e-12)
    # ancestral sampling order: every column drawn exactly once, from its clique
    order = tree.sampling_order(mu, [tree.marginal(mu, (j,)) for j in range(len(sizes))])
    assert sorted(j for _, new, _ in order for j in new) == list(range(len(sizes)))
    for sep, new, cond in order:
        assert cond.shape == (math.prod(sizes[j] for j in sep), math.prod(sizes[j] for j in new))
        np.testing.assert_allclose(cond.sum(axis=1), 1.0)


def test_marginal_across_cliques_is_finite_when_a_separator_state_is_nearly_impossible():
    # a separator cell of mass ~1e-310 (subnormal): its reciprocal overflows to inf and
    # inf * 0 made the scores NaN (seen in the privacy audit at epsilon = 1)
    sizes = [2, 2, 2]
    tree = JunctionTree([(0, 1), (1, 2)], sizes)
    theta = [np.array([[0.0, -712.0], [0.0, -712.0]]), np.zeros((2, 2))]
    mu = tree.calibrate(theta)
    assert 0 < mu[tree.home((1,))].sum(axis=0)[1] < 1e-300
    m = tree.marginal(mu, (0, 2))
    assert np.all(np.isfinite(m)) and m.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(m, 0.25, atol=1e-12)


def test_mirror_descent_recovers_consistent_measurements():
    rng = np.random.default_rng(1)
    sizes = [3, 3, 2, 4]
    sets = [(0, 1), (1, 2, 3)]
    truth = JunctionTree(triangulate(sizes, sets), sizes)
    theta = [rng.normal(size=s) for s in truth.shapes]
    mu = truth.calibrate(theta)
    n = 1000.0
    meas = [((j,), n * truth.marginal(mu, (j,)), 1.0) for j in range(4)]
    meas += [(c, n * truth.marginal(mu, c), 1.0) for c in [(0, 1), (1, 2, 3), (2, 3)]]
    tree, _, fit = fit_model(sizes, meas, n, n_iter=3000)
    for c in [(0, 1), (1, 2, 3), (0, 3)]:
        np.testing.assert_allclose(tree.marginal(fit, c), truth.marginal(mu, c), atol=2e-3)
    # a measurement inside a clique (here (2, 3) in (1, 2, 3)) is fitted on that clique
    assert tree.home((2, 3)) == tree.home((1, 2, 3))


def test_admissible_candidates_respect_the_size_caps():
    csizes = [30, 30, 30, 30, 2]
    cands = candidate_sets(csizes)
    assert (0, 1, 2) not in cands  # 27,000 cells

    def live(measured):
        tree = JunctionTree(triangulate(csizes, measured), csizes)
        return [c for c in cands if fits_caps(csizes, measured, c, tree)]

    assert {(0, 1), (2, 3), (0, 1, 4)} <= set(live([(0, 1)]))
    # (0, 1) and (1, 2) measured: (0, 2) would close a triangle of 27,000 cells and is
    # refused; re-measurements are always admissible
    after = live([(0, 1), (1, 2)])
    assert (0, 2) not in after and (0, 1) in after and (1, 2) in after


def test_selection_among_admissible_candidates_is_the_restricted_exponential_mechanism():
    """Refusing inadmissible draws and drawing again gives exactly the exponential
    mechanism over the admissible candidates."""
    score = np.array([3.0, 2.0, 0.0, 1.0, 2.5])
    cands = [(0, 1), (0, 2), (1, 2), (2, 3), (1, 3)]
    allowed = {(0, 2), (1, 2), (2, 3)}  # the two best-scoring are refused
    checked = []

    def fits(c):
        checked.append(c)
        return c in allowed

    rng = np.random.default_rng(0)
    eps, n = 2.0, 20_000
    draws = [select_admissible(score, cands, fits, epsilon=eps, rng=rng) for _ in range(n)]
    w = np.array(
        [math.exp(eps * s / 2) if c in allowed else 0.0 for s, c in zip(score, cands, strict=True)]
    )
    expected = w / w.sum()
    freq = np.array([draws.count(c) / n for c in cands])
    np.testing.assert_allclose(freq, expected, atol=0.012)
    assert select_admissible(score, cands, lambda c: False, epsilon=eps, rng=rng) is None


# ------------------------------------------------------------- utility
def test_three_column_dependency_is_kept_where_a_tree_cannot():
    df, cats = _xor_frame(6000, seed=2)
    hits = {}
    for selection in ("mst", "aim"):
        s = DPMarginalSynthesizer(
            epsilon=20.0, categories=cats, selection=selection, random_state=0
        ).fit(df)
        fake = s.sample(6000, random_state=0).astype(int)
        hits[selection] = float(np.mean((fake["a"] + fake["b"]) % 4 == fake["c"]))
    # a tree of 2-way marginals sees independent pairs: about 1/4 of rows satisfy it
    assert hits["mst"] < 0.4
    assert hits["aim"] > 0.9


# epsilon=inf on this table is also tests/synthesis/test_collapse.py's slow
# test_no_collapse_at_defaults[DPMarginalSynthesizer-inf] (AIM is the default selection);
# the default run keeps that file's 600-row epsilon=inf check
@pytest.mark.parametrize("epsilon", [1.0, pytest.param(math.inf, marks=pytest.mark.slow)])
def test_no_collapse_on_the_clinical_table(epsilon):
    df, bounds, cats = clinical_table(3000, seed=0)
    s = DPMarginalSynthesizer(
        epsilon=epsilon, bounds=bounds, categories=cats, selection="aim", random_state=0
    ).fit(df)
    syn = s.sample(2000, random_state=1)
    assert collapse_problems(df, syn) == []


def test_quality_score_sensitivity_brute_force():
    """Removing any one row moves every candidate's score by at most 1 (the sensitivity
    the exponential mechanism is calibrated to), against a fixed noisy model."""
    rng = np.random.default_rng(0)
    csizes = [3, 4, 2, 3]
    B = np.column_stack([rng.integers(0, k, 120) for k in csizes])
    B[:, 2] = (B[:, 0] + B[:, 1]) % 2
    y01 = marginal_counts(B, csizes, (0, 1)) + rng.integers(-3, 4, (3, 4))
    y1c = [np.bincount(B[:, j], minlength=k) + rng.integers(-3, 4, k) for j, k in enumerate(csizes)]
    meas = [((j,), y.astype(float), 1 / 4.0) for j, y in enumerate(y1c)]
    meas.append(((0, 1), y01.astype(float), 1 / 4.0))
    n_hat = float(np.mean([y.sum() for y in y1c]))
    tree, _, mu = fit_model(csizes, meas, n_hat, n_iter=200)
    cands = [c for c in candidate_sets(csizes) if fits_caps(csizes, [(0, 1)], c, tree)]
    assert len(cands) > 5 and any(tree.home(c) is None for c in cands)

    def scores(rows):
        counts = [marginal_counts(rows, csizes, c) for c in cands]
        return quality_scores(counts, cands, tree, mu, n_hat, 2.0)

    full = scores(B)
    worst = max(np.abs(scores(np.delete(B, i, axis=0)) - full).max() for i in range(len(B)))
    assert 0.5 < worst <= 1.0 + 1e-9


def test_default_selection_is_aim_from_three_columns():
    df = _frame(400)
    wide = DPMarginalSynthesizer(bounds=BOUNDS, categories=CATS, random_state=0).fit(df)
    two = DPMarginalSynthesizer(bounds={"age": (18, 90), "bmi": (15.0, 50.0)}, random_state=0)
    two.fit(df[["age", "bmi"]])
    assert (wide.selection, wide.selection_, two.selection_) == ("auto", "aim", "mst")
    assert wide.cliques_ and wide.tree_ is None and two.tree_ == [("age", "bmi")]
