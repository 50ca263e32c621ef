"""Reading and writing for the ``skdp`` command line: CSV input, schemas, atomic output."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile

PLACEHOLDER_NOTE = (
    "Fill in every null: the 'kind' of numeric columns ('integer' for whole numbers by "
    "definition, e.g. age in years or a count; else 'continuous'), their 'bounds' "
    "[low, high], and the 'categories' (all possible levels) of categorical columns, "
    "from PUBLIC knowledge (data dictionary, questionnaire, plausible ranges), never from "
    "the data. Check each other 'kind' (binary, categorical)."
)
NUMERIC_KIND_NOTE = (
    "choose 'integer' (whole numbers by definition) or 'continuous' from public knowledge; "
    "the draft does not guess it from the data, where one non-whole value would change it"
)
DATA_DERIVED_WARNING = (
    "WARNING: the bounds and categories in this schema were READ OFF THE DATA "
    "(--from-data). They are not public knowledge and can reveal individual records; "
    "a synthetic data set made with this schema is NOT differentially private with "
    "respect to them. Replace them by public values before any release."
)


#: integer columns' bounds must lie within this (floats hold integers exactly up to 2^53)
MAX_INTEGER_BOUND = float(2**53)


class CLIError(Exception):
    """An input error reported as ``skdp: error: ...`` with exit status 1."""


# --------------------------------------------------------------------------- I/O
NOT_UTF8 = (
    "is not UTF-8 text; save it as UTF-8 (in a spreadsheet: 'CSV UTF-8'), or convert it, "
    "e.g. with iconv -f latin1 -t utf-8"
)


#: what to do about empty cells, in the command line's terms
MISSING_NOTE = (
    "pass --missing category to model them as their own level of each column (its rate "
    "is released under the same budget; the synthetic file gets empty cells back), or "
    'declare "missing": true on those columns of the schema; otherwise impute them first '
    "(skdp.preprocessing.DPSimpleImputer, never an imputer fitted on the rows without "
    "noise) or remove those rows"
)


def _read_csv(path, *, dtype=None, what="input", missing=()):
    """Read a CSV file for the command line; every problem is a :class:`CLIError`.

    Only an **empty cell** is a missing value: a cell reading ``NA``, ``None``, ``null``
    or ``NaN`` is the text it says (a category level, say), not pandas' default set of
    missing-value spellings (``keep_default_na=False``, ``na_values=[""]``). Empty cells
    are refused except in the columns ``missing`` names (``True``: every column), those
    with a declared missing level. Duplicate
    and empty column names are found in the header row itself, before pandas renames a
    repeated ``bmi`` to ``bmi.1`` (so a real column named ``bmi.1`` is accepted). A data
    row with more fields than the header is refused (pandas would otherwise shift the
    columns). Messages name the file and the columns, never a cell's value.
    """
    import warnings

    import pandas as pd

    if not os.path.isfile(path):
        raise CLIError(f"{what} file {path!r} does not exist")
    options = dict(encoding="utf-8", keep_default_na=False, na_values=[""], index_col=False)
    try:
        with warnings.catch_warnings():  # ParserWarning: a row longer than the header
            warnings.simplefilter("error", pd.errors.ParserWarning)
            header = pd.read_csv(path, header=None, nrows=1, dtype=str, **options)
            df = pd.read_csv(path, dtype=dtype, **options)
    except pd.errors.EmptyDataError:
        raise CLIError(f"{what} file {path!r} is empty") from None
    except UnicodeDecodeError:
        raise CLIError(f"{what} file {path!r} {NOT_UTF8}") from None
    except pd.errors.ParserWarning:
        raise CLIError(
            f"{what} file {path!r} is not a readable CSV (a row has more fields than the header)"
        ) from None
    except pd.errors.ParserError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CLIError(f"{what} file {path!r} is not a readable CSV ({first})") from None
    except (ValueError, OverflowError):  # dtype conversion failures
        raise CLIError(f"{what} file {path!r}: a column does not match the schema's type") from None
    names = ["" if pd.isna(v) else str(v) for v in header.iloc[0]] if len(header) else []
    if df.shape[1] == 0 or not names:
        raise CLIError(f"{what} file {path!r} has no columns")
    if len(df) == 0:
        raise CLIError(f"{what} file {path!r} has a header but no rows")
    if "" in names:
        raise CLIError(f"{what} file {path!r} has columns without a header name")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise CLIError(f"{what} file {path!r} has duplicate column names {dup}")
    if len(names) != df.shape[1]:  # not expected: pandas and the header row disagree
        raise CLIError(f"{what} file {path!r} is not a readable CSV (the header row)")
    df.columns = names  # the header as written (pandas' names are the same here)
    allowed = set(df.columns) if missing is True else {str(c) for c in (missing or ())}
    bad = [str(c) for c in df.columns if c not in allowed and df[c].isna().any()]
    if bad:
        note = (
            MISSING_NOTE
            if what == "input"
            else "pass --missing category to compare them as a level of each column"
        )
        raise CLIError(
            f"{what} file {path!r} has missing values in column(s) {bad} (empty cells); " + note
        )
    return df


def _check_output(path):
    """Refuse an output path that :func:`_write_atomic` could not or must not replace.

    The output must be a new file or an existing **regular** file (or a link to one). An
    existing device, FIFO or socket (``/dev/null``, a named pipe) is refused, never
    replaced: renaming a file onto ``/dev/null``, as root, would break the system.
    """
    import stat

    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise CLIError(f"output {path!r} is a directory; name a file")
    if not os.path.isdir(directory):
        raise CLIError(f"output directory {directory!r} does not exist")
    try:
        mode = os.stat(path).st_mode  # follows links: a link to /dev/null is refused too
    except FileNotFoundError:
        return directory
    if not stat.S_ISREG(mode):
        raise CLIError(
            f"output {path!r} exists and is not a regular file (a device, FIFO or socket); "
            "skdp writes regular files only, replacing them atomically: name a file"
        )
    return directory


def _write_atomic(path, write):
    """Call ``write(tmp_path)`` then rename the temporary file onto ``path``.

    ``path`` is checked by :func:`_check_output` (a regular file or a new one).
    """
    directory = _check_output(path)
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
def _draft_schema(df, *, from_data, missing=False):
    """The JSON-able draft schema for ``df``.

    Without ``from_data`` nothing in it depends on the values: the column names, and a
    kind from each dtype's *family* only (bool -> binary, text -> categorical). A numeric
    column's kind is a ``null`` placeholder like its bounds: whether pandas read it as
    integer or float depends on whether every value is whole, so one record would change
    it. No dtypes are written; the output dtypes follow the kinds
    (integer -> int64, continuous -> float64). With ``from_data`` the kinds come from the
    dtypes, the bounds and levels from the values, and the draft is marked
    ``"data_derived": true``. With ``missing`` every column declares a missing level
    (``"missing": true``; a declaration, not a finding: it does not depend on which
    columns have empty cells).
    """
    from skdp.utils.schema import kind_from_dtype, structural_kind

    columns = []
    for name in df.columns:
        col = df[name].dropna() if from_data else df[name]
        kind = (kind_from_dtype if from_data else structural_kind)(df[name].dtype)
        entry = {"name": str(name), "kind": kind}
        if kind in ("continuous", "integer"):
            if from_data:
                lo, hi = (float(col.min()), float(col.max())) if len(col) else (0.0, 1.0)
                if lo == hi:
                    hi = lo + 1.0
                entry["bounds"] = [lo, hi]
            else:
                entry["kind"] = None  # "integer" or "continuous": the user's declaration
                entry["bounds"] = None
        elif kind == "binary":
            entry["categories"] = [False, True]
        else:
            if from_data:
                entry["categories"] = sorted({str(v) for v in col})
            else:
                entry["categories"] = None
        if from_data:
            entry["dtype"] = str(df[name].dtype)
        if missing:
            entry["missing"] = True
        columns.append(entry)
    out = {"columns": columns, "input_type": "dataframe"}
    if from_data:
        out["data_derived"] = True
        out["warning"] = DATA_DERIVED_WARNING
    else:
        out["note"] = PLACEHOLDER_NOTE
    return out


def _unfilled_kinds(path):
    """Names of the columns whose ``kind`` is still the draft's ``null`` placeholder, read
    leniently (a file that is not a schema is left to :func:`_load_schema` to refuse)."""
    try:
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
        return [
            str(c["name"])
            for c in d["columns"]
            if isinstance(c, dict) and "name" in c and "kind" in c and c["kind"] is None
        ]
    except (OSError, ValueError, TypeError, KeyError, RecursionError):
        return []


def _reject_constant(name):
    raise ValueError(name)


def _is_number(v):
    return isinstance(v, int | float) and not isinstance(v, bool)


def _is_level(v):
    return isinstance(v, str | int | float) and v == v  # a JSON scalar, not NaN


def _check_column_entry(path, i, c):
    """Refuse a schema column entry of the wrong shape, naming the entry and key."""
    where = f"schema file {path!r}: column entry {i}"
    if not isinstance(c, dict) or "name" not in c or "kind" not in c:
        raise CLIError(f"{where} must be an object with 'name' and 'kind'")
    name = c["name"]
    if not (isinstance(name, str) or (isinstance(name, int) and not isinstance(name, bool))):
        raise CLIError(f"{where}: 'name' must be a string, got {_json_type(name)}")
    where = f"schema file {path!r}: column {str(name)!r}"
    if not isinstance(c["kind"], str):
        raise CLIError(f"{where}: 'kind' must be a string, got {_json_type(c['kind'])}")
    b = c.get("bounds")
    if b is not None:
        if not isinstance(b, list) or len(b) != 2 or not all(_is_number(v) for v in b):
            raise CLIError(f"{where}: 'bounds' must be [low, high] numbers or null")
        try:
            lo, hi = (float(v) for v in b)
        except OverflowError:  # a JSON integer with hundreds of digits
            raise CLIError(f"{where}: 'bounds' are too large (at most 1e150)") from None
        if c["kind"] == "integer" and max(abs(lo), abs(hi)) > MAX_INTEGER_BOUND:
            raise CLIError(
                f"{where}: an integer column's 'bounds' must lie within +-2^53 (larger "
                "integers are not exact in floating point; declare the column continuous)"
            )
    cats = c.get("categories")
    if cats is not None and (not isinstance(cats, list) or not all(_is_level(v) for v in cats)):
        raise CLIError(
            f"{where}: 'categories' must be a list of strings or numbers (the levels), or null"
        )
    if c.get("other") is not None and not _is_level(c["other"]):
        raise CLIError(f"{where}: 'other' must be a string or a number (a declared level)")
    if c.get("dtype") is not None and not isinstance(c["dtype"], str):
        raise CLIError(f"{where}: 'dtype' must be a string (e.g. \"int64\") or null")
    if not isinstance(c.get("ordered", False), bool):
        raise CLIError(f"{where}: 'ordered' must be true or false")
    if not isinstance(c.get("missing", False), bool):
        raise CLIError(f"{where}: 'missing' must be true or false")


def _json_type(v):
    return {dict: "an object", list: "a list", bool: "a boolean", float: "a number"}.get(
        type(v), "null" if v is None else type(v).__name__
    )


def _load_schema(path):
    """Read and validate a schema JSON file. Returns ``(TabularSchema, data_derived)``.

    Every problem is a one-line :class:`CLIError` naming the file and the column entry or
    key: invalid JSON (also ``NaN``/``Infinity``, which are not JSON, and integers too
    long to read), a name, kind, bound or level of the wrong type, integer bounds beyond
    ``+-2^53``.
    """
    from skdp.utils.schema import TabularSchema

    if not os.path.isfile(path):
        raise CLIError(f"schema file {path!r} does not exist")
    try:
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise CLIError(
            f"schema file {path!r} is not valid JSON (line {exc.lineno}, column {exc.colno})"
        ) from None
    except UnicodeDecodeError:
        raise CLIError(f"schema file {path!r} {NOT_UTF8}") from None
    except RecursionError:
        raise CLIError(f"schema file {path!r} is nested too deeply to be a schema") from None
    except ValueError:  # NaN/Infinity, or an integer of more than 4300 digits
        raise CLIError(
            f"schema file {path!r} is not valid JSON (NaN, Infinity or a number too long to read)"
        ) from None
    if not isinstance(d, dict) or not isinstance(d.get("columns"), list):
        raise CLIError(f"schema file {path!r} must be a JSON object with a 'columns' list")
    for i, c in enumerate(d["columns"]):
        _check_column_entry(path, i, c)
    try:
        schema = TabularSchema.from_dict(d)
    except (ValueError, TypeError) as exc:
        raise CLIError(f"schema file {path!r}: {exc}") from None
    return schema, bool(d.get("data_derived", False))


def _read_with_schema(path, schema, *, what, missing="error"):
    """Read a CSV whose columns must be exactly the schema's (any order).

    Empty cells are accepted in the columns with a declared missing level (the schema's
    ``"missing": true``, every column with ``missing="category"``) and read as NaN.
    """
    import numpy as np
    import pandas as pd

    allowed = {str(n) for n in schema.names} if missing == "category" else set()
    allowed |= {str(n) for n in schema.missing_names}

    dtype = {}
    for c in schema:
        if c.kind == "categorical" and c.categories is not None:
            if all(isinstance(v, str) for v in c.categories):
                dtype[str(c.name)] = str
    df = _read_csv(path, dtype=dtype or None, what=what, missing=allowed)
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
            # pandas leaves a column of integers beyond 64 bits as text: read it as
            # float (the estimator clips it to the declared bounds)
            try:
                col = pd.to_numeric(col).astype(np.float64)
            except (ValueError, TypeError, OverflowError):
                raise CLIError(
                    f"{what} file {path!r}: column {str(c.name)!r} is not numeric (a cell "
                    "is not a number; only an empty cell is a missing value)"
                ) from None
            df[str(c.name)] = col
        if c.kind == "integer" and col.dtype.kind == "f":
            v = col.to_numpy()
            absent = np.isnan(v)  # empty cells (allowed above only with a missing level)
            if np.isinf(v).any():  # as the estimators say for a float column
                raise CLIError(f"{what} file {path!r}: column {str(c.name)!r} contains infinity")
            if not np.all((v == np.round(v)) | absent):
                raise CLIError(
                    f"{what} file {path!r}: column {str(c.name)!r} is declared integer but "
                    "has non-integer values"
                )
            # declared integer bounds lie within +-2^53 (_load_schema): clipping there
            # first changes no release and keeps the cast from wrapping around
            v = np.clip(v, -MAX_INTEGER_BOUND, MAX_INTEGER_BOUND)
            df[str(c.name)] = v if absent.any() else v.astype(np.int64)
    return df
