"""AIM-style adaptive rounds for :class:`DPMarginalSynthesizer` (McKenna et al. 2022).

After MST's noisy 1-way release, ``n_rounds`` rounds each pick one marginal of two or
three columns with the exponential mechanism (AIM's quality score: the L1 error of the
current model's marginal minus the noise the measurement would add), measure it with
Gaussian (or Laplace) noise and re-estimate the model.

The model stays a **junction tree of cliques of at most three columns**, so that it can
be estimated with the projections of :mod:`skdp.synthesis._marginal_model` and sampled
exactly (ancestrally): a candidate is admissible only if adding it as a new clique keeps
the cliques a junction tree, i.e. the candidate's columns that already lie in one
connected component of the model all lie in one existing clique (the separator), and a
candidate inside one component must be an existing clique (a re-measurement). Columns
not yet in the model are independent of the rest.
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np

from skdp.accounting import zcdp_delta, zcdp_rho
from skdp.mechanisms import exponential_mechanism
from skdp.synthesis._marginal_model import (
    _MARGINAL_SENSITIVITY,
    _simplex,
    _simplex_rows,
    _transport_projection,
    _weighted_total,
    integer_noise,
)

#: a candidate marginal has at most this many cells (over the compressed domains)
MAX_CLIQUE_CELLS = 10_000
#: AIM's split of each round's budget between the measurement and the selection
_MEASURE_SHARE = 0.9
#: three-column candidates are considered while there are at most this many triples
_MAX_TRIPLES = 5_000
#: the quality score ||M_r(D) - model||_1 - penalty moves by at most 1 (weights are 1)
_AIM_SCORE_SENSITIVITY = _MARGINAL_SENSITIVITY


def aim_n_rounds(d):
    """Number of adaptive rounds: ``d`` (public; never a function of the data).

    About MST's ``d - 1`` 2-way measurements plus one, so a round's noise is close to
    that of one of MST's measurements at the same budget.
    """
    return max(int(d), 1)


def aim_budget(epsilon, delta, eps_bounds, d, share):
    """Noise and privacy facts of the AIM path, from public quantities only.

    ``share[0]`` of the budget (``rho`` under zCDP, ``epsilon`` under pure DP) goes to
    the ``d`` 1-way measurements, the rest to ``n_rounds`` equal rounds, each split
    ``0.9 : 0.1`` between its measurement and its selection (AIM's split).
    """
    T = aim_n_rounds(d)
    s1 = float(share[0]) if d > 1 else 1.0
    out = {"rho": None, "rho_breakdown": None, "n_rounds": T if d > 1 else 0}
    names = ("one_way", "select", "two_way")
    if math.isinf(epsilon):
        out.update(mechanism="none", sd1=0.0, scale1=0.0, round_scale=0.0, round_sd=0.0)
        out["select_epsilon"] = math.inf
        out["epsilon_spent"] = math.inf
        out["breakdown"] = {"bounds": float(eps_bounds), **{k: math.inf for k in names}}
        out["round_rho"] = None
        return out
    eps_rest = epsilon - eps_bounds
    rounds_share = 1.0 - s1
    if delta > 0:
        rho = zcdp_rho(eps_rest, delta)
        if eps_bounds > 0:  # the bounds charged inside zCDP when that leaves more rho
            rho_in = zcdp_rho(epsilon, delta) - eps_bounds**2 / 2
            while rho_in > rho and zcdp_delta(rho_in + eps_bounds**2 / 2, epsilon) > delta:
                rho_in *= 1.0 - 1e-12
            rho = max(rho, rho_in)
        rho1 = rho * s1
        rho_t = rho * rounds_share / T if d > 1 else 0.0
        sigma1 = math.sqrt(d / (2 * rho1))
        sigma_t = math.sqrt(1.0 / (2 * _MEASURE_SHARE * rho_t)) if rho_t > 0 else 0.0
        sel = math.sqrt(8 * (1 - _MEASURE_SHARE) * rho_t) if rho_t > 0 else math.inf
        out.update(
            mechanism="gaussian", sd1=sigma1, scale1=sigma1, round_scale=sigma_t, round_sd=sigma_t
        )
        out["select_epsilon"] = sel
        out["rho"] = float(rho)
        n_r = out["n_rounds"]
        rhos = (rho1, n_r * (1 - _MEASURE_SHARE) * rho_t, n_r * _MEASURE_SHARE * rho_t)
        out["rho_breakdown"] = {k: float(r) for k, r in zip(names, rhos, strict=True)}
        out["round_rho"] = {
            "select": float((1 - _MEASURE_SHARE) * rho_t),
            "measure": float(_MEASURE_SHARE * rho_t),
        }
        out["epsilon_spent"] = float(epsilon)
        parts = [eps_rest * r / rho for r in rhos]
    else:
        e1 = eps_rest * s1
        e_t = eps_rest * rounds_share / T if d > 1 else 0.0
        b1 = d / e1
        b_t = 1.0 / (_MEASURE_SHARE * e_t) if e_t > 0 else 0.0
        out.update(
            mechanism="laplace",
            sd1=math.sqrt(2) * b1,
            scale1=b1,
            round_scale=b_t,
            round_sd=math.sqrt(2) * b_t,
        )
        out["select_epsilon"] = (1 - _MEASURE_SHARE) * e_t if e_t > 0 else math.inf
        out["round_rho"] = None
        n_r = out["n_rounds"]
        parts = [e1, n_r * (1 - _MEASURE_SHARE) * e_t, n_r * _MEASURE_SHARE * e_t]
        out["epsilon_spent"] = float(epsilon)
    out["breakdown"] = {"bounds": float(eps_bounds)}
    out["breakdown"].update({k: float(v) for k, v in zip(names, parts, strict=True)})
    return out


class JunctionModel:
    """Cliques (sorted tuples of column indices), their noisy measurements and links."""

    def __init__(self, csizes):
        self.csizes = list(csizes)
        self.cliques = []  # tuple of column indices (sorted)
        self.measurements = []  # per clique: list of (noisy table, noise variance per cell)
        self.links = []  # per clique: list of (other clique, separator tuple)
        self.component = list(range(len(csizes)))  # component label of each column
        self.covered = [False] * len(csizes)

    def _clique_of(self, group):
        """An existing clique that contains all columns of ``group`` (or None)."""
        g = set(group)
        for k, c in enumerate(self.cliques):
            if g <= set(c):
                return k
        return None

    def groups(self, cand):
        """The candidate's columns grouped by connected component of the model."""
        out = {}
        for j in cand:
            out.setdefault(self.component[j], []).append(j)
        return [tuple(g) for g in out.values()]

    def admissible(self, cand):
        """Whether ``cand`` is a re-measurement or keeps the cliques a junction tree."""
        cand = tuple(cand)
        if cand in self.cliques:
            return True
        groups = self.groups(cand)
        if len(groups) == 1 and all(self.covered[j] for j in cand):
            return False  # inside one component but not a clique: a cycle
        for g in groups:
            if len(g) == 1:
                continue
            if self._clique_of(g) is None:
                return False
        return True

    def add(self, cand, table, var):
        cand = tuple(cand)
        if cand in self.cliques:
            self.measurements[self.cliques.index(cand)].append((table, var))
            return
        k = len(self.cliques)
        links = []
        for g in self.groups(cand):
            if not all(self.covered[j] for j in g):
                continue  # new columns (a group of uncovered columns has size 1)
            other = self._clique_of(g)
            links.append((other, g))
            self.links[other].append((k, g))
        self.cliques.append(cand)
        self.measurements.append([(table, var)])
        self.links.append(links)
        label = min(self.component[j] for j in cand)
        old = {self.component[j] for j in cand}
        self.component = [label if c in old else c for c in self.component]
        for j in cand:
            self.covered[j] = True

    # ------------------------------------------------------------ estimation
    def combined(self, k):
        """Inverse-variance average of a clique's measurements and its variance."""
        ms = self.measurements[k]
        w = np.array([1.0 / v if v > 0 else np.inf for _, v in ms])
        if np.isinf(w).any():
            return ms[int(np.argmax(np.isinf(w)))][0].astype(float), 0.0
        table = sum(wi * t for wi, (t, _) in zip(w, ms, strict=True)) / w.sum()
        return table, 1.0 / w.sum()

    def estimate(self, y1c, v1c, totals, t_var, max_iter=3000):
        """Node distributions, clique tables (probabilities) and the total ``n_hat``.

        Every clique table is its (averaged) measurement divided by ``n_hat`` and
        projected, in breadth-first order from a root clique, onto the tables whose
        separator margin is the parent's and (one new column) whose new column's margin
        is the node distribution; the model is then ``prod cliques / prod separators``,
        sampled ancestrally in the same order.
        """
        d = len(self.csizes)
        comb = [self.combined(k) for k in range(len(self.cliques))]
        totals = list(totals) + [float(t.sum()) for t, _ in comb]
        t_var = list(t_var) + [t.size * v for t, v in comb]
        n_hat = _weighted_total(totals, t_var)
        exact = any(v == 0 for _, v in comb) or any(np.all(v == 0) for v in v1c)
        num = [np.zeros(k) for k in self.csizes]
        den = [np.zeros(k) for k in self.csizes]
        for j in range(d):
            w = 1.0 if exact else 1.0 / v1c[j]
            num[j] += w * y1c[j]
            den[j] += w
        if not exact:
            for c, (t, v) in zip(self.cliques, comb, strict=True):
                for ax, j in enumerate(c):
                    others = tuple(i for i in range(len(c)) if i != ax)
                    var = v * t.size / self.csizes[j]
                    num[j] += t.sum(axis=others) / var
                    den[j] += 1.0 / var
        nodes = [_simplex(num[j] / den[j] / n_hat) for j in range(d)]
        tables = [None] * len(self.cliques)
        self.order = []  # (sep columns, new columns, conditional matrix)
        seen = set()
        for root in range(len(self.cliques)):
            if root in seen:
                continue
            queue = [(root, None)]
            seen.add(root)
            while queue:
                k, parent = queue.pop(0)
                c = self.cliques[k]
                if parent is None:
                    sep = (c[0],)
                    r = nodes[c[0]]
                    self.order.append(((), sep, nodes[c[0]][None, :]))
                else:
                    p, sep = parent
                    r = _margin(tables[p], self.cliques[p], sep)
                new = tuple(j for j in c if j not in sep)
                if not new:  # a clique inside its parent (a later clique contains it)
                    tables[k] = _margin(tables[p], self.cliques[p], c)
                else:
                    perm = [c.index(j) for j in sep + new]
                    M = np.transpose(comb[k][0] / n_hat, perm).reshape(
                        int(np.prod([self.csizes[j] for j in sep])), -1
                    )
                    r = np.asarray(r, float).ravel()
                    if len(new) == 1:
                        X = _transport_projection(M, r, nodes[new[0]], max_iter=max_iter)
                    else:
                        X = _simplex_rows(M, r)
                    shape = [self.csizes[j] for j in sep + new]
                    tables[k] = np.transpose(X.reshape(shape), np.argsort(perm))
                    self.order.append((sep, new, _conditional(X, [nodes[j] for j in new])))
                for other, g in self.links[k]:
                    if other not in seen:
                        seen.add(other)
                        queue.append((other, (k, g)))
        for j in range(d):
            if not self.covered[j]:
                self.order.append(((), (j,), nodes[j][None, :]))
        return nodes, tables, n_hat

    def model_marginal(self, cand, nodes, tables):
        """The current model's distribution of the columns ``cand`` (admissible)."""
        cand = tuple(cand)
        if cand in self.cliques:
            return tables[self.cliques.index(cand)]
        parts, labels = [], []
        for g in self.groups(cand):
            if len(g) == 1 and not self.covered[g[0]]:
                parts.append(nodes[g[0]])
            else:
                k = self._clique_of(g)
                parts.append(_margin(tables[k], self.cliques[k], g))
            labels.extend(g)
        out = parts[0]
        for p in parts[1:]:
            out = np.multiply.outer(out, p)
        return np.transpose(out, [labels.index(j) for j in cand])


def _margin(table, clique, cols):
    """Marginal of a clique table onto ``cols`` (axes in ``cols`` order)."""
    axes = tuple(i for i, j in enumerate(clique) if j not in cols)
    m = table.sum(axis=axes) if axes else table
    kept = [j for j in clique if j in cols]
    return np.transpose(m, [kept.index(j) for j in cols])


def _conditional(X, new_nodes):
    """Row-normalised ``X`` (sep cells x new cells); an empty row takes the product
    of the new columns' node distributions."""
    fallback = new_nodes[0]
    for p in new_nodes[1:]:
        fallback = np.multiply.outer(fallback, p)
    fallback = fallback.ravel()
    rows = X.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(rows > 0, X / np.where(rows > 0, rows, 1.0), fallback[None, :])


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


def quality_scores(counts, cands, model, nodes, tables, n_hat, sd):
    """AIM's quality scores ``||M_r(D) - n_hat p_r||_1 - sqrt(2/pi) sd |r|`` (weights 1).

    ``counts`` are the exact marginals ``M_r(D)``; the model ``p_r``, ``n_hat`` and the
    noise ``sd`` come from earlier noisy releases and public quantities, so adding or
    removing a row moves one cell of ``M_r(D)`` by one and each score by at most 1.
    """
    penalty = math.sqrt(2 / math.pi) * sd
    score = np.empty(len(cands))
    for i, (x, c) in enumerate(zip(counts, cands, strict=True)):
        fit = n_hat * model.model_marginal(c, nodes, tables)
        score[i] = np.abs(x - fit).sum() - penalty * x.size
    return score


def run_rounds(Bc, csizes, y1c, v1c, totals, t_var, budget, rng_select, rng_measure):
    """AIM's rounds; returns the fitted :class:`JunctionModel`, its estimates and the
    per-round record (clique, rho of the selection and of the measurement)."""
    model = JunctionModel(csizes)
    nodes, tables, n_hat = model.estimate(y1c, v1c, totals, t_var, max_iter=200)
    cands = candidate_sets(csizes)
    cache = {}
    sd = budget["round_sd"]
    var = sd**2
    record = []
    for _ in range(budget["n_rounds"]):
        live = [c for c in cands if model.admissible(c)]
        if not live:
            break
        for c in live:
            if c not in cache:
                cache[c] = marginal_counts(Bc, csizes, c)
        score = quality_scores([cache[c] for c in live], live, model, nodes, tables, n_hat, sd)
        pick = live[
            exponential_mechanism(
                score,
                epsilon=budget["select_epsilon"],
                sensitivity=_AIM_SCORE_SENSITIVITY,
                rng=rng_select,
            )
        ]
        counts = cache[pick]
        noisy = counts + integer_noise(
            counts.size, budget["round_scale"], budget, rng_measure
        ).reshape(counts.shape)
        model.add(pick, noisy, var)
        # intermediate estimates only steer the selection: fewer projection sweeps
        nodes, tables, n_hat = model.estimate(y1c, v1c, totals, t_var, max_iter=200)
        record.append(pick)
    nodes, tables, n_hat = model.estimate(y1c, v1c, totals, t_var)
    return model, nodes, tables, n_hat, record
