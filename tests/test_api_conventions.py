"""One public vocabulary over every discovered estimator (issue 17 §4; ``doc/glossary.rst``).

Checked for each estimator found by :func:`skdp.discovery.all_estimators`, with the
fast settings of ``tests/test_common.py``:

* parameter names: no forbidden synonym of a shared name (``epochs``/``max_steps`` for
  ``n_iter``, ``lr_*`` for ``learning_rate``, ``seed`` for ``random_state``, ...); the
  shared parameters have the shared default and accept the shared values (``random_state``
  a ``Generator``/``SeedSequence``, ``device="cuda:N"``, every registered accountant);
* ``sample`` (where it exists) has exactly the signature
  ``sample(n_samples=1, *, random_state=None)``;
* the fitted privacy facts are present and typed: ``epsilon_spent_``/``delta_spent_``
  floats, ``privacy_guarantee_`` in :data:`skdp.base.PRIVACY_GUARANTEES`,
  ``privacy_breakdown_`` a ``dict[str, float]`` whose values add up to
  ``epsilon_spent_`` (the parts compose sequentially; an infinite spend has an infinite
  part);
* iterative estimators (those with an ``n_iter`` parameter) report ``n_iter_`` (an int,
  at most ``n_iter``) and ``loss_curve_`` (a 1-D float array, empty for a private fit,
  whose training loss is an un-noised statistic of the private rows, and non-empty for a
  non-private fit that ran steps; ``PRIVATE_LOSS_CURVES`` lists, with the reason, the
  estimators whose loss is not a statistic of the private rows and is kept).

Estimators still being converted are listed in ``PENDING`` with the conventions they do
not meet yet: those pairs are strict expected failures (an XPASS fails the run, so the
entry must be removed once the estimator is converted).
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import io
import logging
import math
import pathlib
import re
import warnings
from numbers import Integral

import numpy as np
import pytest
from sklearn.utils import get_tags
from sklearn.utils._param_validation import InvalidParameterError

from skdp.base import PRIVACY_GUARANTEES
from skdp.discovery import all_estimators
from skdp.utils._deprecation import DEPRECATED

ESTIMATORS = dict(all_estimators())


def _test_params():
    path = pathlib.Path(__file__).resolve().parent / "test_common.py"
    spec = importlib.util.spec_from_file_location("_skdp_test_common_conventions", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TEST_PARAMS, module.DATA_OPT_INS


TEST_PARAMS, DATA_OPT_INS = _test_params()

#: Shared parameter names (documented in doc/glossary.rst) -> their shared default, or
#: ``NO_DEFAULT`` where the default is estimator-specific.
NO_DEFAULT = object()
SHARED_PARAMETERS = {
    "epsilon": NO_DEFAULT,
    "delta": NO_DEFAULT,
    "bounds": NO_DEFAULT,
    "categories": NO_DEFAULT,
    "column_types": None,
    "schema": None,
    "missing": "error",
    "n_iter": NO_DEFAULT,
    "batch_size": NO_DEFAULT,
    "learning_rate": NO_DEFAULT,
    "max_grad_norm": NO_DEFAULT,
    "noise_multiplier": None,
    "accountant": "pld",
    "device": "auto",
    "dtype": NO_DEFAULT,
    "n_jobs": None,
    "verbose": 0,
    "random_state": None,
    "secure_mode": False,
    "max_rows_per_group": None,
}

#: Forbidden synonyms (regular expressions over parameter names) -> the shared name.
FORBIDDEN_SYNONYMS = {
    r"epochs|n_epochs|.+_epochs": "n_iter",
    r"max_steps|n_steps|steps|num_steps|n_iterations": "n_iter",
    r"lr|lr_.+|.+_lr": "learning_rate",
    r"betas": "learning_rate (and fixed optimiser settings)",
    r"seed|rng|random_seed": "random_state",
    r"eps|target_epsilon": "epsilon",
    r"target_delta": "delta",
    r"l2_norm_clip|clip_norm|max_norm": "max_grad_norm",
    r"sigma|noise_scale": "noise_multiplier",
    r"n_threads|num_threads|num_workers": "n_jobs",
    r"verbosity|quiet": "verbose",
    r"accounting|accountant_name": "accountant",
    r"noise": "mechanism",
    r"n_flows|n_flow_layers": "n_layers",
    # a share of the budget: one <part>_fraction per part of privacy_breakdown_
    r"budget_split|.+_split|.+_shares?|.+_frac|.+_ratio|.+_proportion": "<part>_fraction",
}

CONVENTIONS = (
    "names",
    "shared_values",
    "sample_signature",
    "privacy_facts",
    "iterative",
    "progress",
    "fitted_vocabulary",
)

#: {estimator name: {convention: reason}} -- conversions in progress (strict xfail).
PENDING: dict[str, dict[str, str]] = {}

#: {estimator name: reason} -- estimators whose private fits keep a loss curve, because
#: that loss is not a statistic of the private rows. Every other private fit must keep an
#: empty ``loss_curve_``.
PRIVATE_LOSS_CURVES: dict[str, str] = {
    "DPGANSynthesizer": "the critic's loss on fake rows: post-processing of the DP critic "
    "and of generated rows; the real-row term is never recorded by a private fit",
}


def _pairs(conventions=CONVENTIONS):
    out = []
    for name in ESTIMATORS:
        for conv in conventions:
            reason = PENDING.get(name, {}).get(conv)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(name, conv, id=f"{name}-{conv}", marks=marks))
    return out


def _make(name, **overrides):
    params = {**TEST_PARAMS.get(name, {}), **overrides}
    return ESTIMATORS[name](**params)


def _survival_target(est, n=60):
    """A survival target for the skdp.survival estimators: ``(event, time)``, or
    ``(event type, time)`` for the competing-risks curve (``event_types``)."""
    from skdp.survival import make_competing_risks_target, make_survival_target

    rng = np.random.default_rng(1)
    time = rng.uniform(0.0, 12.0, n)
    if "event_types" in est.get_params():
        return make_competing_risks_target(np.arange(n) % 3, time)
    return make_survival_target(np.arange(n) % 3 != 0, time)


def _is_survival(est):
    return type(est).__module__.startswith("skdp.survival.")


def _data(est):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    if _is_survival(est):  # a curve fits the target alone (fit(y)), a model fit(X, y)
        has_X = "X" in inspect.signature(type(est).fit).parameters
        return (X if has_X else None), _survival_target(est)
    kind = get_tags(est).estimator_type
    if kind == "classifier":
        return X, (X[:, 0] > 0).astype(int)
    if kind == "regressor":
        return X, X[:, 0] + 0.1 * rng.normal(size=60)
    return X, None


def _fit(est):
    X, y = _data(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DeltaTooLarge / PrivacyLeak / approximate-guarantee
        if X is None:
            return est.fit(y)
        return est.fit(X) if y is None else est.fit(X, y)


def _init_params(cls):
    return [p for p in inspect.signature(cls.__init__).parameters.values() if p.name != "self"]


# --------------------------------------------------------------------------- checks
def _check_names(name):
    cls = ESTIMATORS[name]
    bad = []
    for p in _init_params(cls):
        if isinstance(p.default, str) and p.default == DEPRECATED:
            continue  # a deprecated spelling kept for one release
        for pattern, shared in FORBIDDEN_SYNONYMS.items():
            if re.fullmatch(pattern, p.name):
                bad.append(f"{p.name} (use {shared})")
    assert not bad, f"{name} uses forbidden parameter names: {bad}"
    defaults = {p.name: p.default for p in _init_params(cls)}
    wrong = {
        k: defaults[k]
        for k, want in SHARED_PARAMETERS.items()
        if k in defaults and want is not NO_DEFAULT and defaults[k] != want
    }
    assert not wrong, f"{name}: shared parameters with another default: {wrong}"


def _check_shared_values(name):
    est = _make(name)
    params = est.get_params(deep=False)

    def ok(**kw):
        est.set_params(**kw)._validate_params()

    def refused(**kw):
        with pytest.raises(InvalidParameterError):
            est.set_params(**kw)._validate_params()
        est.set_params(**{k: params[k] for k in kw})

    if "random_state" in params:
        for value in (None, 0, np.random.default_rng(0), np.random.SeedSequence(1)):
            ok(random_state=value)
        refused(random_state="0")
    if "device" in params:
        for value in ("auto", "cpu", "cuda", "cuda:1"):
            ok(device=value)
        for value in ("gpu", "cuda:", "cuda:x", "mps"):
            refused(device=value)
    if "accountant" in params:
        from skdp.accounting import available_accountants

        for value in available_accountants():
            ok(accountant=value)
        refused(accountant="moments")
    if "verbose" in params:
        for value in (0, 1, 2, True):
            ok(verbose=value)
        refused(verbose=-1)
    if "n_jobs" in params:
        for value in (None, 1, -1):
            ok(n_jobs=value)
    if "secure_mode" in params:
        for value in (False, True):
            ok(secure_mode=value)
        refused(secure_mode="yes")
    est.set_params(**params)


def _check_sample_signature(name):
    cls = ESTIMATORS[name]
    if not hasattr(cls, "sample"):
        pytest.skip(f"{name} has no sample method")
    sig = inspect.signature(cls.sample)
    got = [(p.name, p.kind, p.default) for p in sig.parameters.values()]
    want = [
        ("self", inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.empty),
        ("n_samples", inspect.Parameter.POSITIONAL_OR_KEYWORD, 1),
        ("random_state", inspect.Parameter.KEYWORD_ONLY, None),
    ]
    assert got == want, f"{name}.sample{sig}: want sample(n_samples=1, *, random_state=None)"


def _check_breakdown(est, name):
    assert isinstance(est.epsilon_spent_, float), name
    assert isinstance(est.delta_spent_, float) and 0.0 <= est.delta_spent_ < 1.0, name
    assert est.privacy_guarantee_ in PRIVACY_GUARANTEES, name
    assert isinstance(est.nonprivate_options_, list), name
    bd = est.privacy_breakdown_
    assert isinstance(bd, dict), f"{name}.privacy_breakdown_ is a {type(bd).__name__}"
    assert all(isinstance(k, str) for k in bd), name
    assert all(type(v) is float for v in bd.values()), f"{name}: {bd}"
    assert all(v >= 0.0 for v in bd.values()), f"{name}: {bd}"
    total = math.fsum(bd.values())
    if math.isinf(est.epsilon_spent_):
        assert math.isinf(total), f"{name}: an infinite spend needs an infinite part: {bd}"
        assert est.privacy_guarantee_ == "none"
    else:
        assert total == pytest.approx(est.epsilon_spent_, rel=1e-9, abs=1e-12), f"{name}: {bd}"


def _check_privacy_facts(name):
    _check_breakdown(_fit(_make(name)), name)
    params = _make(name).get_params()
    if "epsilon" in params:  # a realistic budget (DP-SGD calibration, bound estimates) ...
        variant = {"epsilon": 1.0} | ({"delta": 1e-3} if "delta" in params else {})
        _check_breakdown(_fit(_make(name, **variant)), name)
        # ... and the non-private path of the same estimator
        _check_breakdown(_fit(_make(name, epsilon=math.inf)), name)


def _check_iterative(name):
    if "n_iter" not in _make(name).get_params():
        pytest.skip(f"{name} is not iterative (no n_iter parameter)")
    for overrides in ({}, {"epsilon": math.inf}):
        est = _fit(_make(name, **overrides))
        n_iter = est.get_params()["n_iter"]
        assert isinstance(est.n_iter_, Integral) and not isinstance(est.n_iter_, bool), name
        assert 0 <= est.n_iter_ <= (n_iter if n_iter is not None else est.n_iter_), name
        curve = est.loss_curve_
        assert isinstance(curve, np.ndarray) and curve.ndim == 1, name
        assert curve.dtype.kind == "f" and np.isfinite(curve).all(), name
        assert curve.shape[0] <= max(est.n_iter_, 0), name
        if math.isinf(est.epsilon_spent_) or name in PRIVATE_LOSS_CURVES:
            assert (curve.shape[0] > 0) == (est.n_iter_ > 0), f"{name}: no loss curve"
        else:
            assert curve.shape[0] == 0, f"{name}: a private fit keeps its training loss"


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


def _check_progress(name):
    """``verbose`` reports through the ``"skdp"`` logger (nothing on stdout), and a private
    fit's progress records carry no training loss (an un-noised statistic of the rows)."""
    if "verbose" not in _make(name).get_params():
        pytest.skip(f"{name} has no verbose parameter")
    params = _make(name).get_params()
    variant = {"epsilon": 1.0} | ({"delta": 1e-3} if "delta" in params else {})
    logger = logging.getLogger("skdp")
    handler, old_level = _Records(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            est = _fit(_make(name, verbose=1, **variant))
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    assert out.getvalue() == "", f"{name}: verbose printed to stdout"
    progress = [r.skdp_progress for r in handler.records if hasattr(r, "skdp_progress")]
    if math.isfinite(est.epsilon_spent_):
        assert all(p["loss"] is None for p in progress), f"{name}: private loss logged"
        assert not any("loss" in r.getMessage() for r in handler.records), name


#: fitted attributes about noise: these two names only (doc/glossary.rst)
NOISE_ATTRIBUTES = {"noise_scale_", "noise_multiplier_"}
BREAKDOWN_KEY = re.compile(r"[a-z][a-z0-9_]*")
#: spellings of a ``privacy_breakdown_`` part (without its number) -> the shared one
FORBIDDEN_PART_SYNONYMS = {
    r"select|selections|choice|choose": "selection",
    r"bound|bounds_estimate|private_bounds|range": "bounds",
    r"sgd|dp_sgd|dpsgd_steps|training|train": "dpsgd",
    r"rounds|iteration|iter|step": "round",
    r"hist|histograms": "histogram",
    r"expmech|exp_mech|exponential|em": "exponential_mechanism",
    r"non_private|not_private|private": "nonprivate",
    r"center": "centre",
}


def _breakdown_key_problems(keys):
    """What is wrong with the spelling of ``privacy_breakdown_`` keys
    (``doc/glossary.rst``): snake_case, the shared spelling of each part, a repeated
    part numbered ``part_1``, ..., ``part_m`` (from 1, no gap, no leading zero, never
    beside its bare name) and a single part bare (``round``, never ``round_1`` alone)."""
    problems = [f"{k!r} is not snake_case" for k in keys if not BREAKDOWN_KEY.fullmatch(k)]
    numbered: dict[str, list[str]] = {}
    for k in keys:
        m = re.fullmatch(r"(.+?)_(\d+)", k)
        stem = m.group(1) if m else k
        if m:
            numbered.setdefault(stem, []).append(m.group(2))
        for pattern, shared in FORBIDDEN_PART_SYNONYMS.items():
            if re.fullmatch(pattern, stem):
                problems.append(f"{k!r} (spell the part {shared!r})")
    for stem, numbers in numbered.items():
        if sorted(int(i) for i in numbers) != list(range(1, len(numbers) + 1)):
            problems.append(f"{stem}_*: numbered {sorted(numbers)}, not 1..{len(numbers)}")
        if any(i != str(int(i)) for i in numbers):
            problems.append(f"{stem}_*: a leading zero in {sorted(numbers)}")
        if stem in keys:
            problems.append(f"{stem!r} beside its numbered parts")
        if len(numbers) == 1:
            problems.append(f"{stem}_{numbers[0]} alone: a single part is spelled {stem!r}")
    return problems


def _check_fitted_vocabulary(name):
    """One spelling per fitted fact (``doc/glossary.rst``): the noise under
    ``noise_scale_`` (a dict keyed like ``privacy_breakdown_``) or
    ``noise_multiplier_`` (DP-SGD, a float); bounds under the name of the parameter
    they resolve plus ``_``; snake_case breakdown keys (``"selection"``, repeated parts
    numbered from 1, a single part bare); ``n_bins_`` a dict of ints; ``history_`` a
    dict of equal-length lists with ``"step"`` and ``"epsilon"``."""
    params = _make(name).get_params()
    variant = {"epsilon": 1.0} if "epsilon" in params else {}
    est = _fit(_make(name, **variant))
    fitted = {k: v for k, v in vars(est).items() if k.endswith("_") and not k.startswith("_")}
    bd = est.privacy_breakdown_
    noise = [k for k in fitted if "noise" in k]
    assert set(noise) <= NOISE_ATTRIBUTES, f"{name}: noise stored as {noise}"
    if "noise_scale_" in fitted:
        scales = fitted["noise_scale_"]
        assert isinstance(scales, dict), f"{name}.noise_scale_ is a {type(scales).__name__}"
        assert set(scales) <= set(bd), f"{name}: noise_scale_ {set(scales)} vs {set(bd)}"
        assert all(isinstance(v, float) for v in scales.values()), f"{name}: {scales}"
    if "noise_multiplier_" in fitted:
        assert isinstance(fitted["noise_multiplier_"], float), name
    for key in (k for k in fitted if k.startswith("bounds")):
        assert key[:-1] in params, f"{name}.{key}: no parameter {key[:-1]!r} it resolves"
        value = fitted[key]
        if isinstance(value, dict):
            assert all(len(v) == 2 for v in value.values()), f"{name}.{key}"
        else:
            assert isinstance(value, tuple) and len(value) == 2, f"{name}.{key}: {value!r}"
    bad = _breakdown_key_problems(list(bd))
    assert not bad, f"{name}: privacy_breakdown_ keys: {bad}"
    rho = fitted.get("rho_breakdown_")
    if rho is not None:  # the zCDP parts, keyed like privacy_breakdown_
        assert isinstance(rho, dict) and set(rho) <= set(bd), f"{name}: rho_breakdown_ {rho}"
    if "n_bins_" in fitted:
        n_bins = fitted["n_bins_"]
        assert isinstance(n_bins, dict), f"{name}.n_bins_ is a {type(n_bins).__name__}"
        assert all(isinstance(v, Integral) for v in n_bins.values()), name
    if "history_" in fitted:
        hist = fitted["history_"]
        assert isinstance(hist, dict) and {"step", "epsilon"} <= set(hist), name
        assert len({len(v) for v in hist.values()}) <= 1, f"{name}: ragged history_"


_CHECKS = {
    "progress": _check_progress,
    "names": _check_names,
    "shared_values": _check_shared_values,
    "sample_signature": _check_sample_signature,
    "privacy_facts": _check_privacy_facts,
    "iterative": _check_iterative,
    "fitted_vocabulary": _check_fitted_vocabulary,
}


@pytest.mark.parametrize(("name", "convention"), _pairs())
def test_api_convention(name, convention):
    _CHECKS[convention](name)


def test_pending_entries_name_discovered_estimators():
    """A stale PENDING entry (a renamed estimator or convention) is an error."""
    assert set(PENDING) <= set(ESTIMATORS)
    assert all(set(v) <= set(CONVENTIONS) for v in PENDING.values())


def test_forbidden_synonyms_are_caught():
    """The name check fails on the synonyms it forbids (the check can fail)."""

    class Fake:
        def __init__(self, epochs=1, lr_generator=0.1, seed=None, budget_split=(1, 1), verbose=1):
            pass

    ESTIMATORS["_Fake"] = Fake
    try:
        with pytest.raises(AssertionError, match="epochs.*lr_generator.*seed.*budget_split"):
            _check_names("_Fake")
    finally:
        del ESTIMATORS["_Fake"]


@pytest.mark.parametrize(
    ("keys", "problem"),
    [
        (["bounds", "select"], "'selection'"),
        (["dp_sgd"], "'dpsgd'"),
        (["rounds_1", "rounds_2"], "'round'"),
        (["round_0", "round_1"], "not 1..2"),
        (["round_1", "round_3"], "not 1..2"),
        (["histogram_01", "histogram_2"], "leading zero"),
        (["histogram", "histogram_1", "histogram_2"], "beside its numbered parts"),
        (["round_1"], "a single part is spelled 'round'"),
        (["bounds", "histogram_1"], "a single part is spelled 'histogram'"),
        (["oneWay"], "snake_case"),
    ],
)
def test_breakdown_key_check_catches_bad_spellings(keys, problem):
    """The key check can fail, on each spelling it forbids."""
    assert any(problem in p for p in _breakdown_key_problems(keys)), keys


def test_breakdown_key_check_accepts_the_shared_spellings():
    ok = ["bounds", "dpsgd", "selection", "prior", "one_way", "two_way", "nonprivate"]
    assert _breakdown_key_problems(ok + [f"round_{i}" for i in range(1, 13)]) == []
    assert _breakdown_key_problems(["histogram_1", "histogram_2"]) == []
    assert _breakdown_key_problems(["bounds", "histogram"]) == []
    assert _breakdown_key_problems(["round"]) == []


def test_registered_accountant_is_accepted(monkeypatch):
    """``accountant`` is validated against the registry when the estimator is validated."""
    from skdp.accounting import _accountant

    with_accountant = [
        n
        for n in ESTIMATORS
        if "accountant" in _make(n).get_params() and "shared_values" not in PENDING.get(n, {})
    ]
    if not with_accountant:
        pytest.skip("no estimator has an accountant parameter")
    monkeypatch.setitem(_accountant._REGISTRY, "my_prv", _accountant.RDPAccountant)
    for name in with_accountant:
        _make(name, accountant="my_prv")._validate_params()


# ------------------------------------------------------------------ progress logging
_SKDP = pathlib.Path(__file__).resolve().parent.parent / "skdp"


def _modules_calling_print():
    import ast

    found = set()
    for path in _SKDP.rglob("*.py"):
        rel = path.relative_to(_SKDP).as_posix()
        if rel.startswith("cli/"):  # the command line's own output (results, errors)
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "print"
            for node in ast.walk(tree)
        ):
            found.add(rel)
    return found


def test_progress_is_logged_not_printed():
    """Library code reports through the "skdp" logger, never print() (doctests aside)."""
    offenders = _modules_calling_print()
    assert not offenders, f"print() in library modules: {sorted(offenders)}"


# ---------------------------------------------------------------- public functions
def _public_function_calls():
    from skdp.metrics import (
        dp_accuracy_score,
        dp_average_precision_score,
        dp_roc_auc_score,
        make_dp_scorer,
    )
    from skdp.model_selection import dp_cross_validate
    from skdp.survival import dp_logrank_test, make_survival_target

    y = np.array([0, 1] * 20)
    s = np.linspace(0.0, 1.0, 40)
    X = np.linspace(-1.0, 1.0, 80).reshape(40, 2)
    surv = make_survival_target(np.arange(40) % 3 != 0, np.linspace(0.5, 9.5, 40))
    return {
        "dp_logrank_test": lambda rs: dp_logrank_test(
            surv, y, epsilon=1.0, max_time=10.0, n_simulations=19, random_state=rs
        ),
        "dp_roc_auc_score": lambda rs: dp_roc_auc_score(y, s, epsilon=1.0, random_state=rs),
        "dp_average_precision_score": lambda rs: dp_average_precision_score(
            y, s, epsilon=1.0, random_state=rs
        ),
        "dp_accuracy_score": lambda rs: dp_accuracy_score(y, y, epsilon=1.0, random_state=rs),
        "make_dp_scorer": lambda rs: make_dp_scorer("accuracy", epsilon=1.0, random_state=rs),
        "dp_cross_validate": lambda rs: dp_cross_validate(
            _make("DPLogisticRegression", classes=[0, 1]),
            X,
            y,
            scoring=make_dp_scorer("accuracy", epsilon=1.0, random_state=0),
            cv=2,
            random_state=rs,
        ),
    }


@pytest.mark.parametrize("function", sorted(_public_function_calls()))
def test_public_functions_validate_random_state_like_estimators(function):
    """Public functions accept the estimators' random_state values and refuse the rest
    with scikit-learn's InvalidParameterError (validate_params on the shared constraint)."""
    call = _public_function_calls()[function]
    for value in (None, 0, np.random.default_rng(0), np.random.SeedSequence(1)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call(value)
    for value in ("0", 1.5, -1):
        with pytest.raises(InvalidParameterError, match="random_state"):
            call(value)


@pytest.mark.parametrize(
    "function",
    [
        "lira_attack",
        "distinguishing_audit",
        "one_run_audit",
        "check_privacy",
        "auc_reidentification_audit",
    ],
)
def test_audits_refuse_a_bad_random_state_before_any_fit(function):
    import skdp.auditing

    f = getattr(skdp.auditing, function)
    fits = []

    class Spy:  # any fit would be recorded: validation comes first
        def fit(self, X, y=None):
            fits.append(1)
            return self

    X = np.zeros((10, 2))
    for value in ("0", 1.5):
        with pytest.raises(InvalidParameterError, match="random_state"):
            if function == "auc_reidentification_audit":
                f(np.array([0, 1] * 5), np.linspace(0, 1, 10), random_state=value)
            else:
                f(Spy(), X, random_state=value)
    assert not fits
