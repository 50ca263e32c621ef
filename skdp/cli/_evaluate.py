"""``skdp evaluate``: utility of a synthetic table, and train-on-synthetic-test-on-real."""

from __future__ import annotations

import json
import sys

from skdp.cli._io import CLIError, _load_schema, _read_csv, _read_with_schema, _warn


def _cmd_evaluate(args):
    from skdp.metrics import (
        correlation_distance,
        marginal_total_variation,
        maximum_mean_discrepancy,
    )

    missing = getattr(args, "missing", "error")
    if args.schema is not None:
        schema, _ = _load_schema(args.schema)
        real = _read_with_schema(args.real, schema, what="real", missing=missing)
        synth = _read_with_schema(args.synthetic, schema, what="synthetic", missing=missing)
    else:
        real = _read_csv(args.real, what="real", missing=missing == "category")
        synth = _read_csv(args.synthetic, what="synthetic", missing=missing == "category")
        a, b = [str(c) for c in real.columns], [str(c) for c in synth.columns]
        if sorted(a) != sorted(b):
            raise CLIError(
                "real and synthetic files must have the same columns "
                f"(only in real: {sorted(set(a) - set(b))}, "
                f"only in synthetic: {sorted(set(b) - set(a))})"
            )
        synth = synth[list(real.columns)]
        for c in real.columns:  # same kind on both sides, else compare as categories
            if (real[c].dtype.kind in "iufb") != (synth[c].dtype.kind in "iufb"):
                real[c] = real[c].astype(str)
                synth[c] = synth[c].astype(str)
    metrics = {}
    descriptions = {}
    if args.target is not None:
        metrics, descriptions = _tstr_metrics(args, real, synth)
    real, synth = _missing_as_values([real, synth], real)
    try:
        metrics["marginal_tv_1way"] = marginal_total_variation(real, synth, way=1, bins=args.bins)
        if real.shape[1] >= 2:
            metrics["marginal_tv_2way"] = marginal_total_variation(
                real, synth, way=2, bins=args.bins, max_pairs=300
            )
        metrics["correlation_distance"] = correlation_distance(real, synth, norm="mean_abs")
        metrics["mmd"] = maximum_mean_discrepancy(real, synth, max_samples=2000)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    descriptions |= {
        "marginal_tv_1way": "mean total variation of 1-way marginals (0 best, 1 worst)",
        "marginal_tv_2way": "mean total variation of 2-way marginals (0 best, 1 worst)",
        "correlation_distance": "mean |corr_real - corr_synthetic| over column pairs",
        "mmd": "maximum mean discrepancy, Gaussian kernel (0 best)",
    }
    if args.json:
        out = {
            "n_real": len(real),
            "n_synthetic": len(synth),
            "metrics": {k: float(v) for k, v in metrics.items()},
        }
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
    else:
        print(f"real rows: {len(real)}, synthetic rows: {len(synth)}, columns: {real.shape[1]}")
        for k, v in metrics.items():
            print(f"{k:<22} {v:8.4f}   {descriptions[k]}")
    if args.target is not None and args.test is None:
        _warn(
            "TSTR test rows were split off REAL.csv; if the synthesizer saw them, TSTR is "
            "optimistic: pass --test with rows held out before synthesizing"
        )
    _warn(
        "these metrics are computed from the real data without differential privacy; "
        "do not publish them"
    )
    return 0


#: the level that stands for an empty cell of a non-numeric column in the metrics
MISSING_LEVEL = "(missing)"


def _missing_as_values(frames, reference):
    """The frames with their missing cells (empty cells of columns with a missing level)
    made comparable: a numeric column gets a 0/1 column ``"<name> missing"`` and its
    empty cells the median of ``reference``'s present values; another column gets the
    level ``"(missing)"``. So the metrics compare the missing rates and the present
    values. Not private (like every ``skdp evaluate`` number); a no-op without empty
    cells."""
    import pandas as pd

    cols = [c for c in reference.columns if any(f[c].isna().any() for f in frames)]
    if not cols:
        return frames
    out = [f.copy() for f in frames]
    for c in cols:
        numeric = all(f[c].dtype.kind in "iufb" for f in frames)
        if numeric:
            fill = reference[c].median() if reference[c].notna().any() else 0.0
            for f, g in zip(frames, out, strict=True):
                pos = list(g.columns).index(c) + 1
                g.insert(pos, f"{c} missing", f[c].isna().astype(float))
                g[c] = f[c].astype(float).fillna(fill)
        else:
            for f, g in zip(frames, out, strict=True):
                col = f[c].astype(object)
                g[c] = pd.Series(
                    [MISSING_LEVEL if pd.isna(v) else str(v) for v in col], index=f.index
                )
    return out


def _tstr_task(args, real, synth, schema):
    """'classification' or 'regression' for the target (declared, else from its type)."""
    if args.task != "auto":
        return args.task
    t = args.target
    if schema is not None:
        kind = schema[t].kind
        return "regression" if kind == "continuous" else "classification"
    col = real[t]
    if col.dtype.kind in "fc":
        return "regression"
    if col.dtype.kind in "iu" and col.nunique() > 10:
        return "regression"
    return "classification"


def _tstr_frames(frames, target, schema):
    """Features of each frame with shared categorical dtypes; the target columns."""
    import pandas as pd

    feats = [f.drop(columns=[target]) for f in frames]
    cat_cols = [
        c
        for c in feats[0].columns
        if (schema is not None and schema[c].kind in ("categorical",))
        or any(f[c].dtype.kind not in "iufb" for f in feats)
    ]

    def text(col):  # an empty cell is the level "(missing)", not a float NaN
        return col.astype(object).where(col.notna(), MISSING_LEVEL).astype(str)

    for c in cat_cols:
        levels = sorted(set().union(*(set(text(f[c])) for f in feats)))
        dt = pd.CategoricalDtype(levels)
        for f in feats:
            f[c] = text(f[c]).astype(dt)
    for f in feats:
        for c in f.columns:
            if c not in cat_cols:
                f[c] = f[c].astype(float)
    return feats, [f[target] for f in frames]


def _tstr_metrics(args, real, synth):
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    from sklearn.model_selection import train_test_split

    from skdp.metrics import tstr_score

    target = args.target
    if target not in [str(c) for c in real.columns]:
        raise CLIError(f"--target {target!r} is not a column of the real table")
    if real.shape[1] < 2:
        raise CLIError("--target needs at least one other column to predict it from")
    schema = None
    if args.schema is not None:
        schema, _ = _load_schema(args.schema)
    missing_opt = getattr(args, "missing", "error")
    if args.test is not None:
        test = (
            _read_with_schema(args.test, schema, what="test", missing=missing_opt)
            if schema is not None
            else _read_csv(args.test, what="test", missing=missing_opt == "category")
        )
        missing = sorted(set(map(str, real.columns)) - set(map(str, test.columns)))
        if missing:
            raise CLIError(f"the --test file lacks column(s) {missing}")
        train, test = real, test[list(real.columns)]
    else:
        if not 0.0 < args.test_size < 1.0:
            raise CLIError("--test-size must be in (0, 1)")
        train, test = train_test_split(real, test_size=args.test_size, random_state=args.seed)
    task = _tstr_task(args, real, synth, schema)
    # rows whose target is missing are not scored; missing features stay NaN for
    # HistGradientBoosting (numeric) or become the level "(missing)" (categorical)
    train, synth, test = (f[f[target].notna()] for f in (train, synth, test))
    (X_tr, X_syn, X_te), (y_tr, y_syn, y_te) = _tstr_frames([train, synth, test], target, schema)
    if task == "classification":
        y_tr, y_syn, y_te = (np.asarray(y.astype(str)) for y in (y_tr, y_syn, y_te))
        n_classes = len(set(y_tr) | set(y_te))
        scoring = "roc_auc" if n_classes == 2 else "accuracy"
        if n_classes < 2:
            raise CLIError(f"--target {target!r} has one class in the real rows")
        est = HistGradientBoostingClassifier(categorical_features="from_dtype", random_state=0)
    else:
        try:
            y_tr, y_syn, y_te = (np.asarray(y, dtype=float) for y in (y_tr, y_syn, y_te))
        except (TypeError, ValueError):
            raise CLIError(
                f"--target {target!r} is not numeric; use --task classification"
            ) from None
        scoring = "r2"
        est = HistGradientBoostingRegressor(categorical_features="from_dtype", random_state=0)
    try:
        res = tstr_score(est, X_syn, y_syn, X_te, y_te, scoring=scoring, X_train=X_tr, y_train=y_tr)
    except ValueError as exc:
        raise CLIError(f"TSTR: {exc}") from None
    what = {"roc_auc": "ROC AUC", "accuracy": "accuracy", "r2": "R^2"}[scoring]
    metrics = {f"tstr_{scoring}": res["tstr"], f"trtr_{scoring}": res["trtr"]}
    descriptions = {
        f"tstr_{scoring}": f"{what} predicting {target!r}: trained on synthetic, tested on real",
        f"trtr_{scoring}": f"{what} predicting {target!r}: trained on real, tested on real",
    }
    return metrics, descriptions
