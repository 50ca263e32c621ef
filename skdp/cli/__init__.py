"""The ``skdp`` command line: differentially private synthetic data from a CSV file.

For data custodians who do not write Python::

    skdp schema INPUT.csv -o schema.json          # draft a schema; then edit it by hand
    skdp synthesize INPUT.csv --schema schema.json --method marginal --epsilon 1 \\
        --rows 1000 -o synthetic.csv
    skdp evaluate INPUT.csv synthetic.csv         # utility of the synthetic table
    skdp evaluate INPUT.csv synthetic.csv --target outcome   # plus train-synthetic-test-real

``skdp schema`` writes the column names, the kinds that the CSV's column types fix
structurally (true/false -> binary, text -> categorical) and ``null`` placeholders for
the kind (``"integer"`` or ``"continuous"``) and bounds of numeric columns and the levels
of categorical columns. These must be filled in from *public knowledge* (a data
dictionary, a questionnaire, clinically plausible ranges), never read off the data:
a bound or level taken from the data can reveal a single person, and so can a numeric
kind (pandas reads a column as integer only when every value is whole). The output
dtypes follow the kinds (integer -> int64, continuous -> float64). Only with
``--from-data`` does it fill them in from the data, and then it marks the file
``"data_derived": true`` and warns on stderr; ``skdp synthesize`` repeats that warning
and its last line says the release is NOT differentially private (the estimator reports
``epsilon_spent_ = inf``), because it is not private with respect to those values.

``skdp synthesize`` fits :class:`~skdp.synthesis.DPHistogramSynthesizer`
(``--method histogram``), :class:`~skdp.synthesis.DPMarginalSynthesizer` (``marginal``,
AIM's adaptive rounds; ``--selection mst`` for MST's spanning tree),
:class:`~skdp.density.DPFlowDensity` (``flow``) or
:class:`~skdp.synthesis.DPGANSynthesizer` (``gan``) with a total budget of
``--epsilon`` (and ``--delta`` for the marginal and DP-SGD methods; ``marginal`` with
``--delta 0`` is pure epsilon-DP), samples ``--rows`` rows and
writes them atomically (a temporary file renamed into place: no half-written output on
failure). The output must be a new file or an existing regular file: an existing
device, FIFO or socket (``-o /dev/null``, a named pipe) is refused before the fit, never
replaced. The histogram and marginal methods draw the rows by systematic sampling (each
cell's expected count rounded up or down); ``--sampling iid`` draws independent rows.
Without ``--rows`` the output has as many rows as the input, so it **publishes the
input's row count n**. That is within the guarantee, whose neighbouring relation is
"add or remove one row, with n public" (see :ref:`neighbouring-relation`), but only if
n may be published. A ``--rows`` count fixed in advance keeps n out of the file; the
fit still reads n (the histogram's bins, DP-SGD's sampling rate), so n is not
protected either way.
Numeric bounds missing from the schema are an error unless ``--estimate-bounds`` lets
the estimator spend 10 % of the budget on a private estimate (the explicit opt-in, the
estimators' ``bounds="private"``: it runs even where the table is too small for a
reliable estimate, with a warning; fill in public bounds instead, see
``doc/choosing_bounds.rst``).
Values outside the declared bounds are clipped (the estimators' default).
``--seed SEED`` seeds the fit (``random_state=SEED``) and the sampling (``sample(...,
random_state=numpy.random.SeedSequence([SEED, 1]))``, see
:func:`skdp.cli._synthesize.sample_random_state`), so two runs with the same seed on the
same input write byte-identical files; without it both use fresh OS entropy. Keep a
seed secret for a real release: whoever knows it can reproduce the noise.

**Missing values.** Empty cells are refused by default. ``--missing category`` (for
``skdp schema``: every column's entry gets ``"missing": true``; for ``skdp synthesize``:
every column, with ``--method histogram``, ``marginal`` or ``gan``) declares a missing
level of each column: one more bin beside a numeric column's value bins, one more level
after a categorical column's levels. Its count is released with the other cells, by the
same mechanism under the same ``--epsilon`` (nothing else is spent), and the synthetic
file gets empty cells where the model draws the level. The level is a declaration, not a
finding: a schema entry's ``"missing": true`` declares it for that column alone. A
numeric column with a missing level needs declared bounds.

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
they are for the custodian, not for release. With ``--missing category`` (or a schema
whose entries say ``"missing": true``) empty cells are compared as a level: a numeric
column gets a 0/1 column ``"<name> missing"`` beside it (its empty cells take the real
column's median for the other metrics), another column the level ``"(missing)"``; TSTR
leaves them to HistGradientBoosting, which handles them, and skips rows whose target is
empty.

Input files are UTF-8 CSV with a header row (a UTF-8 byte-order mark is accepted).
Only an **empty cell** is a missing value (refused unless its column has a missing
level, see above): a cell reading ``NA``, ``None``,
``null`` or ``NaN`` is that text, e.g. a category level (pandas' default list of
missing-value spellings is off). Column names are read from the header row as written:
a name repeated in the header is an error, while a column called ``bmi.1`` beside
``bmi`` is accepted. A data row with more fields than the header is an error. An
integer too long for 64 bits in a numeric column is read as a float and clipped to the
declared bounds like any other value; an integer column's bounds must lie within
``+-2^53``. Error messages name the file and the column or schema key, never a value.

Exit status: 0 on success, 1 on an input error (unreadable or non-UTF-8 CSV, invalid
schema, mismatched columns, missing values, an output that is not a regular file,
budget too small), 2 on a usage error (including an integer option out of range).
"""

from __future__ import annotations

import argparse
import math

from skdp.cli._evaluate import _cmd_evaluate
from skdp.cli._io import CLIError, _warn
from skdp.cli._runtime import _terminate_cleanly, _Terminated
from skdp.cli._synthesize import _cmd_schema, _cmd_synthesize

__all__ = ["main"]


# ---------------------------------------------------------------------- argparse
def _finite_float(s):
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {s!r}") from None
    if not math.isfinite(v):  # inf (or 1e400) would release the data without noise
        raise argparse.ArgumentTypeError("must be a finite number")
    return v


def _int_in(lo, hi):
    """An argparse type: an integer in ``[lo, hi]`` (a usage error, exit status 2, else;
    an integer of hundreds of digits must not reach the estimators' float arithmetic)."""

    def parse(s):
        try:
            v = int(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {s[:20]!r}") from None
        if v > hi:
            raise argparse.ArgumentTypeError(f"must be at most {hi}")
        if v < lo:
            raise argparse.ArgumentTypeError(f"must be at least {lo}")
        return v

    return parse


_MAX_COUNT = 2**40  # rows, steps, batch size: far beyond any table, exact in float
_MAX_SEED = 2**32 - 1  # scikit-learn's range for an integer random_state


def build_parser():
    """The ``skdp`` argument parser: one subcommand each from :func:`_add_schema`,
    :func:`_add_synthesize` and :func:`_add_evaluate`."""
    p = argparse.ArgumentParser(
        prog="skdp",
        description="Differentially private synthetic data from CSV files.",
        epilog="Run 'skdp COMMAND -h' for the options of each command.",
    )
    from skdp import __version__

    p.add_argument("--version", action="version", version=f"skdp {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    _add_schema(sub)
    _add_synthesize(sub)
    _add_evaluate(sub)
    return p


_MISSING = ("error", "category")  # the --missing choices of every command


def _choice(s, flag, choices, help=None):
    """Add the option ``flag`` to the parser ``s``: one of ``choices``, by default the
    first."""
    s.add_argument(flag, choices=choices, default=choices[0], help=help)


def _add_schema(sub):
    """``skdp schema``: draft a schema file from a CSV's header and column types."""
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
    _choice(
        s,
        "--missing",
        _MISSING,
        "empty cells: refused (error, the default), or declare a missing level on "
        'every column ("missing": true; category)',
    )
    s.set_defaults(func=_cmd_schema)


def _add_synthesize(sub):
    """``skdp synthesize``: fit a DP synthesizer and write synthetic rows."""
    s = sub.add_parser(
        "synthesize",
        help="fit a DP synthesizer and write synthetic rows",
        description="Fit a differentially private synthesizer and write synthetic rows.",
    )
    s.add_argument("input", metavar="INPUT.csv")
    s.add_argument("--schema", required=True, metavar="SCHEMA.json")
    _choice(s, "--method", ("histogram", "marginal", "flow", "gan"))
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
    _choice(
        s,
        "--selection",
        ("auto", "aim", "mst"),
        "marginal: AIM's adaptive rounds (auto: the default) or MST's spanning tree",
    )
    _choice(
        s,
        "--sampling",
        ("systematic", "iid"),
        "histogram, marginal: draw the rows by systematic sampling (each cell gets its "
        "expected count rounded; the default) or independently",
    )
    s.add_argument(
        "--rows",
        type=_int_in(-_MAX_COUNT, _MAX_COUNT),
        default=None,
        help="synthetic rows (default: as many as the input, which PUBLISHES the input's "
        "row count n; skdp's guarantee treats n as public: add/remove one row, n public. "
        "A --rows fixed in advance keeps n out of the output file, but the fit still "
        "reads n, so n is not protected either way)",
    )
    s.add_argument("-o", "--output", required=True, metavar="OUT.csv")
    _choice(
        s,
        "--missing",
        _MISSING,
        "empty cells: refused (error, the default; columns whose schema entry says "
        '"missing": true excepted), or a missing level of every column whose rate is '
        "released under the budget, written back as empty cells (category; histogram, "
        "marginal, gan)",
    )
    s.add_argument(
        "--estimate-bounds",
        action="store_true",
        help="estimate numeric bounds missing from the schema privately (10%% of epsilon), "
        "even where the table is too small for a reliable estimate (a warning says so)",
    )
    _add_run_options(s)
    s.set_defaults(func=_cmd_synthesize)


def _add_run_options(s):
    """The DP-SGD (flow, gan), seed and progress options of ``skdp synthesize``."""
    s.add_argument(
        "--n-iter",
        type=_int_in(-_MAX_COUNT, _MAX_COUNT),
        default=None,
        help="DP-SGD steps (flow, gan)",
    )
    s.add_argument(
        "--batch-size",
        type=_int_in(-_MAX_COUNT, _MAX_COUNT),
        default=None,
        help="expected batch size (flow, gan)",
    )
    s.add_argument(
        "--seed",
        type=_int_in(0, _MAX_SEED),
        default=None,
        help="random seed of the fit and of the sampling (the rows are drawn with "
        "numpy.random.SeedSequence([SEED, 1])): the same seed and input give the same "
        "output file. Keep it secret for a real release",
    )
    s.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def _add_evaluate(sub):
    """``skdp evaluate``: utility of a synthetic table (not private)."""
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
    s.add_argument(
        "--bins",
        type=_int_in(-_MAX_COUNT, _MAX_COUNT),
        default=10,
        help="bins per numeric column (default 10)",
    )
    s.add_argument("--json", action="store_true", help="print JSON")
    s.add_argument(
        "--target",
        metavar="COLUMN",
        default=None,
        help="also report TSTR/TRTR with HistGradientBoosting predicting COLUMN",
    )
    _choice(
        s,
        "--task",
        ("auto", "classification", "regression"),
        "for --target: default from the schema kind or the column type",
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
    _choice(
        s,
        "--missing",
        _MISSING,
        "empty cells: refused (error, the default; columns whose schema entry says "
        '"missing": true excepted), or compared as a level of every column (category): '
        "a numeric column gets a 0/1 missing column beside it",
    )
    s.add_argument(
        "--seed", type=_int_in(0, _MAX_SEED), default=0, help="seed of the TSTR split (default 0)"
    )
    s.set_defaults(func=_cmd_evaluate)


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
