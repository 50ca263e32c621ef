"""Reading and writing for the ``skdp`` command line: CSV input, schemas, atomic output."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import tempfile

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
