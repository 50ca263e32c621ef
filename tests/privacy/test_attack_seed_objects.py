"""Attacks through a seed *object* kept in a pickle (issue: hardening, privacy item 1).

``random_state`` is stored as given (scikit-learn's ``get_params``/``clone`` contract).
Before the fix, a ``Generator``, ``RandomState`` or ``SeedSequence`` passed to a release
stayed in the fitted estimator and in its pickle. PCG64 steps back with
``advance(-k)``, an MT19937 state is rewound by its position (or untwisted), and a
``SeedSequence`` is its own entropy: whoever holds the pickle restores the seed as it
was before ``fit``, replays ``fit`` on each candidate data set, and keeps the candidate
whose release comes out bit for bit. On that code :func:`test_replay_attack_fails`
recovered a rare diagnosis exactly with each of the three seed types, on
``DPMarginalSynthesizer`` and through ``DPGridSearchCV``'s refit; the pickle checks
below found the generator in every estimator's pickle.

Now every pickle holds ``None`` where a seed object was (ints stay: an int seed is
public and protects nothing, as documented). Within one process nothing changes: the
same seed object state still reproduces a fit, and ``n_jobs > 1`` in skdp's
meta-estimators hands the seed to its worker tasks beside the pickled estimator.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from skdp.metrics import make_dp_scorer
from skdp.model_selection import DPGridSearchCV, dp_cross_validate
from skdp.pipeline import DPPipeline
from skdp.preprocessing import DPStandardScaler
from skdp.synthesis import DPMarginalSynthesizer
from skdp.utils._random import is_seed_object, scrub_seed_objects, seed_objects
from tests.privacy.test_attack_randomness import (
    _FORBIDDEN_CLASSES,
    ESTIMATORS,
    IDS,
    _AuditUnpickler,
    _data,
    _draws_noise,
    _fit,
    _make,
    _reachable_random_objects,
)

SEED_KINDS = ["int", "generator", "random_state", "seed_sequence"]


def _seed(kind, value=7):
    return {
        "int": value,
        "generator": np.random.default_rng(value),
        "random_state": np.random.RandomState(value),
        "seed_sequence": np.random.SeedSequence(value),
    }[kind]


def _assert_no_seed_object(obj, what):
    blob = pickle.dumps(obj)
    unpickler = _AuditUnpickler(blob)
    restored = unpickler.load()
    loaded = [c for c in unpickler.loaded if _FORBIDDEN_CLASSES.search(c)]
    assert loaded == [], f"{what}: its pickle rebuilds {loaded}"
    assert _reachable_random_objects(restored) == [], what
    return restored


# ------------------------------------------------- every estimator, every seed type
@pytest.mark.parametrize("kind", SEED_KINDS)
@pytest.mark.parametrize(("name", "cls"), ESTIMATORS, ids=IDS)
def test_pickled_fit_holds_no_seed_object(name, cls, kind):
    if not _draws_noise(cls):
        pytest.skip(f"{name} has no random_state")
    est = _make(cls, random_state=_seed(kind))
    X, y = _data(est)
    _fit(est, X, y)
    restored = _assert_no_seed_object(est, name)
    expected = 7 if kind == "int" else None
    assert restored.get_params()["random_state"] == expected
    # the in-memory estimator keeps the parameter as given (scikit-learn's contract)
    assert (est.random_state == 7) if kind == "int" else is_seed_object(est.random_state)


def _frame(n=120, rare=True, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": rng.integers(20, 80, n).astype(float),
            "dx": rng.choice(["flu", "asthma"], n),
        }
    )
    if rare:
        df.loc[n - 1, "dx"] = "porphyria"  # one patient with a rare diagnosis
    return df


_META = {
    "bounds": {"age": (20.0, 80.0)},
    "categories": {"dx": ["flu", "asthma", "porphyria"]},
    "n_bins": 4,
}


def _classification(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    y = (X[:, 0] > 0).astype(int)
    y[:2] = [0, 1]
    return X, y


def _search(seed, n_jobs=None):
    from skdp.linear_model import DPLogisticRegression

    est = DPLogisticRegression(
        epsilon=1.0, bounds_X=(-1, 1), classes=[0, 1], mechanism="objective", random_state=seed
    )
    return DPGridSearchCV(
        est,
        {"C": [0.5, 1.0]},
        scoring=make_dp_scorer("accuracy", epsilon=1.0, random_state=seed),
        cv=2,
        random_state=seed,
        n_jobs=n_jobs,
    )


@pytest.mark.parametrize("kind", SEED_KINDS)
def test_meta_estimators_and_scorers_pickle_no_seed_object(kind):
    X, y = _classification()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = _search(_seed(kind)).fit(X, y)
        pipe = DPPipeline(
            [
                ("scale", DPStandardScaler(epsilon=1.0, bounds=(-1, 1), random_state=_seed(kind))),
                ("model", clone(search.estimator)),
            ]
        ).fit(X, y)
        scorer = make_dp_scorer("roc_auc", epsilon=1.0, random_state=_seed(kind))
        scorer(search.best_estimator_, X, y)
        cv = dp_cross_validate(
            clone(search.estimator),
            X,
            y,
            scoring=make_dp_scorer("accuracy", epsilon=1.0, random_state=_seed(kind)),
            cv=2,
            random_state=_seed(kind),
            return_estimator=True,
        )
    _assert_no_seed_object(search, "DPGridSearchCV")
    _assert_no_seed_object(pipe, "DPPipeline")
    _assert_no_seed_object(scorer, "make_dp_scorer")
    _assert_no_seed_object(cv, "dp_cross_validate(return_estimator=True)")


def test_grid_over_seed_objects_is_scrubbed_in_cv_results():
    X, y = _classification()
    search = _search(0)
    search.set_params(param_grid={"random_state": [np.random.default_rng(1), 2]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    restored = _assert_no_seed_object(search, "DPGridSearchCV over random_state")
    assert [p["random_state"] for p in restored.cv_results_["params"]] == [None, 2]


# ------------------------------------------------------------- the replay attack
def _rewound_candidates(seed):
    """Seed states an attacker tries: the stored object rewound by 0..15 outputs."""
    if isinstance(seed, np.random.SeedSequence):
        return [seed]  # its own entropy: no state to rewind
    out = []
    for k in range(16):
        if isinstance(seed, np.random.Generator):
            bg = np.random.PCG64()
            bg.state = seed.bit_generator.state
            bg.advance(-k)
            out.append(np.random.Generator(bg))
        else:  # RandomState: step its MT19937 position back (no twist in between)
            state = list(seed.get_state())
            if state[2] - k < 0:
                break
            state[2] -= k
            rs = np.random.RandomState()
            rs.set_state(tuple(state))
            out.append(rs)
    return out


def _identify(model, seed, candidates, release):
    """The candidate data sets whose refit under a rewound ``seed`` gives ``release``."""
    hits = set()
    for rewound in _rewound_candidates(seed):
        for label, data in candidates.items():
            replay = clone(model).set_params(random_state=rewound)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                replay.fit(data)
            if all(np.array_equal(replay.noisy_one_way_[c], release[c]) for c in release):
                hits.add(label)
    return hits


def _fit_rare(kind):
    with_rare, without = _frame(rare=True), _frame(rare=False)
    model = DPMarginalSynthesizer(epsilon=1.0, random_state=_seed(kind), **_META)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(with_rare)
    release = {c: v.copy() for c, v in model.noisy_one_way_.items()}
    return model, {"rare": with_rare, "none": without}, release


@pytest.mark.parametrize("kind", ["generator", "random_state", "seed_sequence"])
def test_replay_attack_fails(kind):
    model, candidates, release = _fit_rare(kind)
    restored = pickle.loads(pickle.dumps(model))
    stored = restored.get_params()["random_state"]
    assert not is_seed_object(stored), "the pickle holds the seed object"
    if stored is not None:  # pragma: no cover - whatever it holds must not identify
        assert _identify(restored, stored, candidates, release) == set()


@pytest.mark.parametrize("kind", ["generator", "random_state", "seed_sequence"])
def test_replay_attack_would_work_on_a_kept_seed_object(kind):
    """Power check: with the seed object kept (what a pickle held before), the attack
    picks the real data set; so its failure above is the scrub's doing."""
    model, candidates, release = _fit_rare(kind)
    assert _identify(model, model.random_state, candidates, release) == {"rare"}


def test_search_refit_cannot_be_replayed_from_its_pickle():
    X, y = _classification()
    rng = np.random.default_rng(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = _search(rng).fit(X, y)
    restored = pickle.loads(pickle.dumps(search))
    assert restored.estimator.random_state is None
    assert restored.best_estimator_.random_state is None
    assert restored.random_state is None


# ----------------------------------------------- reproducibility is kept in-process
@pytest.mark.parametrize("kind", ["generator", "random_state", "seed_sequence"])
def test_same_seed_object_state_reproduces_a_fit(kind):
    df = _frame()
    fits = []
    for _ in range(2):
        model = DPMarginalSynthesizer(epsilon=1.0, random_state=_seed(kind), **_META)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits.append(model.fit(df).noisy_one_way_)
    assert all(np.array_equal(fits[0][c], fits[1][c]) for c in fits[0])


def test_search_with_a_generator_gives_the_same_result_with_worker_processes():
    X, y = _classification()
    results = []
    for n_jobs in (None, 2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search = _search(np.random.default_rng(5), n_jobs=n_jobs).fit(X, y)
        results.append(search.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(results[0], results[1])


def test_scrub_helpers():
    rng = np.random.default_rng(0)
    value = {"a": [rng, (1, np.random.SeedSequence(2))], "b": np.array([rng, 3], dtype=object)}
    out = scrub_seed_objects(value)
    assert out["a"] == [None, (1, None)] and list(out["b"]) == [None, 3]
    assert value["a"][0] is rng  # the original is not changed
    same = {"a": [1, 2]}
    assert scrub_seed_objects(same) is same
    pipe = DPPipeline([("s", DPStandardScaler(epsilon=1.0, bounds=(0, 1), random_state=rng))])
    assert set(seed_objects(pipe)) == {"s__random_state"}


# ------------------------------------- order-dependent releases use the ordered digest
@pytest.mark.parametrize(("mechanism", "shares"), [("dpsgd", False), ("objective", True)])
def test_logistic_noise_stream_of_a_permuted_data_set(monkeypatch, mechanism, shares):
    """DP-SGD draws its Poisson batches by row position: a permuted copy of the data
    set must not get the same noise stream (before the fix it did, so the two releases
    shared one noise draw on different batches). The objective perturbation is a
    function of the multiset of rows, so a permuted copy gets the identical release."""
    import skdp.linear_model._logistic as logistic
    from skdp.linear_model import DPLogisticRegression

    states = []
    real = logistic.fit_streams

    def spy(*args, **kwargs):
        streams = real(*args, **kwargs)
        name = "dpsgd" if mechanism == "dpsgd" else "noise"
        states.append(streams[name].bit_generator.state["state"]["state"])
        return streams

    monkeypatch.setattr(logistic, "fit_streams", spy)
    X, y = _classification(n=60)
    perm = np.random.default_rng(1).permutation(len(y))
    params = {"epsilon": 1.0, "bounds_X": (-1, 1), "classes": [0, 1], "random_state": 0}
    if mechanism == "dpsgd":
        params.update(delta=1e-3, n_iter=5, batch_size=20)
    fits = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rows in (np.arange(len(y)), perm):
            est = DPLogisticRegression(mechanism=mechanism, **params)
            fits.append(est.fit(X[rows], y[rows]).coef_)
    assert (states[0] == states[1]) is shares
    if shares:  # the same release up to the solver's summation order
        np.testing.assert_allclose(fits[0], fits[1], rtol=1e-12)
