"""Tests of SubsampledExpMedian (spec lantz.md §6.5)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.special import logsumexp

from skdp.cluster import SubsampledExpMedian, kmedian_costs

V4 = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])


def _ref_cost(D, centers, cost_sensitivity):
    """Independent truncated k-median cost."""
    return sum(min(cost_sensitivity, min(math.dist(x, c) for c in centers)) for x in D)


def _exact_ssem_distribution(D, V, k, m, epsilon, cost_sensitivity):
    """Exact output law of SSEM with a uniform base over k-subsets, m i.i.d. draws.

    Enumerates every m-tuple of candidate subsets; returns P(subset) for each subset.
    """
    subsets = list(itertools.combinations(range(len(V)), k))
    q = np.array([-_ref_cost(D, V[list(s)], cost_sensitivity) for s in subsets])
    logw = epsilon * q / (2 * cost_sensitivity)
    p = np.zeros(len(subsets))
    prob_tuple = len(subsets) ** -m
    for tup in itertools.product(range(len(subsets)), repeat=m):
        lw = logw[list(tup)]
        sel = np.exp(lw - logsumexp(lw))
        for j, s in enumerate(tup):
            p[s] += prob_tuple * sel[j]
    return subsets, p


def _exact_em_distribution(D, V, k, epsilon, cost_sensitivity):
    subsets = list(itertools.combinations(range(len(V)), k))
    q = np.array([-_ref_cost(D, V[list(s)], cost_sensitivity) for s in subsets])
    lw = epsilon * q / (2 * cost_sensitivity)
    return subsets, np.exp(lw - logsumexp(lw))


@pytest.mark.parametrize("m", [1, 2, pytest.param(3, marks=pytest.mark.slow), None])
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_exact_selection_distribution_satisfies_epsilon_on_all_neighbours(m, epsilon):
    cost_sensitivity = math.sqrt(2)  # diameter of V4, the estimator's default
    domain = [tuple(v) for v in V4] + [(0.5, 0.5), (3.0, -2.0)]
    worst = 0.0
    for size in range(0, 3):
        for D in itertools.combinations_with_replacement(domain, size):
            neighbours = [D + (x,) for x in domain]
            neighbours += [D[:j] + (x,) + D[j + 1 :] for j in range(len(D)) for x in domain]
            if m is None:
                _, P = _exact_em_distribution(D, V4, 2, epsilon, cost_sensitivity)
            else:
                _, P = _exact_ssem_distribution(D, V4, 2, m, epsilon, cost_sensitivity)
            for D2 in neighbours:
                if m is None:
                    _, P2 = _exact_em_distribution(D2, V4, 2, epsilon, cost_sensitivity)
                else:
                    _, P2 = _exact_ssem_distribution(D2, V4, 2, m, epsilon, cost_sensitivity)
                worst = max(worst, np.max(np.abs(np.log(P) - np.log(P2))))
    assert worst <= epsilon + 1e-9
    if m == 1:
        assert worst < 1e-12  # one draw: the output is the base distribution
    else:
        assert worst > 0.1 * epsilon  # the check has power: neighbours do differ


@pytest.mark.parametrize("m", [2, None])
def test_estimator_samples_the_exact_distribution(m):
    X = np.array([[0.1, 0.0], [0.0, 0.2], [0.9, 1.0]])
    epsilon = 3.0
    est = SubsampledExpMedian(n_clusters=2, epsilon=epsilon, candidates=V4, n_candidates=m)
    assert est.fit(X).sensitivity_ == pytest.approx(math.sqrt(2))
    if m is None:
        subsets, P = _exact_em_distribution(X, V4, 2, epsilon, math.sqrt(2))
    else:
        subsets, P = _exact_ssem_distribution(X, V4, 2, m, epsilon, math.sqrt(2))
    n = 3000
    counts = np.zeros(len(subsets))
    for seed in range(n):
        idx = tuple(est.set_params(random_state=seed).fit(X).center_indices_)
        counts[subsets.index(idx)] += 1
    # every cell within 4.5 binomial standard deviations, and total variation small
    sd = np.sqrt(n * P * (1 - P))
    assert np.all(np.abs(counts - n * P) <= 4.5 * sd + 1)
    assert 0.5 * np.abs(counts / n - P).sum() < 0.05


def test_convergence_to_the_best_candidate_as_epsilon_grows():
    rng = np.random.default_rng(0)
    V = rng.uniform(-1, 1, size=(12, 2))
    X = np.vstack([rng.normal(-0.6, 0.05, (30, 2)), rng.normal(0.6, 0.05, (30, 2))])
    subsets = list(itertools.combinations(range(12), 2))
    costs = [_ref_cost(X, V[list(s)], np.inf) for s in subsets]
    best = subsets[int(np.argmin(costs))]
    em = SubsampledExpMedian(n_clusters=2, epsilon=1e6, candidates=V, n_candidates=None)
    for seed in range(5):
        assert tuple(em.set_params(random_state=seed).fit(X).center_indices_) == best
    assert tuple(em.set_params(epsilon=math.inf).fit(X).center_indices_) == best
    # SSEM at huge epsilon picks the best candidate of its sample of 20 subsets (out of
    # 66): below the median cost unless all 20 lie above it (probability < 2^-20). The
    # same seed at another epsilon draws another sample (no noise shared across a grid).
    ss = SubsampledExpMedian(n_clusters=2, epsilon=1e6, candidates=V, n_candidates=20)
    for seed in range(5):
        a = ss.set_params(random_state=seed).fit(X)
        assert _ref_cost(X, V[list(a.center_indices_)], np.inf) <= np.median(costs)
    # and as epsilon -> 0 the output is (close to) uniform over subsets
    tiny = SubsampledExpMedian(n_clusters=2, epsilon=1e-9, candidates=V4, n_candidates=None)
    counts = np.zeros(6)
    for seed in range(600):
        counts[
            list(itertools.combinations(range(4), 2)).index(
                tuple(tiny.set_params(random_state=seed).fit(X).center_indices_)
            )
        ] += 1
    assert np.all(np.abs(counts - 100) < 45)


def test_best_candidate_of_sample_epsilon_inf():
    rng = np.random.default_rng(1)
    V = rng.uniform(-1, 1, size=(30, 2))
    X = rng.uniform(-1, 1, size=(40, 2))
    est = SubsampledExpMedian(
        n_clusters=3, epsilon=math.inf, candidates=V, n_candidates=500, random_state=0
    ).fit(X)
    # with 500 draws the best of the sample is close to the optimum over all C(30,3)
    all_costs = kmedian_costs(X, V[np.array(list(itertools.combinations(range(30), 3)))])
    assert -est.score(X) <= np.quantile(all_costs, 0.01)


def test_structure_invariants_and_auto_m():
    rng = np.random.default_rng(2)
    V = rng.uniform(-1, 1, size=(100, 3))
    X = rng.uniform(-1, 1, size=(50, 3))
    for base in ("uniform", "kmeans++"):
        for weighting in ("square", "inverse"):
            est = SubsampledExpMedian(
                n_clusters=4,
                epsilon=1.0,
                candidates=V,
                base=base,
                kpp_weighting=weighting,
                random_state=3,
            ).fit(X)
            assert est.n_candidates_ == math.ceil(6 * 4 * math.log(100))
            idx = est.center_indices_
            assert len(set(idx.tolist())) == 4
            np.testing.assert_array_equal(est.cluster_centers_, V[idx])
            assert est.epsilon_spent_ == 1.0 and est.delta_spent_ == 0.0
            assert est.privacy_guarantee_ == "exact"
    # spec §6.2 table: n = 100, k = 2 -> 56
    assert SubsampledExpMedian(n_clusters=2, candidates=V).fit(X).n_candidates_ == 56


def test_kpp_sampler_never_duplicates_even_with_repeated_points():
    from skdp.cluster._kmedian_costs import _kpp_subsets, _uniform_subsets

    V = np.vstack([np.zeros((5, 2)), np.ones((2, 2))])  # heavy duplication
    rng = np.random.default_rng(0)
    for weighting in ("square", "inverse"):
        S = _kpp_subsets(V, 4, 200, rng, "euclidean", weighting)
        assert all(len(set(r)) == 4 for r in S.tolist())
    S = _uniform_subsets(7, 3, 500, rng)
    assert all(len(set(r)) == 3 for r in S.tolist())
    # uniform k-subsets are uniform over the C(7, 3) = 35 subsets
    _, counts = np.unique(_uniform_subsets(7, 3, 35000, rng), axis=0, return_counts=True)
    assert len(counts) == 35 and np.all(np.abs(counts - 1000) < 150)


def test_sensitivity_is_public_and_no_private_attribute_is_stored():
    rng = np.random.default_rng(4)
    V = rng.uniform(-1, 1, size=(20, 2))
    a = SubsampledExpMedian(candidates=V, random_state=0).fit(rng.uniform(-1, 1, (30, 2)))
    b = SubsampledExpMedian(candidates=V, random_state=0).fit(rng.uniform(-5, 5, (80, 2)))
    assert a.sensitivity_ == b.sensitivity_
    assert a.sensitivity_ == pytest.approx(max(math.dist(v, w) for v in V for w in V))
    fitted = {k for k in vars(a) if k.endswith("_") and not k.startswith("_")}
    assert fitted == {
        "cluster_centers_",
        "center_indices_",
        "n_candidates_",
        "n_rounds_",
        "first_round_",
        "first_round_cells_",
        "median_step_",
        "round_epsilons_",
        "round_sensitivities_",
        "sensitivity_",
        "epsilon_spent_",
        "delta_spent_",
        "privacy_guarantee_",
        "nonprivate_options_",
        "privacy_breakdown_",
        "n_features_in_",
    }
    for name in fitted - {"cluster_centers_", "center_indices_"}:
        assert np.all(getattr(a, name) == getattr(b, name)), name
    assert not hasattr(a, "labels_") and not hasattr(a, "inertia_")


def test_chunked_costs_match_brute_force():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(37, 3))
    C = rng.normal(size=(11, 4, 3))
    ref = np.array([_ref_cost(X, c, 1.5) for c in C])
    for chunk in (1, 7, 50, 1 << 22):
        np.testing.assert_allclose(kmedian_costs(X, C, truncate=1.5, chunk_size=chunk), ref)
    man = np.array([sum(min(np.abs(x - f).sum() for f in c) for x in X) for c in C])
    np.testing.assert_allclose(kmedian_costs(X, C, metric="manhattan", chunk_size=5), man)


def test_chunk_size_does_not_change_the_result():
    rng = np.random.default_rng(9)
    V = rng.uniform(-1, 1, size=(15, 2))
    X = rng.uniform(-1.5, 1.5, size=(30, 2))  # some points outside the hull: truncation
    # the seed material includes every parameter (chunk_size too), so the private fits
    # draw independent noise; the exhaustive non-private fit is deterministic
    for m in (None,):
        fits = [
            SubsampledExpMedian(
                n_clusters=3,
                epsilon=math.inf,
                candidates=V,
                n_candidates=m,
                chunk_size=c,
                random_state=5,
            ).fit(X)
            for c in (1, 97, 1 << 22)
        ]
        for f in fits[1:]:
            np.testing.assert_array_equal(f.center_indices_, fits[0].center_indices_)


def test_box_base_and_predict_score():
    rng = np.random.default_rng(6)
    X = np.vstack([rng.normal(-2, 0.2, (40, 2)), rng.normal(2, 0.2, (40, 2))])
    est = SubsampledExpMedian(
        n_clusters=2, epsilon=10.0, bounds=(-3, 3), n_candidates=300, random_state=0
    ).fit(X)
    assert est.center_indices_ is None
    assert est.sensitivity_ == pytest.approx(math.sqrt(72))
    assert np.all(np.abs(est.cluster_centers_) <= 3)
    labels = est.predict(X)
    assert set(labels[:40]) != set(labels[40:])  # the two blobs are separated
    np.testing.assert_array_equal(est.fit_predict(X), labels)
    dist = np.linalg.norm(X[:, None, :] - est.cluster_centers_[None], axis=2)
    assert est.score(X) == pytest.approx(-dist.min(axis=1).sum())
    np.testing.assert_array_equal(labels, dist.argmin(axis=1))


def test_reproducible_and_errors():
    X = np.random.default_rng(7).uniform(-1, 1, (20, 2))
    a = SubsampledExpMedian(candidates=V4, random_state=11).fit(X).center_indices_
    b = SubsampledExpMedian(candidates=V4, random_state=11).fit(X).center_indices_
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="public metadata"):
        SubsampledExpMedian().fit(X)
    with pytest.raises(ValueError, match="n_candidates must be an int"):
        SubsampledExpMedian(bounds=(-1, 1), n_candidates=None).fit(X)
    with pytest.raises(ValueError, match="n_rounds > 1 needs the box"):
        SubsampledExpMedian(candidates=V4, n_rounds=3).fit(X)
    with pytest.raises(ValueError, match="needs candidates"):
        SubsampledExpMedian(bounds=(-1, 1), base="kmeans++", n_candidates=5).fit(X)
    with pytest.raises(ValueError, match="shape"):
        SubsampledExpMedian(candidates=np.zeros((5, 3))).fit(X)
    with pytest.raises(ValueError, match="exceeds"):
        SubsampledExpMedian(n_clusters=5, candidates=V4).fit(X)
    with pytest.raises(ValueError, match="enumerates"):
        SubsampledExpMedian(
            n_clusters=5, candidates=np.linspace(0, 1, 400).reshape(200, 2), n_candidates=None
        ).fit(X)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError):
        SubsampledExpMedian(candidates=V4).fit(bad)
    with pytest.raises(ValueError):
        SubsampledExpMedian(candidates=V4, epsilon=0.0).fit(X)


@pytest.mark.slow
def test_median_cost_does_not_increase_with_m():
    rng = np.random.default_rng(8)
    V = rng.uniform(-1, 1, size=(200, 2))
    X = V[rng.choice(200, 60, replace=False)]
    med = []
    for m in (5, 50, 500):
        est = SubsampledExpMedian(n_clusters=4, epsilon=1.0, candidates=V, n_candidates=m)
        med.append(np.median([-est.set_params(random_state=s).fit(X).score(X) for s in range(200)]))
    assert med[0] >= med[1] - 0.5 and med[1] >= med[2] - 0.5


# ---------------------------------------------------------------- box search (issue 19 §5)
def _blobs(n, seed, d=3):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.25, 0.25, 0.3], [0.75, 0.3, 0.7], [0.4, 0.75, 0.5]])[:, :d]
    return np.clip(centres[rng.integers(3, size=n)] + rng.normal(0, 0.08, (n, d)), 0, 1)


def test_defaults_from_k_epsilon_and_box_alone():
    X = _blobs(600, 0)
    est = SubsampledExpMedian(n_clusters=3, bounds=(0, 1), random_state=0).fit(X)
    assert est.cluster_centers_.shape == (3, 3)
    assert np.all((est.cluster_centers_ >= 0) & (est.cluster_centers_ <= 1))
    assert est.center_indices_ is None
    assert est.n_rounds_ >= 2 and len(est.round_epsilons_) == est.n_rounds_
    assert est.round_epsilons_.sum() == pytest.approx(1.0)
    assert est.epsilon_spent_ == 1.0 and est.privacy_guarantee_ == "exact"
    # round 1 is the noisy histogram (L1 sensitivity 2 of the cell counts), each later
    # round's sensitivity is 2 * its largest move
    assert est.first_round_ == "histogram"
    assert est.round_sensitivities_[0] == 2.0
    assert np.all(np.diff(est.round_sensitivities_[1:]) < 0)
    # one seeded fit: three centres, one near each blob
    labels = est.predict(X)
    assert len(set(labels)) == 3


def test_box_search_single_round_is_the_thesis_ssem():
    X = _blobs(200, 1)
    est = SubsampledExpMedian(n_clusters=3, bounds=(0, 1), n_rounds=1, random_state=0).fit(X)
    assert est.n_rounds_ == 1 and est.n_candidates_ == 512
    assert est.round_sensitivities_.tolist() == [pytest.approx(math.sqrt(3))]


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
def test_local_step_sensitivity_bounds_the_per_point_change(metric):
    from skdp.cluster._box_search import _local_candidates, local_step_sensitivity

    rng = np.random.default_rng(2)
    lo, hi = np.zeros(3), np.ones(3)
    prev = rng.random((3, 3))
    radius = np.array([0.05, 0.1, 0.02])
    cands = _local_candidates(prev, lo, hi, radius, 400, rng)
    assert np.all(np.abs(cands - prev) <= radius + 1e-15)
    np.testing.assert_array_equal(cands[0], prev)
    from scipy.spatial.distance import cdist

    scipy_metric = {"euclidean": "euclidean", "manhattan": "cityblock"}[metric]
    pts = rng.random((300, 3))

    def per_point(F):
        return np.minimum(1.0, cdist(pts, F, metric=scipy_metric).min(axis=1))

    base = per_point(prev)
    rho = local_step_sensitivity(radius, metric) / 2
    worst = max(np.max(np.abs(per_point(F) - base)) for F in cands)
    assert worst <= rho + 1e-12


def test_candidate_generation_is_data_independent(monkeypatch):
    """Neighbouring data sets under the same stream: the same candidates in every round
    whose previous choice is the same; round 1 always the same."""
    import skdp.cluster._kmedian as mod
    import skdp.cluster._kmedian_rounds as rounds

    X = _blobs(300, 3)
    Xn = np.vstack([X, [[0.9, 0.1, 0.95]]])  # add one point
    seen = {}
    state = {}

    def fixed_streams(random_state, names, **kwargs):
        return {name: np.random.default_rng(123) for name in names}

    real_local = rounds._local_candidates

    def recording_local(prev, lo, hi, radius, m, rng):
        out = real_local(prev, lo, hi, radius, m, rng)
        seen.setdefault(state["key"], []).append((prev.copy(), out.copy()))
        return out

    monkeypatch.setattr(mod, "fit_streams", fixed_streams)
    monkeypatch.setattr(rounds, "_local_candidates", recording_local)
    real_select = SubsampledExpMedian._select
    picks = {}

    def recording_select(q, epsilon, cost_sensitivity, rng):
        i = real_select(q, epsilon, cost_sensitivity, rng)
        picks.setdefault(state["key"], []).append(i)
        return i

    monkeypatch.setattr(SubsampledExpMedian, "_select", staticmethod(recording_select))
    for state["key"], data in (("D", X), ("D'", Xn)):
        SubsampledExpMedian(n_clusters=3, bounds=(0, 1), n_public=300, epsilon=0.5).fit(data)
    assert len(seen["D"]) == len(seen["D'"]) >= 1
    # the candidate sets of a round depend on the data only through the previous choice
    for (p1, c1), (p2, c2) in zip(seen["D"], seen["D'"], strict=True):
        if np.array_equal(p1, p2):
            np.testing.assert_array_equal(c1, c2)
        else:
            break
    # and round 1 candidates (the coarse grid) never look at X
    from skdp.cluster._box_search import _coarse_grid

    V1, h = _coarse_grid(np.zeros(3), np.ones(3), 3, rng=np.random.default_rng(0))
    V2, h2 = _coarse_grid(np.zeros(3), np.ones(3), 3, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(V1, V2)
    assert V1.shape == (27, 3)


def test_local_candidates_same_rng_same_output():
    from skdp.cluster._box_search import _local_candidates

    prev = np.array([[0.2, 0.2], [0.8, 0.8]])
    lo, hi, r = np.zeros(2), np.ones(2), np.full(2, 0.1)
    a = _local_candidates(prev, lo, hi, r, 64, np.random.default_rng(5))
    b = _local_candidates(prev, lo, hi, r, 64, np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)


def test_box_search_schedule_is_public_and_sums_to_epsilon():
    from skdp.cluster._box_search import box_search_schedule

    h = np.full(3, 1 / 3)
    radii, eps = box_search_schedule(h, np.ones(3), 1.0, 12588)
    T = len(eps)
    assert 2 <= T <= 12 and len(radii) == T - 1 and eps.sum() == pytest.approx(1.0)
    _, eps_small = box_search_schedule(h, np.ones(3), 0.1, 500)
    assert len(eps_small) <= T


def test_local_costs_match_full_evaluation():
    from skdp.cluster._box_search import _local_candidates, local_cost_units
    from skdp.cluster._kmedian_costs import set_cost_units

    rng = np.random.default_rng(9)
    X = rng.random((157, 3))
    prev = rng.random((3, 3))
    cands = _local_candidates(prev, np.zeros(3), np.ones(3), np.full(3, 0.2), 101, rng)
    for metric in ("euclidean", "manhattan"):
        kw = dict(metric=metric, truncate=0.4)
        full = set_cost_units(X, cands, chunk_size=1 << 22, **kw)
        fast = local_cost_units(X, prev, cands, chunk_size=1000, **kw)
        np.testing.assert_array_equal(fast.whole, full.whole)
        np.testing.assert_array_equal(fast.frac, full.frac)
        np.testing.assert_allclose(
            fast.to_float(0.4), kmedian_costs(X, cands, truncate=0.4, **{"metric": metric})
        )


def test_snapped_first_round_weights_match_the_points():
    from skdp.cluster._kmedian_costs import _snap_to_cells, subset_cost_units

    rng = np.random.default_rng(4)
    X = rng.random((500, 2))
    Xc, w = _snap_to_cells(X, np.zeros(2), np.ones(2), 4)
    assert w.sum() == 500 and len(Xc) <= 16
    # each point's term is the distance of its cell centre: the weighted sum equals the
    # sum over the snapped points, so each point still contributes in [0, Delta]
    V = rng.random((5, 2))
    subsets = np.array(list(itertools.combinations(range(5), 2)))
    snapped = np.floor(X * 4).clip(0, 3) / 4 + 1 / 8
    kw = dict(metric="euclidean", truncate=0.3, chunk_size=1 << 20)
    a = subset_cost_units(X, V, subsets, snap=(np.zeros(2), np.ones(2), 4), **kw)
    b = subset_cost_units(snapped, V, subsets, **kw)
    np.testing.assert_array_equal(a.whole, b.whole)
    np.testing.assert_array_equal(a.frac, b.frac)


# ------------------------------------------- exact (fixed-point) costs, Dask issue 20
def test_rounded_row_costs_stay_in_zero_delta_and_sum_exactly():
    """Every row's rounded cost is an integer number of units ``Delta 2^-40`` in
    ``[0, 2^40]`` (so in ``[0, Delta]``: the sensitivity is unchanged), within half a unit
    (and the scaling's rounding) of ``min(Delta, d)``, and the exact sums do not depend
    on how the rows are split."""
    from skdp.cluster._kmedian_costs import (
        FIXED_BITS,
        _cost_units,
        set_cost_units,
        subset_cost_units,
    )

    rng = np.random.default_rng(3)
    for cost_sensitivity in (0.3, 1.0, math.sqrt(2), 7e5):
        d = np.concatenate(
            [
                rng.random(1000) * 3 * cost_sensitivity,
                [0.0, cost_sensitivity, np.nextafter(cost_sensitivity, 0), 1e300],
            ]
        )
        u = _cost_units(d.copy(), cost_sensitivity)
        assert np.all(u == np.rint(u)) and u.min() == 0 and u.max() == 2.0**FIXED_BITS
        assert u[-3] == 2.0**FIXED_BITS and u[-1] == 2.0**FIXED_BITS
        err = np.abs(
            u * math.ldexp(cost_sensitivity, -FIXED_BITS) - np.minimum(d, cost_sensitivity)
        )
        assert err.max() <= math.ldexp(cost_sensitivity, -FIXED_BITS) * (0.5 + 1e-3)
    X = rng.normal(size=(1001, 2)) * 2  # many rows beyond the truncation
    C = rng.normal(size=(7, 3, 2))
    kw = dict(metric="euclidean", truncate=0.5)
    whole = set_cost_units(X, C, chunk_size=1 << 22, **kw)
    assert np.all(whole.frac >= 0) and np.all(whole.frac < 2**FIXED_BITS)
    parts = None
    for r0 in range(0, 1001, 97):
        p = set_cost_units(X[r0 : r0 + 97], C, chunk_size=50, **kw)
        parts = p if parts is None else p + parts
    np.testing.assert_array_equal(parts.whole, whole.whole)
    np.testing.assert_array_equal(parts.frac, whole.frac)
    np.testing.assert_allclose(whole.to_float(0.5), kmedian_costs(X, C, truncate=0.5), rtol=1e-12)
    V = C.reshape(-1, 2)
    subsets = np.array(list(itertools.combinations(range(len(V)), 3)))
    a = subset_cost_units(X, V, subsets, chunk_size=1 << 22, **kw)
    b = set_cost_units(X, V[subsets], chunk_size=1 << 22, **kw)
    np.testing.assert_array_equal(a.whole, b.whole)
    np.testing.assert_array_equal(a.frac, b.frac)


def test_local_round_sensitivity_covers_the_rounded_per_point_change():
    """A point's rounded cost moves by at most ``rho + 2 u`` (``u = Delta 2^-40``) between
    the previous choice and any local candidate, even for moves of a few units; the
    estimator's public ``Delta_t`` is ``min(Delta, 2 rho_t + 4 u)``."""
    from skdp.cluster._box_histogram import histogram_cells_per_axis
    from skdp.cluster._box_search import (
        _coarse_grid,
        _local_candidates,
        box_search_schedule,
        local_cost_units,
        local_step_sensitivity,
    )
    from skdp.cluster._kmedian_costs import FIXED_BITS

    cost_sensitivity = math.sqrt(3)
    u = math.ldexp(cost_sensitivity, -FIXED_BITS)
    rng = np.random.default_rng(0)
    pts = rng.random((200, 3))
    prev = rng.random((3, 3))
    for radius in (0.2, 1e-7, 3 * u, u / 3):
        cands = _local_candidates(prev, np.zeros(3), np.ones(3), np.full(3, radius), 50, rng)
        units = []
        for x in pts:
            c = local_cost_units(
                x[None], prev, cands, metric="euclidean", truncate=cost_sensitivity, chunk_size=99
            )
            units.append(c.whole * 2**FIXED_BITS + c.frac)
        units = np.array(units)  # (points, candidates), exact integers
        change = np.abs(units - units[:, :1]).max() * u
        assert change <= math.sqrt(3) * radius + 2 * u
    X = _blobs(300, 2)
    est = SubsampledExpMedian(n_clusters=3, bounds=(0, 1), first_round="grid", random_state=0)
    est.fit(X)
    _, h = _coarse_grid(np.zeros(3), np.ones(3), 3)
    radii, _ = box_search_schedule(h, np.ones(3), 1.0, 300)
    expected = [min(cost_sensitivity, local_step_sensitivity(r) + 4 * u) for r in radii]
    np.testing.assert_array_equal(est.round_sensitivities_[1:], expected)
    # the histogram's grid (public: d, n, epsilon_1 and k) sets the radii by default
    est = SubsampledExpMedian(n_clusters=3, bounds=(0, 1), random_state=0).fit(X)
    g = histogram_cells_per_axis(3, 300, 0.3, 3)
    assert est.first_round_cells_ == g
    radii, _ = box_search_schedule(np.full(3, 1.0 / g), np.ones(3), 1.0, 300)
    expected = [min(cost_sensitivity, local_step_sensitivity(r) + 4 * u) for r in radii]
    np.testing.assert_array_equal(est.round_sensitivities_[1:], expected)


# ------------------------------------- round 1 of the box search reads only public numbers
def _pairs_in_cells(cells, n_cells, per_axis=18):
    """Two points at the lower-left corner of each of ``n_cells`` cells of the 18 x 18
    grid of the first round (k=2, d=2, box (0, 1)); cells from the lower-left region."""
    idx = [(i, j) for i in range(2, 10) for j in range(2, 10)][:n_cells]
    pts = np.array([[i / per_axis + 1e-9, j / per_axis + 1e-9] for i, j in idx])
    return np.repeat(pts, 2, axis=0)


def _round1_quality(monkeypatch, X, **kw):
    import skdp.cluster._kmedian as mod

    monkeypatch.setattr(
        mod, "fit_streams", lambda rs, names, **k: {n: np.random.default_rng(5) for n in names}
    )
    seen = []
    real_select = SubsampledExpMedian._select

    def recording_select(q, epsilon, cost_sensitivity, rng):
        seen.append((np.array(q, dtype=float), cost_sensitivity))
        return real_select(q, epsilon, cost_sensitivity, rng)

    monkeypatch.setattr(SubsampledExpMedian, "_select", staticmethod(recording_select))
    est = SubsampledExpMedian(bounds=(0, 1), epsilon=1.0, first_round="grid", **kw).fit(X)
    return seen[0], est


def test_round1_quality_has_sensitivity_delta_on_replace_one_neighbours(monkeypatch):
    """Attack on the old code: it scored round 1 on the points snapped to cells only when
    the number of *occupied* cells was at most n / 2, else on the raw points. Moving one
    point to a new cell flipped that switch, and the quality of every candidate set then
    moved by far more than Delta (here about 2 Delta): the exponential mechanism was not
    epsilon-DP. The rule now reads public numbers only."""
    X = _pairs_in_cells(None, 40)  # 80 points in 40 cells: at most n / 2 occupied
    X2 = X.copy()
    X2[1] = [10 / 18 + 1e-9, 10 / 18 + 1e-9]  # one point moved to a 41st cell
    (q, cost_sensitivity), _ = _round1_quality(monkeypatch, X, n_clusters=2)
    (q2, cost_sensitivity2), _ = _round1_quality(monkeypatch, X2, n_clusters=2)
    assert cost_sensitivity == cost_sensitivity2 == pytest.approx(math.sqrt(2))
    assert q.shape == q2.shape
    assert np.max(np.abs(q - q2)) <= cost_sensitivity * (1 + 1e-12)


def test_round1_candidate_count_does_not_reveal_occupied_cells():
    """Attack on the old code: round 1 scored ``ROUND1_WORK // (occupied cells * k)``
    sampled subsets, so ``n_candidates_`` (public) revealed the number of occupied cells,
    an un-noised function of the data. Replace-one neighbours now get the same count."""
    X = _pairs_in_cells(None, 10)
    X = np.vstack([X] * 5)  # 100 points in 10 cells
    X2 = X.copy()
    X2[0] = [0.9, 0.9]  # an 11th cell
    kw = dict(n_clusters=10, bounds=(0, 1), n_rounds=2, first_round="grid", random_state=0)
    a = SubsampledExpMedian(**kw).fit(X).n_candidates_
    b = SubsampledExpMedian(**kw).fit(X2).n_candidates_
    assert a == b
