"""``skdp schema`` and ``skdp synthesize``."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
import warnings

from skdp.cli._io import (
    DATA_DERIVED_WARNING,
    NUMERIC_KIND_NOTE,
    CLIError,
    _check_output,
    _draft_schema,
    _load_schema,
    _read_csv,
    _read_with_schema,
    _unfilled_kinds,
    _warn,
    _write_atomic,
)
from skdp.cli._runtime import _progress


# ------------------------------------------------------------------- subcommands
def sample_random_state(seed):
    """The ``random_state`` of ``sample()`` in ``skdp synthesize --seed SEED``.

    The fit is seeded with ``random_state=SEED`` (the estimator hashes it with its
    parameters and the data into its noise streams); the synthetic rows are drawn with
    ``numpy.random.SeedSequence([SEED, 1])``, a fixed public function of the seed, so two
    runs with the same ``--seed`` on the same input write the same bytes. ``None`` (no
    ``--seed``): fresh OS entropy for both. A known seed protects nothing: keep it
    secret for a real release.

    Examples
    --------
    >>> from skdp.cli._synthesize import sample_random_state
    >>> sample_random_state(0).entropy
    [0, 1]
    >>> sample_random_state(None) is None
    True
    """
    import numpy as np

    return None if seed is None else np.random.SeedSequence([int(seed), 1])


def _cmd_schema(args):
    category = getattr(args, "missing", "error") == "category"
    df = _read_csv(args.input, what="input", missing=category)
    draft = _draft_schema(df, from_data=args.from_data, missing=category)
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
        kinds = [c["name"] for c in draft["columns"] if c["kind"] is None]
        todo = [
            c["name"]
            for c in draft["columns"]
            if ("bounds" in c and c["bounds"] is None)
            or ("categories" in c and c["categories"] is None)
        ]
        if kinds:
            _warn(
                f"the draft leaves the 'kind' of numeric column(s) {kinds} null: "
                + NUMERIC_KIND_NOTE
            )
        if todo:
            _warn(
                f"the draft has placeholders (null) for column(s) {todo}: fill in public "
                "bounds/categories (not read off the data) before 'skdp synthesize'"
            )
    return 0


def _estimator(args, schema):
    method = args.method
    seed = args.seed
    missing = getattr(args, "missing", "error")
    # --estimate-bounds is the explicit opt-in to the private estimate of the schema's
    # missing bounds, also where it cannot be reliable (a BoundsEstimateWarning says so):
    # the estimators' bounds="private"
    bounds = "private" if getattr(args, "estimate_bounds", False) else None
    if method == "marginal":
        from skdp.synthesis import DPMarginalSynthesizer

        return DPMarginalSynthesizer(
            epsilon=args.epsilon,
            delta=args.delta,
            schema=schema,
            bounds=bounds,
            selection=getattr(args, "selection", "auto"),
            sampling=getattr(args, "sampling", "systematic"),
            missing=missing,
            random_state=seed,
        )
    if method == "histogram":
        from skdp.synthesis import DPHistogramSynthesizer

        return DPHistogramSynthesizer(
            epsilon=args.epsilon,
            schema=schema,
            bounds=bounds,
            representative="uniform",
            sampling=getattr(args, "sampling", "systematic"),
            missing=missing,
            random_state=seed,
        )
    # the DP-SGD methods take the same schema; step count and batch size follow the
    # estimator's own defaults unless given on the command line
    common = dict(
        epsilon=args.epsilon,
        delta=args.delta,
        schema=schema,
        bounds=bounds,
        device="cpu",
        verbose=0,  # progress: the command line's own handler on the "skdp" logger
        random_state=seed,
    )
    common.update(
        {k: getattr(args, k) for k in ("n_iter", "batch_size") if getattr(args, k) is not None}
    )
    if method == "flow":
        from skdp.density import DPFlowDensity

        return DPFlowDensity(**common)
    from skdp.synthesis import DPGANSynthesizer

    return DPGANSynthesizer(**common, missing=missing)


def _cmd_synthesize(args):
    if not (args.epsilon > 0):
        raise CLIError("--epsilon must be positive")
    if args.method in ("flow", "gan") and not (0 < args.delta < 1):
        raise CLIError("--delta must be in (0, 1)")
    if args.method == "marginal" and not (0 <= args.delta < 1):
        raise CLIError("--delta must be in [0, 1)")
    if args.rows is not None and args.rows < 1:
        raise CLIError("--rows must be at least 1")
    missing = getattr(args, "missing", "error")
    if missing == "category" and args.method == "flow":
        raise CLIError(
            "--missing category is not available for --method flow (a density has no "
            "missing level): use histogram, marginal or gan, or impute first"
        )
    _check_output(args.output)  # before the fit: a refused output spends no budget
    if os.path.exists(args.output) and os.path.exists(args.input):
        if os.path.samefile(args.output, args.input):
            raise CLIError("-o/--output names the input file; choose another output path")
    unfilled = _unfilled_kinds(args.schema)
    if unfilled:
        raise CLIError(
            f"schema {args.schema!r} has no 'kind' for numeric column(s) {unfilled}: "
            + NUMERIC_KIND_NOTE
        )
    schema, data_derived = _load_schema(args.schema)
    if data_derived and not schema.data_derived:  # a mark other than true: still a mark
        schema = dataclasses.replace(schema, data_derived=True)
    data_derived = schema.data_derived  # the fit reports itself non-private (schema=)
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
    if schema.missing_names and args.method == "flow":
        raise CLIError(
            f"schema {args.schema!r} declares a missing level for column(s) "
            f"{[str(n) for n in schema.missing_names]}, which --method flow does not model: "
            "use histogram, marginal or gan, or impute first"
        )
    df = _read_with_schema(args.input, schema, what="input", missing=missing)
    n_rows = len(df) if args.rows is None else int(args.rows)
    est = _estimator(args, schema)
    from skdp.exceptions import BudgetExceededError, DeltaTooLargeWarning, PrivacyLeakWarning

    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeltaTooLargeWarning)
            if data_derived:  # said above in the command line's words
                warnings.simplefilter("ignore", PrivacyLeakWarning)
            with _progress(args.quiet):
                est.fit(df)
            synth = est.sample(n_rows, random_state=sample_random_state(args.seed))
    except BudgetExceededError as exc:
        raise CLIError(f"privacy budget: {exc}") from None
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    fit_time = time.perf_counter() - t0

    def write(tmp):
        synth.to_csv(tmp, index=False)

    _write_atomic(args.output, write)
    _warn(_final_message(args, est, len(synth), fit_time))
    return 0


def _final_message(args, est, n_rows, fit_time):
    """The last line of ``skdp synthesize``: what was written and what it spent. A fit
    that is not private (a data-derived schema) says so first, naming the reason."""
    delta = getattr(est, "delta_spent_", 0.0)
    head = f"wrote {n_rows} synthetic rows to {args.output!r} (method {args.method}, "
    if est.privacy_guarantee_ == "none":
        opts = list(getattr(est, "nonprivate_options_", []))
        why = (
            "the schema was read off the data (data_derived)"
            if "schema" in opts
            else f"non-private option(s) {opts}"
        )
        return (
            head + f"NOT differentially private: {why}; epsilon spent "
            f"{est.epsilon_spent_:.4g}, delta spent {delta:.3g}, {fit_time:.1f} s)"
        )
    return head + (
        f"epsilon spent {est.epsilon_spent_:.4g}, delta spent "
        f"{delta:.3g}, {est.privacy_guarantee_} guarantee, {fit_time:.1f} s)"
    )
