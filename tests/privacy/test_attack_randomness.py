"""Attacks on the randomness plumbing (issue: privacy hardening, items 1-3 and 5).

Every check runs over every discovered estimator (``all_estimators``), with the fast
settings of ``tests/test_common.py``, so a new estimator is covered without editing
this file. Each attack succeeded against the code before the fix:

* a pickled fitted model held a generator spawned from the noise stream's
  ``SeedSequence``: rebuilding the sibling noise stream gave back exact counts;
* ``clone`` copies an int ``random_state`` into every cross-validation fold, so the
  folds' noise was identical and the difference of two releases noise-free;
* a grid over ``epsilon`` under one seed reused one noise draw ``eta``, and
  ``(eps1 r1 - eps2 r2) / (eps1 - eps2)`` gave back the exact counts;
* the DP AUC and AP scorers drew the same ``eta`` under one ``random_state``;
* a ``"data"`` opt-in still reported ``epsilon_spent_ == epsilon``, ``"exact"``.
"""

from __future__ import annotations

import importlib.util
import io
import math
import pathlib
import pickle
import re
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.model_selection import KFold, cross_validate

from skdp.discovery import all_estimators
from skdp.exceptions import PrivacyLeakWarning
from skdp.metrics import dp_accuracy_score, dp_average_precision_score, dp_roc_auc_score
from skdp.synthesis import DPHistogramSynthesizer
from tests.survival._targets import is_survival, survival_data, survival_neighbour

ESTIMATORS = all_estimators()


def _test_params():
    path = pathlib.Path(__file__).resolve().parents[1] / "test_common.py"
    spec = importlib.util.spec_from_file_location("_skdp_test_common", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TEST_PARAMS


TEST_PARAMS = _test_params()


def _draws_noise(cls):
    """Whether the estimator has a seed at all (public-metadata transformers have none)."""
    return "random_state" in cls().get_params()


def _make(cls, **overrides):
    params = dict(TEST_PARAMS.get(cls.__name__, {}))
    params.update(overrides)
    if not _draws_noise(cls):
        params.pop("random_state", None)
    return cls(**params)


def _data(est, n=60, seed=0):
    if is_survival(est):  # a structured (event, time) target; no X for a curve
        return survival_data(est, n, seed)
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, 2))
    if is_classifier(est):
        y = (X[:, 0] + 0.3 * rng.standard_normal(n) > 0).astype(int)
        y[:2] = [0, 1]
    elif is_regressor(est):
        y = np.clip(X @ np.array([0.5, -0.3]) + 0.1 * rng.standard_normal(n), -1, 1)
    else:
        y = None
    return X, y


def _neighbour(X, y):
    """Replace the last row: the data set a second CV fold or a neighbour would hold."""
    if X is None or (y is not None and y.dtype.names):  # a survival target
        return (None if X is None else -X), survival_neighbour(y)
    X2 = X.copy()
    X2[-1] = -X[-1]  # also changes binarised atoms (DPILPClassifier binarises at 0)
    y2 = None if y is None else y.copy()
    return X2, y2


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if X is None:  # a survival curve
            return est.fit(y)
        return est.fit(X) if y is None else est.fit(X, y)


IDS = [name for name, _ in ESTIMATORS]


# ------------------------------------------------------------ item 1: no seed material
_FORBIDDEN_CLASSES = re.compile(r"^numpy\.random\..*|^torch\..*Generator.*|^torch\..*generator.*")


class _AuditUnpickler(pickle.Unpickler):
    """Records every class or constructor a pickle asks for."""

    def __init__(self, data):
        super().__init__(io.BytesIO(data))
        self.loaded = []

    def find_class(self, module, name):
        self.loaded.append(f"{module}.{name}")
        return super().find_class(module, name)


def _forbidden_types():
    types = [np.random.SeedSequence, np.random.Generator, np.random.BitGenerator]
    types.append(np.random.RandomState)
    try:
        import torch

        types.append(torch.Generator)
    except ImportError:  # pragma: no cover - torch is a test dependency
        pass
    return tuple(types)


def _reachable_random_objects(root, skip=()):
    """Paths of random generators / seed sequences reachable from ``root``."""
    bad, forbidden = [], _forbidden_types()
    stack, seen = [(root, "est")], set()
    while stack:
        obj, path = stack.pop()
        if id(obj) in seen or isinstance(obj, str | bytes | int | float | type(None)):
            continue
        seen.add(id(obj))
        if isinstance(obj, forbidden):
            bad.append(path)
            continue
        if isinstance(obj, np.ndarray):
            if obj.dtype == object:
                stack.extend((v, f"{path}[{i}]") for i, v in enumerate(obj.ravel()))
            continue
        if isinstance(obj, dict):
            for k, v in obj.items():
                if path == "est.__dict__" and k in skip:
                    continue
                stack.append((k, f"{path}.key"))
                stack.append((v, f"{path}[{k!r}]"))
            continue
        if isinstance(obj, list | tuple | set | frozenset):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(obj))
            continue
        if hasattr(obj, "__dict__") and not isinstance(obj, type):
            stack.append((vars(obj), f"{path}.__dict__"))
        for slot in getattr(type(obj), "__slots__", ()):
            if hasattr(obj, slot):
                stack.append((getattr(obj, slot), f"{path}.{slot}"))
    return bad


@pytest.mark.parametrize("random_state", [None, 0])
@pytest.mark.parametrize(("name", "cls"), ESTIMATORS, ids=IDS)
def test_pickled_fit_holds_no_generator_or_seed_material(name, cls, random_state):
    est = _make(cls, random_state=random_state)
    X, y = _data(est)
    _fit(est, X, y)
    blob = pickle.dumps(est)
    unpickler = _AuditUnpickler(blob)
    restored = unpickler.load()
    loaded = [c for c in unpickler.loaded if _FORBIDDEN_CLASSES.search(c)]
    assert loaded == [], f"{name}: its pickle rebuilds {loaded}"
    # the user's own random_state parameter is stored as given (scikit-learn's rule)
    assert _reachable_random_objects(restored, skip={"random_state"}) == []


def _histogram_frame(n=400, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(20, 80, n).astype(float),
            "dx": rng.choice(["a", "b", "c"], n),
        }
    )


_HIST = {
    "bounds": {"age": (20.0, 80.0)},
    "categories": {"dx": ["a", "b", "c"]},
    "n_bins": {"age": 6},
    "threshold": 0.0,
}


def _true_counts(model, df):
    """Exact cell counts over the model's (public) grid, indexed like ``histograms_``."""
    h = model.histograms_[0]
    age = np.clip(np.digitize(df["age"], model.bin_edges_["age"][1:-1]), 0, 5)
    dx = pd.Categorical(df["dx"], categories=["a", "b", "c"]).codes
    flat = np.ravel_multi_index((age, dx), h["shape"])
    return np.bincount(flat, minlength=math.prod(h["shape"]))


def _seed_recovery_attack(model):
    """Rebuild the noise stream from seed material found in a pickle (pre-fix layout)."""
    restored = pickle.loads(pickle.dumps(model))
    for obj in vars(restored).values():
        if isinstance(obj, np.random.Generator):
            seq = obj.bit_generator.seed_seq
            root = np.random.SeedSequence(seq.entropy)
            noise_rng = np.random.default_rng(root.spawn(3)[1])  # bounds, noise, sample
            h = restored.histograms_[0]
            n_cells = math.prod(h["shape"])
            eta = noise_rng.laplace(0.0, 1.0 / h["epsilon"], n_cells)
            return h["cells"], h["counts"] - eta[h["cells"]]
    return None


def test_count_recovery_from_pickled_histogram_fails():
    df = _histogram_frame()
    model = DPHistogramSynthesizer(epsilon=0.1, mechanism="laplace", random_state=None, **_HIST)
    model.fit(df)
    recovered = _seed_recovery_attack(model)
    if recovered is not None:  # the attack found seed material: it must not work
        cells, counts = recovered
        exact = _true_counts(model, df)[cells]
        assert not np.allclose(counts, exact, atol=1e-6)


# --------------------------------------------- item 2: clones, folds, grids, one seed
def test_cross_validation_folds_do_not_share_noise():
    df = _histogram_frame(n=600)
    est = DPHistogramSynthesizer(epsilon=0.05, mechanism="laplace", random_state=0, **_HIST)
    res = cross_validate(est, df, cv=KFold(2), return_estimator=True, scoring=lambda *a: 0.0)
    m1, m2 = res["estimator"]
    folds = [df.iloc[test_idx] for _, test_idx in KFold(2).split(df)]
    train = [folds[1], folds[0]]  # fold k trains on the other half
    h1, h2 = m1.histograms_[0], m2.histograms_[0]
    common, i1, i2 = np.intersect1d(h1["cells"], h2["cells"], return_indices=True)
    assert len(common) >= 5  # cells kept by both folds (noise of scale 20 drops some)
    release_diff = h1["counts"][i1] - h2["counts"][i2]
    true_diff = _true_counts(m1, train[0])[common] - _true_counts(m2, train[1])[common]
    exact = np.isclose(release_diff, true_diff, atol=1e-9)
    assert exact.mean() < 0.5, "the two folds' noise cancels"


def test_epsilon_grid_does_not_share_noise():
    df = _histogram_frame(n=600)
    kw = dict(mechanism="laplace", random_state=0, **_HIST)
    fits = {eps: DPHistogramSynthesizer(epsilon=eps, **kw).fit(df) for eps in (0.1, 0.2)}
    h1, h2 = fits[0.1].histograms_[0], fits[0.2].histograms_[0]
    common, i1, i2 = np.intersect1d(h1["cells"], h2["cells"], return_indices=True)
    assert len(common) >= 10
    recovered = (0.1 * h1["counts"][i1] - 0.2 * h2["counts"][i2]) / (0.1 - 0.2)
    exact = _true_counts(fits[0.1], df)[common]
    assert np.isclose(recovered, exact, atol=1e-6).mean() < 0.5


class _GeneratorLog:
    """Records the state of every numpy Generator created while it is active."""

    def __init__(self, monkeypatch):
        self.states = []
        original = np.random.default_rng

        def recording(*args, **kwargs):
            gen = original(*args, **kwargs)
            caller = sys._getframe(1).f_globals.get("__name__", "")
            if caller.startswith("skdp."):  # not scipy's own import-time generators
                self.states.append(repr(gen.bit_generator.state))
            return gen

        monkeypatch.setattr(np.random, "default_rng", recording)

    def take(self):
        out, self.states = self.states, []
        return out


@pytest.mark.parametrize(("name", "cls"), ESTIMATORS, ids=IDS)
def test_one_int_seed_gives_independent_noise_per_data_and_parameters(name, cls, monkeypatch):
    if not _draws_noise(cls):
        pytest.skip(f"{name} draws no randomness: a fixed map of declared metadata")
    log = _GeneratorLog(monkeypatch)
    est = _make(cls, random_state=0)
    X, y = _data(est)
    _fit(clone(est), X, y)
    base = log.take()
    assert base, f"{name}: no numpy generator was created during fit"
    # reproducible: same seed, same data, same parameters
    _fit(clone(est), X, y)
    assert log.take() == base
    # a neighbouring data set (another CV fold) under the same int seed
    X2, y2 = _neighbour(X, y)
    _fit(clone(est), X2, y2)
    assert set(log.take()).isdisjoint(base), f"{name}: noise reused on other data"
    # another parameter set (a grid over epsilon) on the same data
    eps = est.get_params()["epsilon"]
    other = clone(est).set_params(epsilon=2.0 * eps if math.isfinite(eps) else 1.0)
    _fit(other, X, y)
    assert set(log.take()).isdisjoint(base), f"{name}: noise reused across epsilon"


# ------------------------------------------------ item 3: scorers never share noise
def _scorer_inputs():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 300)
    s = y + rng.normal(0.0, 1.0, 300)
    return y, s


def test_auc_and_ap_do_not_share_noise(monkeypatch):
    y, s = _scorer_inputs()
    log = _GeneratorLog(monkeypatch)
    dp_roc_auc_score(y, s, epsilon=1.0, random_state=0)
    auc_states = log.take()
    dp_average_precision_score(y, s, epsilon=1.0, random_state=0)
    ap_states = log.take()
    dp_accuracy_score(y, (s > 0.5).astype(int), epsilon=1.0, random_state=0)
    acc_states = log.take()
    assert auc_states and ap_states and acc_states
    assert set(auc_states).isdisjoint(ap_states)
    assert set(auc_states).isdisjoint(acc_states) and set(ap_states).isdisjoint(acc_states)
    # the same metric at another budget, or on a neighbouring input, draws other noise
    dp_roc_auc_score(y, s, epsilon=2.0, random_state=0)
    assert set(log.take()).isdisjoint(auc_states)
    y2 = y.copy()
    y2[0] = 1 - y2[0]
    dp_roc_auc_score(y2, s, epsilon=1.0, random_state=0)
    assert set(log.take()).isdisjoint(auc_states)
    # reproducible call by call
    dp_roc_auc_score(y, s, epsilon=1.0, random_state=0)
    assert log.take() == auc_states


# ------------------------------------------------------- item 5: "data" opt-ins
def _data_opt_ins(cls):
    from skdp.utils._sklearn_compat import StrOptions

    out = []
    for param, constraints in getattr(cls, "_parameter_constraints", {}).items():
        for c in constraints:
            if isinstance(c, StrOptions) and "data" in c.options:
                out.append(param)
    return out


OPT_INS = [(name, cls, p) for name, cls in ESTIMATORS for p in _data_opt_ins(cls)]


@pytest.mark.parametrize(("name", "cls", "param"), OPT_INS, ids=[f"{n}-{p}" for n, _, p in OPT_INS])
def test_data_opt_in_reports_no_guarantee(name, cls, param):
    est = _make(cls, **{param: "data"})
    if "epsilon" in est.get_params() and not math.isfinite(est.get_params()["epsilon"]):
        est.set_params(epsilon=1.0)
    X, y = _data(est)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X) if y is None else est.fit(X, y)
    if param.startswith("bounds"):  # used on every numeric table (categories need one)
        assert any(issubclass(w.category, PrivacyLeakWarning) for w in caught)
    assert est.epsilon_spent_ == math.inf
    assert est.privacy_guarantee_ == "none"
    assert param in est.nonprivate_options_


def test_opt_ins_are_found():
    assert len(OPT_INS) >= 5  # bounds / categories / classes opt-ins of the estimators
