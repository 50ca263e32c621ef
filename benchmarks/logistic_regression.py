"""Benchmark of DPLogisticRegression against its peers (issue 21 item 5): test AUC and
accuracy of skdp, Opacus DP-SGD and diffprivlib's LogisticRegression at the same epsilon
on public binary data sets, side by side in one run.

Models (every model sees the same declared public bounds; the peers get the features
mapped onto ``[-1, 1]`` by those bounds, rows of L2 norm at most ``sqrt(p)``):

* ``sklearn``: non-private ``LogisticRegression`` (C=1) on the scaled features;
* ``skdp``: ``DPLogisticRegression(epsilon, classes=[0, 1], bounds_X=...)`` with its
  defaults (objective perturbation, pure epsilon-DP, ``delta = 0``);
* ``skdp-KST``: the same mechanism with the ridge rule of the previous release,
  ``max(1 / C, 0.25 / (e^(eps/2) - 1))`` (``beta >= eps / 2``), for comparison;
* ``skdp-dpsgd``: ``DPLogisticRegression(epsilon, delta=1e-5, mechanism="dpsgd", ...)``
  with its defaults: DP-SGD on skdp's engine (:func:`skdp.training.train_dpsgd`: Poisson
  sampling, clipping 1, PLD accountant, 300 steps, expected batch 64, Adam lr 0.05,
  zero init) on the features mapped onto ``[-1, 1]`` by the bounds, plus a constant;
* ``opacus``: the same network, loss and optimiser with Opacus'
  ``PrivacyEngine.make_private_with_epsilon`` (Poisson sampling, clipping 1, its default
  accountant, ``delta = 1e-5``, batch 64, ``epochs = max(1, round(300 / batches))``),
  run in its own virtual environment (``--opacus-python``, default
  ``/tmp/opvenv/bin/python``; ``python -m venv /tmp/opvenv && /tmp/opvenv/bin/pip
  install -c constraints.txt torch==2.13.0 opacus scikit-learn``);
* ``diffprivlib``: ``diffprivlib.models.LogisticRegression(epsilon, data_norm=sqrt(p))``
  (objective perturbation as in Chaudhuri et al. 2011, pure epsilon-DP) in its own
  virtual environment (``--dpl-python``, default ``/tmp/dplvenv/bin/python``; it needs
  scikit-learn < 1.6: ``pip install diffprivlib scikit-learn==1.5.2``).

No model is tuned on the data: every hyperparameter above is fixed in advance, the same
for every data set and epsilon. The DP-SGD models are ``(epsilon, 1e-5)``-DP, a weaker
guarantee than the pure epsilon-DP of the objective-perturbation models.

Data sets (public, shipped with scikit-learn or skdp):

* ``breast_cancer``: ``load_breast_cancer`` (569 rows, 30 features). ``bounds_X`` are the
  per-feature min/max printed in the data set's documentation (``DESCR``), i.e. **taken
  from these rows**, for this benchmark only (a real release needs clinical bounds).
* ``diabetes``: ``load_diabetes(scaled=False)`` (442 rows, 10 raw features), label
  ``target > 140`` (a fixed threshold); bounds are declared clinical ranges (age 18-90,
  sex 1-2, BMI 15-50, blood pressure 50-150, total cholesterol 80-320, LDL 30-260, HDL
  15-110, TC/HDL 1-10, log triglycerides 3-7, glucose 50-150).
* ``repeated``: :func:`skdp.datasets.make_nonlinear_repeated_measures` (6000 rows), the
  4 covariates on their public box ``(0, a_j)``, label ``mean(x1..x5) > f(box middle)``.

Each seed draws a new stratified 75/25 split and new noise; cells are the median test
AUC (and accuracy) over ``--seeds`` seeds (10th percentile in brackets). Run
``OMP_NUM_THREADS=1 python benchmarks/logistic_regression.py [--seeds 5]``. The
measured table and its reading are in ``doc/user_guide.rst`` (section on
DPLogisticRegression) and the estimator's Notes.
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

EPSILONS = (0.3, 1.0, 3.0)
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


DATASETS = {"breast_cancer": breast_cancer, "diabetes": diabetes, "repeated": repeated}


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
            epsilon=eps, classes=[0, 1], bounds_X=bounds, random_state=seed
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


def run_peer(python, script, Str, ytr, Ste, seed):
    """``{eps: (scores, seconds)}`` from a peer in its own interpreter."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "task.npz")
        np.savez(path, Xtr=Str, ytr=ytr, Xte=Ste)
        cfg = {
            "eps": list(EPSILONS),
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


def run(name, seeds, models, pythons):
    out = {}

    def add(model, eps, y, score, seconds):
        auc, acc = _metrics(y, score)
        out.setdefault((model, eps), []).append((auc, acc, seconds))

    for seed in range(seeds):
        X, y, (lo, hi) = DATASETS[name](seed)
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, stratify=y, random_state=seed)
        Str, Ste = scaled(Xtr, lo, hi), scaled(Xte, lo, hi)
        t0 = time.perf_counter()
        sk = LogisticRegression(max_iter=5000).fit(Str, ytr)
        add("sklearn", math.inf, yte, sk.decision_function(Ste), time.perf_counter() - t0)
        for peer, script in (("opacus", _OPACUS), ("diffprivlib", _DIFFPRIVLIB)):
            if peer in models and pythons.get(peer):
                res = run_peer(pythons[peer], script, Str, ytr, Ste, seed)
                for eps, (score, seconds) in (res or {}).items():
                    add(peer, eps, yte, score, seconds)
        for eps in EPSILONS:
            if "skdp" in models:
                t0 = time.perf_counter()
                clf = DPLogisticRegression(
                    epsilon=eps, classes=[0, 1], bounds_X=(lo, hi), random_state=seed
                ).fit(Xtr, ytr)
                add("skdp", eps, yte, clf.decision_function(Xte), time.perf_counter() - t0)
            if "skdp-KST" in models:
                t0 = time.perf_counter()
                score = fit_kst(Xtr, ytr, eps, (lo, hi), seed)(Xte)
                add("skdp-KST", eps, yte, score, time.perf_counter() - t0)
            if "skdp-dpsgd" in models:
                t0 = time.perf_counter()
                clf = DPLogisticRegression(
                    epsilon=eps,
                    delta=DELTA_SGD,
                    mechanism="dpsgd",
                    classes=[0, 1],
                    bounds_X=(lo, hi),
                    random_state=seed,
                ).fit(Xtr, ytr)
                add("skdp-dpsgd", eps, yte, clf.decision_function(Xte), time.perf_counter() - t0)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--models", default="skdp,skdp-KST,skdp-dpsgd,opacus,diffprivlib")
    parser.add_argument("--datasets", default="breast_cancer,diabetes,repeated")
    parser.add_argument("--opacus-python", default="/tmp/opvenv/bin/python")
    parser.add_argument("--dpl-python", default="/tmp/dplvenv/bin/python")
    args = parser.parse_args(argv)
    models = args.models.split(",")
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
    print("# cells: median test AUC / accuracy [10th percentile of AUC]; time: median s/fit")
    head = f"{'data':14s} {'model':12s}" + "".join(f"{'eps=' + str(e):>22s}" for e in EPSILONS)
    print(head + "   time")
    for name in args.datasets.split(","):
        res = run(name, args.seeds, models, pythons)
        base = np.array(res[("sklearn", math.inf)])
        print(
            f"{name:14s} {'sklearn':12s}{'non-private':>22s} "
            f"{np.median(base[:, 0]):.3f} / {np.median(base[:, 1]):.3f}"
        )
        for model in models:
            if (model, EPSILONS[0]) not in res:
                print(f"{name:14s} {model:12s}  n/a")
                continue
            cells, times = [], []
            for eps in EPSILONS:
                a = np.array(res[(model, eps)])
                cells.append(
                    f"{np.median(a[:, 0]):.3f}/{np.median(a[:, 1]):.3f} "
                    f"[{np.quantile(a[:, 0], 0.1):.3f}]"
                )
                times.extend(a[:, 2])
            print(
                f"{name:14s} {model:12s}"
                + "".join(f"{c:>22s}" for c in cells)
                + f"   {np.median(times):.3f}s"
            )
        sys.stdout.flush()
    print(f"# load average {os.getloadavg()[0]:.1f} (end)")


if __name__ == "__main__":
    main()
