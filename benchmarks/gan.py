"""DPGANSynthesizer: the current defaults against the previous ones and smartnoise's MST.

The target for the GAN: train-on-synthetic-test-on-real (TSTR) AUC at least
smartnoise-synth MST's at epsilon = 10 (median over seeds), and a default fit on a
10,000 x 10 table within 60 s on one CPU core.

Methods, in one run, all given the same declared public bounds (and categories), nobody
spending budget on bounds, ``delta = 1e-5``:

* ``gan``: :class:`~skdp.synthesis.DPGANSynthesizer` at its defaults (binned numeric
  encoding, one critic step per generator step, learning rate 1e-3, MLP width 32,
  ``max_grad_norm = 5 * weight_clip``);
* ``gan_old``: the previous default parameter values on the current code
  (``numeric_encoding="scaled"``, ``n_critic=5``, learning rate 2e-4,
  ``max_grad_norm=1.0``, MLP width ``clip(2 ** ceil(log2(4 D)), 64, 256)`` from the
  scaled encoded width ``D``). One difference from the old code remains: the WGAN
  critic's head has no bias now (the objective does not depend on it);
* ``mst``: smartnoise-synth 1.0.8's MST in its own virtual environment (called as in
  ``benchmarks/synthesizers.py``: ``BinTransformer(bins=10, lower, upper)`` on every
  numeric column, ``preprocessor_eps=0``).

Data: ``breast_cancer``, ``repeated`` and ``clinical`` as in ``benchmarks/synthesizers.py``,
and ``fair`` (statsmodels' Fair (1978) affairs survey, 6,366 rows; label "any time in
affairs"; bounds and integer codes from ``benchmarks/_public_tables.py``: the codebook's
scales and generic declared ranges where it gives none, never read off the rows; skipped
with a note when statsmodels is missing). 75/25 split (fixed).

Metrics: ``benchmarks/synthesizers.py``'s ``evaluate`` (mean 1-way and 2-way TV over 10
bins, TSTR AUC with HistGradientBoosting), median over ``--seeds``. Each skdp fit uses
one torch thread (the default ``n_jobs=None`` for these small networks); the load average
is printed with every cell. Results: ``doc/benchmarks_synthesis.rst``.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/gan.py --seeds 5 --json out.json
    OMP_NUM_THREADS=1 python benchmarks/gan.py --timing     # 10,000 x 10, one thread
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _public_tables import FAIR_BOUNDS, FAIR_INTEGER, statsmodels_table  # noqa: E402
from synthesizers import DATASETS as _PANEL  # noqa: E402
from synthesizers import (  # noqa: E402
    SNVENV,
    column_types,
    evaluate,
    print_table,
    run_smartnoise,
    split,
)

DELTA = 1e-5


def fair():
    """statsmodels' fair table with the shared declared bounds
    (``benchmarks/_public_tables.py``); None when statsmodels is missing."""
    df = statsmodels_table("fair")
    if df is None:
        return None
    out = pd.DataFrame({c: df[c] for c in FAIR_BOUNDS})
    for c in FAIR_INTEGER:
        out[c] = out[c].round().astype(int)
    out["label"] = df["affairs"].to_numpy() > 0
    return out, dict(FAIR_BOUNDS), {}


DATASETS = {
    "breast_cancer": _PANEL["breast_cancer"],
    "repeated": _PANEL["repeated"],
    "clinical": _PANEL["clinical"],
    "fair": fair,
}


def _old_width(df, bounds, cats):
    """The previous default MLP width, from the scaled encoded width D."""
    from skdp.utils.schema import TabularEncoder, TabularSchema

    schema = TabularSchema.from_data(df, bounds=bounds, categories=cats or None)
    D = TabularEncoder(schema).n_encoded_features_
    return int(min(256, max(64, 2 ** math.ceil(math.log2(max(4 * D, 1))))))


def run_gan(train, eps, bounds, cats, seed, old=False, dataset="clinical"):
    from skdp.synthesis import DPGANSynthesizer

    extra = {}
    if old:
        extra = dict(
            numeric_encoding="scaled",
            n_critic=5,
            learning_rate=2e-4,
            max_grad_norm=1.0,
            hidden_size=_old_width(train, bounds, cats),
        )
    est = DPGANSynthesizer(
        epsilon=eps,
        delta=DELTA,
        bounds=bounds,
        categories=cats or None,
        column_types=column_types(dataset, train.columns) or None,  # declared kinds
        device="cpu",
        random_state=seed,
        **extra,
    ).fit(train)
    return est.sample(len(train), random_state=seed)


def timing(epsilons):
    """Default fit + sample on the 10,000-row, 10-column simulated clinical table."""
    import torch

    df, bounds, cats = _PANEL["clinical"](n=10_000)
    print("| epsilon | fit + sample (s) | load average | torch threads in fit |")
    print("|---|---|---|---|")
    for eps in epsilons:
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        run_gan(df, eps, bounds, cats, 0)
        print(f"| {eps} | {time.perf_counter() - t0:.1f} | {load:.1f} | 1 (n_jobs=None) |")
    print(f"torch threads outside fit {torch.get_num_threads()}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--epsilons", default="1,10")
    ap.add_argument("--methods", default="gan,gan_old,mst")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--smartnoise-python", default=SNVENV if os.path.exists(SNVENV) else None)
    ap.add_argument("--json", default=None)
    ap.add_argument("--timing", action="store_true")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    epsilons = [float(e) for e in args.epsilons.split(",")]
    if args.timing:
        timing(epsilons)
        return 0
    print(f"load average {os.getloadavg()}", flush=True)
    rows = []
    for ds in args.datasets.split(","):
        data = DATASETS[ds]()
        if data is None:
            print(f"{ds}: skipped (statsmodels is not installed)", flush=True)
            continue
        df, bounds, cats = data
        train, test = split(df)
        real = evaluate(train, test, test, cats, False)
        real["tstr"] = evaluate(train, train, test, cats, False)["tstr"]
        rows.append(dict(dataset=ds, method="real", epsilon="-", **real, fit_s=0.0, load=0.0))
        print(rows[-1], flush=True)
        for eps in epsilons:
            for name in args.methods.split(","):
                if name == "mst" and not args.smartnoise_python:
                    print("mst: skipped (no smartnoise venv)", flush=True)
                    continue
                res = []
                for seed in range(args.seeds):
                    t0 = time.perf_counter()
                    if name == "mst":
                        py = args.smartnoise_python
                        syn = run_smartnoise(py, "mst", train, eps, bounds, cats, seed)
                    else:
                        syn = run_gan(
                            train, eps, bounds, cats, seed, old=name == "gan_old", dataset=ds
                        )
                    fit_s = time.perf_counter() - t0
                    res.append({**evaluate(train, syn, test, cats, False), "fit_s": fit_s})
                    print(f"  {ds} {name} eps={eps} seed={seed} {res[-1]}", flush=True)
                med = {k: float(np.median([r[k] for r in res])) for k in res[0]}
                rows.append(
                    dict(dataset=ds, method=name, epsilon=eps, **med, load=os.getloadavg()[0])
                )
                print(rows[-1], flush=True)
                if args.json:
                    with open(args.json, "w") as f:
                        json.dump(rows, f, indent=1)
    print()
    print_table(rows, tstr="TSTR AUC", last="load")
    print(f"load average at the end {os.getloadavg()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
