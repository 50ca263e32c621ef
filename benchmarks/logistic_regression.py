"""Benchmark of DPLogisticRegression's mechanisms and of the rule that chooses between
them, with its peers optional: test AUC on public
binary tables of 225-4,774 training rows, every model at the same epsilon, side by side
in one run.

Models (every model sees the same declared public bounds; the peers get the features
mapped onto ``[-1, 1]`` by those bounds, rows of L2 norm at most ``sqrt(p)``):

* ``sklearn``: non-private ``LogisticRegression`` (C=1) on the scaled features;
* ``objective``: ``DPLogisticRegression(epsilon, mechanism="objective", delta=0)``:
  objective perturbation, pure epsilon-DP (the default before ``mechanism="auto"``);
* ``dpsgd``: ``DPLogisticRegression(epsilon, delta=1e-5, mechanism="dpsgd")``: DP-SGD on
  skdp's engine (:func:`skdp.training.train_dpsgd`: Poisson sampling, clipping 1, PLD
  accountant, 300 steps, expected batch 64, Adam lr 0.05, zero init) on the features
  mapped onto ``[-1, 1]`` by the bounds, plus a constant;
* ``auto``: ``DPLogisticRegression(epsilon)`` with its defaults (``mechanism="auto"``,
  ``delta=1e-5``): DP-SGD when ``n epsilon / (K' (p + 1)) < 100``, objective
  perturbation otherwise (:func:`skdp.linear_model._logistic.auto_mechanism`). Its
  parameters differ from the other two rows', so under the same ``random_state`` its
  noise is an independent draw of the chosen mechanism (skdp hashes the parameters into
  the seed), not a copy of that row;
* ``skdp-KST`` (optional): objective perturbation with the ridge rule of the release
  before the tuned ridge, ``max(1 / C, 0.25 / (e^(eps/2) - 1))``;
* ``opacus`` (optional): the same network, loss and optimiser with Opacus'
  ``PrivacyEngine.make_private_with_epsilon`` (Poisson sampling, clipping 1, its default
  accountant, ``delta = 1e-5``, batch 64, ``epochs = max(1, round(300 / batches))``),
  run in its own virtual environment (``--opacus-python``, default
  ``/tmp/opvenv/bin/python``; ``python -m venv /tmp/opvenv && /tmp/opvenv/bin/pip
  install -c constraints.txt torch==2.13.0 opacus scikit-learn``);
* ``diffprivlib`` (optional): ``diffprivlib.models.LogisticRegression(epsilon,
  data_norm=sqrt(p))`` in its own virtual environment (``--dpl-python``, default
  ``/tmp/dplvenv/bin/python``; it needs scikit-learn < 1.6).

No model is tuned on the data: every hyperparameter above is fixed in advance, the same
for every data set and epsilon. The DP-SGD models are ``(epsilon, 1e-5)``-DP, a weaker
guarantee than the pure epsilon-DP of objective perturbation.

Tables (public, shipped with scikit-learn, statsmodels or skdp; statsmodels is not a
dependency of skdp, and without it its rows are skipped):

* ``breast_cancer``: ``load_breast_cancer`` (569 rows, 30 features). ``bounds_X`` are the
  per-feature min/max printed in the data set's documentation (``DESCR``), i.e. **taken
  from these rows**, for this benchmark only (a real release needs clinical bounds).
* ``diabetes``: ``load_diabetes(scaled=False)`` (442 rows, 10 raw features), label
  ``target > 140`` (a fixed threshold); bounds are declared clinical ranges.
* ``repeated``: :func:`skdp.datasets.make_nonlinear_repeated_measures` (6000 rows), the
  4 covariates on their public box ``(0, a_j)``, label ``mean(x1..x5) > f(box middle)``;
  ``repeated400``: 400 of its rows (a new draw per seed).
* ``anes96`` (statsmodels, 944 rows, 9 covariates): the expected vote; ranges from the
  codebook, age and log population as declared caps (``ANES_BOUNDS``).
* ``star98`` (statsmodels, 303 school districts, 12 covariates): more pupils above the
  national math median than below; percentages on 0-100, other caps declared
  (``STAR98_BOUNDS``).
* ``fair`` (statsmodels, 6,366 rows, 8 covariates): any affair, ``FAIR_BOUNDS`` of
  ``benchmarks/_public_tables.py``; ``fair300``: 300 of its rows (a new draw per seed).
* ``randhie2000`` (statsmodels): 2,000 of its 20,190 person-years (a new draw per seed),
  any doctor visit from the 9 covariates, ``RANDHIE_BOUNDS``.

Each seed draws a new stratified 75/25 split (and subsample) and new noise; cells are
the median test AUC over ``--seeds`` seeds (10th percentile in brackets); ``r`` is the
rule's ``n epsilon / (p + 1)`` (two classes), ``auto chose`` the mechanism it picked. Run
``OMP_NUM_THREADS=1 python benchmarks/logistic_regression.py [--seeds 10]
[--models objective,dpsgd,auto,opacus,diffprivlib]``. The measured table and its reading
are in ``doc/benchmarks_models.rst`` (section "Logistic regression: the automatic
mechanism"); the earlier peer comparison is in ``doc/user_guide.rst``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, roc_auc_score
from sklearn.model_selection import train_test_split

from skdp.datasets import (
    NONLINEAR_BETA_TRUE,
    NONLINEAR_W_UPPER,
    make_nonlinear_repeated_measures,
    nonlinear_regression_function,
)
from skdp.linear_model import DPLogisticRegression

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _public_tables import FAIR_BOUNDS, RANDHIE_BOUNDS, statsmodels_table  # noqa: E402

EPSILONS = (0.5, 1.0, 3.0)
DELTA_SGD = 1e-5
STEPS, BATCH, LR = 300, 64, 0.05


# ------------------------------------------------------------------------ data
def breast_cancer(seed):
    data = load_breast_cancer()
    rows = re.findall(r"^([a-z ]+\([a-z ]+\)):\s+([\d.]+)\s+([\d.]+)\s*$", data.DESCR, re.M)
    assert len(rows) == 30, len(rows)
    lo = np.array([float(r[1]) for r in rows])
    hi = np.array([float(r[2]) for r in rows])
    return data.data, data.target, (lo, hi)


DIABETES_BOUNDS = (
    np.array([18, 1, 15, 50, 80, 30, 15, 1, 3, 50], dtype=float),
    np.array([90, 2, 50, 150, 320, 260, 110, 10, 7, 150], dtype=float),
)


def diabetes(seed):
    X, y = load_diabetes(scaled=False, return_X_y=True)
    return X, (y > 140).astype(int), DIABETES_BOUNDS


def repeated(seed):
    X = make_nonlinear_repeated_measures(6000, random_state=seed)
    W = X[:, :4]
    upper = np.asarray(NONLINEAR_W_UPPER, dtype=float)
    middle = nonlinear_regression_function((upper / 2)[None, :], NONLINEAR_BETA_TRUE)
    y = (X[:, 4:].mean(axis=1) > float(np.ravel(middle)[0])).astype(int)
    return W, y, (np.zeros(4), upper)


def repeated_small(seed):
    W, y, box = repeated(seed)
    rows = np.random.default_rng(seed).choice(W.shape[0], 400, replace=False)
    return W[rows], y[rows], box


#: anes96 (944 rows): vote (0 Clinton, 1 Dole) from the nine covariates; ranges from the
#: codebook (scales 0-6 / 1-7, income codes 1-24, TV news 0-7 days), age 18-95 and
#: log(population in 1000s + 0.1) in [log 0.1, log 10,000] declared as plausibility caps
ANES_BOUNDS = {
    "logpopul": (math.log(0.1), math.log(10_000.0)),
    "TVnews": (0, 7),
    "selfLR": (1, 7),
    "ClinLR": (1, 7),
    "DoleLR": (1, 7),
    "PID": (0, 6),
    "age": (18, 95),
    "educ": (1, 7),
    "income": (1, 24),
}

#: star98 (303 California school districts): share of pupils above the national math
#: median > 0.5, from the twelve district covariates (percentages on 0-100; teacher
#: experience 0-40 years, salary 0-150 k$, spending 0-20 k$ per pupil and pupils per
#: teacher 0-50 declared as plausibility caps)
STAR98_BOUNDS = {
    "LOWINC": (0, 100),
    "PERASIAN": (0, 100),
    "PERBLACK": (0, 100),
    "PERHISP": (0, 100),
    "PERMINTE": (0, 100),
    "AVYRSEXP": (0, 40),
    "AVSALK": (0, 150),
    "PERSPENK": (0, 20),
    "PTRATIO": (0, 50),
    "PCTAF": (0, 100),
    "PCTCHRT": (0, 100),
    "PCTYRRND": (0, 100),
}


def _boxed(frame, bounds):
    cols = list(bounds)
    lo = np.array([float(bounds[c][0]) for c in cols])
    hi = np.array([float(bounds[c][1]) for c in cols])
    return frame[cols].to_numpy(dtype=float), (lo, hi)


def anes96(seed):
    frame = statsmodels_table("anes96")
    if frame is None:
        return None
    X, box = _boxed(frame, ANES_BOUNDS)
    return X, frame["vote"].to_numpy().astype(int), box


def star98(seed):
    frame = statsmodels_table("star98")
    if frame is None:
        return None
    X, box = _boxed(frame, STAR98_BOUNDS)
    y = (frame["NABOVE"] / (frame["NABOVE"] + frame["NBELOW"]) > 0.5).to_numpy().astype(int)
    return X, y, box


def _fair(seed, rows=None):
    frame = statsmodels_table("fair")
    if frame is None:
        return None
    bounds = {k: v for k, v in FAIR_BOUNDS.items() if k != "rate_marriage"}
    bounds = {"rate_marriage": FAIR_BOUNDS["rate_marriage"], **bounds}
    X, box = _boxed(frame, bounds)
    y = (frame["affairs"] > 0).to_numpy().astype(int)
    if rows is not None:  # a public table of ``rows`` respondents (a new draw per seed)
        pick = np.random.default_rng(seed).choice(X.shape[0], rows, replace=False)
        X, y = X[pick], y[pick]
    return X, y, box


def fair(seed):
    return _fair(seed)


def fair_small(seed):
    return _fair(seed, rows=300)


def randhie(seed):
    """2,000 person-years of randhie (a new draw per seed): any doctor visit."""
    frame = statsmodels_table("randhie")
    if frame is None:
        return None
    X, box = _boxed(frame, RANDHIE_BOUNDS)
    y = (frame["mdvis"] > 0).to_numpy().astype(int)
    pick = np.random.default_rng(seed).choice(X.shape[0], 2000, replace=False)
    return X[pick], y[pick], box


DATASETS = {
    "breast_cancer": breast_cancer,
    "diabetes": diabetes,
    "repeated": repeated,
    "repeated400": repeated_small,
    "anes96": anes96,
    "star98": star98,
    "fair": fair,
    "fair300": fair_small,
    "randhie2000": randhie,
}


def scaled(X, lo, hi):
    return np.clip((np.clip(X, lo, hi) - lo) / (hi - lo) * 2.0 - 1.0, -1.0, 1.0)


# ------------------------------------------------------------------------ skdp
def fit_kst(X, y, eps, bounds, seed):
    import skdp.linear_model._logistic as L

    saved = L.objective_perturbation_parameters

    def kst(epsilon, C, smoothness=L.LOGISTIC_SMOOTHNESS):
        ridge = 1.0 / float(C)
        if math.isinf(epsilon):
            return ridge, math.inf
        ridge = max(ridge, smoothness / math.expm1(epsilon / 2.0))
        return ridge, epsilon - math.log1p(smoothness / ridge)

    L.objective_perturbation_parameters = kst
    try:
        clf = DPLogisticRegression(
            epsilon=eps,
            classes=[0, 1],
            bounds_X=bounds,
            mechanism="objective",
            delta=0.0,
            random_state=seed,
        ).fit(X, y)
    finally:
        L.objective_perturbation_parameters = saved
    return clf.decision_function


# ------------------------------------------------------------------------ peers
_OPACUS = r"""
import json, sys, time, warnings
import numpy as np, torch
from opacus import PrivacyEngine
warnings.simplefilter("ignore")
torch.set_num_threads(1)
task = np.load(sys.argv[1])
cfg = json.loads(sys.argv[2])
Xtr, ytr, Xte = task["Xtr"], task["ytr"].astype(np.float64), task["Xte"]
out = {}
for eps in cfg["eps"]:
    torch.manual_seed(cfg["seed"])
    model = torch.nn.Linear(Xtr.shape[1], 1).double()
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    ds = torch.utils.data.TensorDataset(torch.as_tensor(Xtr), torch.as_tensor(ytr))
    loader = torch.utils.data.DataLoader(ds, batch_size=cfg["batch"])
    epochs = max(1, round(cfg["steps"] / len(loader)))
    t0 = time.perf_counter()
    engine = PrivacyEngine()
    model, opt, loader = engine.make_private_with_epsilon(
        module=model, optimizer=opt, data_loader=loader, target_epsilon=eps,
        target_delta=cfg["delta"], epochs=epochs, max_grad_norm=1.0)
    lossf = torch.nn.BCEWithLogitsLoss()
    for _ in range(epochs):
        for xb, yb in loader:
            if len(xb) == 0:
                continue
            opt.zero_grad()
            lossf(model(xb).reshape(-1), yb).backward()
            opt.step()
    elapsed = time.perf_counter() - t0
    with torch.no_grad():
        s = model(torch.as_tensor(Xte)).reshape(-1).numpy().tolist()
    out[str(eps)] = {"score": s, "time": elapsed}
print(json.dumps(out))
"""

_DIFFPRIVLIB = r"""
import json, sys, time, warnings
import numpy as np
from diffprivlib.models import LogisticRegression
warnings.simplefilter("ignore")
task = np.load(sys.argv[1])
cfg = json.loads(sys.argv[2])
Xtr, ytr, Xte = task["Xtr"], task["ytr"], task["Xte"]
out = {}
for eps in cfg["eps"]:
    t0 = time.perf_counter()
    m = LogisticRegression(epsilon=eps, data_norm=float(np.sqrt(Xtr.shape[1])),
                           random_state=cfg["seed"]).fit(Xtr, ytr)
    elapsed = time.perf_counter() - t0
    out[str(eps)] = {"score": m.decision_function(Xte).tolist(), "time": elapsed}
print(json.dumps(out))
"""


def version(python, module):
    if not python or not os.path.exists(python):
        return None
    try:
        return subprocess.run(
            [python, "-c", f"import {module}; print({module}.__version__)"],
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        ).stdout.strip()
    except (subprocess.SubprocessError, OSError):
        return None


def run_peer(python, script, Str, ytr, Ste, seed, epsilons=EPSILONS):
    """``{eps: (scores, seconds)}`` from a peer in its own interpreter."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "task.npz")
        np.savez(path, Xtr=Str, ytr=ytr, Xte=Ste)
        cfg = {
            "eps": list(epsilons),
            "seed": seed,
            "delta": DELTA_SGD,
            "steps": STEPS,
            "batch": BATCH,
            "lr": LR,
        }
        env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
        env.pop("PYTHONPATH", None)
        res = subprocess.run(
            [python, "-c", script, path, json.dumps(cfg)],
            capture_output=True,
            text=True,
            env=env,
            timeout=1800,
        )
        if res.returncode != 0:
            sys.stderr.write(res.stderr[-2000:])
            return None
        out = json.loads(res.stdout.strip().splitlines()[-1])
    return {float(k): (np.asarray(v["score"]), v["time"]) for k, v in out.items()}


# ------------------------------------------------------------------------ run
def _metrics(y, score):
    auc = roc_auc_score(y, score) if np.ptp(score) > 0 else 0.5
    return auc, accuracy_score(y, (score > 0).astype(int))


def _skdp(model, eps, lo, hi, seed):
    """The skdp variant ``model`` at ``eps`` (every other parameter at its default)."""
    kw = {"epsilon": eps, "classes": [0, 1], "bounds_X": (lo, hi), "random_state": seed}
    if model == "objective":  # pure epsilon-DP, the default before mechanism="auto"
        return DPLogisticRegression(mechanism="objective", delta=0.0, **kw)
    if model == "dpsgd":
        return DPLogisticRegression(mechanism="dpsgd", delta=DELTA_SGD, **kw)
    return DPLogisticRegression(**kw)  # "auto": the defaults (mechanism="auto")


def run(name, seeds, models, pythons, epsilons=EPSILONS):
    """``({(model, eps): [(auc, acc, seconds), ...]}, n_train, p, {eps: auto's choices})``,
    or ``None`` when the table is not available."""
    out, choices, shape = {}, {}, None

    def add(model, eps, y, score, seconds):
        auc, acc = _metrics(y, score)
        out.setdefault((model, eps), []).append((auc, acc, seconds))

    for seed in range(seeds):
        table = DATASETS[name](seed)
        if table is None:
            return None
        X, y, (lo, hi) = table
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, stratify=y, random_state=seed)
        shape = Xtr.shape
        Str, Ste = scaled(Xtr, lo, hi), scaled(Xte, lo, hi)
        t0 = time.perf_counter()
        sk = LogisticRegression(max_iter=5000).fit(Str, ytr)
        add("sklearn", math.inf, yte, sk.decision_function(Ste), time.perf_counter() - t0)
        for peer, script in (("opacus", _OPACUS), ("diffprivlib", _DIFFPRIVLIB)):
            if peer in models and pythons.get(peer):
                res = run_peer(pythons[peer], script, Str, ytr, Ste, seed, epsilons)
                for eps, (score, seconds) in (res or {}).items():
                    add(peer, eps, yte, score, seconds)
        for eps in epsilons:
            for model in ("objective", "dpsgd", "auto"):
                if model not in models:
                    continue
                t0 = time.perf_counter()
                clf = _skdp(model, eps, lo, hi, seed).fit(Xtr, ytr)
                add(model, eps, yte, clf.decision_function(Xte), time.perf_counter() - t0)
                if model == "auto":
                    choices.setdefault(eps, set()).add(clf.mechanism_)
            if "skdp-KST" in models:
                t0 = time.perf_counter()
                score = fit_kst(Xtr, ytr, eps, (lo, hi), seed)(Xte)
                add("skdp-KST", eps, yte, score, time.perf_counter() - t0)
    return out, shape[0], shape[1], choices


def _cell(a):
    return f"{np.median(a[:, 0]):.3f} [{np.quantile(a[:, 0], 0.1):.3f}]"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--models", default="objective,dpsgd,auto")
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--epsilons", default=",".join(str(e) for e in EPSILONS))
    parser.add_argument("--opacus-python", default="/tmp/opvenv/bin/python")
    parser.add_argument("--dpl-python", default="/tmp/dplvenv/bin/python")
    args = parser.parse_args(argv)
    models = args.models.split(",")
    epsilons = tuple(float(e) for e in args.epsilons.split(","))
    import torch

    pythons = {}
    v_op = version(args.opacus_python, "opacus") if "opacus" in models else None
    v_dpl = version(args.dpl_python, "diffprivlib") if "diffprivlib" in models else None
    if v_op:
        pythons["opacus"] = args.opacus_python
    if v_dpl:
        pythons["diffprivlib"] = args.dpl_python
    print(
        f"# load average {os.getloadavg()[0]:.1f} (start), torch threads "
        f"{torch.get_num_threads()}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, "
        f"opacus {v_op or 'not available'}, diffprivlib {v_dpl or 'not available'}, "
        f"seeds {args.seeds}"
    )
    print(
        "# cells: median test AUC [10th percentile]; r = n eps / (p + 1) (the auto rule's "
        "quantity); auto: the mechanism it chose; time: median s/fit"
    )
    head = f"{'data':14s} {'n':>5s} {'p':>3s} {'model':12s}"
    head += "".join(f"{'eps=' + format(e, 'g'):>16s}" for e in epsilons)
    print(head + "     time")
    t_start = time.perf_counter()
    for name in args.datasets.split(","):
        res = run(name, args.seeds, models, pythons, epsilons)
        if res is None:
            print(f"{name:14s} skipped (statsmodels not installed)")
            continue
        res, n, p, choices = res
        lead = f"{name:14s} {n:5d} {p:3d}"
        base = np.array(res[("sklearn", math.inf)])
        print(f"{lead} {'sklearn':12s}{'non-private':>16s} {_cell(base)}")
        ratios = "".join(f"{n * e / (p + 1):>16.0f}" for e in epsilons)
        print(f"{lead} {'r':12s}{ratios}")
        for model in models:
            if (model, epsilons[0]) not in res:
                print(f"{lead} {model:12s}  n/a")
                continue
            cells, times = [], []
            for eps in epsilons:
                a = np.array(res[(model, eps)])
                cells.append(_cell(a))
                times.extend(a[:, 2])
            print(
                f"{lead} {model:12s}"
                + "".join(f"{c:>16s}" for c in cells)
                + f"   {np.median(times):.3f}s"
            )
        if "auto" in models:
            picks = "".join(f"{'/'.join(sorted(choices[e])):>16s}" for e in epsilons)
            print(f"{lead} {'auto chose':12s}{picks}")
        sys.stdout.flush()
    print(
        f"# load average {os.getloadavg()[0]:.1f} (end), "
        f"{time.perf_counter() - t_start:.0f} s in all"
    )


if __name__ == "__main__":
    main()
