"""The bad-input contract for I/O (issue 30): the ``skdp`` command line's files and
options, and the objects :func:`~skdp.metrics.make_dp_scorer` returns.

A sibling of ``tests/test_bad_inputs.py``: its outcome classification (``classify``,
``run_cli``, the planted ``SENTINEL``) is reused, and the cases are again generated as
products (bad file x sub-command, misused object x metric) so that a new sub-command,
option or metric is covered by adding it to one list. The command-line checks are
stricter than ``run_cli``'s: a refusal is **one line**, names the file and the column
or key, and carries no text of Python's own (a codec's byte dump, ``unhashable type``,
``int too large``); a usage error (an option out of range) exits with status 2, an
input error with status 1.

Also here: inputs the command line used to refuse although they are valid (category
levels spelled ``None``/``NA``, a column named ``bmi.1`` beside ``bmi``) and outputs it
must never replace (a FIFO, a socket, a link to one).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import pathlib
import socket
import stat
import warnings

import numpy as np
import pandas as pd
import pytest


def _bad_inputs_module():
    path = pathlib.Path(__file__).resolve().parent / "test_bad_inputs.py"
    spec = importlib.util.spec_from_file_location("_skdp_test_bad_inputs_io", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_BI = _bad_inputs_module()
classify, run_cli, SENTINEL_TEXT = _BI.classify, _BI.run_cli, _BI.SENTINEL_TEXT

# text of Python's own that must not reach a user of the command line
RAW_TEXT = (
    "Traceback",
    "codec",
    "can't decode",
    "unhashable",
    "int too large",
    "Exceeds the limit",
    "object has no attribute",
    "0x",
)


# ------------------------------------------------------------------------ fixtures
SCHEMA = {
    "columns": [
        {"name": "age", "kind": "integer", "bounds": [18, 90]},
        {"name": "sex", "kind": "categorical", "categories": ["F", "M"]},
    ]
}


def _table(tmp):
    """A good input, its schema, and the bad files of the generated cases."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"age": rng.integers(20, 80, 40), "sex": rng.choice(["F", "M"], 40)})
    df.to_csv(tmp / "in.csv", index=False)
    (tmp / "schema.json").write_text(json.dumps(SCHEMA))
    good = (tmp / "in.csv").read_text()
    body = good.split("\n", 1)[1]
    # -- CSV files (the sentinel sits in the offending cell where there is one)
    (tmp / "latin1_cell.csv").write_bytes(("age,sex\n30,F\n40,M\n987654,\xe9\n").encode("latin-1"))
    (tmp / "latin1_header.csv").write_bytes(("\xe2ge,sex\n" + body).encode("latin-1"))
    (tmp / "utf16.csv").write_bytes(good.encode("utf-16"))
    (tmp / "long_int_5000.csv").write_text("age,sex\n" + "9" * 5000 + ",F\n" + body)
    (tmp / "dup_header.csv").write_text("age,sex,age\n" + body.replace("\n", ",1\n"))
    (tmp / "empty_name.csv").write_text("age,sex,\n" + body.replace("\n", ",1\n"))
    (tmp / "row_longer.csv").write_text("age,sex\n" + body.replace("\n", ",987654\n"))
    (tmp / "int_inf.csv").write_text("age,sex\n1e400,F\n" + body)

    # -- schema files
    def schema_with(i, key, value):
        d = json.loads(json.dumps(SCHEMA))
        d["columns"][i][key] = value
        return json.dumps(d)

    schemas = {
        "name_list": schema_with(0, "name", ["age"]),
        "name_object": schema_with(0, "name", {"a": 1}),
        "name_null": schema_with(0, "name", None),
        "kind_list": schema_with(0, "kind", ["integer"]),
        "kind_null": schema_with(0, "kind", None),
        "level_list": schema_with(1, "categories", [["F"], "M"]),
        "level_object": schema_with(1, "categories", [{"F": 1}, "M"]),
        "level_null": schema_with(1, "categories", [None, "M"]),
        "other_list": schema_with(1, "other", ["F"]),
        "dtype_list": schema_with(0, "dtype", ["int64"]),
        "ordered_str": schema_with(1, "ordered", "yes"),
        "bound_400_digits": schema_with(0, "bounds", [18, "BIG400"]),
        "bound_5000_digits": schema_with(0, "bounds", [18, "BIG5000"]),
        "int_bound_2e19": schema_with(0, "bounds", [18, "BIG20"]),
        "bound_nan": schema_with(0, "bounds", [18, "NAN"]),
        "level_nan": schema_with(1, "categories", ["NAN", "M"]),
    }
    for name, text in schemas.items():
        text = (
            text.replace('"BIG400"', "9" * 400)
            .replace('"BIG5000"', "9" * 5000)
            .replace('"BIG20"', "9" * 20)
            .replace('"NAN"', "NaN")
        )
        (tmp / f"{name}.json").write_text(text)
    (tmp / "latin1_schema.json").write_bytes(
        json.dumps(SCHEMA).replace('"F"', '"\xc9"').encode("latin-1")
    )


# (case, file in tmp, what the one-line message must name)
BAD_CSV = [
    ("latin1_cell", "latin1_cell.csv", "not UTF-8"),
    ("latin1_header", "latin1_header.csv", "not UTF-8"),
    ("utf16", "utf16.csv", "not UTF-8"),
    ("long_int_5000", "long_int_5000.csv", "'age'"),
    ("dup_header", "dup_header.csv", "duplicate column names ['age']"),
    ("empty_name", "empty_name.csv", "without a header name"),
    ("row_longer", "row_longer.csv", "more fields than the header"),
    ("int_inf", "int_inf.csv", "'age'"),
]
BAD_SCHEMA = [
    ("name_list", "column entry 0: 'name'"),
    ("name_object", "column entry 0: 'name'"),
    ("name_null", "column entry 0: 'name'"),
    ("kind_list", "'kind'"),
    ("kind_null", "'kind'"),
    ("level_list", "'categories'"),
    ("level_object", "'categories'"),
    ("level_null", "'categories'"),
    ("level_nan", "not valid JSON"),
    ("other_list", "'other'"),
    ("dtype_list", "'dtype'"),
    ("ordered_str", "'ordered'"),
    ("bound_400_digits", "'bounds'"),
    ("bound_5000_digits", "not valid JSON"),
    ("int_bound_2e19", "'bounds'"),
    ("bound_nan", "not valid JSON"),
    ("latin1_schema", "not UTF-8"),
]
HUGE = "9" * 400
BAD_OPTIONS = [  # (case, sub-command, option, value, other argv): usage errors, exit 2
    ("rows_400_digits", "synthesize", "--rows", HUGE, []),
    ("rows_5000_digits", "synthesize", "--rows", "9" * 5000, []),
    ("seed_400_digits", "synthesize", "--seed", HUGE, []),
    ("seed_2_32", "synthesize", "--seed", str(2**32), []),
    ("n_iter_400_digits", "synthesize", "--n-iter", HUGE, ["--method", "flow"]),
    ("batch_400_digits", "synthesize", "--batch-size", HUGE, ["--method", "flow"]),
    ("bins_400_digits", "evaluate", "--bins", HUGE, []),
    ("tstr_seed_400_digits", "evaluate", "--seed", HUGE, ["--target", "sex"]),
]


def _main(argv):
    """``(exit status, stderr)`` of ``skdp.cli.main(argv)`` run in-process."""
    from contextlib import redirect_stderr, redirect_stdout

    from skdp.cli import main

    err = io.StringIO()
    try:
        with redirect_stdout(io.StringIO()), redirect_stderr(err), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with _BI._deadline(_BI.TIMEOUT_S * 3):
                code = main(argv)
    except SystemExit as exc:  # argparse
        code = exc.code
    return code, err.getvalue()


def _assert_one_line_refusal(code, text, *, status, names):
    assert code == status, f"exit {code} (want {status}): {text[-300:]}"
    lines = [ln for ln in text.strip().splitlines() if ln.startswith("skdp")]
    assert len(lines) == 1 and "error" in lines[0], text
    for raw in RAW_TEXT:
        assert raw not in text, f"raw text {raw!r} in: {text.strip()}"
    assert SENTINEL_TEXT not in text, f"a data value in: {text.strip()}"
    assert names in lines[0], f"{names!r} not in: {lines[0]}"


def _argv(sub, tmp, data="in.csv", schema="schema.json"):
    if sub == "synthesize":
        schema, out = str(tmp / schema), str(tmp / "out.csv")
        return [sub, str(tmp / data), "--schema", schema, "--epsilon", "1", "-q", "-o", out]
    if sub == "schema":
        return [sub, str(tmp / data), "-o", str(tmp / "draft.json")]
    return [sub, str(tmp / data), str(tmp / "in.csv"), "--schema", str(tmp / schema)]


# ------------------------------------------------------------------ generated cases
@pytest.mark.parametrize("sub", ["synthesize", "schema", "evaluate"])
@pytest.mark.parametrize(("case", "data", "names"), BAD_CSV, ids=[c[0] for c in BAD_CSV])
def test_cli_bad_csv(tmp_path, sub, case, data, names):
    _table(tmp_path)
    code, text = _main(_argv(sub, tmp_path, data=data))
    if sub == "schema" and case in ("long_int_5000", "int_inf"):
        # a draft reads no values: a long integer or 1e400 makes the column text or float
        assert code == 0, text
        return
    _assert_one_line_refusal(code, text, status=1, names=names)
    assert data in text  # the message names the file


@pytest.mark.parametrize("sub", ["synthesize", "evaluate"])
@pytest.mark.parametrize(("case", "names"), BAD_SCHEMA, ids=[c[0] for c in BAD_SCHEMA])
def test_cli_bad_schema_entry(tmp_path, sub, case, names):
    _table(tmp_path)
    schema = f"{case}.json"
    code, text = _main(_argv(sub, tmp_path, schema=schema))
    _assert_one_line_refusal(code, text, status=1, names=names)
    assert schema in text


@pytest.mark.parametrize(
    ("case", "sub", "option", "value", "other"), BAD_OPTIONS, ids=[c[0] for c in BAD_OPTIONS]
)
def test_cli_option_out_of_range_is_a_usage_error(tmp_path, case, sub, option, value, other):
    _table(tmp_path)
    code, text = _main(_argv(sub, tmp_path) + other + [option, value])
    assert code == 2, f"exit {code}: {text[-300:]}"
    assert "Traceback" not in text and "int too large" not in text
    assert f"argument {option}:" in text
    assert len(text) < 2000  # the 400-digit value is not echoed back


def test_cli_bad_input_contract_holds_for_io_cases(tmp_path):
    """The same bad files through ``run_cli`` of the main table (its classification)."""
    _table(tmp_path)
    for data, _ in [(d, n) for _, d, n in BAD_CSV]:
        outcome, detail = run_cli(tmp_path, ["--epsilon", "1", "--input", "{tmp}/" + data])
        assert outcome in ("error_ok", "handled"), f"{data}: {outcome}: {detail}"
    for case, _ in BAD_SCHEMA:
        outcome, detail = run_cli(tmp_path, ["--epsilon", "1", "--schema", f"{{tmp}}/{case}.json"])
        assert outcome == "error_ok", f"{case}: {outcome}: {detail}"


# ------------------------------------------------------------------------ outputs
def _fifo(path):
    os.mkfifo(path)
    return path


def _socket(path):
    if len(str(path)) > 100:  # AF_UNIX path limit
        pytest.skip("temporary path too long for a Unix socket")
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    return s


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("sub", ["synthesize", "schema"])
@pytest.mark.parametrize("kind", ["fifo", "socket", "link_to_fifo"])
def test_cli_never_replaces_a_device_fifo_or_socket(tmp_path, sub, kind):
    """``-o`` naming an existing non-regular file (a FIFO stands in for ``/dev/null``,
    which a failing test must not destroy) is refused before the fit and left as it is."""
    _table(tmp_path)
    out = tmp_path / "special"
    with contextlib.ExitStack() as stack:
        if kind == "fifo":
            _fifo(out)
        elif kind == "socket":
            stack.callback(_socket(out).close)
        else:
            os.symlink(_fifo(tmp_path / "target"), out)
        argv = _argv(sub, tmp_path)
        argv[argv.index("-o") + 1] = str(out)
        code, text = _main(argv)
        _assert_one_line_refusal(code, text, status=1, names="not a regular file")
        assert "wrote" not in text  # refused before the fit: no budget spent
        mode = os.lstat(out).st_mode
        assert {"fifo": stat.S_ISFIFO, "socket": stat.S_ISSOCK, "link_to_fifo": stat.S_ISLNK}[kind](
            mode
        )
        if kind == "link_to_fifo":
            assert stat.S_ISFIFO(os.stat(out).st_mode)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".skdp-")]


def test_cli_still_replaces_a_regular_file_and_a_link_to_one(tmp_path):
    _table(tmp_path)
    (tmp_path / "old.csv").write_text("old\n")
    os.symlink(tmp_path / "old.csv", tmp_path / "link.csv")
    for name in ("old.csv", "link.csv"):
        argv = _argv("synthesize", tmp_path)
        argv[argv.index("-o") + 1] = str(tmp_path / name)
        code, text = _main(argv)
        assert code == 0, text
        assert pd.read_csv(tmp_path / name).shape == (40, 2)


# ------------------------------------------------------------ valid input accepted
def test_cli_levels_spelled_like_missing_values_are_levels(tmp_path):
    """``None``, ``NA``, ``null``, ``NaN`` are category levels; only an empty cell is a
    missing value (and is refused)."""
    levels = ["None", "NA", "null", "NaN", "n/a"]
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"age": rng.integers(20, 80, 50), "smoker": rng.choice(levels, 50)})
    df.to_csv(tmp_path / "in.csv", index=False)
    assert "None" in (tmp_path / "in.csv").read_text()
    schema = {
        "columns": [
            {"name": "age", "kind": "integer", "bounds": [18, 90]},
            {"name": "smoker", "kind": "categorical", "categories": levels},
        ]
    }
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    code, text = _main(_argv("synthesize", tmp_path) + ["--rows", "200", "--seed", "0"])
    assert code == 0, text
    out = pd.read_csv(tmp_path / "out.csv", keep_default_na=False)
    assert set(out["smoker"]) <= set(levels) and len(set(out["smoker"])) > 1
    code, text = _main(_argv("evaluate", tmp_path, data="out.csv"))
    assert code == 0, text
    code, text = _main(_argv("schema", tmp_path))
    assert code == 0, text
    # an empty cell is still a missing value
    (tmp_path / "gap.csv").write_text("age,smoker\n30,None\n40,\n")
    code, text = _main(_argv("synthesize", tmp_path, data="gap.csv"))
    _assert_one_line_refusal(code, text, status=1, names="missing values in column(s) ['smoker']")


def test_cli_accepts_a_column_named_like_a_pandas_duplicate(tmp_path):
    """``bmi.1`` beside ``bmi`` is two columns (pandas would name a second ``bmi`` so);
    a real duplicate in the header row is refused."""
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"bmi": rng.uniform(18, 40, 30), "bmi.1": rng.uniform(18, 40, 30)})
    df.to_csv(tmp_path / "in.csv", index=False)
    schema = {
        "columns": [
            {"name": "bmi", "kind": "continuous", "bounds": [15, 50]},
            {"name": "bmi.1", "kind": "continuous", "bounds": [15, 50]},
        ]
    }
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    for sub in ("synthesize", "schema", "evaluate"):
        code, text = _main(_argv(sub, tmp_path, data="in.csv"))
        assert code == 0, f"{sub}: {text}"
    assert list(pd.read_csv(tmp_path / "out.csv").columns) == ["bmi", "bmi.1"]
    draft = json.loads((tmp_path / "draft.json").read_text())
    assert [c["name"] for c in draft["columns"]] == ["bmi", "bmi.1"]
    (tmp_path / "dup.csv").write_text("bmi,bmi,bmi.1\n20,21,22\n")
    code, text = _main(_argv("synthesize", tmp_path, data="dup.csv"))
    _assert_one_line_refusal(code, text, status=1, names="duplicate column names ['bmi']")


def test_cli_reads_an_integer_too_long_for_64_bits_as_out_of_bounds(tmp_path):
    """A 25-digit integer in a numeric column is a value far outside the bounds: clipped
    like any other (the estimators' documented handling), not refused as text and not
    wrapped around to a negative number by a cast."""
    _table(tmp_path)
    body = (tmp_path / "in.csv").read_text().split("\n", 1)[1]
    (tmp_path / "long.csv").write_text("age,sex\n" + "9" * 25 + ",F\n" + body)
    code, text = _main(_argv("synthesize", tmp_path, data="long.csv") + ["--rows", "300"])
    assert code == 0, text
    out = pd.read_csv(tmp_path / "out.csv")
    assert out["age"].between(18, 90).all()
    assert np.array_equal(out["age"], np.round(out["age"]))


def test_cli_help_says_the_default_row_count_publishes_n(capsys):
    from skdp.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["synthesize", "-h"])
    text = " ".join(capsys.readouterr().out.split())
    assert "PUBLISHES the input's row count n" in text
    assert "n public" in text


# ----------------------------------------------------------------- DP scorer objects
def _scorer_data():
    from sklearn.cluster import KMeans
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    misused = {
        "regressor": LinearRegression().fit(X, y),
        "regressor_pipeline": make_pipeline(StandardScaler(), LinearRegression()).fit(X, y),
        "clusterer": KMeans(2, n_init=1, random_state=0).fit(X),
        "estimator_class": LogisticRegression,
        "none": None,
        "string": "LogisticRegression",
        "plain_object": object(),
    }
    return X, y, misused


SCORER_METRICS = ["roc_auc", "average_precision", "accuracy"]


@pytest.mark.parametrize("metric", SCORER_METRICS)
@pytest.mark.parametrize(
    "misuse",
    [
        "regressor",
        "regressor_pipeline",
        "clusterer",
        "estimator_class",
        "none",
        "string",
        "plain_object",
    ],
)
def test_dp_scorer_misuse_is_a_type_error(metric, misuse):
    """A DP scorer called on something it cannot score: ``TypeError`` naming the type,
    never an ``AttributeError`` from inside the scorer."""
    from skdp.metrics import make_dp_scorer

    X, y, misused = _scorer_data()
    est = misused[misuse]
    if metric == "accuracy" and misuse == "clusterer":
        pytest.skip("a clusterer has predict: its labels are scored (the user's choice)")
    scorer = make_dp_scorer(metric, epsilon=1.0, random_state=0)
    outcome, detail = classify(lambda: scorer(est, X, y))
    assert outcome == "error_ok", f"{outcome}: {detail}"
    with pytest.raises(TypeError):
        scorer(est, X, y)


@pytest.mark.parametrize(
    ("kwargs", "exc"),
    [
        ({"response_method": 3}, TypeError),
        ({"response_method": [["predict"]]}, TypeError),
        ({"response_method": ("predict", None)}, TypeError),
        ({"response_method": ()}, ValueError),
        ({"ledger": "my ledger"}, TypeError),
        ({"ledger": 3}, TypeError),
    ],
    ids=["rm_int", "rm_nested", "rm_none_member", "rm_empty", "ledger_str", "ledger_int"],
)
def test_make_dp_scorer_argument_types(kwargs, exc):
    """Wrong argument types are refused when the scorer is made (a ledger without
    ``spend`` used to raise ``AttributeError`` at the first call)."""
    from skdp.metrics import make_dp_scorer

    outcome, detail = classify(lambda: make_dp_scorer("roc_auc", epsilon=1.0, **kwargs))
    assert outcome == "error_ok", f"{outcome}: {detail}"
    with pytest.raises(exc):
        make_dp_scorer("roc_auc", epsilon=1.0, **kwargs)


def test_dp_scorer_custom_metric_without_the_response_method():
    from sklearn.linear_model import LinearRegression

    from skdp.metrics import make_dp_scorer

    X, y, _ = _scorer_data()
    scorer = make_dp_scorer(lambda yt, ys, **kw: 0.0, epsilon=1.0, response_method="predict_proba")
    with pytest.raises(TypeError, match="LinearRegression has none of the response methods"):
        scorer(LinearRegression().fit(X, y), X, y)


# ------------------------------------------------------------- schemas from Python
@pytest.mark.parametrize(
    ("entry", "names"),
    [
        ({"name": ["age"], "kind": "integer"}, "name"),
        ({"name": {"a": 1}, "kind": "integer"}, "name"),
        ({"name": "age", "kind": ["integer"]}, "kind"),
        ({"name": "sex", "kind": "categorical", "categories": [["F"], "M"]}, "categories"),
        ({"name": "sex", "kind": "categorical", "categories": [{"F": 1}]}, "categories"),
        ({"name": "age", "kind": "integer", "bounds": [0, 10**400]}, "bounds"),
        ({"name": "age", "kind": "continuous", "bounds": [-(10**400), 0]}, "bounds"),
    ],
    ids=[
        "name_list",
        "name_dict",
        "kind_list",
        "level_list",
        "level_dict",
        "int_bound_huge",
        "bound_huge",
    ],  # fmt: skip
)
def test_tabular_schema_from_dict_unhashable_and_huge_entries(entry, names):
    """The Python face of the schema file checks: an unhashable name or level, or a bound
    too large for a float, is a ValueError/TypeError naming the key (not ``unhashable
    type`` or an ``OverflowError``)."""
    from skdp.utils.schema import TabularSchema

    outcome, detail = classify(lambda: TabularSchema.from_dict({"columns": [entry]}))
    assert outcome == "error_ok", f"{outcome}: {detail}"
    assert "unhashable" not in detail and names in detail, detail
