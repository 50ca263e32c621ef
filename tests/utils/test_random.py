import numpy as np
import pytest

from skdp.utils._random import draw_seed, make_rng, seed_sequence, spawn_streams


def test_same_seed_same_stream():
    assert make_rng(3).random() == make_rng(3).random()
    a = spawn_streams(3, ["x", "y"])
    b = spawn_streams(3, ["x", "y"])
    assert a["y"].random() == b["y"].random()


def test_streams_are_distinct():
    s = spawn_streams(0, ["x", "y"])
    assert s["x"].random() != s["y"].random()


def test_none_uses_fresh_entropy_not_global_state():
    np.random.seed(0)  # noqa: NPY002 - the point: global state must not matter
    a = make_rng(None).random()
    np.random.seed(0)  # noqa: NPY002 - the point: global state must not matter
    b = make_rng(None).random()
    assert a != b


def test_generator_and_randomstate_are_advanced():
    g = np.random.default_rng(1)
    assert make_rng(g).random() != make_rng(g).random()
    rs = np.random.RandomState(1)
    assert make_rng(rs).random() != make_rng(rs).random()


@pytest.mark.parametrize("bad", [-1, "seed", 1.5, True])
def test_bad_random_state(bad):
    with pytest.raises(ValueError):
        seed_sequence(bad)


def test_duplicate_stream_names():
    with pytest.raises(ValueError):
        spawn_streams(0, ["a", "a"])


def test_draw_seed_range():
    s = draw_seed(make_rng(0))
    assert 0 <= s < 2**63


# ------------------------------------------------------- seed material of a release
def _draw(random_state=0, **kw):
    from sklearn.linear_model import Ridge

    from skdp.utils._random import fit_streams

    est = kw.pop("estimator", Ridge())
    return fit_streams(random_state, ["noise"], estimator=est, **kw)["noise"].random()


def test_fit_streams_bind_seed_to_data_parameters_and_tag():
    from sklearn.linear_model import Ridge

    X = np.arange(12.0).reshape(6, 2)
    y = np.arange(6.0)
    base = _draw(X=X, y=y)
    assert base == _draw(X=X, y=y)  # reproducible
    X2 = X.copy()
    X2[0, 0] += 1e-12
    assert base != _draw(X=X2, y=y)  # any change of the data
    assert base != _draw(X=X, y=y[::-1])
    assert base != _draw(X=X, y=y, estimator=Ridge(alpha=2.0))  # any parameter
    assert base != _draw(X=X, y=y, tag="partial_fit")
    assert base != _draw(1, X=X, y=y)
    assert _draw(None, X=X, y=y) != _draw(None, X=X, y=y)  # fresh entropy


def test_execution_only_parameters_are_not_seed_material():
    """n_jobs / verbose say how a fit runs: a seeded fit draws the same noise whatever
    they are (as in scikit-learn), while every other parameter still changes it."""
    from sklearn.linear_model import LogisticRegression

    X = np.arange(12.0).reshape(6, 2)
    y = np.array([0, 1, 0, 1, 0, 1])
    base = _draw(X=X, y=y, estimator=LogisticRegression())
    for params in ({"n_jobs": 2}, {"n_jobs": -1}, {"verbose": 3}):
        assert base == _draw(X=X, y=y, estimator=LogisticRegression(**params)), params
    assert base != _draw(X=X, y=y, estimator=LogisticRegression(C=2.0))


def test_seeded_torch_fit_does_not_depend_on_n_jobs_or_verbose():
    pytest.importorskip("torch")
    from skdp.density import DPFlowDensity

    X = np.random.default_rng(0).uniform(size=(60, 2))
    kw = dict(epsilon=1.0, delta=1e-3, bounds=(0.0, 1.0), n_iter=3, random_state=7)
    kw.update(n_layers=1, batch_size=16, device="cpu", dtype="float64")
    ref = DPFlowDensity(**kw, n_jobs=1).fit(X).score_samples(X)
    for params in ({"verbose": 1}, {"n_jobs": 2}):
        out = DPFlowDensity(**kw, **params).fit(X).score_samples(X)
        np.testing.assert_allclose(out, ref, rtol=1e-9, err_msg=str(params))
    other = DPFlowDensity(**{**kw, "epsilon": 2.0}, n_jobs=1).fit(X).score_samples(X)
    assert not np.allclose(other, ref)


def test_digest_of_rows_is_ordered_unless_asked_for_a_multiset():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = rng.integers(0, 2, 200)
    p = rng.permutation(200)
    assert _draw(X=X, y=y) != _draw(X=X[p], y=y[p])
    assert _draw(X=X, y=y, order_invariant=True) == _draw(X=X[p], y=y[p], order_invariant=True)
    # rows stay rows: permuting y alone changes the multiset of (x, y) pairs
    assert _draw(X=X, y=y, order_invariant=True) != _draw(X=X, y=y[p], order_invariant=True)


def test_digest_does_not_depend_on_chunking_or_numeric_dtype(monkeypatch):
    import skdp.utils._random as R

    X = np.random.default_rng(1).normal(size=(100, 2))
    y = np.arange(100)
    ref = [_draw(X=X, y=y), _draw(X=X, y=y, order_invariant=True)]
    monkeypatch.setattr(R, "_CHUNK_ROWS", 7)
    assert [_draw(X=X, y=y), _draw(X=X, y=y, order_invariant=True)] == ref
    assert _draw(X=X, y=y.astype(float)) == ref[0]  # same values, other dtype
    big = np.array([[2**60], [2**60 + 1]], dtype=np.int64)  # beyond float64's integers
    assert _draw(X=big[:1]) != _draw(X=big[1:])


def test_digest_of_dataframes_reads_values_not_category_codes():
    import pandas as pd

    df = pd.DataFrame({"dx": ["a", "b", "a"], "age": [30, 40, 50]})
    cat = df.astype({"dx": "category"})
    assert _draw(X=df) == _draw(X=cat)
    other = df.assign(dx=["a", "b", "c"])
    assert _draw(X=df) != _draw(X=other)


def test_release_rng_binds_tag_params_and_data():
    from skdp.utils._random import release_rng

    y = np.array([0, 1, 1, 1])
    draw = lambda **kw: release_rng(0, **kw).random()  # noqa: E731
    base = draw(tag="auc", params={"epsilon": 1.0}, data=(y,))
    assert base == draw(tag="auc", params={"epsilon": 1.0}, data=(y,))
    assert base != draw(tag="ap", params={"epsilon": 1.0}, data=(y,))
    assert base != draw(tag="auc", params={"epsilon": 2.0}, data=(y,))
    assert base != draw(tag="auc", params={"epsilon": 1.0}, data=(y[::-1],))
