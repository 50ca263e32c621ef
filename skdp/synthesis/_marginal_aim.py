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
from itertools import combinations

import numpy as np

from skdp.mechanisms import exponential_mechanism
from skdp.synthesis._marginal_model import (
    _MARGINAL_SENSITIVITY,
    _weighted_total,
    integer_noise,
    rho_after_bounds,
)
from skdp.synthesis._marginal_pgm import JunctionTree, fit_model, triangulate

#: a candidate marginal, and every clique of the model, has at most this many cells
#: (over the compressed domains)
MAX_CLIQUE_CELLS = 10_000
#: the model's cliques hold at most this many cells together
MAX_MODEL_CELLS = 200_000
#: AIM's split of each round's budget between the measurement and the selection
_MEASURE_SHARE = 0.9
#: three-column candidates are considered while there are at most this many triples
_MAX_TRIPLES = 1_000
#: the rounds start with the budget of this many rounds per column (AIM's 16 d)
_ROUNDS_PER_COLUMN = 16
#: a round that changed the model by less than its noise multiplies the next rounds'
#: zCDP budget by this (AIM: the noise standard deviation halves)
_ANNEAL_FACTOR = 4.0
#: the same under pure DP: the Laplace scale halves when epsilon doubles
_ANNEAL_FACTOR_PURE = 2.0
#: mirror-descent steps after each round (warm-started) and for the final model
_ROUND_ITER, _FINAL_ITER = 50, 500
#: the quality score ||M_r(D) - model||_1 - penalty moves by at most 1 (weights are 1)
_AIM_SCORE_SENSITIVITY = _MARGINAL_SENSITIVITY


def aim_n_rounds(d):
    """Rounds of the budget that sets the bins: ``d`` (public).

    The noise of ``d`` equal rounds is close to that of one of MST's ``d - 1`` 2-way
    measurements at the same budget; :func:`~skdp.synthesis.marginal_n_bins` is given
    it. The rounds themselves are annealed (see the module docstring); without noise
    (``epsilon = inf``) there are exactly ``d``.
    """
    return max(int(d), 1)


def aim_budget(epsilon, delta, eps_bounds, d, share):
    """Noise of the 1-way release and the rounds' budget, from public quantities only.

    ``share[0]`` of the budget (``rho`` under zCDP, ``epsilon`` under pure DP) goes to
    the ``d`` 1-way measurements; the rest (``"rounds_total"``) to the annealed rounds,
    each split ``0.9 : 0.1`` between its measurement and its selection (AIM's split).
    ``"round_sd"`` is the noise of :func:`aim_n_rounds` equal rounds (it sets the bins).
    """
    T = aim_n_rounds(d)
    s1 = float(share[0]) if d > 1 else 1.0
    out = {"rho": None, "rho_breakdown": None, "has_rounds": d > 1}
    if math.isinf(epsilon):
        out.update(mechanism="none", sd1=0.0, scale1=0.0, round_sd=0.0, rounds_total=math.inf)
        out["epsilon_spent"] = math.inf
        out["eps_bounds"] = float(eps_bounds)
        return out
    eps_rest = epsilon - eps_bounds
    rounds_share = 1.0 - s1
    if delta > 0:
        rho = rho_after_bounds(epsilon, delta, eps_bounds)
        rho1 = rho * s1
        rounds = rho * rounds_share if d > 1 else 0.0
        sigma1 = math.sqrt(d / (2 * rho1))
        nominal = math.sqrt(T / (2 * _MEASURE_SHARE * rounds)) if rounds > 0 else 0.0
        out.update(mechanism="gaussian", sd1=sigma1, scale1=sigma1, round_sd=nominal)
        out.update(rho=float(rho), rho1=float(rho1), rounds_total=float(rounds))
        out["eps_rest"] = float(eps_rest)
    else:
        e1 = eps_rest * s1
        rounds = eps_rest * rounds_share if d > 1 else 0.0
        b1 = d / e1
        nominal = math.sqrt(2) * T / (_MEASURE_SHARE * rounds) if rounds > 0 else 0.0
        out.update(mechanism="laplace", sd1=math.sqrt(2) * b1, scale1=b1, round_sd=nominal)
        out.update(e1=float(e1), rounds_total=float(rounds))
    out["epsilon_spent"] = float(epsilon)
    out["eps_bounds"] = float(eps_bounds)
    return out


def finish_budget(budget, record):
    """Fill in the privacy breakdown from the rounds actually run.

    ``record`` holds each round's ``(marginal, selection charge, measurement charge,
    noise scale)`` (``rho`` under zCDP, ``epsilon`` under pure DP). Returns the dict
    ``budget`` with ``"breakdown"`` (epsilon by stage; under zCDP each stage's share of
    ``rho`` times the ``epsilon`` left after the bounds), ``"rho_breakdown"`` (zCDP) and
    ``"select_epsilon"`` (the first round's exponential mechanism).
    """
    names = ("one_way", "select", "two_way")
    mech = budget["mechanism"]
    if mech == "none":
        budget["breakdown"] = {"bounds": budget["eps_bounds"], **{k: math.inf for k in names}}
        budget["select_epsilon"] = math.inf
        return budget
    sel = math.fsum(r[1] for r in record)
    meas = math.fsum(r[2] for r in record)
    if mech == "gaussian":
        rhos = (budget["rho1"], sel, meas)
        budget["rho_breakdown"] = {k: float(r) for k, r in zip(names, rhos, strict=True)}
        parts = [budget["eps_rest"] * r / budget["rho"] for r in rhos]
        budget["select_epsilon"] = math.sqrt(8 * record[0][1]) if record else math.inf
    else:
        parts = [budget["e1"], sel, meas]
        budget["select_epsilon"] = record[0][1] if record else math.inf
    budget["breakdown"] = {"bounds": budget["eps_bounds"]}
    budget["breakdown"].update({k: float(v) for k, v in zip(names, parts, strict=True)})
    return budget


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


def select_admissible(score, cands, fits, *, epsilon, rng):
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
            sensitivity=_AIM_SCORE_SENSITIVITY,
            rng=rng,
            log_base_measure=log_base,
        )
        if fits(cands[i]):
            return cands[i]
        log_base[i] = -np.inf
    return None


def _round_noise(budget, charge):
    """Selection epsilon, measurement noise scale and standard deviation of a round."""
    if budget["mechanism"] == "gaussian":
        sd = math.sqrt(1.0 / (2 * _MEASURE_SHARE * charge))
        return math.sqrt(8 * (1 - _MEASURE_SHARE) * charge), sd, sd
    scale = 1.0 / (_MEASURE_SHARE * charge)
    return (1 - _MEASURE_SHARE) * charge, scale, math.sqrt(2) * scale


def candidate_counts(Bc, csizes, cands):
    """Exact counts of every candidate marginal (flattened, int64) of the compressed cells
    ``Bc``; a row function of :func:`skdp.utils._rowsum.row_sum` (Dask input)."""
    return [marginal_counts(Bc, csizes, c).ravel() for c in cands]


def run_rounds(counts_of, csizes, y1c, v1c, totals, t_var, budget, rng_select, rng_measure):
    """AIM's annealed rounds.

    ``counts_of(cands)`` returns the exact counts of every candidate marginal (flattened
    or shaped), in one pass over the rows; it is called once, before the first round.
    Returns the fitted :class:`~skdp.synthesis._marginal_pgm.JunctionTree`, its clique
    marginals, the total ``n_hat``, the measurements ``(columns, noisy counts, weight)``
    (the 1-way ones first) and the per-round record ``(marginal, selection charge,
    measurement charge, noise scale)``.
    """
    d = len(csizes)
    exact = budget["mechanism"] == "none"
    meas = [
        ((j,), np.asarray(y1c[j], float), 1.0 if exact else 1.0 / np.asarray(v1c[j], float))
        for j in range(d)
    ]
    tot, tvar = list(totals), list(t_var)
    n_hat = _weighted_total(tot, tvar)
    tree, _, mu = fit_model(csizes, meas, n_hat, n_iter=_ROUND_ITER)
    cands = candidate_sets(csizes) if budget["has_rounds"] else []
    cache = {
        c: np.asarray(m, dtype=np.int64).reshape([csizes[j] for j in c])
        for c, m in zip(cands, counts_of(cands) if cands else [], strict=True)
    }
    measured, verdicts = [], {}
    left = 0.0 if exact else budget["rounds_total"]
    charge = left / (_ROUNDS_PER_COLUMN * d) if left > 0 else 0.0
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
            eps_sel, scale, sd = _round_noise(budget, charge)
        key = tuple(tree.cliques)
        if key not in verdicts:  # admissibility depends on the structure only
            verdicts = {key: {}}
        known = verdicts[key]

        def fits(c, known=known, tree=tree):
            if c not in known:
                known[c] = fits_caps(csizes, measured, c, tree)
            return known[c]

        score = quality_scores([cache[c] for c in cands], cands, tree, mu, n_hat, sd)
        pick = select_admissible(score, cands, fits, epsilon=eps_sel, rng=rng_select)
        if pick is None:
            break
        before = n_hat * tree.marginal(mu, pick)
        counts = cache[pick]
        noisy = counts + integer_noise(counts.size, scale, budget, rng_measure).reshape(
            counts.shape
        )
        meas.append((pick, noisy, 1.0 if exact else 1.0 / sd**2))
        if not exact:
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
            gauss = budget["mechanism"] == "gaussian"
            charge *= _ANNEAL_FACTOR if gauss else _ANNEAL_FACTOR_PURE
    tree, _, mu = fit_model(csizes, meas, n_hat, n_iter=_FINAL_ITER, init=(tree, mu), tree=tree)
    return tree, mu, n_hat, meas, record
