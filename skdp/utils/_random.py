"""Random streams, and the seed material of a private release.

``random_state`` is stored on estimators as given. ``fit`` turns it into
:class:`numpy.random.Generator` objects with :func:`fit_streams`, which derives named
child streams in a fixed order. Functions that release a noisy statistic (the DP
scorers) use :func:`release_rng`. Both bind the seed to **what is released**:

* ``random_state=None`` draws fresh OS entropy and nothing else is added: each call
  gets independent noise. This is what a real release uses.
* any other ``random_state`` (an int, a ``SeedSequence``, a ``Generator`` or a
  ``RandomState``) is hashed (BLAKE2b) together with the estimator's class, all of its
  ``get_params()`` (except the execution-only ones, :data:`EXECUTION_PARAMS`), a release
  tag and canonical bytes of the training data. The same seed, data and parameters
  reproduce a fit bit for bit, whatever ``n_jobs`` or ``verbose``; a different training set
  (another cross-validation fold, a neighbouring data set) or a different parameter
  set (another point of a grid over ``epsilon``) gets noise that is independent of it.
  Without this, ``clone`` copies the int seed into every fold of a cross-validation and
  the difference of two fold models' noisy statistics is noise-free.

The digest is never stored: re-hashing candidate data sets against a stored digest would
be a membership test. A fitted estimator keeps **no** generator and no seed material of
its own (pickles are shared); its ``sample(random_state=None)`` draws fresh OS entropy.
The ``random_state`` *parameter* is stored as given (scikit-learn's contract), so a seed
object given there is removed from every pickle
(:class:`~skdp.utils._seed_objects.ScrubSeedsOnPickleMixin`, re-exported here): a
generator can be rewound to its state before the fit and the fit replayed on candidate
data sets.

An int seed protects nothing against anyone who knows it -- it is in every pickle's
``get_params()``, and with it and a candidate data set anyone can recompute the noise.
Seeds are for tests and for reproducing a non-public analysis; a real release uses
``random_state=None``.
"""

from __future__ import annotations

import hashlib
import math
import re
import struct
from collections.abc import Mapping, Sequence
from numbers import Integral

import numpy as np

# seed objects and pickles: re-exported, callers import them from here too
from skdp.utils._deprecation import DEPRECATED
from skdp.utils._seed_objects import (
    SEED_OBJECT_TYPES,
    ScrubSeedsOnPickleMixin,
    is_seed_object,
    scrub_seed_objects,
    seed_objects,
)

__all__ = [
    "make_rng",
    "seed_sequence",
    "spawn_streams",
    "fit_streams",
    "release_rng",
    "draw_seed",
    "SEED_OBJECT_TYPES",
    "is_seed_object",
    "seed_objects",
    "scrub_seed_objects",
    "ScrubSeedsOnPickleMixin",
]

_DIGEST_SIZE = 32

#: Parameters that say how a fit runs, not what it releases: left out of the seed
#: material, so that (as in scikit-learn) a seeded fit gives the same noise whatever the
#: thread count or the verbosity. The same release twice leaks nothing new, while two
#: releases with independent noise would each cost the budget.
EXECUTION_PARAMS = frozenset({"n_jobs", "verbose", "pre_dispatch"})

#: parameters added after fixed-seed releases were pinned, with the default under which
#: they are left out of the seed material (the patient-level contribution bound)
LATER_PARAMS = {"max_rows_per_group": None}
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def seed_sequence(random_state) -> np.random.SeedSequence:
    """Turn ``random_state`` into a :class:`numpy.random.SeedSequence`.

    Parameters
    ----------
    random_state : None, int, SeedSequence, Generator or RandomState
        ``None`` draws fresh OS entropy. A ``Generator`` or ``RandomState`` is
        advanced (a seed is drawn from it), so passing the same object twice gives
        different streams, as in scikit-learn.
    """
    if random_state is None:
        return np.random.SeedSequence()
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if isinstance(random_state, (Integral, np.integer)) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError("random_state must be a non-negative int")
        return np.random.SeedSequence(int(random_state))
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(random_state.integers(0, 2**63 - 1, size=4).tolist())
    if isinstance(random_state, np.random.RandomState):
        return np.random.SeedSequence(random_state.randint(0, 2**31 - 1, size=4).tolist())
    raise ValueError(
        f"random_state must be None, an int, a SeedSequence, a Generator or a RandomState; "
        f"got {type(random_state).__name__}"
    )


def make_rng(random_state) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` for ``random_state``.

    For post-processing and for non-private code (simulators, audits). A release of
    private data uses :func:`fit_streams` or :func:`release_rng`.

    Examples
    --------
    >>> from skdp.utils._random import make_rng
    >>> bool(make_rng(0).integers(10) == make_rng(0).integers(10))
    True
    """
    return np.random.default_rng(seed_sequence(random_state))


def spawn_streams(random_state, names: Sequence[str]) -> dict[str, np.random.Generator]:
    """Spawn one independent generator per name, in the order given.

    The mapping name -> stream depends only on ``random_state`` and the position of the
    name in ``names``: keep the order fixed in an estimator (append new streams at the
    end) so that results stay reproducible across versions. Estimators call
    :func:`fit_streams`, which binds the seed to the data and the parameters first.

    Examples
    --------
    >>> from skdp.utils._random import spawn_streams
    >>> s = spawn_streams(0, ["sampling", "noise"])
    >>> sorted(s)
    ['noise', 'sampling']
    """
    return _spawn(seed_sequence(random_state), names)


def _spawn(seq, names):
    names = list(names)
    if len(set(names)) != len(names):
        raise ValueError("stream names must be unique")
    children = seq.spawn(len(names))
    return {name: np.random.default_rng(child) for name, child in zip(names, children, strict=True)}


# ----------------------------------------------------------------- seed material
def _seed_bytes(random_state) -> bytes:
    """Bytes that stand for a non-None ``random_state`` (advances a Generator)."""
    if isinstance(random_state, np.random.SeedSequence):
        return b"ss:" + random_state.generate_state(8, np.uint32).tobytes()
    if isinstance(random_state, (Integral, np.integer)) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError("random_state must be a non-negative int")
        return b"int:" + str(int(random_state)).encode()
    return b"gen:" + seed_sequence(random_state).generate_state(8, np.uint32).tobytes()


class _Hasher:
    """Canonical, type-tagged, length-prefixed serialisation into one BLAKE2b digest."""

    def __init__(self):
        self._h = hashlib.blake2b(digest_size=_DIGEST_SIZE, person=b"skdp-seed-v1")

    def raw(self, tag: str, data: bytes):
        tag = tag.encode()
        self._h.update(struct.pack("<Q", len(tag)) + tag + struct.pack("<Q", len(data)))
        self._h.update(data)

    def value(self, obj):  # noqa: C901 - one branch per type
        if obj is None or isinstance(obj, bool | str):
            self.raw(type(obj).__name__, repr(obj).encode())
        elif isinstance(obj, Integral):
            self.raw("int", str(int(obj)).encode())
        elif isinstance(obj, float | np.floating):
            self.raw("float", struct.pack("<d", float(obj)))
        elif isinstance(obj, bytes):
            self.raw("bytes", obj)
        elif isinstance(obj, np.ndarray):
            self.array(obj)
        elif isinstance(obj, Mapping):
            self.raw("map", str(len(obj)).encode())
            for key in sorted(obj, key=repr):
                self.value(key)
                self.value(obj[key])
        elif isinstance(obj, list | tuple | set | frozenset):
            items = sorted(obj, key=repr) if isinstance(obj, set | frozenset) else obj
            self.raw(type(obj).__name__, str(len(items)).encode())
            for item in items:
                self.value(item)
        elif hasattr(obj, "get_params") and callable(obj.get_params):
            self.raw("estimator", _qualname(type(obj)).encode())
            params = obj.get_params(deep=False)  # a tuple's replacements: as the tuple
            self.value(_hash_renamed(params, type(obj), tuples_only=True))
        elif _is_pandas(obj):
            self.pandas(obj)
        elif hasattr(obj, "tocsr") and hasattr(obj, "shape"):  # scipy sparse
            m = obj.tocsr()
            self.raw("sparse", repr(m.shape).encode())
            for part in (m.data, m.indices, m.indptr):
                self.array(np.asarray(part))
        elif hasattr(obj, "to_dict") and callable(obj.to_dict):  # e.g. TabularSchema
            self.raw("to_dict", _qualname(type(obj)).encode())
            self.value(obj.to_dict())
        elif isinstance(obj, np.random.SeedSequence | np.random.Generator | np.random.RandomState):
            self.raw("rng", type(obj).__name__.encode())  # never its state: it is not a parameter
        else:
            self.raw("repr", _ADDRESS.sub("", f"{_qualname(type(obj))}:{obj!r}").encode())

    def array(self, a: np.ndarray):
        self.raw("shape", repr(a.shape).encode())
        kind = a.dtype.kind
        if kind in "biu" and (a.size == 0 or np.abs(a.astype(np.float64)).max() <= 2.0**53):
            # exactly representable: the same values as bool, int or float digest alike
            self.raw("float", np.ascontiguousarray(a, dtype="<f8").tobytes())
        elif kind in "iu":
            if kind == "u" and a.dtype.itemsize == 8:
                self.raw("uint", np.ascontiguousarray(a, dtype="<u8").tobytes())
            else:
                self.raw("int", np.ascontiguousarray(a, dtype="<i8").tobytes())
        elif kind == "f":
            # float16/32 widen exactly; float128 keeps its own bytes
            dt = "<f8" if a.dtype.itemsize <= 8 else a.dtype.newbyteorder("<")
            self.raw("float", np.ascontiguousarray(a, dtype=dt).tobytes())
        elif kind == "c":
            self.raw("complex", np.ascontiguousarray(a, dtype="<c16").tobytes())
        elif kind in "mM":
            self.raw(a.dtype.str, np.ascontiguousarray(a).view("<i8").tobytes())
        else:  # object, strings: each value on its own, type-tagged
            self.raw("values", str(a.size).encode())
            for v in a.ravel(order="C").tolist():
                if isinstance(v, float) and math.isnan(v):
                    self.raw("nan", b"")
                else:
                    self.value(v)

    def pandas(self, obj):
        import pandas as pd

        if isinstance(obj, pd.Series):
            obj = obj.to_frame()
        if not isinstance(obj, pd.DataFrame):  # Index, Categorical, ...
            self.array(np.asarray(obj, dtype=object))
            return
        self.raw("frame", repr(obj.shape).encode())
        for name in obj.columns:
            col = obj[name]
            self.value(name)
            if isinstance(col.dtype, pd.CategoricalDtype) or col.dtype.kind not in "biufcmM":
                self.array(np.asarray(col.astype(object)))
            else:
                self.array(col.to_numpy())

    def digest(self) -> bytes:
        return self._h.digest()


def _qualname(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _is_pandas(obj) -> bool:
    return type(obj).__module__.split(".")[0] == "pandas"


# ------------------------------------------------------------ data digest (vectorised)
_CHUNK_ROWS = 1 << 15
_GOLD = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_INT_TAG = np.uint64(0xD6E8FEB86659FD93)
_LANES = (np.uint64(0x243F6A8885A308D3), np.uint64(0x13198A2E03707344))


def _mix(x):
    """splitmix64's finaliser, vectorised (uint64 arithmetic wraps)."""
    x = x + _GOLD
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


def _cell_keys(values) -> np.ndarray:
    """One uint64 key per cell; equal values give equal keys whatever the dtype."""
    v = np.asarray(values)
    kind = v.dtype.kind
    if kind in "biu":
        as_float = np.ascontiguousarray(v, dtype=np.float64)
        exact = np.abs(as_float) <= 2.0**53
        keys = as_float.view(np.uint64).copy()
        if not exact.all():  # large integers keep their exact bits
            big = np.ascontiguousarray(v[~exact]).astype(np.uint64, casting="unsafe")
            keys[~exact] = big ^ _INT_TAG
        return keys
    if kind == "f":
        return np.ascontiguousarray(v, dtype=np.float64).view(np.uint64)
    if kind == "c":
        c = np.ascontiguousarray(v, dtype=np.complex128)
        return np.ascontiguousarray(c.real).view(np.uint64) ^ _mix(
            np.ascontiguousarray(c.imag).view(np.uint64)
        )
    if kind in "mM":
        return np.ascontiguousarray(v).view(np.int64).view(np.uint64) ^ _INT_TAG
    import pandas as pd

    return pd.util.hash_array(np.asarray(v, dtype=object).ravel())


def _columns(part):
    """``(n_rows, [(column name, rows(start, stop) -> values)])``, or None if not tabular."""
    if _is_pandas(part):
        import pandas as pd

        frame = part.to_frame() if isinstance(part, pd.Series) else part
        if not isinstance(frame, pd.DataFrame):
            return None
        cols = []
        for j, name in enumerate(frame.columns):
            col = frame.iloc[:, j]
            if isinstance(col.dtype, pd.CategoricalDtype):
                col = col.astype(object)
            cols.append((name, lambda a, b, c=col: c.iloc[a:b].to_numpy()))
        return frame.shape[0], cols
    if hasattr(part, "tocsr") or isinstance(part, Mapping | str | bytes):
        return None
    a = np.asarray(part)
    if a.ndim == 0:
        return None
    a = a.reshape(a.shape[0], math.prod(a.shape[1:]))  # also zero rows (an empty fold)
    return a.shape[0], [(j, lambda s, e, j=j: a[s:e, j]) for j in range(a.shape[1])]


def _digest_rows(h, parts: Mapping, order_invariant: bool):
    """Digest the rows of the tabular ``parts`` (all of one length) into ``h``.

    Ordered: BLAKE2b over the row-major key matrix. Multiset (``order_invariant``): two
    64-bit lanes, each the sum mod 2**64 of a mixed hash of every row. Both are computed
    in chunks of rows (memory O(chunk)) and do not depend on the chunking.
    """
    if _dask_parts(parts):
        if not order_invariant:
            raise TypeError(
                "Dask input is supported by releases that are functions of the multiset of "
                "rows only (order_invariant=True); pass a numpy array or a pandas DataFrame"
            )
        _digest_rows_dask(h, parts)
        return
    tables = {name: _columns(p) for name, p in parts.items() if p is not None}
    rest = {name: parts[name] for name, t in tables.items() if t is None}
    tables = {name: t for name, t in tables.items() if t is not None}
    lengths = {t[0] for t in tables.values()}
    if len(lengths) > 1:  # not one table: digest each part on its own, in order
        rest.update({name: parts[name] for name in tables})
        tables = {}
    for name, part in rest.items():
        h.raw("part", str(name).encode())
        h.value(part)
    if not tables:
        return
    n = lengths.pop()
    cols = [(pname, cname, get) for pname, (_, cs) in tables.items() for cname, get in cs]
    h.raw("rows", f"{n}:{len(cols)}:{int(order_invariant)}".encode())
    for pname, cname, _ in cols:
        h.value((pname, cname))
    lanes = [0, 0]
    stream = hashlib.blake2b(digest_size=_DIGEST_SIZE)  # the row-major key stream
    for start in range(0, n, _CHUNK_ROWS):
        stop = min(n, start + _CHUNK_ROWS)
        keys = [_cell_keys(get(start, stop)) for _, _, get in cols]
        if not order_invariant:
            stream.update(np.ascontiguousarray(np.column_stack(keys)).tobytes())
            continue
        lanes = [(a + b) % 2**64 for a, b in zip(lanes, _lane_sums(keys), strict=True)]
    if order_invariant:
        h.raw("multiset", struct.pack("<QQ", *lanes))
    else:
        h.raw("ordered", stream.digest())


def _lane_sums(keys) -> list[int]:
    """The two multiset lanes of a block of rows: ``keys`` holds one uint64 key array per
    column, in the digest's column order. Sums mod 2**64 of per-row hashes, so any split
    of the rows into blocks gives the same total."""
    offsets = [np.uint64(((j + 1) * 0x9E3779B97F4A7C15) % 2**64) for j in range(len(keys))]
    n = len(keys[0]) if keys else 0
    lanes = []
    for seed in _LANES:
        row = np.full(n, seed, dtype=np.uint64)
        for k, off in zip(keys, offsets, strict=True):
            row = _mix(row ^ (k + off))
        lanes.append(int(row.sum(dtype=np.uint64)))
    return lanes


def _dask_parts(parts: Mapping) -> bool:
    from skdp.utils._rowsum import any_dask

    return any_dask(*parts.values())


def _block_digest(*blocks):
    """Exact partial of the Dask multiset digest: (rows, lane 0, lane 1) as Python ints."""
    keys = []
    n = None
    for block in blocks:
        if block is None:
            continue
        table = _columns(block)
        if table is None:
            raise TypeError("a Dask input to a private release must be tabular")
        n = table[0]
        keys.extend(_cell_keys(get(0, table[0])) for _, get in table[1])
    if not n:
        return None
    return np.array([n, *_lane_sums(keys)], dtype=object)


def _digest_rows_dask(h, parts: Mapping):
    """The multiset digest of :func:`_digest_rows` for Dask input, computed chunk-wise.

    Each partition's lane sums are computed on a worker and added exactly
    (:func:`skdp.utils._rowsum.row_sum`); the header (row count, column names) comes from
    the collections' metadata, so the digest equals that of the same rows in memory.
    """
    from skdp.utils._rowsum import is_dask_collection, row_sum

    names = [name for name, p in parts.items() if p is not None]
    cols = []
    for name in names:
        part = parts[name]
        if not is_dask_collection(part):
            meta = part  # in memory: _columns reads names only
        elif hasattr(part, "chunks"):  # a Dask array: columns are numbered
            meta = np.zeros((1,) + tuple(int(s) for s in part.shape[1:]))
        else:  # a Dask DataFrame/Series: its empty pandas metadata
            meta = part._meta
        table = _columns(meta)
        if table is None:
            raise TypeError(f"{name} must be tabular for a private release of Dask input")
        cols.extend((name, cname) for cname, _ in table[1])
    total = row_sum(_block_digest, *(parts[name] for name in names))
    n, lane0, lane1 = (0, 0, 0) if total is None else (int(v) for v in total)
    h.raw("rows", f"{n}:{len(cols)}:1".encode())
    for col in cols:
        h.value(col)
    h.raw("multiset", struct.pack("<QQ", lane0 % 2**64, lane1 % 2**64))


def _seed_from(
    random_state, tag: str, parts: Mapping, rows: Mapping, order_invariant: bool
) -> np.random.SeedSequence:
    if random_state is None:
        return np.random.SeedSequence()  # fresh OS entropy; nothing else is added
    h = _Hasher()
    h.raw("seed", _seed_bytes(random_state))
    h.raw("tag", tag.encode())
    for name, part in parts.items():
        h.raw("part", name.encode())
        h.value(part)
    _digest_rows(h, rows, order_invariant)
    return np.random.SeedSequence(int.from_bytes(h.digest(), "little"))


def fit_streams(
    random_state,
    names: Sequence[str],
    *,
    estimator,
    X=None,
    y=None,
    sample_weight=None,
    groups=None,
    tag: str = "fit",
    order_invariant: bool = False,
) -> dict[str, np.random.Generator]:
    """Named noise streams for one private release by ``estimator``.

    Parameters
    ----------
    random_state : None, int, SeedSequence, Generator or RandomState
        ``None``: fresh OS entropy. Otherwise the seed is hashed with the class of
        ``estimator``, all of its ``get_params(deep=False)`` except ``random_state`` and
        the execution-only :data:`EXECUTION_PARAMS` (``n_jobs``, ``verbose``,
        ``pre_dispatch``), ``tag``, and canonical bytes of ``X``, ``y`` and
        ``sample_weight``. A parameter renamed for the fitted vocabulary (the class's
        ``_renamed_parameters``, ``{old: new}``) is hashed under its old name (``{old:
        (new, ...)}``: the tuple of the new parameters' values).
    names : sequence of str
        Stream names, in a fixed order (append new ones at the end).
    estimator : estimator
        The estimator that releases.
    X, y, sample_weight : array-like, DataFrame or None
        The private inputs of the release, as validated by the estimator.
    groups : array-like or None, default=None
        The patient of each row of a patient-level release (its labels are private
        inputs too: two groupings of the same rows never share noise).
    tag : str, default="fit"
        What is released (``"fit"``, ``"partial_fit"``, ...).
    order_invariant : bool, default=False
        Digest the rows of ``X``, ``y``, ``sample_weight`` as a multiset (a sum of
        per-row hashes). Only for releases that are functions of the multiset of
        rows (histograms, sufficient statistics, counts): a permuted data set then gets
        the identical release. An order-dependent release (Poisson batches of DP-SGD)
        must keep the default, or a permuted copy would reuse the noise on other rows.

    Returns
    -------
    dict of str -> numpy.random.Generator
        Nothing derived from the data is kept by this function; do not store the
        streams on the fitted estimator.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from skdp.utils._random import fit_streams
    >>> X = np.arange(6.0).reshape(3, 2)
    >>> a = fit_streams(0, ["noise"], estimator=LinearRegression(), X=X)["noise"].random()
    >>> b = fit_streams(0, ["noise"], estimator=LinearRegression(), X=X)["noise"].random()
    >>> c = fit_streams(0, ["noise"], estimator=LinearRegression(), X=X[:2])["noise"].random()
    >>> bool(a == b), bool(a == c)
    (True, False)
    """
    if random_state is None:
        return _spawn(np.random.SeedSequence(), names)
    params = {
        name: value
        for name, value in estimator.get_params(deep=False).items()
        if name != "random_state" and name not in EXECUTION_PARAMS
    }
    # a parameter added later is hashed only when set away from its default, so its
    # arrival leaves every fixed-seed release unchanged
    # (and the class's own such parameters, ``_later_parameters``, ``{name: default}``)
    later = {**LATER_PARAMS, **getattr(type(estimator), "_later_parameters", {})}
    for name, default in later.items():
        value = params.get(name, later)  # ``later``: a sentinel, never a default
        if value is default or (isinstance(default, str) and value == default):
            del params[name]
    params = _hash_renamed(params, type(estimator))
    parts = {"class": _qualname(type(estimator)), "params": params}
    rows = {"X": X, "y": y, "sample_weight": sample_weight}
    if groups is not None:  # only then: row-level seeds stay as they were
        rows["groups"] = groups
    return _spawn(_seed_from(random_state, tag, parts, rows, order_invariant), names)


def _hash_renamed(params, cls, *, tuples_only=False):
    """``params`` with each renamed parameter (``cls._renamed_parameters``: ``{old: new}``,
    or ``{old: (new, ...)}`` for the tuple of the new ones) under its old name and the
    value in effect: a rename leaves fixed-seed releases unchanged. ``tuples_only``: an
    estimator inside another's parameters (its one-to-one renames were pinned as is)."""
    params = dict(params)
    for old, new in getattr(cls, "_renamed_parameters", {}).items():
        if old not in params or (tuples_only and not isinstance(new, tuple)):
            continue
        value = params.pop(old)
        if isinstance(new, tuple):
            new_value = tuple(params.pop(name) for name in new)
        else:
            new_value = params.pop(new)
        params[old] = new_value if isinstance(value, str) and value == DEPRECATED else value
    return params


def release_rng(
    random_state, *, tag: str, params: Mapping, data: Sequence = (), order_invariant=False
):
    """A generator for one noisy release by a function (e.g. a DP scorer call).

    ``None`` gives fresh OS entropy. Otherwise the seed is hashed with ``tag`` (the
    metric's name), ``params`` (``epsilon``, ``delta``, ...) and the private ``data``,
    so two metrics, two budgets or two inputs never share noise. With
    ``order_invariant=True`` the rows of the ``data`` arrays (all of one length) are
    digested as a multiset (see :func:`fit_streams`).

    Examples
    --------
    >>> from skdp.utils._random import release_rng
    >>> a = release_rng(0, tag="auc", params={"epsilon": 1.0}, data=([0, 1],)).random()
    >>> b = release_rng(0, tag="ap", params={"epsilon": 1.0}, data=([0, 1],)).random()
    >>> bool(a != b)
    True
    """
    if random_state is None:
        return np.random.default_rng()
    rows = {f"data{i}": d for i, d in enumerate(data)}
    seq = _seed_from(random_state, tag, {"params": dict(params)}, rows, order_invariant)
    return np.random.default_rng(seq)


def draw_seed(rng: np.random.Generator) -> int:
    """Draw a 63-bit integer seed from ``rng`` (e.g. to seed a ``torch.Generator``)."""
    return int(rng.integers(0, 2**63 - 1))
