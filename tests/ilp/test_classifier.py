"""Tests of DPILPClassifier (spec lantz.md §4.6)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skdp.ilp import DPILPClassifier, ilp_epsilon_lower_bound
from skdp.ilp._classifier import search_clause
from skdp.utils._parts import part_keys


def _planted(n, n_atoms, rng, rule=(0, 1)):
    X = rng.integers(0, 2, size=(n, n_atoms))
    y = X[:, list(rule)].all(axis=1).astype(int)
    return X, y


def _reference_search(Xpos, Xneg, atoms, ell, min_pos):
    """Independent non-private breadth-first search with the documented pruning/ties."""

    def counts(c):
        sp = Xpos[:, list(c)].all(axis=1) if c else np.ones(len(Xpos), bool)
        sn = Xneg[:, list(c)].all(axis=1) if c else np.ones(len(Xneg), bool)
        return int(sp.sum()), int(sn.sum())

    best, best_cov = None, -math.inf
    pruned = []
    for size in range(ell + 1):
        for c in itertools.combinations(sorted(atoms), size):
            if any(set(p) <= set(c) for p in pruned):
                continue
            p, n = counts(c)
            if p - n > best_cov:
                best, best_cov = c, p - n
            if p < min_pos or p <= best_cov:
                pruned.append(c)
    return best, best_cov


def test_recovers_planted_two_atom_clause_without_noise():
    rng = np.random.default_rng(0)
    X, y = _planted(2000, 6, rng, rule=(2, 4))
    clf = DPILPClassifier(epsilon=math.inf, max_clause_length=3, random_state=0).fit(X, y)
    assert clf.clause_indices_ == [(2, 4)]
    assert clf.clauses_ == [("x2", "x4")]
    np.testing.assert_array_equal(clf.predict(X), y)
    assert clf.score(X, y) == 1.0
    assert clf.epsilon_spent_ == math.inf


@pytest.mark.parametrize("search", ["smart", "naive"])
def test_recovers_planted_clause_at_epsilon_one_with_large_n(search):
    rng = np.random.default_rng(1)
    X, y = _planted(20000, 6, rng, rule=(0, 3))
    hits = 0
    for seed in range(5):
        clf = DPILPClassifier(epsilon=1.0, max_clause_length=2, search=search, random_state=seed)
        hits += clf.fit(X, y).clause_indices_ == [(0, 3)]
    assert hits == 5


@given(st.integers(0, 10_000), st.integers(1, 5), st.integers(0, 3), st.integers(0, 3))
def test_no_noise_equals_deterministic_reference_search(seed, n_atoms, ell, min_pos):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(40, n_atoms))
    y = rng.integers(0, 2, size=40)
    atoms = list(range(n_atoms))
    best, cov, *_ = search_clause(
        X[y == 1],
        X[y == 0],
        atoms,
        epsilon=math.inf,
        max_clause_length=ell,
        min_pos=min_pos,
        rng=rng,
    )
    ref_best, ref_cov = _reference_search(X[y == 1], X[y == 0], atoms, ell, min_pos)
    assert best == ref_best and cov == ref_cov


@given(st.integers(0, 10_000), st.integers(1, 6), st.integers(0, 4), st.integers(1, 3))
def test_search_invariants_and_ledger(seed, n_atoms, ell, k):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(60, n_atoms))
    y = rng.integers(0, 2, size=60)
    atoms = sorted(rng.choice(n_atoms, size=rng.integers(1, n_atoms + 1), replace=False).tolist())
    eps = 0.7
    best, _, ledger, evaluated, pruned = search_clause(
        X[y == 1], X[y == 0], atoms, epsilon=eps / k, max_clause_length=ell, rng=rng
    )
    # levels 0..ell; per-level epsilon = eps/(k(ell+1)), alpha = that / beta_i
    assert [e["level"] for e in ledger] == list(range(ell + 1))
    assert sum(e["epsilon"] for e in ledger) == pytest.approx(eps / k)
    for e in ledger:
        beta = sum(len(c) == e["level"] for c in evaluated)
        assert e["n_clauses"] == beta
        if beta:
            assert e["alpha"] == pytest.approx(eps / (k * (ell + 1) * beta))
    for c in evaluated:
        assert len(c) <= ell and set(c) <= set(atoms)
        assert not any(set(p) < set(c) for p in pruned)  # no superset of a pruned clause
    assert best in evaluated
    # the fitted estimator's breakdown sums to epsilon
    clf = DPILPClassifier(
        epsilon=eps, n_clauses=k, max_clause_length=ell, bottom_clause=atoms, random_state=seed
    ).fit(X, y)
    assert sum(e["epsilon"] for e in clf.search_levels_) == pytest.approx(eps)
    assert sorted({e["round"] for e in clf.search_levels_}) == list(range(1, k + 1))
    assert math.fsum(clf.privacy_breakdown_.values()) == pytest.approx(clf.epsilon_spent_)
    assert list(clf.privacy_breakdown_) == part_keys("round", k)  # "round" for one
    assert len(clf.clauses_) <= k
    assert clf.epsilon_spent_ == eps and clf.delta_spent_ == 0.0
    assert clf.privacy_guarantee_ == "exact"
    for c in clf.clause_indices_:
        assert len(c) <= ell and set(c) <= set(atoms)


def test_naive_search_alpha_uses_the_whole_lattice():
    rng = np.random.default_rng(2)
    X, y = _planted(300, 5, rng)
    clf = DPILPClassifier(
        epsilon=1.0, n_clauses=2, max_clause_length=2, search="naive", random_state=0
    ).fit(X, y)
    size = 1 + 5 + 10
    assert [e["n_clauses"] for e in clf.search_levels_] == [size, size]
    for e in clf.search_levels_:
        assert e["alpha"] == pytest.approx(1.0 / (2 * size))
    assert sum(e["epsilon"] for e in clf.search_levels_) == pytest.approx(1.0)


def _log_pmf_noisy(outs, true, alpha):
    """log pmf of each row of ``outs`` under ``true + G(alpha)`` (i.i.d. per count)."""
    r = math.exp(-alpha)
    return np.sum(np.log((1 - r) / (1 + r)) - alpha * np.abs(outs - true), axis=1)


def test_exact_dp_of_the_released_noisy_counts_on_a_tiny_instance():
    # all datasets of 3 examples over 2 atoms and their add-one neighbours; the level's
    # count vector released with G(alpha), alpha = eps_level / beta
    eps_level = 0.4
    atoms = [0, 1]
    rows = [(a, b, lab) for a in (0, 1) for b in (0, 1) for lab in (0, 1)]
    for size in range(3):
        level = list(itertools.combinations(atoms, size))
        beta = len(level)
        alpha = eps_level / beta

        def counts(data, level=level):
            out = []
            for c in level:
                for lab in (1, 0):
                    out.append(sum(all(r[j] for j in c) and r[2] == lab for r in data))
            return np.array(out)

        worst = 0.0
        outs = np.array(list(itertools.product(range(-1, 5), repeat=2 * beta)))
        for data in itertools.combinations_with_replacement(rows, 3):
            c0 = counts(data)
            for extra in rows:
                c1 = counts(data + (extra,))
                lp0 = _log_pmf_noisy(outs, c0, alpha)
                lp1 = _log_pmf_noisy(outs, c1, alpha)
                worst = max(worst, np.max(np.abs(lp0 - lp1)))
        assert worst <= eps_level + 1e-12
        assert worst == pytest.approx(eps_level)  # attained by an all-ones positive


def test_noise_is_two_sided_geometric_at_the_documented_scale():
    # with an uninformative lattice the released coverage of the empty clause is
    # (n_pos + G) - (n_neg + G'): its variance is 2 * 2r/(1-r)^2
    X = np.zeros((50, 1), dtype=int)
    y = np.array([1] * 30 + [0] * 20)
    covs = []
    for seed in range(1000):
        clf = DPILPClassifier(epsilon=1.0, max_clause_length=0, random_state=seed).fit(X, y)
        assert clf.search_levels_[0]["alpha"] == pytest.approx(1.0)
        covs.append(clf.clause_noisy_coverage_[0] if clf.clauses_ else np.nan)
    r = math.exp(-1.0)
    covs = np.array(covs, dtype=float)
    assert np.all(np.isnan(covs) | (covs > 0))  # only positive coverage is added
    # the clause () is added iff noisy coverage > 0; true coverage 10, so almost always
    assert np.mean(~np.isnan(covs)) > 0.99
    var = 2 * 2 * r / (1 - r) ** 2
    assert np.nanmean(covs) == pytest.approx(10, abs=0.2)
    assert np.nanvar(covs) == pytest.approx(var, rel=0.2)


def test_dataframe_feature_names_and_named_bottom_clause():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    X, y = _planted(1000, 4, rng, rule=(1, 2))
    df = pd.DataFrame(X, columns=["short", "closed", "roof", "long"])
    clf = DPILPClassifier(epsilon=math.inf, max_clause_length=2).fit(df, y)
    assert clf.clauses_ == [("closed", "roof")]
    clf2 = DPILPClassifier(
        epsilon=math.inf, max_clause_length=2, bottom_clause=["short", "closed"]
    ).fit(df, y)
    assert set(clf2.bottom_clause_.tolist()) == {0, 1}
    assert all(set(c) <= {"short", "closed"} for c in clf2.clauses_)
    with pytest.raises(ValueError, match="unknown atom"):
        DPILPClassifier(bottom_clause=["wheels"]).fit(df, y)
    with pytest.raises(ValueError, match="column indices"):
        DPILPClassifier(bottom_clause=[7]).fit(X, y)


def test_predict_and_decision_function():
    rng = np.random.default_rng(4)
    X = rng.integers(0, 2, size=(3000, 5))
    y = (X[:, 0] & X[:, 1]) | (X[:, 2] & X[:, 3])
    clf = DPILPClassifier(epsilon=math.inf, n_clauses=2, max_clause_length=2).fit(X, y)
    assert sorted(clf.clause_indices_) == [(0, 1), (2, 3)]
    np.testing.assert_array_equal(clf.predict(X), y)
    d = clf.decision_function(X)
    np.testing.assert_array_equal((d > 0).astype(int), clf.predict(X))
    assert set(np.unique(d)) <= {-0.5, 0.5, 1.5}
    np.testing.assert_array_equal(clf.classes_, [0, 1])


def test_binary_validation_errors_name_the_column_not_the_value():
    X = np.zeros((10, 3), dtype=int)
    y = np.array([0, 1] * 5)
    X_bad = X.copy()
    X_bad[4, 2] = 7
    with pytest.raises(ValueError, match=r"column\(s\) 2") as info:
        DPILPClassifier().fit(X_bad, y)
    assert "7" not in str(info.value)
    with pytest.raises(ValueError, match="binary"):
        DPILPClassifier().fit(X, np.arange(10))
    with pytest.raises(ValueError):
        DPILPClassifier().fit(X.astype(float) * np.nan, y)
    with pytest.raises(ValueError):
        DPILPClassifier().fit(X + 0.5, y)
    clf = DPILPClassifier(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="binary"):
        clf.predict(X_bad)
    with pytest.raises(ValueError):
        DPILPClassifier(epsilon=-1.0).fit(X, y)


def test_reproducible_with_seed():
    rng = np.random.default_rng(5)
    X, y = _planted(500, 5, rng)
    a = DPILPClassifier(epsilon=0.5, n_clauses=2, random_state=9).fit(X, y)
    b = DPILPClassifier(epsilon=0.5, n_clauses=2, random_state=9).fit(X, y)
    assert a.clauses_ == b.clauses_
    np.testing.assert_array_equal(a.clause_noisy_coverage_, b.clause_noisy_coverage_)


def test_lower_bound_is_exported():
    assert ilp_epsilon_lower_bound(10, 0.9, 0.1, 100) == pytest.approx(0.31028, abs=1e-5)


def test_binarize_threshold():
    X = np.array([[0.2, -1.0], [3.0, 0.5], [0.0, 2.0]])
    y = np.array([0, 1, 1])
    clf = DPILPClassifier(epsilon=math.inf, binarize=0.0, max_clause_length=1).fit(X, y)
    assert clf.predict(X).tolist() == clf.predict((X > 0).astype(int)).tolist()
    with pytest.raises(ValueError, match="binary"):
        DPILPClassifier().fit(X, y)


def test_degenerate_inputs_do_not_raise():
    # one class only, empty bottom clause, length 0: whether a class is absent is private,
    # so none of these may raise
    X = np.random.default_rng(6).integers(0, 2, size=(30, 3))
    for y in (np.zeros(30, int), np.ones(30, int)):
        clf = DPILPClassifier(epsilon=1.0, random_state=0).fit(X, y)
        assert clf.predict(X).shape == (30,)
    y = np.array([0, 1] * 15)
    clf = DPILPClassifier(epsilon=1.0, bottom_clause=[], random_state=0).fit(X, y)
    assert all(c == () for c in clf.clause_indices_)
    assert sum(e["epsilon"] for e in clf.search_levels_) == pytest.approx(1.0)
    clf = DPILPClassifier(epsilon=math.inf, max_clause_length=0).fit(X, np.ones(30, int))
    assert clf.clauses_ == [()]
    assert clf.predict(X).tolist() == [1] * 30
