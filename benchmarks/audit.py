"""Empirical privacy audit of every skdp estimator at epsilon in {1, 10}.

For each estimator (the known-epsilon controls of :mod:`skdp.auditing`, then every
estimator discovered by :func:`skdp.discovery.all_estimators`, with each of its
audit configurations in ``tests/privacy/_configs.py``) and each epsilon, the
configuration's audit -- mostly a distinguishing audit
(:func:`skdp.auditing.distinguishing_audit`: ``--trials`` fits on a fixed neighbouring
pair, a threshold attack on one canary chosen on half of the fits, Clopper--Pearson on
the other half), else a one-run audit or LiRA -- reports:

* the claimed epsilon,
* the empirical epsilon lower bound at 95% confidence (a bound, not an estimate: weak
  attacks give small bounds; the bound can only exceed the claim if the claim is false,
  with probability <= 5%),
* ``max``: the largest bound the audit's sample size allows (a perfect attack); a
  claim above it cannot be refuted by this audit (e.g. epsilon=10 with 200 evaluation
  fits),
* the attack's ROC AUC and TPR at 1% FPR over all fits (descriptive),
* the wall time.

A non-private memorising model (claimed epsilon = inf) is audited with the one-run
audit as a positive reference. Run ``python benchmarks/audit.py`` (about a minute;
``--trials 100`` for a quick look; ``--slow`` adds the torch estimators' distinguishing
audits, several minutes; ``--json`` for machine-readable output).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import pathlib
import time

import numpy as np

from skdp.auditing import (
    LaplaceCountRelease,
    MemorizingDensity,
    RandomizedResponseRelease,
    check_privacy,
    one_run_audit,
)
from skdp.auditing._checks import default_audit_data

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _load_configs():
    path = ROOT / "tests" / "privacy" / "_configs.py"
    spec = importlib.util.spec_from_file_location("_skdp_audit_configs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.AUDIT_CONFIGS, module.discover_estimators


def _controls():
    ids = np.arange(200).reshape(-1, 1)
    data = (ids, None, np.array([[210]]), None)
    return [
        ("RandomizedResponseRelease (control)", RandomizedResponseRelease, {"n_ids": 250}),
        ("LaplaceCountRelease (control)", LaplaceCountRelease, {"n_ids": 250}),
        (
            "LaplaceCountRelease, 1/5 of the noise (bug)",
            LaplaceCountRelease,
            {"n_ids": 250, "noise_factor": 0.2},
        ),
    ], data


def _jobs(configs, discover, trials, include_slow):
    """(label, class, fixed params, data, check_privacy keywords) per configuration."""
    controls, data = _controls()
    jobs = [
        (label, cls, params, data, {"audit": "distinguishing", "n_trials": trials})
        for label, cls, params in controls
    ]
    skipped = []
    try:
        found = discover()
    except ImportError as exc:  # a half-written estimator package
        return jobs, [("(discovery)", f"estimator discovery failed: {exc!r}")]
    for name, cls in found:
        cfgs = configs.get(name)
        if cfgs is None:
            skipped.append((name, "no fast audit configured"))
            continue
        for i, cfg in enumerate(cfgs if isinstance(cfgs, list) else [cfgs]):
            label = f"{name} [{cfg.get('label', i)}]"
            if "skip" in cfg:
                skipped.append((label, cfg["skip"]))
                continue
            if cfg.get("slow") and not include_slow:
                skipped.append((label, "slow configuration (run with --slow)"))
                continue
            params = {k: v for k, v in cfg["params"].items() if k != "epsilon"}
            probe = cls(**cfg["params"])
            cdata = (
                default_audit_data(probe, random_state=0)
                if cfg.get("data") is None
                else cfg["data"](np.random.default_rng(0))
            )
            audit = cfg.get("audit", "distinguishing")
            kw = {"audit": audit, "score": cfg.get("score", "auto"), **cfg.get("audit_kwargs", {})}
            if audit == "distinguishing":
                # slow (torch) configurations keep their own number of fits
                kw["n_trials"] = cfg.get("n_trials", trials) if cfg.get("slow") else trials
            jobs.append((label, cls, params, cdata, kw))
    return jobs, skipped


def run(trials, epsilons=(1.0, 10.0), seed=0, include_slow=False):
    rows = []
    configs, discover = _load_configs()
    jobs, skipped = _jobs(configs, discover, trials, include_slow)
    for name, cls, params, (X, y, cX, cy), kw in jobs:
        for eps in epsilons:
            t0 = time.perf_counter()
            try:
                res = check_privacy(
                    cls(epsilon=eps, **params),
                    X,
                    y,
                    canary_X=cX,
                    canary_y=cy,
                    random_state=seed,
                    raise_on_failure=False,
                    **kw,
                )
            except Exception as exc:  # report and go on with the other estimators
                skipped.append((f"{name} at epsilon={eps:g}", f"audit failed: {exc!r}"))
                continue
            rows.append(
                {
                    "estimator": name,
                    "audit": kw["audit"],
                    "epsilon": eps,
                    "epsilon_lb": res.epsilon_lb,
                    "max_epsilon_lb": res.details.get("max_epsilon_lb", math.nan),
                    "auc": res.auc,
                    "tpr_at_1pct_fpr": res.tpr_at_fpr[1e-2],
                    "seconds": time.perf_counter() - t0,
                }
            )
    t0 = time.perf_counter()
    X = np.random.default_rng(seed).normal(size=(2000, 3))
    res = one_run_audit(MemorizingDensity(), X, random_state=seed)
    rows.append(
        {
            "estimator": "MemorizingDensity (non-private reference)",
            "audit": "one-run",
            "epsilon": math.inf,
            "epsilon_lb": res.epsilon_lb,
            "max_epsilon_lb": res.details["max_epsilon_lb"],
            "auc": res.auc,
            "tpr_at_1pct_fpr": res.tpr_at_fpr[1e-2],
            "seconds": time.perf_counter() - t0,
        }
    )
    return rows, skipped


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=400, help="fits per audit")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--slow", action="store_true", help="include slow (torch) configurations")
    args = parser.parse_args()
    rows, skipped = run(args.trials, seed=args.seed, include_slow=args.slow)
    if args.json:
        print(json.dumps({"rows": rows, "skipped": skipped}, indent=2))
        return
    print(f"Audits at 95% confidence; distinguishing audits use {args.trials} fits\n")
    header = f"{'estimator':48s} {'audit':15s} {'claimed eps':>11s} {'eps_lb':>7s} {'max':>6s} "
    header += f"{'AUC':>6s} {'TPR@1%':>7s} {'time s':>7s}"
    print(header)
    print("-" * len(header))
    for r in rows:
        flag = "  <-- exceeds claim" if r["epsilon_lb"] > r["epsilon"] else ""
        print(
            f"{r['estimator']:48s} {r['audit']:15s} {r['epsilon']:>11g} {r['epsilon_lb']:>7.3f} "
            f"{r['max_epsilon_lb']:>6.2f} {r['auc']:>6.3f} {r['tpr_at_1pct_fpr']:>7.3f} "
            f"{r['seconds']:>7.1f}{flag}"
        )
    for name, why in skipped:
        print(f"skipped {name}: {why}")


if __name__ == "__main__":
    main()
