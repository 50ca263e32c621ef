"""Where a GAN could beat marginals: synthesizers on a table with a higher-order interaction.

Data: :func:`skdp.datasets.make_interaction_table` (``n`` training rows, seed 0; a fresh
10,000-row test table, seed 1; ``--n-features`` feature columns, 6 by default, and the
label). Its label depends on the
parity of the signs of ``order - 1`` columns: with ``--order 3`` a 3-way marginal
(``x1, x2, label``) carries it, every 2-way marginal is independent of it; with ``--order
4`` only the 4-way marginal (``x1, x2, x3, label``) does. Every method gets the simulator's
public schema (bounds, categories, integer kinds), so nobody spends budget on it.

Methods (skdp, defaults otherwise, ``delta = 1e-5`` where taken, ``device="cpu"``):
``marginal`` (:class:`~skdp.synthesis.DPMarginalSynthesizer`, AIM, which can select
3-way marginals), ``marginal_mst`` (``selection="mst"``, 2-way tree), ``gan``
(:class:`~skdp.synthesis.DPGANSynthesizer`, the whole table), ``gan_acgan``
(``conditional="acgan"``, ``loss="gan"``, the label as the condition, drawn from its
DP prior), ``histogram`` (:class:`~skdp.synthesis.DPHistogramSynthesizer`).

Metrics (``benchmarks/synthesizers.py``'s ``evaluate``, imported): 1- and 2-way TV and
TSTR AUC with histogram gradient boosting (which learns the interaction: train-on-real
reaches the ``real`` row); and ``tvk``, the TV of the ``order``-way marginal of the
interacting columns with the same binning (10 equal-width bins for numeric columns,
:func:`skdp.metrics.marginal_total_variation`'s rule). ``real`` rows: an independent
real table of ``n`` rows in place of the synthetic one (the sampling floor). Fit time
includes sampling ``n`` rows; the 1-minute load average and torch's thread count are
printed beside each cell.

Usage::

    nice -n 5 python benchmarks/synth_interaction.py --n 2000 --seeds 3
    nice -n 5 python benchmarks/synth_interaction.py --n 20000 --order 4 --methods gan,marginal
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from synthesizers import DELTA, _codes, evaluate  # noqa: E402

METHODS = ("marginal", "marginal_mst", "gan", "gan_acgan", "histogram")
N_TEST = 10_000


def table(n, order, seed, n_features=6):
    """``n`` rows of the simulator as one frame (label last) and its public schema."""
    from skdp.datasets import interaction_table_schema, make_interaction_table

    X, y = make_interaction_table(n, n_features=n_features, order=order, random_state=seed)
    return X.assign(label=y.to_numpy()), interaction_table_schema(n_features, order=order)


def fit_sample(name, train, eps, schema, seed):
    """Fit ``name`` on ``train`` with the declared schema; ``len(train)`` synthetic rows."""
    from skdp.synthesis import DPGANSynthesizer, DPHistogramSynthesizer, DPMarginalSynthesizer

    declared = dict(
        bounds=schema["bounds"],
        categories=schema["categories"],
        column_types=schema["column_types"],
        random_state=seed,
    )
    if name == "histogram":
        est = DPHistogramSynthesizer(epsilon=eps, **declared).fit(train)
    elif name.startswith("marginal"):
        sel = {"selection": "mst"} if name == "marginal_mst" else {}
        est = DPMarginalSynthesizer(epsilon=eps, delta=DELTA, **sel, **declared).fit(train)
    elif name == "gan":
        est = DPGANSynthesizer(epsilon=eps, delta=DELTA, device="cpu", **declared).fit(train)
    else:  # gan_acgan: the label is the condition
        est = DPGANSynthesizer(
            epsilon=eps,
            delta=DELTA,
            device="cpu",
            conditional="acgan",
            loss="gan",
            classes=[False, True],
            **declared,
        ).fit(train.drop(columns="label"), train["label"].to_numpy())
        X_syn, y_syn = est.sample_labeled(len(train), random_state=seed)
        return X_syn.assign(label=y_syn)[train.columns]
    return est.sample(len(train), random_state=seed)[train.columns]


def interaction_tv(train, syn, schema):
    """TV of the joint marginal of the interacting columns (10-bin rule of
    :func:`skdp.metrics.marginal_total_variation`)."""
    from skdp.metrics._utility import _binned, numeric_view

    cols = list(schema["interaction"])
    cats = {c: v for c, v in schema["categories"].items() if c in cols}
    R, S, _ = numeric_view(_codes(train[cols], cats), _codes(syn[cols], cats))
    cr, cs, nb = _binned(R, S, 10)
    kr = np.ravel_multi_index(tuple(cr.T), nb)
    ks = np.ravel_multi_index(tuple(cs.T), nb)
    size = int(np.prod(nb))
    hr = np.bincount(kr, minlength=size) / len(kr)
    hs = np.bincount(ks, minlength=size) / len(ks)
    return float(0.5 * np.abs(hr - hs).sum())


def measure(train, syn, test, schema):
    out = evaluate(train, syn, test, schema["categories"], regression=False)
    out["tvk"] = interaction_tv(train, syn, schema)
    return out


def _summary(name, n, eps, runs, order):
    keys = ("tv1", "tv2", "tvk", "tstr", "fit_s")
    row = dict(method=name, n=n, epsilon=eps, order=order)
    for k in keys:
        vals = [r[k] for r in runs]
        row[k] = float(np.median(vals)) if vals else float("nan")
        row[k + "_range"] = [float(min(vals)), float(max(vals))] if vals else []
    row["runs"] = runs
    return row


def run_cell(name, train, test, eps, schema, seeds, order):
    import torch

    runs = []
    for seed in range(seeds):
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        syn = fit_sample(name, train, eps, schema, seed)
        fit_s = time.perf_counter() - t0
        runs.append({**measure(train, syn, test, schema), "fit_s": fit_s, "load": load})
        runs[-1]["torch_threads"] = torch.get_num_threads()
        print(f"  n={len(train)} {name} eps={eps} seed={seed}: {runs[-1]}", flush=True)
    return _summary(name, len(train), eps, runs, order)


def print_rows(rows):
    print("| n | method | epsilon | 2-way TV | k-way TV | TSTR AUC [min, max] | fit (s) |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        lo, hi = r["tstr_range"] or [float("nan")] * 2
        print(
            f"| {r['n']} | {r['method']} | {r['epsilon']} | {r['tv2']:.3f} | {r['tvk']:.3f} "
            f"| {r['tstr']:.3f} [{lo:.3f}, {hi:.3f}] | {r['fit_s']:.1f} |"
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", default="2000", help="training rows, comma-separated")
    parser.add_argument("--epsilons", default="1,10")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--order", type=int, default=3, choices=(3, 4))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--n-features", type=int, default=6, help="feature columns")
    parser.add_argument("--json", default=None, help="append the rows here (one per line)")
    args = parser.parse_args(argv)
    import torch

    warnings.simplefilter("ignore")
    print(f"load average {os.getloadavg()}, torch threads {torch.get_num_threads()}", flush=True)
    rows = []
    test, schema = table(N_TEST, args.order, 1, args.n_features)
    for n in [int(v) for v in args.n.split(",")]:
        train, _ = table(n, args.order, 0, args.n_features)
        floor = measure(train, table(n, args.order, 2, args.n_features)[0], test, schema)
        floor["tstr"] = measure(train, train, test, schema)["tstr"]
        runs = [{**floor, "fit_s": 0.0}]
        rows.append(_summary("real", n, "-", runs, args.order))
        print(rows[-1], flush=True)
        for eps in [float(e) for e in args.epsilons.split(",")]:
            for name in [m for m in args.methods.split(",") if m]:
                rows.append(run_cell(name, train, test, eps, schema, args.seeds, args.order))
                print({k: v for k, v in rows[-1].items() if k != "runs"}, flush=True)
                if args.json:
                    with open(args.json, "a") as f:
                        f.write(json.dumps(rows[-1]) + "\n")
    print()
    print_rows(rows)
    print(f"\nload average at the end {os.getloadavg()}", flush=True)
    return rows


if __name__ == "__main__":
    sys.exit(0 if main() is not None else 1)
