"""Benchmark panel: every skdp synthesizer against smartnoise-synth's MST, AIM and CTGANs.

Synthesizers, all at their defaults and all given the same declared public bounds (and
declared categories and integer kinds, :data:`INTEGER_COLUMNS`, where the method takes
them; the peers' integer columns are rounded instead), so nobody spends budget on
bounds:

* skdp: ``DPHistogramSynthesizer`` (``histogram_iid``: with ``sampling="iid"``),
  ``DPMarginalSynthesizer`` (``marginal``: the
  default, AIM's rounds; ``marginal_mst``: ``selection="mst"``,
  MST's tree; ``marginal_iid``: the default with ``sampling="iid"``), ``DPFlowDensity``
  (sampling) and ``DPGANSynthesizer`` (``gan``: the whole table, label included, at its
  defaults; ``gan_acgan``: the seed paper's DP AC-GAN, the label as the condition, see
  :func:`_gan_acgan`), at ``delta = 1e-5`` where they take one;
* smartnoise-synth (``snsynth``) ``mst`` and ``aim``, run in their own virtual
  environment through ``--smartnoise-python`` (default ``/tmp/snvenv/bin/python`` when it
  exists; its pinned dependencies, e.g. opacus 0.14, conflict with skdp's): every numeric
  column gets ``BinTransformer(bins=10, lower, upper)`` with the declared bounds,
  ``preprocessor_eps=0``, ``delta = 1e-5``. smartnoise reads the category set of each
  categorical column from the data (skdp's estimators are given them declared); this
  only helps smartnoise. Its DP deep generators ``dpctgan`` (DP-SGD on the critic,
  opacus' RDP accountant) and ``patectgan`` (PATE-GAN's teachers, its moments
  accountant) get ``MinMaxTransformer(lower, upper)`` from the declared bounds,
  ``preprocessor_eps=0``, ``delta = 1e-5``, their defaults otherwise except a batch cut to
  about n / 2 on tables under 1,000 rows and ``--sn-epochs`` (DP-CTGAN's 300 epochs take
  minutes per fit on one core). Each smartnoise fit runs with one torch thread.
* synthcity's ``sc_dpgan`` and ``sc_pategan`` (``benchmarks/_synthcity.py``: its own
  virtual environment through ``--synthcity-python``, its encoder fitted on the rows,
  ``--sc-iter``).

Data (shipped with a package or simulated; the loaders are those of
``benchmarks/marginal.py``): ``breast_cancer`` and ``diabetes`` (scikit-learn's bundled
sets, classification labels), ``diabetes_reg`` (the same rows with the continuous
disease-progression target, declared range (25, 346): TSTR R²), ``clinical`` (a
simulated 10-column mixed clinical table; ``clinical7``: its first 5 columns, the visit
count and the outcome) and ``repeated``
(:func:`skdp.datasets.make_nonlinear_repeated_measures`), and ``fair`` (statsmodels'
Fair 1978 survey, 6,366 rows, label ``affairs > 0``, bounds from the codebook; skipped
with a note when statsmodels is not installed). Each is split 75/25 (fixed).

Metrics (non-private evaluation, :mod:`skdp.metrics`): mean 1-way and 2-way total
variation between the real training rows and as many synthetic rows (10 bins), TSTR
with scikit-learn's ``HistGradientBoostingClassifier`` (AUC) or ``...Regressor`` (R²)
trained on the synthetic rows and tested on the real test rows, fit time (sampling
included). ``real`` rows: the TV between the real training and test rows (the floor that
sampling alone leaves) and train-on-real. Medians over ``--seeds``.

The recorded table and the conditions of its run are in ``doc/benchmarks_synthesis.rst``.

Usage::

    python benchmarks/synthesizers.py                          # the panel (tens of minutes)
    python benchmarks/synthesizers.py --quick                  # smoke run
    python benchmarks/synthesizers.py --datasets clinical --epsilons 1,10 --seeds 3
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _synthcity import SC_PEERS, SCVENV, run_synthcity  # noqa: E402
from _venv_peer import fit_in_venv  # noqa: E402
from marginal import DATASETS as _CLASSIFICATION  # noqa: E402
from marginal import split  # noqa: E402

EPSILONS = (0.3, 1.0, 3.0, 10.0)
DELTA = 1e-5
SNVENV = "/tmp/snvenv/bin/python"


def diabetes_reg():
    from sklearn.datasets import load_diabetes

    df, bounds, cats = _CLASSIFICATION["diabetes"]()
    df["label"] = load_diabetes(as_frame=True, scaled=False).target.to_numpy()
    return df, {**bounds, "label": (25.0, 346.0)}, cats


def clinical7():
    """The clinical table cut to 7 columns (age, sex, BMI, smoker, blood pressure, the
    10-level visit count and the outcome): the histogram's target is stated for tables
    of at most 8 columns."""
    df, bounds, cats = _CLASSIFICATION["clinical"]()
    keep = ["age", "sex", "bmi", "smoker", "sbp", "visits", "label"]
    return df[keep], {c: b for c, b in bounds.items() if c in keep}, {"sex": cats["sex"]}


DATASETS = {**_CLASSIFICATION, "diabetes_reg": diabetes_reg, "clinical7": clinical7}
REGRESSION = {"diabetes_reg"}

#: The declared integer columns of each table (its public schema, as the loaders build
#: them: ``diabetes``' age in years and sex coded 1/2, the simulated tables' age and visit
#: count, the codebook scales of ``fair`` and the 0/1 indicators of ``randhie``); never
#: read from the rows. Every skdp synthesizer that takes ``column_types`` gets them, as
#: the peers' integer columns are rounded by :func:`run_smartnoise`.
INTEGER_COLUMNS = {
    "diabetes": ("age", "sex"),
    "diabetes_reg": ("age", "sex"),
    "clinical": ("age", "visits"),
    "clinical7": ("age", "visits"),
    "fair": ("rate_marriage", "religious", "educ", "occupation", "occupation_husb"),
    "randhie": ("idp", "hlthg", "hlthf", "hlthp"),
}


def column_types(dataset, columns):
    """``column_types`` of ``dataset``'s declared integer columns among ``columns``."""
    return {c: "integer" for c in INTEGER_COLUMNS.get(dataset, ()) if c in columns}


# ------------------------------------------------------------------ synthesizers
def _skdp(cls_name, module, **extra):
    def run(train, eps, bounds, cats, seed, kinds=None):
        mod = __import__(module, fromlist=[cls_name])
        est = getattr(mod, cls_name)(
            epsilon=eps, bounds=bounds, categories=cats, random_state=seed, **extra
        )
        params = est.get_params()
        if "delta" in params:
            est.set_params(delta=DELTA)
        if "device" in params:
            est.set_params(device="cpu")
        if kinds and "column_types" in params:
            est.set_params(column_types=kinds)
        est.fit(train)
        return est.sample(len(train), random_state=seed)

    return run


def _gan_acgan(train, eps, bounds, cats, seed, kinds=None):
    """``DPGANSynthesizer`` as the DP AC-GAN of Beaulieu-Jones et al. (2019): the label
    is the condition (``fit(X, y)``, ``conditional="acgan"``, ``loss="gan"``, the
    declared classes ``[False, True]`` of every classification table here); everything
    else at its defaults. ``sample_labeled`` draws the labels from the DP class prior."""
    from skdp.synthesis import DPGANSynthesizer

    X, y = train.drop(columns="label"), train["label"].to_numpy()
    est = DPGANSynthesizer(
        epsilon=eps,
        delta=DELTA,
        bounds={c: b for c, b in bounds.items() if c != "label"},
        categories={c: v for c, v in cats.items() if c != "label"} or None,
        column_types={c: k for c, k in (kinds or {}).items() if c != "label"} or None,
        conditional="acgan",
        loss="gan",
        classes=[False, True],
        random_state=seed,
        device="cpu",
    ).fit(X, y)
    X_syn, y_syn = est.sample_labeled(len(train), random_state=seed)
    return X_syn.assign(label=y_syn)[train.columns]


SKDP = {
    "histogram": _skdp("DPHistogramSynthesizer", "skdp.synthesis"),
    "histogram_iid": _skdp("DPHistogramSynthesizer", "skdp.synthesis", sampling="iid"),
    "marginal": _skdp("DPMarginalSynthesizer", "skdp.synthesis"),
    "marginal_mst": _skdp("DPMarginalSynthesizer", "skdp.synthesis", selection="mst"),
    "marginal_iid": _skdp("DPMarginalSynthesizer", "skdp.synthesis", sampling="iid"),
    "flow": _skdp("DPFlowDensity", "skdp.density"),
    "gan": _skdp("DPGANSynthesizer", "skdp.synthesis"),
    "gan_acgan": _gan_acgan,  # classification tables only (the label is the condition)
}

SN_SCRIPT = r"""
from snsynth import Synthesizer
from snsynth.transform import BinTransformer, MinMaxTransformer
gan = cfg["name"] in GAN_PEERS
if gan:  # the CTGANs' own encoding, scaled from the declared bounds
    constraints = {c: MinMaxTransformer(lower=lo, upper=hi, negative=True)
                   for c, (lo, hi) in cfg["bounds"].items()}
    extra = dict(verbose=False, **cfg["options"])
else:
    constraints = {c: BinTransformer(bins=10, lower=lo, upper=hi)
                   for c, (lo, hi) in cfg["bounds"].items()}
    extra = {}
synth = Synthesizer.create(cfg["name"], epsilon=cfg["epsilon"], delta=cfg["delta"], **extra)
synth.fit(df, transformer=constraints, preprocessor_eps=0.0,
          categorical_columns=cfg["categorical"], continuous_columns=list(cfg["bounds"]))
synth.sample(len(df)).to_csv(cfg["out"], index=False)
""".replace("GAN_PEERS", repr(("dpctgan", "patectgan")))

# smartnoise's DP deep generators (issue: DPGANSynthesizer against the peers a user could
# pick). Their defaults except ``epochs``: smartnoise's 300 (DP-CTGAN) take minutes per
# fit on one shared core; see ``--sn-epochs``.
SN_PEERS = ("mst", "aim", "dpctgan", "patectgan")
SN_GAN_OPTIONS = {"dpctgan": {}, "patectgan": {}}


def _gan_options(name, n, options):
    """The CTGAN peers' options; their batch (500) is cut to about n / 2 on smaller tables
    (opacus refuses a sampling rate above 1)."""
    opts = dict(options or SN_GAN_OPTIONS.get(name, {}))
    if name in SN_GAN_OPTIONS:
        opts["batch_size"] = min(opts.get("batch_size", 500), 2 * (n // 4))
    return opts


def run_smartnoise(python, name, train, eps, bounds, cats, seed, timeout=3600, options=None):
    """A smartnoise synthesizer in its own venv (a subprocess, one torch thread). ``seed``
    seeds numpy and torch there; MST/AIM draw their own randomness, and smartnoise's
    CTGAN discriminators reseed torch with 0 when built, so their seed spread comes from
    numpy's batch and condition sampling."""
    return fit_in_venv(
        python, SN_SCRIPT, train, bounds, cats, seed, timeout, name=name,
        options=_gan_options(name, len(train), options), epsilon=eps, delta=DELTA,
    )  # fmt: skip


# ------------------------------------------------------------------ evaluation
def print_table(rows, tstr="TSTR", last="note"):
    """The panel's rows as one markdown table (median cells; ``last`` is the final column)."""
    print(f"| dataset | method | epsilon | 1-way TV | 2-way TV | {tstr} | fit (s) | {last} |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        tail = r[last] if isinstance(r[last], str) else f"{r[last]:.1f}"
        print(
            f"| {r['dataset']} | {r['method']} | {r['epsilon']} | {r['tv1']:.3f} | "
            f"{r['tv2']:.3f} | {r['tstr']:.3f} | {r['fit_s']:.1f} | {tail} |"
        )


def _codes(df, cats):
    out = df.copy()
    for c, levels in cats.items():
        out[c] = out[c].map({v: i for i, v in enumerate(levels)})
    return out.astype(float)


def evaluate(train, syn, test, cats, regression):
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    from sklearn.metrics import r2_score

    from skdp.metrics import marginal_total_variation, tstr_score

    a, b, t = _codes(train, cats), _codes(syn[train.columns], cats), _codes(test, cats)
    feats = [c for c in train.columns if c != "label"]
    if regression:
        model = HistGradientBoostingRegressor(random_state=0).fit(b[feats], b["label"])
        score = r2_score(t["label"], model.predict(t[feats]))
    else:
        clf = HistGradientBoostingClassifier(random_state=0)
        ys = b["label"].astype(int)
        score = (
            tstr_score(clf, b[feats], ys, t[feats], t["label"].astype(int))
            if ys.nunique() > 1
            else 0.5  # one class only: no ranking, chance AUC
        )
    return {
        "tv1": marginal_total_variation(a, b, way=1),
        "tv2": marginal_total_variation(a, b, way=2),
        "tstr": float(score),
    }


def timing(epsilons):
    """Fit time of every skdp synthesizer at its defaults on the 10,000-row, 10-column
    simulated clinical table (the ceiling: 60 s on one core)."""
    import torch

    df, bounds, cats = DATASETS["clinical"](n=10_000)
    rows = []
    for eps in [float(e) for e in epsilons.split(",")]:
        for name, run in SKDP.items():
            load = os.getloadavg()[0]
            t0 = time.perf_counter()
            run(df, eps, bounds, cats, 0, column_types("clinical", df.columns))
            fit_s = time.perf_counter() - t0
            rows.append((name, eps, fit_s, load, torch.get_num_threads()))
            print(f"{name} eps={eps}: {fit_s:.1f} s (fit + sample), load {load:.1f}", flush=True)
    print("\n| method | epsilon | fit + sample (s) | load average | torch threads outside fit |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]:.1f} | {r[3]:.1f} | {r[4]} |")
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="one data set, two epsilons")
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--epsilons", default=",".join(map(str, EPSILONS)))
    parser.add_argument(
        "--methods",
        default="histogram,marginal,marginal_mst,flow,gan,mst,aim,dpctgan,patectgan",
    )
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument(
        "--smartnoise-python",
        default=os.environ.get("SNSYNTH_PYTHON", SNVENV if os.path.exists(SNVENV) else None),
    )
    parser.add_argument(
        "--sn-epochs",
        type=int,
        default=None,
        help="epochs of smartnoise's dpctgan/patectgan (default: theirs, 300 for dpctgan)",
    )
    parser.add_argument(
        "--synthcity-python",
        default=os.environ.get("SYNTHCITY_PYTHON", SCVENV if os.path.exists(SCVENV) else None),
    )
    parser.add_argument("--sc-iter", type=int, default=None, help="iterations of sc_* peers")
    parser.add_argument("--json", default=None, help="also write the rows here (per cell)")
    parser.add_argument(
        "--sn-timeout",
        type=float,
        default=3600,
        help="seconds per peer fit (smartnoise, synthcity)",
    )
    parser.add_argument(
        "--timing",
        action="store_true",
        help="only time every skdp synthesizer's default fit on a 10,000 x 10 table",
    )
    args = parser.parse_args(argv)
    import torch

    warnings.simplefilter("ignore")
    if args.timing:
        return timing(args.epsilons)
    datasets = ["breast_cancer"] if args.quick else args.datasets.split(",")
    epsilons = [1.0, 10.0] if args.quick else [float(e) for e in args.epsilons.split(",")]
    methods = [m for m in args.methods.split(",") if m]
    if args.sn_epochs is not None:
        for opts in SN_GAN_OPTIONS.values():
            opts["epochs"] = args.sn_epochs
    print(
        f"load average {os.getloadavg()}, torch threads {torch.get_num_threads()} "
        "(skdp's torch estimators pick one thread for these small models: n_jobs=None)",
        flush=True,
    )
    rows = []
    for ds in datasets:
        loaded = DATASETS[ds]()
        if loaded is None:
            print(f"{ds}: skipped (statsmodels is not installed)", flush=True)
            continue
        df, bounds, cats = loaded
        regression = ds in REGRESSION
        train, test = split(df)
        floor = evaluate(train, test, test, cats, regression)
        floor["tstr"] = evaluate(train, train, test, cats, regression)["tstr"]
        rows.append(dict(dataset=ds, method="real", epsilon="-", **floor, fit_s=0.0, note=""))
        print(rows[-1], flush=True)
        for eps in epsilons:
            for name in methods:
                if name in SN_PEERS and not args.smartnoise_python:
                    continue
                if name in SC_PEERS and not args.synthcity_python:
                    continue
                if name == "gan_acgan" and regression:
                    continue  # a label to condition on: classification tables only
                res, notes = [], []
                for seed in range(args.seeds):
                    t0 = time.perf_counter()
                    try:
                        if name in SKDP:
                            kinds = column_types(ds, train.columns)
                            syn = SKDP[name](train, eps, bounds, cats, seed, kinds)
                        elif name in SC_PEERS:
                            syn = run_synthcity(
                                args.synthcity_python, name, train, eps, bounds, cats, seed,
                                DELTA, args.sn_timeout, args.sc_iter,
                            )  # fmt: skip
                        else:
                            syn = run_smartnoise(
                                args.smartnoise_python,
                                name,
                                train,
                                eps,
                                bounds,
                                cats,
                                seed,
                                timeout=args.sn_timeout,
                            )
                        fit_s = time.perf_counter() - t0
                        res.append({**evaluate(train, syn, test, cats, regression), "fit_s": fit_s})
                        print(f"  {ds} {name} eps={eps} seed={seed}: {res[-1]}", flush=True)
                    except Exception as exc:  # report, keep going
                        msg = getattr(exc, "stderr", "") or str(exc)
                        notes.append(f"{type(exc).__name__}: {msg.strip().splitlines()[-1:]}")
                        if isinstance(exc, subprocess.TimeoutExpired):
                            res = []  # a cell is cut whole, never seed by seed
                            notes.append(f"cell cut: a fit ran past {args.sn_timeout} s")
                            break
                med = {
                    k: float(np.median([r[k] for r in res])) if res else math.nan
                    for k in ("tv1", "tv2", "tstr", "fit_s")
                }
                rows.append(
                    dict(
                        dataset=ds,
                        method=name,
                        epsilon=eps,
                        **med,
                        note="; ".join(notes)[:200],
                        runs=[{k: round(v, 4) for k, v in r.items()} for r in res],
                    )
                )
                rows[-1]["load"] = round(os.getloadavg()[0], 1)
                print(rows[-1], flush=True)
                if args.json:
                    with open(args.json, "w") as f:
                        json.dump(rows, f, indent=1, default=str)
    print()
    print_table(rows)
    print(f"\nload average at the end {os.getloadavg()}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1, default=str)
    return rows


if __name__ == "__main__":
    sys.exit(0 if main() is not None else 1)
