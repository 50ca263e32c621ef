"""The ``skdp`` command line: differentially private synthetic data from a CSV file.

For data custodians who do not write Python::

    skdp schema INPUT.csv -o schema.json          # draft a schema; then edit it by hand
    skdp synthesize INPUT.csv --schema schema.json --method marginal --epsilon 1 \\
        --rows 1000 -o synthetic.csv
    skdp evaluate INPUT.csv synthetic.csv         # utility of the synthetic table
    skdp evaluate INPUT.csv synthetic.csv --target outcome   # plus train-synthetic-test-real

``skdp schema`` writes the column names and kinds (from the CSV's column types only)
and ``null`` placeholders for the bounds of numeric columns and the levels of
categorical columns. These must be filled in from *public knowledge* (a data
dictionary, a questionnaire, clinically plausible ranges), never read off the data:
a bound or level taken from the data can reveal a single person. Only with
``--from-data`` does it fill them in from the data, and then it marks the file
``"data_derived": true`` and warns on stderr; ``skdp synthesize`` repeats that warning,
because the release is then not differentially private with respect to those values.

``skdp synthesize`` fits :class:`~skdp.synthesis.DPHistogramSynthesizer`
(``--method histogram``), :class:`~skdp.synthesis.DPMarginalSynthesizer` (``marginal``,
MST), :class:`~skdp.density.DPFlowDensity` (``flow``) or
:class:`~skdp.synthesis.DPGANSynthesizer` (``gan``) with a total budget of
``--epsilon`` (and ``--delta`` for the marginal and DP-SGD methods; ``marginal`` with
``--delta 0`` is pure epsilon-DP), samples ``--rows`` rows and
writes them atomically (a temporary file renamed into place: no half-written output on
failure). Numeric bounds missing from the schema are an error unless
``--estimate-bounds`` lets the estimator spend 10 % of the budget on a private estimate.
Values outside the declared bounds are clipped (the estimators' default).

``skdp evaluate`` compares the synthetic table with the real one (1- and 2-way marginal
total variation, correlation distance, maximum mean discrepancy; see
:mod:`skdp.metrics`). With ``--target COLUMN`` it also reports train-on-synthetic,
test-on-real (TSTR, :func:`skdp.metrics.tstr_score`): a
:class:`~sklearn.ensemble.HistGradientBoostingClassifier` (or ``Regressor``) predicting
that column from the others is fitted on the synthetic table and scored on real rows
(ROC AUC for a two-class target, accuracy for more classes, R² for a numeric one), next
to the same model trained on real rows (TRTR). The real test rows are ``--test REAL_TEST.csv``
if given (rows held out before synthesizing: the honest protocol), else a random
``--test-size`` share of ``REAL.csv`` (those rows may have been seen by the synthesizer,
which flatters TSTR). These numbers are computed from the real data *without* privacy:
they are for the custodian, not for release.

Exit status: 0 on success, 1 on an input error (unreadable CSV, invalid schema,
mismatched columns, missing values, budget too small), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import sys
import tempfile
import time
import warnings

__all__ = ["main"]

PLACEHOLDER_NOTE = (
    "Fill in every null: 'bounds' [low, high] of numeric columns and 'categories' (all "
    "possible levels) of categorical columns, from PUBLIC knowledge (data dictionary, "
    "questionnaire, plausible ranges), never from the data. Check each 'kind' "
    "(continuous, integer, binary, categorical)."
)
DATA_DERIVED_WARNING = (
    "WARNING: the bounds and categories in this schema were READ OFF THE DATA "
    "(--from-data). They are not public knowledge and can reveal individual records; "
    "a synthetic data set made with this schema is NOT differentially private with "
    "respect to them. Replace them by public values before any release."
)


class CLIError(Exception):
    """An input error reported as ``skdp: error: ...`` with exit status 1."""


# --------------------------------------------------------------------------- I/O
def _read_csv(path, *, dtype=None, what="input"):
    import pandas as pd

    if not os.path.isfile(path):
        raise CLIError(f"{what} file {path!r} does not exist")
    try:
        df = pd.read_csv(path, dtype=dtype)
    except pd.errors.EmptyDataError:
        raise CLIError(f"{what} file {path!r} is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CLIError(f"{what} file {path!r} is not a readable CSV ({first})") from None
    except ValueError as exc:  # dtype conversion failures
        raise CLIError(f"{what} file {path!r}: a column does not match the schema's type") from (
            exc
        )
    if df.shape[1] == 0:
        raise CLIError(f"{what} file {path!r} has no columns")
    if len(df) == 0:
        raise CLIError(f"{what} file {path!r} has a header but no rows")
    dup = [
        c
        for c in df.columns
        if re.fullmatch(r".+\.\d+", str(c)) and str(c).rsplit(".", 1)[0] in df.columns
    ]
    if dup:
        raise CLIError(f"{what} file {path!r} has duplicate column names {dup}")
    unnamed = [c for c in df.columns if str(c).startswith("Unnamed: ")]
    if unnamed:
        raise CLIError(f"{what} file {path!r} has columns without a header name")
    missing = [str(c) for c in df.columns if df[c].isna().any()]
    if missing:
        raise CLIError(
            f"{what} file {path!r} has missing values in column(s) {missing}; "
            "remove or impute them first (skdp does not handle missing values)"
        )
    return df


def _write_atomic(path, write):
    """Call ``write(tmp_path)`` then rename the temporary file onto ``path``."""
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise CLIError(f"output {path!r} is a directory; name a file")
    if not os.path.isdir(directory):
        raise CLIError(f"output directory {directory!r} does not exist")
    tmp = None
    try:  # SIGTERM (see _terminate_cleanly) or an error: no hidden partial file is left
        fd, tmp = tempfile.mkstemp(prefix=".skdp-", suffix=".tmp", dir=directory)
        os.close(fd)
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise


def _warn(msg):
    print(f"skdp: {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------ schema
def _draft_schema(df, *, from_data):
    """The JSON-able draft schema for ``df`` (kinds from dtypes only)."""
    from skdp.utils.schema import kind_from_dtype

    columns = []
    for name in df.columns:
        col = df[name]
        kind = kind_from_dtype(col.dtype)
        entry = {"name": str(name), "kind": kind}
        if kind in ("continuous", "integer"):
            if from_data:
                lo, hi = float(col.min()), float(col.max())
                if lo == hi:
                    hi = lo + 1.0
                entry["bounds"] = [lo, hi]
            else:
                entry["bounds"] = None
        elif kind == "binary":
            entry["categories"] = [False, True]
        else:
            if from_data:
                entry["categories"] = sorted({str(v) for v in col})
            else:
                entry["categories"] = None
        entry["dtype"] = str(col.dtype)
        columns.append(entry)
    out = {"columns": columns, "input_type": "dataframe"}
    if from_data:
        out["data_derived"] = True
        out["warning"] = DATA_DERIVED_WARNING
    else:
        out["note"] = PLACEHOLDER_NOTE
    return out


def _load_schema(path):
    """Read and validate a schema JSON file. Returns ``(TabularSchema, data_derived)``."""
    from skdp.utils.schema import TabularSchema

    if not os.path.isfile(path):
        raise CLIError(f"schema file {path!r} does not exist")
    try:
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
    except json.JSONDecodeError as exc:
        raise CLIError(
            f"schema file {path!r} is not valid JSON (line {exc.lineno}, column {exc.colno})"
        ) from None
    except UnicodeDecodeError:
        raise CLIError(f"schema file {path!r} is not UTF-8 text") from None
    except RecursionError:
        raise CLIError(f"schema file {path!r} is nested too deeply to be a schema") from None
    if not isinstance(d, dict) or not isinstance(d.get("columns"), list):
        raise CLIError(f"schema file {path!r} must be a JSON object with a 'columns' list")
    for i, c in enumerate(d["columns"]):
        if not isinstance(c, dict) or "name" not in c or "kind" not in c:
            raise CLIError(
                f"schema file {path!r}: column entry {i} must be an object with 'name' and 'kind'"
            )
        b = c.get("bounds")
        if b is not None and (
            not isinstance(b, list)
            or len(b) != 2
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in b)
        ):
            raise CLIError(
                f"schema file {path!r}: column {c['name']!r}: 'bounds' must be "
                "[low, high] numbers or null"
            )
        cats = c.get("categories")
        if cats is not None and not isinstance(cats, list):
            raise CLIError(
                f"schema file {path!r}: column {c['name']!r}: 'categories' must be a list or null"
            )
    try:
        schema = TabularSchema.from_dict(d)
    except (ValueError, TypeError) as exc:
        raise CLIError(f"schema file {path!r}: {exc}") from None
    return schema, bool(d.get("data_derived", False))


def _read_with_schema(path, schema, *, what):
    """Read a CSV whose columns must be exactly the schema's (any order)."""
    import numpy as np

    dtype = {}
    for c in schema:
        if c.kind == "categorical" and c.categories is not None:
            if all(isinstance(v, str) for v in c.categories):
                dtype[str(c.name)] = str
    df = _read_csv(path, dtype=dtype or None, what=what)
    names = [str(n) for n in schema.names]
    have = [str(c) for c in df.columns]
    missing = [n for n in names if n not in have]
    extra = [n for n in have if n not in names]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing column(s) {missing}")
        if extra:
            parts.append(f"column(s) not in the schema {extra}")
        raise CLIError(f"{what} file {path!r} does not match the schema: " + "; ".join(parts))
    df = df[names]
    for c in schema:
        col = df[str(c.name)]
        if c.kind in ("continuous", "integer") and col.dtype.kind not in "iufb":
            raise CLIError(f"{what} file {path!r}: column {str(c.name)!r} is not numeric")
        if c.kind == "integer" and col.dtype.kind == "f":
            v = col.to_numpy()
            if not np.all(v == np.round(v)):
                raise CLIError(
                    f"{what} file {path!r}: column {str(c.name)!r} is declared integer but "
                    "has non-integer values"
                )
            df[str(c.name)] = v.astype(np.int64)
    return df


# ---------------------------------------------------------------------- progress
@contextlib.contextmanager
def _progress(quiet):
    """Show the estimators' progress records (the ``"skdp"`` logger) on stderr.

    The command line attaches its own handler (a bar on a terminal, one line per 10 %
    otherwise) and reads the structured records; it never parses printed text.
    """
    import logging

    from skdp.utils import LOGGER_NAME, ProgressHandler

    if quiet:
        yield
        return
    logger = logging.getLogger(LOGGER_NAME)
    handler = ProgressHandler(sys.stderr, bar="text")
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        handler.close()


class _Terminated(BaseException):
    """Raised by the SIGTERM handler so that ``finally`` blocks remove temporary files."""


@contextlib.contextmanager
def _terminate_cleanly():
    """Turn SIGTERM into :class:`_Terminated` for the duration (main thread only)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise _Terminated(signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


# ------------------------------------------------------------------- subcommands
def _cmd_schema(args):
    df = _read_csv(args.input, what="input")
    draft = _draft_schema(df, from_data=args.from_data)
    text = json.dumps(draft, indent=2) + "\n"
    if args.output is None or args.output == "-":
        sys.stdout.write(text)
    else:

        def write(tmp):
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(text)

        _write_atomic(args.output, write)
    if args.from_data:
        _warn(DATA_DERIVED_WARNING)
    else:
        todo = [
            c["name"]
            for c in draft["columns"]
            if ("bounds" in c and c["bounds"] is None)
            or ("categories" in c and c["categories"] is None)
        ]
        if todo:
            _warn(
                f"the draft has placeholders (null) for column(s) {todo}: fill in public "
                "bounds/categories (not read off the data) before 'skdp synthesize'"
            )
    return 0


def _estimator(args, schema):
    method = args.method
    seed = args.seed
    if method == "marginal":
        from skdp.synthesis import DPMarginalSynthesizer

        return DPMarginalSynthesizer(
            epsilon=args.epsilon, delta=args.delta, schema=schema, random_state=seed
        )
    if method == "histogram":
        from skdp.synthesis import DPHistogramSynthesizer

        return DPHistogramSynthesizer(
            epsilon=args.epsilon,
            schema=schema,
            representative="uniform",
            random_state=seed,
        )
    bounds = {c.name: c.bounds for c in schema if c.is_numeric and c.bounds is not None}
    categories = {
        c.name: list(c.categories)
        for c in schema
        if c.kind in ("categorical", "binary") and c.categories is not None
    }
    column_types = {c.name: c.kind for c in schema}
    common = dict(
        epsilon=args.epsilon,
        delta=args.delta,
        bounds=bounds,
        categories=categories,
        column_types=column_types,
        device="cpu",
        verbose=0,  # progress: the command line's own handler on the "skdp" logger
        random_state=seed,
    )
    if method == "flow":
        from skdp.density import DPFlowDensity

        return DPFlowDensity(
            n_iter=args.n_iter if args.n_iter is not None else 2000,
            batch_size=args.batch_size if args.batch_size is not None else 256,
            **common,
        )
    from skdp.synthesis import DPGANSynthesizer

    return DPGANSynthesizer(
        n_iter=args.n_iter,
        batch_size=args.batch_size if args.batch_size is not None else 64,
        **common,
    )


def _cmd_synthesize(args):
    if not (args.epsilon > 0):
        raise CLIError("--epsilon must be positive")
    if args.method in ("flow", "gan") and not (0 < args.delta < 1):
        raise CLIError("--delta must be in (0, 1)")
    if args.method == "marginal" and not (0 <= args.delta < 1):
        raise CLIError("--delta must be in [0, 1)")
    if args.rows is not None and args.rows < 1:
        raise CLIError("--rows must be at least 1")
    if os.path.exists(args.output) and os.path.exists(args.input):
        if os.path.samefile(args.output, args.input):
            raise CLIError("-o/--output names the input file; choose another output path")
    schema, data_derived = _load_schema(args.schema)
    if data_derived:
        _warn(DATA_DERIVED_WARNING)
    nc = [str(c.name) for c in schema if c.kind == "categorical" and c.categories is None]
    if nc:
        raise CLIError(
            f"schema {args.schema!r} has no categories for column(s) {nc}: list every "
            "possible level (public knowledge)"
        )
    nb = [str(n) for n in schema.missing_bounds()]
    if nb and not args.estimate_bounds:
        raise CLIError(
            f"schema {args.schema!r} has no bounds for numeric column(s) {nb}: fill in "
            "public bounds, or pass --estimate-bounds to spend 10% of epsilon on a "
            "private estimate"
        )
    df = _read_with_schema(args.input, schema, what="input")
    n_rows = len(df) if args.rows is None else int(args.rows)
    est = _estimator(args, schema)
    from skdp.exceptions import BudgetExceededError, DeltaTooLargeWarning

    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeltaTooLargeWarning)
            with _progress(args.quiet):
                est.fit(df)
            synth = est.sample(n_rows)
    except BudgetExceededError as exc:
        raise CLIError(f"privacy budget: {exc}") from None
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    fit_time = time.perf_counter() - t0

    def write(tmp):
        synth.to_csv(tmp, index=False)

    _write_atomic(args.output, write)
    delta = getattr(est, "delta_spent_", 0.0)
    _warn(
        f"wrote {len(synth)} synthetic rows to {args.output!r} "
        f"(method {args.method}, epsilon spent {est.epsilon_spent_:.4g}, delta spent "
        f"{delta:.3g}, {est.privacy_guarantee_} guarantee, {fit_time:.1f} s)"
    )
    return 0


def _cmd_evaluate(args):
    from skdp.metrics import (
        correlation_distance,
        marginal_total_variation,
        maximum_mean_discrepancy,
    )

    if args.schema is not None:
        schema, _ = _load_schema(args.schema)
        real = _read_with_schema(args.real, schema, what="real")
        synth = _read_with_schema(args.synthetic, schema, what="synthetic")
    else:
        real = _read_csv(args.real, what="real")
        synth = _read_csv(args.synthetic, what="synthetic")
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
    for c in cat_cols:
        levels = sorted(set().union(*(set(f[c].astype(str)) for f in feats)))
        dt = pd.CategoricalDtype(levels)
        for f in feats:
            f[c] = f[c].astype(str).astype(dt)
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
    if args.test is not None:
        test = (
            _read_with_schema(args.test, schema, what="test")
            if schema is not None
            else _read_csv(args.test, what="test")
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


# ---------------------------------------------------------------------- argparse
def _finite_float(s):
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {s!r}") from None
    if not math.isfinite(v):  # inf (or 1e400) would release the data without noise
        raise argparse.ArgumentTypeError("must be a finite number")
    return v


def build_parser():
    p = argparse.ArgumentParser(
        prog="skdp",
        description="Differentially private synthetic data from CSV files.",
        epilog="Run 'skdp COMMAND -h' for the options of each command.",
    )
    from skdp import __version__

    p.add_argument("--version", action="version", version=f"skdp {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    s = sub.add_parser(
        "schema",
        help="draft a schema file (column kinds; bounds/categories as placeholders)",
        description=(
            "Draft a schema (JSON) from a CSV's header and column types. Bounds of numeric "
            "columns and levels of categorical columns are written as null placeholders: "
            "fill them in from public knowledge, not from the data."
        ),
    )
    s.add_argument("input", metavar="INPUT.csv")
    s.add_argument("-o", "--output", metavar="SCHEMA.json", help="default: standard output")
    s.add_argument(
        "--from-data",
        action="store_true",
        help="fill bounds and categories from the data (NOT private; the file is marked "
        "and a warning printed)",
    )
    s.set_defaults(func=_cmd_schema)

    s = sub.add_parser(
        "synthesize",
        help="fit a DP synthesizer and write synthetic rows",
        description="Fit a differentially private synthesizer and write synthetic rows.",
    )
    s.add_argument("input", metavar="INPUT.csv")
    s.add_argument("--schema", required=True, metavar="SCHEMA.json")
    s.add_argument(
        "--method", choices=("histogram", "marginal", "flow", "gan"), default="histogram"
    )
    s.add_argument(
        "--epsilon", type=_finite_float, required=True, help="total privacy budget of the run"
    )
    s.add_argument(
        "--delta",
        type=_finite_float,
        default=1e-5,
        help="total delta (marginal, flow, gan; default 1e-5, keep it well below 1/rows; "
        "marginal with 0: pure epsilon-DP)",
    )
    s.add_argument("--rows", type=int, default=None, help="synthetic rows (default: as input)")
    s.add_argument("-o", "--output", required=True, metavar="OUT.csv")
    s.add_argument(
        "--estimate-bounds",
        action="store_true",
        help="estimate numeric bounds missing from the schema privately (10%% of epsilon)",
    )
    s.add_argument("--n-iter", type=int, default=None, help="DP-SGD steps (flow, gan)")
    s.add_argument("--batch-size", type=int, default=None, help="expected batch size (flow, gan)")
    s.add_argument(
        "--seed", type=int, default=None, help="random seed (keep it secret for a real release)"
    )
    s.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    s.set_defaults(func=_cmd_synthesize)

    s = sub.add_parser(
        "evaluate",
        help="utility of a synthetic table against the real one (not private)",
        description=(
            "Compare a synthetic table with the real one: 1-/2-way marginal total variation, "
            "correlation distance, maximum mean discrepancy, and with --target "
            "train-on-synthetic-test-on-real. Not differentially private."
        ),
    )
    s.add_argument("real", metavar="REAL.csv")
    s.add_argument("synthetic", metavar="SYNTH.csv")
    s.add_argument("--schema", metavar="SCHEMA.json", default=None)
    s.add_argument("--bins", type=int, default=10, help="bins per numeric column (default 10)")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.add_argument(
        "--target",
        metavar="COLUMN",
        default=None,
        help="also report TSTR/TRTR with HistGradientBoosting predicting COLUMN",
    )
    s.add_argument(
        "--task",
        choices=("auto", "classification", "regression"),
        default="auto",
        help="for --target: default from the schema kind or the column type",
    )
    s.add_argument(
        "--test",
        metavar="REAL_TEST.csv",
        default=None,
        help="real rows held out before synthesizing (TSTR test set); default: split REAL.csv",
    )
    s.add_argument(
        "--test-size", type=float, default=0.25, help="share of REAL.csv for TSTR testing"
    )
    s.add_argument("--seed", type=int, default=0, help="seed of the TSTR split (default 0)")
    s.set_defaults(func=_cmd_evaluate)
    return p


def main(argv=None):
    """Entry point of the ``skdp`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with _terminate_cleanly():
            return int(args.func(args) or 0)
    except _Terminated:
        _warn("terminated; no output written")
        return 143
    except CLIError as exc:
        _warn(f"error: {exc}")
        return 1
    except KeyboardInterrupt:
        _warn("interrupted; no output written")
        return 130
    except OSError as exc:  # unwritable output, a name too long for the file system, ...
        _warn(f"error: {exc.strerror or type(exc).__name__}: {exc.filename or ''}".rstrip(": "))
        return 1
    except MemoryError:
        _warn("error: not enough memory for this request (lower --rows)")
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
