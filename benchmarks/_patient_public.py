"""Every estimator family at patient level against group privacy, on a public
multi-row table (``patient_level.py --table NAME``; the tables: ``_patient_tables.py``).

Each seed splits the units (countries, individuals) at random, 70 % for training and
30 % held out, and draws the noise. At the same **per-unit** ``(epsilon, delta)``:

* ``group-priv``: the row-level fit made ``epsilon``-DP per unit by group privacy over
  the table's public cap ``k_max``: pure DP at ``epsilon / k_max``; ``(epsilon, delta)``
  at ``(epsilon / k_max, delta / (k_max e^{(k_max - 1) epsilon / k_max}))`` (DP-SGD and
  the AUC); zCDP at ``rho / k_max^2`` (the marginal synthesizer);
* ``patient k=K``: ``groups=unit`` and ``max_rows_per_group=K`` (rows beyond ``K``
  dropped at random), for the table's two public ``K``;
* ``per-row``: the row-level fit at ``epsilon`` -- **not** a per-unit guarantee: the
  cost reference;
* ``non-private``: the same estimator without noise (``epsilon = inf``; scikit-learn for
  the linear and logistic regressions; the real rows for the synthesizers).

Families and numbers (held-out units unless said): ``linear``
(:class:`~skdp.linear_model.DPLinearRegression`, ``delta = 0``): R^2; ``dpsgd``
(:class:`~skdp.linear_model.DPLogisticRegression`, DP-SGD, ``delta = 1e-5``): AUC;
``scoring`` (:func:`~skdp.metrics.dp_roc_auc_score` of the table's fixed public rule on
the training rows, ``delta = 1e-6``): ``|released - exact|``, lower is better;
``k-median`` (:class:`~skdp.cluster.SubsampledExpMedian`, 3 centres on two columns
scaled to ``[0, 1]`` by their bounds): mean distance to the nearest centre, lower is
better; ``ILP`` (:class:`~skdp.ilp.DPILPClassifier`, 2 clauses of at most 2 atoms on the
public cut points): accuracy; ``histogram`` / ``marginal``
(:class:`~skdp.synthesis.DPHistogramSynthesizer`, :class:`~skdp.synthesis.
DPMarginalSynthesizer` at ``delta = 1e-5``): 2-way total variation against the training
rows, lower is better. Medians over the seeds; the last columns give patient level
minus group privacy for each ``K``, signed so that positive means patient level is
better.
"""

from __future__ import annotations

import math
import os
import time
import warnings

import numpy as np

from benchmarks._patient_dpsgd import group_privacy_budget
from benchmarks._patient_synthesis import _make as make_synthesizer
from benchmarks._patient_synthesis import _per_row_budget
from benchmarks._patient_tables import TABLES

EPSILONS = (1.0, 10.0)
DELTA_SGD, DELTA_AUC, DELTA_SYNTH = 1e-5, 1e-6, 1e-5
FAMILIES = ("linear", "dpsgd", "scoring", "k-median", "ILP", "histogram", "marginal")
#: lower is better for these families' numbers
LOWER_IS_BETTER = {"scoring", "k-median", "histogram", "marginal"}


def _plans(table, eps, per_row_eps, delta=0.0):
    """``{method: (epsilon, delta, k)}``; ``k=None``: a row-level fit."""
    plans = {"group-priv": (*per_row_eps, None)}
    plans.update({f"patient k={k}": (eps, delta, k) for k in table.ks})
    plans.update({"per-row": (eps, delta, None), "non-private": (math.inf, 0.0, None)})
    return plans


def _fit(est, X, y, g, k):
    args = (X,) if y is None else (X, y)
    return est.fit(*args, groups=None if k is None else g)


def _linear(table, eps, split, seed):
    from sklearn.linear_model import LinearRegression
    from sklearn.metrics import r2_score

    from skdp.linear_model import DPLinearRegression

    target, cols = table.regression
    (tr, te), g = split
    X, Xt = table.matrix(cols, tr), table.matrix(cols, te)
    y, yt = table.matrix([target], tr)[:, 0], table.matrix([target], te)[:, 0]
    out = {}
    for m, (e, _, k) in _plans(table, eps, (eps / table.k_max, 0.0)).items():
        if math.isinf(e):
            est = LinearRegression().fit(X, y)
        else:
            est = DPLinearRegression(
                epsilon=e, delta=0.0, bounds_X=table.box(cols), bounds_y=table.bounds[target],
                max_rows_per_group=k, random_state=seed,
            )  # fmt: skip
            _fit(est, X, y, g, k)
        out[m] = r2_score(yt, est.predict(Xt))
    return out


def _dpsgd(table, eps, split, seed):
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    from skdp.linear_model import DPLogisticRegression

    label, cols = table.classification
    (tr, te), g = split
    X, Xt = table.matrix(cols, tr), table.matrix(cols, te)
    y, yt = table.matrix([label], tr)[:, 0], table.matrix([label], te)[:, 0]
    lo, hi = table.box(cols)
    out = {}
    budget = group_privacy_budget(eps, DELTA_SGD, table.k_max)
    for m, (e, d, k) in _plans(table, eps, budget, DELTA_SGD).items():
        if math.isinf(e):
            plain = LogisticRegression(max_iter=1000).fit((X - lo) / (hi - lo), y)
            out[m] = roc_auc_score(yt, plain.decision_function((Xt - lo) / (hi - lo)))
            continue
        est = DPLogisticRegression(
            epsilon=e, delta=d, mechanism="dpsgd", bounds_X=(lo, hi), classes=[0.0, 1.0],
            max_rows_per_group=k, random_state=seed,
        )  # fmt: skip
        out[m] = roc_auc_score(yt, _fit(est, X, y, g, k).decision_function(Xt))
    return out


def _scoring(table, eps, split, seed):
    from skdp.metrics import dp_roc_auc_score

    (tr, _), g = split
    y = table.matrix([table.classification[0]], tr)[:, 0]
    s = table.matrix([table.public_score], tr)[:, 0]
    exact = dp_roc_auc_score(y, s, epsilon=math.inf)
    out = {}
    budget = group_privacy_budget(eps, DELTA_AUC, table.k_max)
    for m, (e, d, k) in _plans(table, eps, budget, DELTA_AUC).items():
        kw = {} if k is None else {"groups": g, "max_rows_per_group": k}
        released = dp_roc_auc_score(y, s, epsilon=e, delta=d, random_state=seed, **kw)
        out[m] = abs(released - exact)
    return out


def _kmedian(table, eps, split, seed):
    from skdp.cluster import SubsampledExpMedian

    cols = list(table.kmedian)
    (tr, te), g = split
    lo, hi = table.box(cols)
    X, Xt = ((table.matrix(cols, r) - lo) / (hi - lo) for r in (tr, te))
    out = {}
    for m, (e, _, k) in _plans(table, eps, (eps / table.k_max, 0.0)).items():
        est = SubsampledExpMedian(
            n_clusters=3, epsilon=e, bounds=(0, 1), max_rows_per_group=k, random_state=seed
        )
        out[m] = -_fit(est, X, None, g, k).score(Xt) / len(Xt)
    return out


def _ilp(table, eps, split, seed):
    from skdp.ilp import DPILPClassifier

    (tr, te), g = split
    A = np.column_stack([table.frame[c].to_numpy() > t for c, t in table.atoms]).astype(int)
    y = table.frame[table.classification[0]].to_numpy().astype(int)
    out = {}
    for m, (e, _, k) in _plans(table, eps, (eps / table.k_max, 0.0)).items():
        est = DPILPClassifier(
            epsilon=e, n_clauses=2, max_clause_length=2, max_rows_per_group=k, random_state=seed
        )
        out[m] = float((_fit(est, A[tr], y[tr], g, k).predict(A[te]) == y[te]).mean())
    return out


def _synth(kind):
    def run(table, eps, split, seed):
        from skdp.metrics import marginal_total_variation

        frame, meta, _ = table.synth
        (tr, _), g = split
        train = frame.iloc[tr].reset_index(drop=True)
        e_row = _per_row_budget(kind, eps, table.k_max)
        out = {}
        for m, (e, _, k) in _plans(table, eps, (e_row, 0.0)).items():
            if math.isinf(e):
                out[m] = 0.0  # the real rows
                continue
            est = _fit(make_synthesizer(kind, e, meta, seed, k), train, None, g, k)
            synth = est.sample(len(train), random_state=seed)[train.columns]
            out[m] = marginal_total_variation(train, synth, way=2)
        return out

    return run


RUNNERS = {
    "linear": _linear,
    "dpsgd": _dpsgd,
    "scoring": _scoring,
    "k-median": _kmedian,
    "ILP": _ilp,
    "histogram": _synth("histogram"),
    "marginal": _synth("marginal"),
}


def _split(table, seed):
    """Row indices of the training and held-out units, and the training rows' units."""
    units = np.unique(table.groups)
    rng = np.random.default_rng(seed)
    train_units = rng.choice(units, size=int(round(0.7 * len(units))), replace=False)
    in_train = np.isin(table.groups, train_units)
    tr, te = np.flatnonzero(in_train), np.flatnonzero(~in_train)
    return (tr, te), table.groups[tr]


def run(name, seeds=3, families=FAMILIES, epsilons=EPSILONS):
    """``[(family, eps, {method: median})]`` for table ``name`` (``[]`` without it)."""
    table = TABLES[name]()
    if table is None:
        return []
    rows = []
    for family in families:
        for eps in epsilons:
            per_seed = []
            for seed in range(seeds):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    per_seed.append(RUNNERS[family](table, eps, _split(table, seed), seed))
            med = {m: float(np.median([r[m] for r in per_seed])) for m in per_seed[0]}
            rows.append((family, eps, med))
            print(_line(table, family, eps, med), flush=True)
    return rows


def _line(table, family, eps, med):
    """A table row; the last cells: patient-level minus group privacy per ``k``, signed
    so that positive means patient level is better."""
    cells = "|".join(f"{v:.3f}" for v in med.values())
    sign = -1.0 if family in LOWER_IS_BETTER else 1.0
    gains = "|".join(f"{sign * (med[f'patient k={k}'] - med['group-priv']):+.3f}" for k in table.ks)
    return f"|{table.name}|{family}|{eps:g}|{cells}|{gains}|"


def main(name, seeds):
    table = TABLES[name]()
    if table is None:
        return
    methods = list(_plans(table, 1.0, (1.0, 0.0)))
    print(f"### {name}: medians over {seeds} seeds, same per-unit epsilon (k_max = {table.k_max})")
    gains = "|".join(f"k={k} gain" for k in table.ks)
    print("\n|table|family|eps|" + "|".join(methods) + f"|{gains}|")
    print("|" + "---|" * (len(methods) + 3 + len(table.ks)))
    t0 = time.perf_counter()
    run(name, seeds)
    print(
        f"\n{time.perf_counter() - t0:.0f} s; load average {os.getloadavg()[0]:.1f}; "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}"
    )
