"""AIM's adaptive rounds for :class:`DPMarginalSynthesizer` (McKenna et al. 2022).

After MST's noisy 1-way release, rounds each pick one marginal of two or three
columns with the exponential mechanism (AIM's quality score: the L1 error of the
current model's marginal minus the noise the measurement would add), measure it with
Gaussian (or Laplace) noise and re-fit the model, a graphical model on the junction
tree of everything measured so far (:mod:`skdp.synthesis._marginal_pgm`).

**Annealing** (AIM's budget schedule): the rounds start with the budget of
``16 d`` equal rounds; a round whose measurement changed the model's marginal by
less than the noise it added (post-processing of noisy releases) makes the next
rounds four times as precise (``rho`` x 4 under zCDP, ``epsilon`` x 2 under pure DP),
and the last round spends what is left, so the total is exactly the rounds' share.
The number of rounds therefore depends on the noisy releases; privacy filters (Rogers,
Roth, Ullman & Vadhan 2016 for pure DP; the Rényi filter of Feldman & Zrnic 2021 at
every order for zCDP) bound the whole by the sum of the charges, which never exceeds
the share.

Candidates are the pairs and (while few enough) triples of at most
:data:`MAX_CLIQUE_CELLS` compressed cells whose addition keeps every clique of the
triangulated model within that many cells and the whole model within
:data:`MAX_MODEL_CELLS` (public sizes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from skdp.mechanisms import exponential_mechanism
from skdp.synthesis._marginal_clip import measure_clipped
from skdp.synthesis._marginal_model import _MARGINAL_SENSITIVITY, _weighted_total
from skdp.synthesis._marginal_pgm import JunctionTree, fit_model, triangulate
from skdp.synthesis._marginal_plan import _MEASURE_SHARE, aim_n_rounds, log_stage
from skdp.utils._deprecation import RenamedKeys

#: a candidate marginal, and every clique of the model, has at most this many cells
#: (over the compressed domains)
MAX_CLIQUE_CELLS = 10_000
#: the model's cliques hold at most this many cells together
MAX_MODEL_CELLS = 200_000
#: three-column candidates are considered while there are at most this many triples
_MAX_TRIPLES = 1_000
#: a round that changed the model by less than its noise multiplies the next rounds'
#: zCDP budget by this (AIM: the noise standard deviation halves)
_ANNEAL_FACTOR = 4.0
#: the same under pure DP: the Laplace scale halves when epsilon doubles
_ANNEAL_FACTOR_PURE = 2.0
#: mirror-descent steps after each round (warm-started) and for the final model
_ROUND_ITER, _FINAL_ITER = 50, 500
#: the quality score ||M_r(D) - model||_1 - penalty moves by at most 1 (weights are 1)
_AIM_SCORE_SENSITIVITY = _MARGINAL_SENSITIVITY


def candidate_sets(csizes):
    """Every pair and (while few enough) triple of columns within the cell cap."""
    d = len(csizes)
    out = [c for c in combinations(range(d), 2)]
    if math.comb(d, 3) <= _MAX_TRIPLES:
        out += list(combinations(range(d), 3))
    return [c for c in out if math.prod(csizes[j] for j in c) <= MAX_CLIQUE_CELLS]


def marginal_counts(Bc, csizes, cand):
    """Exact counts of the rows' compressed cells ``Bc`` over the columns ``cand``."""
    shape = [csizes[j] for j in cand]
    idx = np.ravel_multi_index(tuple(Bc[:, j] for j in cand), shape)
    return np.bincount(idx, minlength=math.prod(shape)).astype(np.int64).reshape(shape)


def quality_scores(counts, cands, tree, mu, n_hat, sd):
    """AIM's quality scores ``||M_r(D) - n_hat p_r||_1 - sqrt(2/pi) sd |r|`` (weights 1).

    ``counts`` are the exact marginals ``M_r(D)``; the model ``p_r`` (``tree`` and its
    clique marginals ``mu``), ``n_hat`` and the noise ``sd`` come from earlier noisy
    releases and public quantities, so adding or removing a row moves one cell of
    ``M_r(D)`` by one and each score by at most 1.
    """
    penalty = math.sqrt(2 / math.pi) * sd
    score = np.empty(len(cands))
    shared = {}  # clique conditionals that many candidates' marginals reuse
    for i, (x, c) in enumerate(zip(counts, cands, strict=True)):
        score[i] = np.abs(x - n_hat * tree.marginal(mu, c, shared)).sum() - penalty * x.size
    return score


def fits_caps(csizes, measured, cand, tree):
    """Whether measuring ``cand`` keeps the triangulated model within the size caps
    (public: the domain sizes and the marginals measured so far)."""
    if tree.home(cand) is not None:
        return True
    cells = [math.prod(csizes[j] for j in q) for q in triangulate(csizes, measured + [cand])]
    return max(cells) <= MAX_CLIQUE_CELLS and sum(cells) <= MAX_MODEL_CELLS


def select_admissible(score, cands, fits, *, epsilon, rng, sensitivity=_AIM_SCORE_SENSITIVITY):
    """The exponential mechanism over the candidates that ``fits`` admits.

    Draws over all candidates not yet refused and refuses a draw that ``fits`` turns
    down, until one is admitted: the result is distributed as the exponential
    mechanism over the admissible candidates alone (a Gibbs distribution conditioned
    on a subset is the Gibbs distribution on that subset), while ``fits`` (a
    triangulation) runs only on the few candidates drawn. ``None`` if none is
    admissible.
    """
    log_base = np.zeros(len(cands))
    while np.isfinite(log_base).any():
        i = exponential_mechanism(
            score,
            epsilon=epsilon,
            sensitivity=sensitivity,
            rng=rng,
            log_base_measure=log_base,
        )
        if fits(cands[i]):
            return cands[i]
        log_base[i] = -np.inf
    return None


def candidate_counts(Bc, csizes, cands):
    """Exact counts of every candidate marginal (flattened, int64) of the compressed cells
    ``Bc``; a row function of :func:`skdp.utils._rowsum.row_sum` (Dask input)."""
    return [marginal_counts(Bc, csizes, c).ravel() for c in cands]


def run_rounds(cands, counts, one_way, plan, rng_select, rng_measure, clipped=None):
    """AIM's annealed rounds.

    ``counts`` are the exact counts of every candidate marginal of ``cands``
    (flattened or shaped), ``one_way`` the noisy 1-way release and its compression
    (:class:`~skdp.synthesis._marginal_fit.OneWayRelease`). Returns the fitted
    :class:`~skdp.synthesis._marginal_pgm.JunctionTree`, its clique marginals, the total
    ``n_hat``, the measurements ``(columns, noisy counts, weight)`` (the 1-way ones
    first) and the per-round record ``(marginal, selection charge, measurement charge,
    noise scale)``. ``clipped`` (a
    :class:`~skdp.synthesis._marginal_clip.ClippedCounts`): each round measures the
    per-patient clipped counts of its marginal instead (``contribution="clip"``).
    """
    csizes = one_way.csizes
    d = len(csizes)
    exact = plan.mechanism == "none"
    meas = [
        ((j,), np.asarray(y, float), 1.0 if exact else 1.0 / np.asarray(v, float))
        for j, (y, v) in enumerate(zip(one_way.compressed, one_way.variances, strict=True))
    ]
    tot, tvar = list(one_way.totals), list(one_way.total_variances)
    n_hat = _weighted_total(tot, tvar)
    tree, _, mu = fit_model(csizes, meas, n_hat, n_iter=_ROUND_ITER)
    cache = {
        c: np.asarray(m, dtype=np.int64).reshape([csizes[j] for j in c])
        for c, m in zip(cands, counts, strict=True)
    }
    measured, verdicts = [], {}
    left = 0.0 if exact else plan.rounds_total
    charge = plan.first_charge
    exact_rounds = aim_n_rounds(d) if exact and cands else 0
    record = []
    while cands and (left > 0 or exact_rounds > 0):
        if exact:
            exact_rounds -= 1
            eps_sel, scale, sd = math.inf, 0.0, 0.0
        else:
            if left < 2 * charge * (1 + 1e-9):  # the last round takes what is left
                charge = left
            left = max(left - charge, 0.0)
            eps_sel, scale, sd = plan.round_noise(charge)
        key = tuple(tree.cliques)
        if key not in verdicts:  # admissibility depends on the structure only
            verdicts = {key: {}}
        known = verdicts[key]

        def fits(c, known=known, tree=tree):
            if c not in known:
                known[c] = fits_caps(csizes, measured, c, tree)
            return known[c]

        score = quality_scores([cache[c] for c in cands], cands, tree, mu, n_hat, sd)
        pick = select_admissible(
            score, cands, fits, epsilon=eps_sel, rng=rng_select, sensitivity=plan.score_sensitivity
        )
        if pick is None:
            break
        before = n_hat * tree.marginal(mu, pick)
        counts = cache[pick]
        noisy, factor = _measure(pick, counts, scale, plan, rng_measure, clipped, one_way, n_hat)
        meas.append((pick, noisy, 1.0 if exact else 1.0 / (factor * sd) ** 2))
        if not exact and clipped is None:  # a clipped total is not the rows'
            tot.append(float(noisy.sum()))
            tvar.append(noisy.size * sd**2)
            n_hat = _weighted_total(tot, tvar)
        if pick not in measured:
            measured.append(pick)
        new_tree = tree if tree.home(pick) is not None else None
        if new_tree is None:
            new_tree = JunctionTree(triangulate(csizes, measured), csizes)
        tree, _, mu = fit_model(
            csizes, meas, n_hat, n_iter=_ROUND_ITER, init=(tree, mu), tree=new_tree
        )
        if exact:
            record.append((pick, 0.0, 0.0, 0.0))
            continue
        record.append((pick, (1 - _MEASURE_SHARE) * charge, _MEASURE_SHARE * charge, scale))
        after = n_hat * tree.marginal(mu, pick)
        if np.abs(after - before).sum() <= math.sqrt(2 / math.pi) * sd * counts.size:
            gauss = plan.mechanism == "gaussian"
            charge *= _ANNEAL_FACTOR if gauss else _ANNEAL_FACTOR_PURE
    tree, _, mu = fit_model(csizes, meas, n_hat, n_iter=_FINAL_ITER, init=(tree, mu), tree=tree)
    return tree, mu, n_hat, meas, record


def _measure(pick, counts, scale, plan, rng, clipped, one_way, n_hat):
    """A round's noisy marginal ``pick`` and the factor its noise was scaled by: the
    exact ``counts`` plus noise of ``scale`` (factor 1), or with ``clipped`` the
    per-patient clipped counts brought to ``n_hat``
    (:func:`~skdp.synthesis._marginal_clip.measure_clipped`)."""
    if clipped is None:
        return counts + plan.noise(counts.size, scale, rng).reshape(counts.shape), 1.0
    w = clipped.marginals([pick], one_way.maps, one_way.csizes)[0]
    noisy, factor = measure_clipped(w, scale, plan, rng, n_hat)
    return noisy.reshape(counts.shape), factor


@dataclass(frozen=True)
class RoundsModel:
    """AIM's model: the junction ``tree`` and its clique marginals ``mu``, the total
    ``n_hat``, the measurements and the per-round ``record`` of :func:`run_rounds`, over
    the compressed domains ``csizes``."""

    tree: JunctionTree
    mu: list
    n_hat: float
    measurements: list
    record: list
    csizes: list

    @property
    def measured(self):
        """Whether a round measured a marginal."""
        return bool(self.record)

    def fitted(self, names, plan):
        """The model's fitted attributes (``None`` for MST's) and the sampling order."""

        def key(c):
            return tuple(names[j] for j in c)

        tree, mu = self.tree, self.mu
        noisy = {}
        for cols, y, _ in self.measurements[len(names) :]:
            noisy.setdefault(key(cols), []).append(y.copy())
        nodes = [tree.marginal(mu, (j,)) for j in range(len(names))]
        order = tree.sampling_order(mu, nodes)
        return {
            **dict.fromkeys(("noisy_two_way_", "tree_", "edge_marginals_")),
            "cliques_": [key(c) for c in tree.cliques],
            "noisy_marginals_": noisy,
            "clique_marginals_": {key(c): m for c, m in zip(tree.cliques, mu, strict=True)},
            "rounds_": _rounds(self.record, key, plan.mechanism),
            "node_marginals_": {c: nodes[j] for j, c in enumerate(names)},
            "n_records_": float(self.n_hat),
            "_aim_order": [(sep, new, np.cumsum(cond, axis=1)) for sep, new, cond in order],
            "_aim_cond": [cond for _, _, cond in order],
            "_csizes": list(self.csizes),
        }


def _rounds(record, key, mechanism):
    """``rounds_``: each round's marginal, charges (``None`` without noise) and scale.

    The charges are ``"<rho|epsilon>_selection"`` and ``"<rho|epsilon>_measurement"``;
    their spellings of before 0.2 (``"rho_select"``, ``"rho_measure"``, ...) still read,
    with a ``FutureWarning`` (:class:`~skdp.utils._deprecation.RenamedKeys`)."""
    unit = "epsilon" if mechanism == "laplace" else "rho"
    sel_key, mea_key = f"{unit}_selection", f"{unit}_measurement"
    renamed = {f"{unit}_select": sel_key, f"{unit}_measure": mea_key}
    none = mechanism == "none"
    return [
        RenamedKeys(
            {
                "marginal": key(c),
                sel_key: None if none else float(sel),
                mea_key: None if none else float(mea),
                "noise_scale": float(scale),
            },
            renamed,
            "DPMarginalSynthesizer.rounds_[i]",
        )
        for c, sel, mea, scale in record
    ]


def fit_rounds(stats, one_way, plan, streams, clipped=None):
    """AIM after the 1-way release: the exact counts of every candidate (one pass over
    the rows, :mod:`skdp.synthesis._marginal_counts`), then the annealed rounds
    (``clipped``: measured on the per-patient clipped counts, :func:`run_rounds`)."""
    csizes = one_way.csizes
    cands = candidate_sets(csizes) if len(csizes) > 1 else []
    counts = stats.marginals(cands, one_way.maps, csizes) if cands else []
    rngs = (streams["select"], streams["two_way"])
    tree, mu, n_hat, meas, record = run_rounds(cands, counts, one_way, plan, *rngs, clipped)
    log_stage(plan, "rounds")
    return RoundsModel(tree, mu, n_hat, meas, record, list(csizes))
