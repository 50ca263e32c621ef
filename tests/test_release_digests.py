"""Release digests: every estimator's release, for a fixed seed, is pinned bit for bit.

Each case below fits one estimator (or a pipeline, a grid search, a DP metric) with an
int ``random_state`` on fixed public data built here from a seeded numpy generator,
computes a SHA-256 digest of its release, and compares it with the digest stored in
``tests/release_digests.json``. A refactor that must not change any release (issue #32:
typed release plans, one binner, one torch fit scaffold) leaves every digest unchanged.
When a release changes on purpose, regenerate the file::

    SKDP_REGENERATE_DIGESTS=1 python -m pytest tests/test_release_digests.py

and say why in the commit message. With the variable set, each case writes its digest
into the file (merged under a file lock, so ``-n auto`` works; entries of cases that no
longer exist are dropped, those of cases skipped in this run, e.g. Dask not installed,
are kept) instead of asserting.

What a digest covers
--------------------
The *subject* of a case: its fitted estimator (or a dict of them, e.g. a pipeline and its
steps), and the *outputs* of its public release methods on a fixed input:
``predict``, ``predict_proba``, ``decision_function``, ``transform``,
``inverse_transform``, ``score_samples``, ``log_prob`` and ``sample(n,
random_state=0)``, as the estimator has them; a metric case's subject is empty and its
outputs are the metric values.

A fitted estimator is represented by its *fitted attributes*: the names in
``vars(est)`` that end in ``"_"`` and do not start with ``"_"``, sorted. An attribute
whose value is an object the serialization below does not know (a torch module, a
schema, an encoder, a random generator, a scorer, a callable) is left out; a fitted
scikit-learn sub-estimator (``best_estimator_``, a pipeline step) is represented by its
own fitted attributes, recursively. Anything about timing (an attribute or a dict key
that contains ``"time"``, e.g. ``cv_results_["mean_fit_time"]``) is left out.

Canonical serialization
-----------------------
A value becomes a JSON-compatible tree, written with ``json.dumps(sort_keys=True,
separators=(",", ":"), ensure_ascii=True)``; the digest is the SHA-256 of its UTF-8
bytes:

* ``None`` -> ``"None"``; ``bool`` / ``np.bool_`` -> ``"b:True"`` / ``"b:False"``;
* ``int`` / ``np.integer`` -> ``"i:<decimal>"``;
* ``float`` / ``np.floating`` -> ``"f:<x>"`` with ``x`` rounded to 10 significant
  digits (``format(x, ".9e")``), so that a last-bit difference of BLAS or of the
  thread count cannot change the digest while any real change does; ``"f:nan"``,
  ``"f:inf"``, ``"f:-inf"``, and ``"f:0"`` for both zeros; a case may use fewer digits
  (``digits=`` of :func:`case`, with a comment saying why);
* ``str`` -> ``"s:<text>"``; ``bytes`` -> ``"y:<hex>"``;
* ``list`` / ``tuple`` -> ``["list", items]`` / ``["tuple", items]``;
* ``dict`` -> ``["dict", [[key, value], ...]]``, the pairs sorted by the JSON text of
  the canonical key (keys of any of the types here: ints, strs, tuples);
* ``np.ndarray`` (and torch tensors, through numpy) -> ``["ndarray", kind, shape,
  flat items]``, ``kind`` the numpy dtype kind (``"f"``, ``"i"``, ``"u"``, ``"b"``,
  ``"O"``, ``"U"``; not the item size, which is platform-dependent for ints) and the
  items serialized one by one as above (object arrays recursively);
* a pandas ``DataFrame`` -> ``["DataFrame", index, [[column, dtype kind, values],
  ...]]``; a ``Series`` -> ``["Series", name, index, dtype kind, values]``
  (``pd.NA`` / ``NaT`` as ``"NA"``);
* a scikit-learn estimator -> ``["estimator", fitted attributes]`` (see above);
* anything else inside a container -> ``"<object>"`` (its class is not recorded, so
  that renaming an internal class does not change a digest).

Determinism
-----------
When this file was written the digests were the same in one process and under ``-n 2``
(xdist), with each case alone in a fresh process (any order), and with
``OMP_NUM_THREADS`` (hence torch's intra-op thread count) 1, 2 (the default on a 2-core
machine) and 8: no case needed fewer digits or a pinned thread count. The torch cases
fit on the CPU in float64, so a different reduction order changes at most the last
bits, which the rounding absorbs. Every case takes well under a second once torch is
loaded; the first torch case of a process also pays torch's one-time import of
``torch._dynamo`` (about 3 s, on the first optimizer).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator

from skdp.exceptions import PrivacyAdvisoryWarning

DIGEST_FILE = Path(__file__).with_name("release_digests.json")
REGENERATE = os.environ.get("SKDP_REGENERATE_DIGESTS", "") not in ("", "0")
SERIALIZATION = "skdp-release-digest-v1"
DIGITS = 10

# ---------------------------------------------------------------- serialization


def _float(x: float, digits: int) -> str:
    x = float(x)
    if math.isnan(x):
        return "f:nan"
    if math.isinf(x):
        return "f:inf" if x > 0 else "f:-inf"
    if x == 0.0:
        return "f:0"
    return "f:" + format(x, f".{digits - 1}e")


def _kind(dtype) -> str:
    return getattr(dtype, "kind", "O")


def _is_timing(name) -> bool:
    return isinstance(name, str) and "time" in name


def fitted_attributes(est, digits: int = DIGITS) -> dict:
    """The canonical fitted attributes of ``est`` (see the module docstring)."""
    out = {}
    for name in sorted(vars(est)):
        if not name.endswith("_") or name.startswith("_") or _is_timing(name):
            continue
        tree = _canonical(vars(est)[name], digits)
        if tree is _SKIP:
            continue  # an object at the top level: left out (see the module docstring)
        out[name] = tree
    return out


_SKIP = object()


def canonical(value, digits: int = DIGITS):
    """The JSON-compatible canonical tree of ``value`` (see the module docstring)."""
    out = _canonical(value, digits)
    return "<object>" if out is _SKIP else out


def _canonical(value, digits):
    import pandas as pd

    if value is None:
        return "None"
    if isinstance(value, bool | np.bool_):
        return f"b:{bool(value)}"
    if isinstance(value, int | np.integer):
        return f"i:{int(value)}"
    if isinstance(value, float | np.floating):
        return _float(value, digits)
    if isinstance(value, str):
        return "s:" + value
    if isinstance(value, bytes):
        return "y:" + value.hex()
    if value is pd.NA or value is pd.NaT:
        return "NA"
    if isinstance(value, list | tuple):
        kind = "tuple" if isinstance(value, tuple) else "list"
        return [kind, [canonical(v, digits) for v in value]]
    if isinstance(value, dict):
        pairs = [
            [canonical(k, digits), canonical(v, digits)]
            for k, v in value.items()
            if not _is_timing(k)
        ]
        pairs.sort(key=lambda kv: json.dumps(kv[0], sort_keys=True))
        return ["dict", pairs]
    if type(value).__module__.startswith("torch") and hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray):
        items = [canonical(v, digits) for v in value.ravel(order="C").tolist()]
        return ["ndarray", value.dtype.kind, list(value.shape), items]
    if isinstance(value, pd.DataFrame):
        cols = [
            [canonical(c, digits), _kind(value[c].dtype), _column(value[c], digits)]
            for c in value.columns
        ]
        return ["DataFrame", _column(value.index, digits), cols]
    if isinstance(value, pd.Series):
        return [
            "Series",
            canonical(value.name, digits),
            _column(value.index, digits),
            _kind(value.dtype),
            _column(value, digits),
        ]
    if isinstance(value, BaseEstimator):
        return ["estimator", fitted_attributes(value, digits)]
    return _SKIP


def _column(values, digits):
    return [canonical(v, digits) for v in np.asarray(values, dtype=object).tolist()]


def release_digest(subject, outputs: dict, digits: int = DIGITS) -> str:
    """SHA-256 (hex) of the canonical (subject, outputs) of one case."""
    tree = {
        "serialization": SERIALIZATION,
        "subject": canonical(subject, digits),
        "outputs": canonical(outputs, digits),
    }
    text = json.dumps(tree, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------- release outputs

RELEASE_METHODS = (
    "predict",
    "predict_proba",
    "decision_function",
    "transform",
    "score_samples",
)
N_SAMPLE = 40


def release_outputs(est, X=None, *, inverse=False, sample=False, log_prob=None) -> dict:
    """The outputs of ``est``'s public release methods on the fixed input ``X``."""
    out = {}
    if X is not None:
        for name in RELEASE_METHODS:
            if hasattr(est, name):
                out[name] = getattr(est, name)(X)
        if inverse:
            out["inverse_transform"] = est.inverse_transform(est.transform(X))
    if sample:
        out["sample"] = est.sample(N_SAMPLE, random_state=0)
    if log_prob is not None:
        out["log_prob"] = est.log_prob(log_prob)
    return out


@contextlib.contextmanager
def _quiet():
    """Advisory warnings (a private bound estimate, an approximate guarantee) are
    expected here; PrivacyLeakWarning stays an error (pyproject's filterwarnings)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyAdvisoryWarning)
        yield


# ---------------------------------------------------------------- data

SEED = 20250601


def _rng(offset=0):
    return np.random.default_rng(SEED + offset)


def _regression(n=200, d=3):
    rng = _rng(1)
    X = rng.uniform(0.0, 1.0, size=(n, d))
    y = np.clip(X @ np.linspace(0.6, -0.4, d) + 0.05 * rng.standard_normal(n), -1, 1)
    return X, y


def _classification(n=200, d=3):
    rng = _rng(2)
    X = rng.uniform(0.0, 1.0, size=(n, d))
    y = (X[:, 0] - 0.5 * X[:, 1] + 0.15 * rng.standard_normal(n) > 0.25).astype(int)
    return X, y


def _X_test(d=3, n=12):
    # a fixed public input, partly outside [0, 1] (clipping paths)
    return _rng(3).uniform(-0.2, 1.2, size=(n, d))


def _binary(n=300):
    rng = _rng(4)
    X = rng.integers(0, 2, size=(n, 4))
    return X, X[:, 0] & X[:, 1]


def _with_missing(n=200, d=3):
    X = _regression(n, d)[0].copy()
    X[_rng(5).random(X.shape) < 0.2] = np.nan
    return X


MISSING_META = dict(
    bounds={"age": (18, 90), "bmi": (15, 50)},
    categories={"sex": ["F", "M"], "grade": [1, 2, 3], "smoker": ["no", "yes"]},
    column_types={"age": "integer", "grade": "categorical"},
)


def _frame(n=300, missing=True):
    import pandas as pd

    rng = _rng(6)
    df = pd.DataFrame(
        {
            "age": rng.integers(20, 80, n).astype(float),
            "bmi": rng.normal(27, 4, n),
            "sex": pd.Series(rng.choice(["F", "M"], n), dtype=object),
            "smoker": pd.Series(rng.choice(["no", "yes"], n), dtype=object),
            "grade": rng.choice([1, 2, 3], n),
        }
    )
    if missing:
        for c, rate in {"age": 0.1, "bmi": 0.2, "sex": 0.05, "smoker": 0.15}.items():
            rows = rng.choice(n, size=int(rate * n), replace=False)
            df.loc[rows, c] = np.nan if df[c].dtype.kind == "f" else None
    return df


# ---------------------------------------------------------------- cases

CASES: dict[str, dict] = {}


def case(name, *, torch=False, covers=(), digits=DIGITS):
    """Register ``fn() -> (subject, outputs)`` as the case ``name``.

    ``covers``: the discovered estimator class names it exercises; ``torch``: skipped
    without torch; ``digits``: the rounding of floats (lower only with a reason).
    """

    def register(fn: Callable):
        assert name not in CASES, name
        CASES[name] = {"fn": fn, "torch": torch, "covers": tuple(covers), "digits": digits}
        return fn

    return register


# torch settings shared by the torch cases: the CPU and float64 (see Determinism)
TORCH = dict(device="cpu", dtype="float64")


# -- linear models
@case("DPLinearRegression", covers=["DPLinearRegression"])
def _linear():
    from skdp.linear_model import DPLinearRegression

    X, y = _regression()
    est = DPLinearRegression(
        epsilon=1.0,
        delta=0.0,
        mechanism="functional",
        bounds_X=(0, 1),
        bounds_y=(-1, 1),
        random_state=0,
    )
    return est.fit(X, y), release_outputs(est, _X_test())


@case("DPLinearRegression-auto", covers=["DPLinearRegression"])
def _linear_auto():
    from skdp.linear_model import DPLinearRegression

    # the default delta and mechanism="auto" (the rule picks from public n, p, epsilon)
    X, y = _regression()
    est = DPLinearRegression(epsilon=1.0, bounds_X=(0, 1), bounds_y=(-1, 1), random_state=3)
    return est.fit(X, y), release_outputs(est, _X_test())


@case("DPLinearRegression-gaussian", covers=["DPLinearRegression"])
def _linear_gaussian():
    from skdp.linear_model import DPLinearRegression

    X, y = _regression()
    est = DPLinearRegression(
        epsilon=1.0,
        delta=1e-5,
        mechanism="gaussian",
        bounds_X=(0, 1),
        bounds_y=(-1, 1),
        random_state=1,
    )
    return est.fit(X, y), release_outputs(est, _X_test())


@case("DPLinearRegression-private-bounds", covers=["DPLinearRegression"])
def _linear_private():
    from skdp.linear_model import DPLinearRegression

    X, y = _regression()
    est = DPLinearRegression(epsilon=1.0, bounds_X="private", bounds_y="private", random_state=2)
    with _quiet():
        est.fit(X, y)
    return est, release_outputs(est, _X_test())


@case("DPLogisticRegression-objective", covers=["DPLogisticRegression"])
def _logistic_objective():
    from skdp.linear_model import DPLogisticRegression

    X, y = _classification()
    est = DPLogisticRegression(
        epsilon=1.0, classes=[0, 1], bounds_X=(0, 1), mechanism="objective", random_state=0
    )
    return est.fit(X, y), release_outputs(est, _X_test())


@case("DPLogisticRegression-objective-private-bounds", covers=["DPLogisticRegression"])
def _logistic_private():
    from skdp.linear_model import DPLogisticRegression

    X, y = _classification()
    est = DPLogisticRegression(
        epsilon=1.0, classes=[0, 1], bounds_X="private", mechanism="objective", random_state=1
    )
    with _quiet():
        est.fit(X, y)
    return est, release_outputs(est, _X_test())


@case("DPLogisticRegression-dpsgd", torch=True, covers=["DPLogisticRegression"])
def _logistic_dpsgd():
    from skdp.linear_model import DPLogisticRegression

    X, y = _classification()
    est = DPLogisticRegression(
        epsilon=1.0,
        delta=1e-5,
        classes=[0, 1],
        bounds_X=(0, 1),
        mechanism="dpsgd",
        n_iter=20,
        batch_size=32,
        random_state=0,
    )
    return est.fit(X, y), release_outputs(est, _X_test())


_EXPM = dict(n_iter=20, batch_size=32, n_layers=1, **TORCH)


@case("ExpMFlowClassifier", torch=True, covers=["ExpMFlowClassifier"])
def _expm_classifier():
    from skdp.linear_model import ExpMFlowClassifier

    X, y = _classification()
    est = ExpMFlowClassifier(epsilon=1.0, classes=[0, 1], random_state=0, **_EXPM)
    with _quiet():
        est.fit(X, y)
    return est, release_outputs(est, _X_test())


@case("ExpMFlowRegressor", torch=True, covers=["ExpMFlowRegressor"])
def _expm_regressor():
    from skdp.linear_model import ExpMFlowRegressor

    X, y = _regression()
    est = ExpMFlowRegressor(epsilon=1.0, bounds_y=(-1, 1), random_state=0, **_EXPM)
    with _quiet():
        est.fit(X, y)
    return est, release_outputs(est, _X_test())


@case("ExpMFlowRegressor-private-bounds", torch=True, covers=["ExpMFlowRegressor"])
def _expm_regressor_private():
    from skdp.linear_model import ExpMFlowRegressor

    X, y = _regression()
    est = ExpMFlowRegressor(epsilon=2.0, bounds_y="private", random_state=1, **_EXPM)
    with _quiet():
        est.fit(X, y)
    return est, release_outputs(est, _X_test())


# -- preprocessing
@case("DPStandardScaler", covers=["DPStandardScaler"])
def _scaler():
    from skdp.preprocessing import DPStandardScaler

    X, _ = _regression()
    est = DPStandardScaler(epsilon=1.0, bounds=(0, 1), random_state=0)
    return est.fit(X), release_outputs(est, _X_test(), inverse=True)


@case("DPStandardScaler-private-bounds", covers=["DPStandardScaler"])
def _scaler_private():
    from skdp.preprocessing import DPStandardScaler

    X, _ = _regression()
    est = DPStandardScaler(epsilon=1.0, bounds="private", random_state=1)
    with _quiet():
        est.fit(X)
    return est, release_outputs(est, _X_test(), inverse=True)


@case("DPSimpleImputer-mean", covers=["DPSimpleImputer"])
def _imputer_mean():
    from skdp.preprocessing import DPSimpleImputer

    est = DPSimpleImputer(epsilon=1.0, strategy="mean", bounds=(0, 1), random_state=0)
    est.fit(_with_missing())
    X_test = _X_test()
    X_test[::3, 1] = np.nan
    return est, release_outputs(est, X_test)


@case("DPSimpleImputer-median", covers=["DPSimpleImputer"])
def _imputer_median():
    from skdp.preprocessing import DPSimpleImputer

    est = DPSimpleImputer(
        epsilon=1.0, strategy="median", bounds=(0, 1), add_indicator=True, random_state=0
    )
    est.fit(_with_missing())
    X_test = _X_test()
    X_test[::3, 1] = np.nan
    return est, release_outputs(est, X_test, inverse=True)


@case("PublicBoundsScaler", covers=["PublicBoundsScaler"])
def _public_scaler():
    from skdp.preprocessing import PublicBoundsScaler

    X, _ = _regression()
    est = PublicBoundsScaler(bounds=(0, 1), feature_range=(-1.0, 1.0))
    return est.fit(X), release_outputs(est, _X_test(), inverse=True)


@case("PublicOneHotEncoder", covers=["PublicOneHotEncoder"])
def _one_hot():
    from skdp.preprocessing import PublicOneHotEncoder

    X, _ = _binary()
    est = PublicOneHotEncoder(categories=[[0, 1]] * 4)
    return est.fit(X), release_outputs(est, X[:12], inverse=True)


@case("RowwiseFunctionTransformer", covers=["RowwiseFunctionTransformer"])
def _rowwise():
    from skdp.preprocessing import RowwiseFunctionTransformer

    X, _ = _regression()
    est = RowwiseFunctionTransformer(func=np.log1p, inverse_func=np.expm1)
    return est.fit(X), release_outputs(est, _X_test(), inverse=True)


# -- ILP, clustering
@case("DPILPClassifier", covers=["DPILPClassifier"])
def _ilp():
    from skdp.ilp import DPILPClassifier

    X, y = _binary()
    # the thesis's clause choice, pinned before the noise-aware default existed
    est = DPILPClassifier(epsilon=1.0, max_clause_length=2, clause_score="noisy", random_state=0)
    return est.fit(X, y), release_outputs(est, X[:16])


@case("DPILPClassifier-noise_aware", covers=["DPILPClassifier"])
def _ilp_noise_aware():
    from skdp.ilp import DPILPClassifier

    X, y = _binary()
    est = DPILPClassifier(epsilon=1.0, max_clause_length=2, random_state=0)
    return est.fit(X, y), release_outputs(est, X[:16])


@case("SubsampledExpMedian-box", covers=["SubsampledExpMedian"])
def _kmedian_box():
    from skdp.cluster import SubsampledExpMedian

    X, _ = _regression()
    est = SubsampledExpMedian(n_clusters=2, epsilon=1.0, bounds=(0, 1), random_state=0)
    return est.fit(X), release_outputs(est, _X_test())


@case("SubsampledExpMedian-candidates", covers=["SubsampledExpMedian"])
def _kmedian_candidates():
    from skdp.cluster import SubsampledExpMedian

    X, _ = _regression()
    grid = np.array([[a, b, c] for a in (0, 0.5, 1) for b in (0, 0.5, 1) for c in (0, 1)])
    est = SubsampledExpMedian(n_clusters=2, epsilon=1.0, candidates=grid, random_state=0)
    return est.fit(X), release_outputs(est, _X_test())


# -- synthesis, density, sampling
@case("DPHistogramSynthesizer", covers=["DPHistogramSynthesizer"])
def _histogram():
    from skdp.synthesis import DPHistogramSynthesizer

    X, _ = _regression()
    est = DPHistogramSynthesizer(epsilon=1.0, bounds=(0, 1), random_state=0)
    return est.fit(X), release_outputs(est, _X_test(), sample=True)


@case("DPHistogramSynthesizer-private-bounds", covers=["DPHistogramSynthesizer"])
def _histogram_private():
    from skdp.synthesis import DPHistogramSynthesizer

    X, _ = _regression()
    est = DPHistogramSynthesizer(epsilon=1.0, bounds="private", random_state=1)
    with _quiet():
        est.fit(X)
    return est, release_outputs(est, _X_test(), sample=True)


@case("DPHistogramSynthesizer-missing-category", covers=["DPHistogramSynthesizer"])
def _histogram_missing():
    from skdp.synthesis import DPHistogramSynthesizer

    df = _frame()
    est = DPHistogramSynthesizer(epsilon=2.0, missing="category", random_state=0, **MISSING_META)
    return est.fit(df), release_outputs(est, df.iloc[:12], sample=True)


@case("DPMarginalSynthesizer", covers=["DPMarginalSynthesizer"])
def _marginal():
    from skdp.synthesis import DPMarginalSynthesizer

    X, _ = _regression()
    est = DPMarginalSynthesizer(epsilon=1.0, bounds=(0, 1), random_state=0)
    return est.fit(X), release_outputs(est, _X_test(), sample=True)


@case("DPMarginalSynthesizer-mst-pure", covers=["DPMarginalSynthesizer"])
def _marginal_mst():
    from skdp.synthesis import DPMarginalSynthesizer

    X, _ = _regression()
    est = DPMarginalSynthesizer(
        epsilon=1.0, delta=0.0, bounds=(0, 1), n_bins=6, selection="mst", random_state=0
    )
    return est.fit(X), release_outputs(est, _X_test(), sample=True)


@case("DPMarginalSynthesizer-private-bounds", covers=["DPMarginalSynthesizer"])
def _marginal_private():
    from skdp.synthesis import DPMarginalSynthesizer

    X, _ = _regression()
    est = DPMarginalSynthesizer(epsilon=1.0, bounds="private", random_state=1)
    with _quiet():
        est.fit(X)
    return est, release_outputs(est, _X_test(), sample=True)


@case("DPMarginalSynthesizer-missing-category", covers=["DPMarginalSynthesizer"])
def _marginal_missing():
    from skdp.synthesis import DPMarginalSynthesizer

    df = _frame()
    est = DPMarginalSynthesizer(epsilon=2.0, missing="category", random_state=0, **MISSING_META)
    return est.fit(df), release_outputs(est, df.iloc[:12], sample=True)


def _dask_frame(npartitions=3):
    dd = pytest.importorskip("dask.dataframe")
    return dd.from_pandas(_frame(missing=False), npartitions=npartitions)


@case("DPMarginalSynthesizer-dask", covers=["DPMarginalSynthesizer"])
def _marginal_dask():
    dask = pytest.importorskip("dask")
    from skdp.synthesis import DPMarginalSynthesizer

    ddf = _dask_frame()
    est = DPMarginalSynthesizer(epsilon=2.0, random_state=0, **MISSING_META)
    with dask.config.set(scheduler="synchronous"):
        est.fit(ddf)
    return est, release_outputs(est, _frame(missing=False).iloc[:12], sample=True)


_FLOW = dict(n_iter=20, batch_size=32, n_layers=1, hidden_size=8, learning_rate=1e-2, **TORCH)


@case("DPFlowDensity", torch=True, covers=["DPFlowDensity"])
def _flow_density():
    from skdp.density import DPFlowDensity

    X, _ = _regression()
    est = DPFlowDensity(epsilon=1.0, bounds=(0, 1), random_state=0, **_FLOW)
    return est.fit(X), release_outputs(est, _X_test(), sample=True)


@case("DPFlowDensity-private-bounds", torch=True, covers=["DPFlowDensity"])
def _flow_density_private():
    from skdp.density import DPFlowDensity

    X, _ = _regression()
    est = DPFlowDensity(epsilon=1.0, bounds="private", random_state=1, **_FLOW)
    with _quiet():
        est.fit(X)
    return est, release_outputs(est, _X_test(), sample=True)


_GAN = dict(n_iter=10, batch_size=32, hidden_size=8, latent_dim=4, **TORCH)


@case("DPGANSynthesizer", torch=True, covers=["DPGANSynthesizer"])
def _gan():
    from skdp.synthesis import DPGANSynthesizer

    X, _ = _regression()
    est = DPGANSynthesizer(epsilon=1.0, bounds=(0, 1), random_state=0, **_GAN)
    return est.fit(X), release_outputs(est, sample=True)


@case("DPGANSynthesizer-private-bounds", torch=True, covers=["DPGANSynthesizer"])
def _gan_private():
    from skdp.synthesis import DPGANSynthesizer

    X, _ = _regression()
    est = DPGANSynthesizer(epsilon=1.0, bounds="private", random_state=1, **_GAN)
    with _quiet():
        est.fit(X)
    return est, release_outputs(est, sample=True)


@case("DPFlowVI", torch=True, covers=["DPFlowVI"])
def _flow_vi():
    from skdp.sampling import DPFlowVI

    X = 0.3 * _rng(7).standard_normal((100, 2))
    est = DPFlowVI(epsilon=1.0, n_iter=20, batch_size=20, n_mc=8, random_state=0, **TORCH)
    est.fit(X)
    theta = _rng(8).standard_normal((6, 2))
    return est, release_outputs(est, sample=True, log_prob=theta)


# -- survival
def _survival(n=300):
    from skdp.survival import make_survival_target

    rng = _rng(11)
    X = rng.uniform(0.0, 1.0, size=(n, 2))
    t_event = rng.exponential(1.0 / (0.15 * np.exp(X @ [1.0, -0.5])))
    t_cens = rng.uniform(0.0, 15.0, n)
    return X, make_survival_target(t_event <= t_cens, np.minimum(t_event, t_cens))


_TIMES = np.array([0.0, 0.5, 2.5, 5.0, 7.25, 10.0])


@case("DPKaplanMeier", covers=["DPKaplanMeier"])
def _kaplan_meier():
    from skdp.survival import DPKaplanMeier

    _, y = _survival()
    est = DPKaplanMeier(epsilon=1.0, max_time=10.0, n_bootstrap=20, random_state=0).fit(y)
    return est, {"predict": est.predict(_TIMES), "predict_interval": est.predict_interval(_TIMES)}


@case("DPKaplanMeier-groups", covers=["DPKaplanMeier"])
def _kaplan_meier_groups():
    from skdp.survival import DPKaplanMeier

    _, y = _survival()
    groups = np.arange(y.shape[0]) // 3  # recurrent episodes: three rows per patient
    est = DPKaplanMeier(
        epsilon=1.0, max_time=10.0, n_intervals=8, n_bootstrap=20, max_rows_per_group=2,
        random_state=1,
    ).fit(y, groups=groups)  # fmt: skip
    return est, {"predict": est.predict(_TIMES, interpolate=True)}


@case("DPAalenJohansen", covers=["DPAalenJohansen"])
def _aalen_johansen():
    from skdp.survival import DPAalenJohansen, make_competing_risks_target

    rng = _rng(12)
    t1, t2, c = rng.exponential(10.0, 300), rng.exponential(20.0, 300), rng.uniform(0, 15, 300)
    event = np.where(np.minimum(t1, t2) > c, 0, np.where(t1 < t2, 1, 2))
    y = make_competing_risks_target(event, np.minimum(np.minimum(t1, t2), c))
    est = DPAalenJohansen(epsilon=1.0, max_time=10.0, n_bootstrap=20, random_state=0).fit(y)
    return est, {"predict": est.predict(_TIMES), "predict_interval": est.predict_interval(_TIMES)}


@case("DPCoxPH", covers=["DPCoxPH"])
def _cox():
    from skdp.survival import DPCoxPH

    X, y = _survival()
    est = DPCoxPH(epsilon=1.0, bounds_X=(0, 1), max_time=10.0, n_intervals=5, random_state=0)
    est.fit(X, y)
    out = release_outputs(est, _X_test(d=2))
    out["predict_survival_function"] = est.predict_survival_function(_X_test(d=2), _TIMES)
    return est, out


@case("DPCoxPH-groups", covers=["DPCoxPH"])
def _cox_groups():
    from skdp.survival import DPCoxPH

    X, y = _survival()
    est = DPCoxPH(
        epsilon=1.0, bounds_X=(0, 1), max_time=10.0, n_intervals=5, max_rows_per_group=2,
        random_state=1,
    )  # fmt: skip
    est.fit(X, y, groups=np.arange(X.shape[0]) // 3)
    return est, release_outputs(est, _X_test(d=2))


# -- pipeline, model selection
@case("make_dp_pipeline", covers=["DPStandardScaler", "DPLinearRegression"])
def _pipeline():
    from skdp.linear_model import DPLinearRegression
    from skdp.pipeline import make_dp_pipeline
    from skdp.preprocessing import DPStandardScaler

    X, y = _regression()
    pipe = make_dp_pipeline(
        DPStandardScaler(epsilon=0.5, bounds=(0, 1), random_state=0),
        DPLinearRegression(epsilon=1.0, bounds_X=(-3, 3), bounds_y=(-1, 1), random_state=0),
    ).fit(X, y)
    subject = {"pipeline": pipe, **dict(pipe.steps)}
    return subject, release_outputs(pipe, _X_test())


@case("DPGridSearchCV-total", covers=["DPLinearRegression"])
def _grid_search():
    from skdp.linear_model import DPLinearRegression
    from skdp.metrics import make_dp_scorer
    from skdp.model_selection import DPGridSearchCV

    X, y = _regression()
    search = DPGridSearchCV(
        DPLinearRegression(delta=0.0, bounds_X=(0, 1), bounds_y=(-1, 1), random_state=0),
        {"fit_intercept": [True, False]},
        scoring=make_dp_scorer("r2", epsilon=1.0, bounds_y=(-1, 1), random_state=0),
        epsilon=8.0,  # the total form: every fit, score and the refit under one total
        cv=3,
        random_state=0,
    )
    with _quiet():
        search.fit(X, y)
    return search, release_outputs(search.best_estimator_, _X_test())


# -- DP metrics and scorers
def _scores():
    rng = _rng(9)
    y = (rng.random(300) < 0.4).astype(int)
    score = y + rng.standard_normal(300)
    return y, score


@case("dp_roc_auc_score")
def _roc_auc():
    from skdp.metrics import binormal_roc_curve, dp_roc_auc_score

    y, s = _scores()
    auc = dp_roc_auc_score(y, s, epsilon=1.0, random_state=0)
    auc_d = dp_roc_auc_score(y, s, epsilon=1.0, delta=1e-6, random_state=1)
    return None, {"auc": auc, "auc_delta": auc_d, "binormal": binormal_roc_curve(auc)}


@case("dp_average_precision_score")
def _average_precision():
    from skdp.metrics import dp_average_precision_score

    y, s = _scores()
    return None, {"ap": dp_average_precision_score(y, s, epsilon=1.0, random_state=0)}


@case("dp_accuracy_score")
def _accuracy():
    from skdp.metrics import dp_accuracy_score

    y, s = _scores()
    return None, {"acc": dp_accuracy_score(y, (s > 0.5).astype(int), epsilon=1.0, random_state=0)}


@case("dp_regression_metrics")
def _regression_metrics():
    from skdp.metrics import dp_mean_absolute_error, dp_mean_squared_error, dp_r2_score

    X, y = _regression()
    pred = np.clip(y + 0.1 * _rng(10).standard_normal(len(y)), -1, 1)
    kw = dict(bounds_y=(-1, 1), epsilon=1.0, random_state=0)
    return None, {
        "r2": dp_r2_score(y, pred, **kw),
        "mse": dp_mean_squared_error(y, pred, **kw),
        "mae": dp_mean_absolute_error(y, pred, **kw),
    }


@case("make_dp_scorer", covers=["DPLogisticRegression"])
def _scorer():
    from skdp.linear_model import DPLogisticRegression
    from skdp.metrics import make_dp_scorer

    X, y = _classification()
    est = DPLogisticRegression(
        epsilon=1.0, classes=[0, 1], bounds_X=(0, 1), mechanism="objective", random_state=0
    ).fit(X, y)
    out = {
        name: make_dp_scorer(name, epsilon=1.0, random_state=0)(est, X, y)
        for name in ("roc_auc", "average_precision", "accuracy")
    }
    return None, out


# ---------------------------------------------------------------- the tests


def run_case(name) -> str:
    spec = CASES[name]
    if spec["torch"]:
        pytest.importorskip("torch")
    subject, outputs = spec["fn"]()
    return release_digest(subject, outputs, spec["digits"])


def _load() -> dict:
    if not DIGEST_FILE.exists():
        return {}
    return json.loads(DIGEST_FILE.read_text())["digests"]


def _store(name, digest):
    """Merge one case's digest into the file, under a lock (xdist workers write at once)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no concurrent writers assumed
        fcntl = None
    DIGEST_FILE.touch()
    with open(DIGEST_FILE, "r+", encoding="utf-8") as fh:
        if fcntl is not None:
            fcntl.flock(fh, fcntl.LOCK_EX)
        text = fh.read()
        digests = json.loads(text)["digests"] if text.strip() else {}
        digests[name] = digest
        digests = {k: v for k, v in sorted(digests.items()) if k in CASES}
        data = {
            "about": "SHA-256 release digests of tests/test_release_digests.py (see its "
            "docstring); regenerate with SKDP_REGENERATE_DIGESTS=1 python -m pytest "
            "tests/test_release_digests.py",
            "serialization": SERIALIZATION,
            "digests": digests,
        }
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps(data, indent=2) + "\n")


_REGENERATE_HINT = (
    "the release changed; if the change is intended, regenerate with "
    "SKDP_REGENERATE_DIGESTS=1 python -m pytest tests/test_release_digests.py "
    "and say why in the commit message"
)


@pytest.mark.parametrize("name", sorted(CASES))
def test_release_digest(name):
    digest = run_case(name)
    if REGENERATE:
        _store(name, digest)
        return
    stored = _load().get(name)
    assert stored is not None, f"{name}: no stored digest in {DIGEST_FILE.name}; " + (
        _REGENERATE_HINT
    )
    assert digest == stored, f"{name}: {_REGENERATE_HINT} (stored {stored}, got {digest})"


def test_digest_file_lists_exactly_the_cases():
    if REGENERATE:
        pytest.skip("regenerating")
    stored = set(_load())
    assert stored == set(CASES), (
        f"stale {sorted(stored - set(CASES))}, missing {sorted(set(CASES) - stored)}: "
        "regenerate with SKDP_REGENERATE_DIGESTS=1 python -m pytest "
        "tests/test_release_digests.py"
    )


def test_every_estimator_has_a_release_case():
    from skdp.discovery import all_estimators

    covered = {c for spec in CASES.values() for c in spec["covers"]}
    missing = sorted(name for name, _ in all_estimators() if name not in covered)
    assert not missing, f"estimators without a release-digest case: {missing}"


def test_serialization_is_canonical():
    """Key order, -0.0, NaN/inf and the 10-digit rounding (the module docstring)."""
    a = {"b": [1.0, -0.0, np.nan], "a": (np.int64(2), "x")}
    b = {"a": (2, "x"), "b": [1.0 + 1e-13, 0.0, float("nan")]}
    assert release_digest(None, a) == release_digest(None, b)
    assert release_digest(None, {"x": 1.0}) != release_digest(None, {"x": 1.0 + 1e-8})
    assert release_digest(None, {"x": np.inf}) != release_digest(None, {"x": -np.inf})
    assert release_digest(None, {"x": [1]}) != release_digest(None, {"x": (1,)})
    assert canonical(np.array([[1.5, np.nan]])) == [
        "ndarray",
        "f",
        [1, 2],
        ["f:1.500000000e+00", "f:nan"],
    ]
