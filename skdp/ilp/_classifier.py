"""DPILPClassifier: differentially private propositional ILP (Lantz 2016 ch. 6).

Zeng, Naughton, Cai, Page and Lantz (2014); Algorithm 4's ``beta`` counts the clauses at
level ``i`` (the thesis prints ``k``, a typo).
"""

from __future__ import annotations

import functools
import itertools
import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import type_of_target

from skdp.base import DPEstimatorMixin
from skdp.mechanisms import two_sided_geometric
from skdp.mechanisms.sensitivity import ilp_query_alpha
from skdp.utils._data_free import nonfinite_error
from skdp.utils._random import fit_streams
from skdp.utils._rowsum import (
    any_dask,
    as_dask_array,
    column_names,
    is_dask_collection,
    n_rows,
    row_sum,
)
from skdp.utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    validate_data,
)

__all__ = ["DPILPClassifier", "search_clause"]

#: about this many (example, clause) satisfy-flags are computed in one matrix product
_CHUNK = 1 << 22


def _check_binary(X, name, columns=None):
    bad = ~np.isin(X, (0, 1))
    if bad.any():
        if X.ndim == 1:
            raise ValueError(f"{name} must be binary (0/1)")
        cols = np.unique(np.nonzero(bad)[1])
        labels = [repr(columns[j]) if columns is not None else str(j) for j in cols[:10]]
        more = " ..." if cols.size > 10 else ""
        raise ValueError(
            f"{name} must be binary (0/1 atoms); column(s) {', '.join(labels)}{more} are not"
        )


def _counts(Xpos, Xneg, clauses):
    """True satisfy-counts (q+_h(E+), q_h(E-)) for a list of equal-length clauses."""
    P = np.empty(len(clauses), dtype=np.int64)
    N = np.empty(len(clauses), dtype=np.int64)
    if not clauses:
        return P, N
    size = len(clauses[0])
    if size == 0:
        P[:] = Xpos.shape[0]
        N[:] = Xneg.shape[0]
        return P, N
    n_atoms = Xpos.shape[1]
    # at most about _CHUNK (rows x clauses) products held at once
    step = max(1, _CHUNK // max(Xpos.shape[0], Xneg.shape[0], 1))
    for c0 in range(0, len(clauses), step):
        block = np.asarray(clauses[c0 : c0 + step], dtype=np.intp)
        M = np.zeros((n_atoms, block.shape[0]), dtype=np.int32)
        np.put_along_axis(M, block.T, 1, axis=0)
        P[c0 : c0 + step] = ((Xpos @ M) == size).sum(axis=0)
        N[c0 : c0 + step] = ((Xneg @ M) == size).sum(axis=0)
    return P, N


def _next_level(kept, size):
    """Apriori candidates of length ``size``: every (size-1)-subset must be kept."""
    kept_set = set(kept)
    groups = {}
    for a in kept:  # join clauses that share their first size-2 atoms
        groups.setdefault(a[:-1], []).append(a[-1])
    out = []
    for prefix, lasts in groups.items():
        lasts = sorted(lasts)
        for i, x in enumerate(lasts):
            for y in lasts[i + 1 :]:
                c = prefix + (x, y)
                if all(c[:j] + c[j + 1 :] in kept_set for j in range(size - 2)):
                    out.append(c)
    return sorted(out)


def search_clause(
    Xpos,
    Xneg,
    bottom_clause,
    *,
    epsilon,
    max_clause_length,
    search="smart",
    min_pos=1,
    rng=None,
    counts=None,
):
    """One DP reduction of a bottom clause (Alg. 4 "smart" or Alg. 3 "naive").

    Parameters
    ----------
    Xpos, Xneg : ndarray of 0/1 of shape (n_pos, n_atoms), (n_neg, n_atoms)
        Positive and negative examples.
    bottom_clause : sequence of int
        Public atoms the clause may use.
    epsilon : float
        Budget of this reduction (``math.inf``: no noise).
    max_clause_length : int
        ``l``; levels ``0..l`` are searched.
    search : {"smart", "naive"}
    min_pos : int
        Smart search prunes the supersets of ``h`` when ``P' < min_pos`` or ``P'`` is not
        above the best noisy coverage so far.
    rng : numpy.random.Generator
    counts : callable, optional
        ``counts(clauses) -> (P, N)``, the true satisfy-counts of a list of equal-length
        clauses; replaces ``Xpos``/``Xneg`` (which may then be ``None``). Used for Dask
        input, whose counts are summed per partition.

    Returns
    -------
    best : tuple of int
        The clause with the best noisy coverage (shortest, then lexicographically
        first, among ties).
    best_coverage : float
        Its noisy coverage ``P' - N'``.
    ledger : list of dict
        One entry per batch of queries: ``level``, ``n_clauses`` (beta_i),
        ``epsilon`` (the batch's budget) and ``alpha`` (inverse scale of each count's
        noise).
    evaluated : list of tuple
        Every clause evaluated, in order.
    pruned : list of tuple
        Every clause whose supersets were deleted.
    """
    atoms = sorted(int(a) for a in bottom_clause)
    ell = int(max_clause_length)
    count = counts if counts is not None else functools.partial(_counts, Xpos, Xneg)
    noisy = not math.isinf(epsilon)
    ledger, evaluated, pruned = [], [], []
    best, best_cov = None, -math.inf

    if search == "naive":
        lattice = [c for i in range(ell + 1) for c in itertools.combinations(atoms, i)]
        alpha = epsilon / len(lattice)
        ledger.append(
            {
                "level": "all",
                "n_clauses": len(lattice),
                "epsilon": float(epsilon),
                "alpha": float(alpha),
            }
        )
        for size in range(ell + 1):
            level = [c for c in lattice if len(c) == size]
            if not level:
                continue
            P, N = count(level)
            P, N = P.astype(float), N.astype(float)
            if noisy:
                P += two_sided_geometric(len(level), alpha=alpha, rng=rng)
                N += two_sided_geometric(len(level), alpha=alpha, rng=rng)
            for c, p, n in zip(level, P, N, strict=True):
                evaluated.append(c)
                if p - n > best_cov:
                    best, best_cov = c, p - n
        return best, best_cov, ledger, evaluated, pruned

    eps_level = epsilon / (ell + 1)
    level, kept = [()], []
    for size in range(ell + 1):
        if size == 1:
            level = [(a,) for a in atoms] if () in kept else []
        elif size > 1:
            level = _next_level(kept, size)
        if not level:
            ledger.append({"level": size, "n_clauses": 0, "epsilon": eps_level, "alpha": None})
            kept = []
            continue
        beta = len(level)
        alpha = ilp_query_alpha(epsilon, beta, n_levels=ell + 1)  # = eps_level / beta
        ledger.append(
            {"level": size, "n_clauses": beta, "epsilon": float(eps_level), "alpha": float(alpha)}
        )
        P, N = count(level)
        P, N = P.astype(float), N.astype(float)
        if noisy:
            P += two_sided_geometric(beta, alpha=alpha, rng=rng)
            N += two_sided_geometric(beta, alpha=alpha, rng=rng)
        kept = []
        for c, p, n in zip(level, P, N, strict=True):
            evaluated.append(c)
            if p - n > best_cov:
                best, best_cov = c, p - n
            # supersets cannot cover more positives: P' bounds their coverage
            if p < min_pos or p <= best_cov:
                pruned.append(c)
            else:
                kept.append(c)
    return best, best_cov, ledger, evaluated, pruned


def _block_counts(clauses, removed, binarize, columns, X, y):
    """Exact satisfy-counts ``(P, N)`` of ``clauses`` in one block of rows (on a worker):
    positives covered by a ``removed`` clause do not count (cover removal)."""
    X, y = np.asarray(X), np.asarray(y)
    if X.dtype.kind not in "biuf":
        raise ValueError("X must be binary (0/1 atoms), got a non-numeric array")
    if X.dtype.kind == "f" and not np.isfinite(X).all():
        raise nonfinite_error(X, "X")  # NaN: skdp's advice (impute privately, or drop)
    if binarize is not None:
        X = (X > binarize).astype(np.int32)
    else:
        _check_binary(X, "X", columns)
        X = X.astype(np.int32)
    _check_labels(y)
    pos = y.astype(np.int64) == 1
    Xpos, Xneg = X[pos], X[~pos]
    for c in removed:
        Xpos = Xpos[~(Xpos[:, list(c)].all(axis=1) if c else np.ones(Xpos.shape[0], bool))]
    return _counts(Xpos, Xneg, clauses)


def _known_rows(a):
    if any(np.isnan(c) for c in a.chunks[0]):
        a = a.compute_chunk_sizes()  # one count per partition
    return tuple(int(c) for c in a.chunks[0])


def _on_rows(a, rows):
    """``a`` as a Dask array with row chunks ``rows`` (all columns in one chunk)."""
    import dask.array as da

    if not is_dask_collection(a):
        return da.from_array(a, chunks=(rows,) + tuple(-1 for _ in a.shape[1:]))
    if any(np.isnan(c) for c in a.chunks[0]):
        a = a.compute_chunk_sizes()
    return a.rechunk((rows,) + tuple(-1 for _ in a.shape[1:]))


def _check_labels(y):
    if y.dtype.kind not in "biuf" or not np.isin(y, (0, 1)).all():
        raise ValueError(
            "Unknown label type: y must be binary with values in {0, 1} (1 = positive)"
        )


class DPILPClassifier(DPEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Differentially private inductive logic programming, propositional form.

    Learns a theory of up to ``n_clauses`` conjunctive clauses over binary atoms (the
    columns of ``X``), each of length at most ``max_clause_length`` and using only the
    atoms of a public bottom clause (Lantz 2016 ch. 6, Alg. 5). Each clause is found by
    a top-down breadth-first search of the subset lattice of the bottom clause whose
    coverage counts (positives and negatives satisfying a clause) are released with
    two-sided geometric noise; covered positives are then removed. ``predict`` is 1
    iff some clause is satisfied (all its atoms are 1).

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy loss of one ``fit`` (pure epsilon-DP), split equally over the
        ``n_clauses`` rounds. ``math.inf`` turns the noise off.
    n_clauses : int, default=1
        Number of rounds ``k`` (the maximum number of clauses); fixed in advance.
    max_clause_length : int, default=3
        Maximum clause length ``l``; the smart search has ``l + 1`` levels.
    bottom_clause : None or array-like of int or str, default=None
        Public atoms clauses may use (column indices, or column names when fitted on a
        DataFrame). ``None``: all atoms, the thesis's worst-case "fake example" (the
        conjunction of every predicate), which costs no budget.
    search : {"smart", "naive"}, default="smart"
        ``"smart"``: Alg. 4, per-level budget ``epsilon / (k (l + 1))`` split over the
        ``beta_i`` clauses evaluated at level ``i``, with pruning. ``"naive"``: Alg. 3,
        every clause of the lattice (``sum_{i<=l} C(|H_b|, i)`` of them) at once.
    binarize : float or None, default=None
        ``None``: ``X`` must already be binary (0/1), anything else raises
        ``ValueError``. A float: atoms are ``X > binarize`` (a fixed row-wise map, no data
        statistic; as in :class:`sklearn.naive_bayes.BernoulliNB`).
    min_pos : int, default=1
        Smart search deletes the supersets of a clause whose noisy positive count is
        below ``min_pos`` or not above the best noisy coverage so far (post-processing).
    random_state : None, int, Generator or SeedSequence, default=None
        Seed of the noise. ``None`` draws fresh OS entropy. Keep it secret for a real
        release.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``[0, 1]`` (public).
    clauses_ : list of tuple of str
        The learned theory, each clause as a tuple of atom names (``feature_names_in_``
        when fitted on a DataFrame, else ``"x<j>"``). ``()`` is the empty clause, true
        for every example.
    clause_indices_ : list of tuple of int
        The same clauses as column indices.
    clause_noisy_coverage_ : ndarray of shape (n_learned,)
        Released noisy coverage ``P' - N'`` of each learned clause (a DP output).
    bottom_clause_ : ndarray of int
    search_levels_ : list of dict
        One entry per noisy query batch: ``round``, ``level``, ``n_clauses`` (beta_i),
        ``epsilon`` (the batch budget) and ``alpha`` (inverse scale of the geometric
        noise on each of the batch's ``2 beta_i`` counts). The ``epsilon`` values sum to
        ``epsilon``.
    privacy_breakdown_ : dict
        ``{"round r level l": epsilon}`` of the same batches (the shared
        ``dict[str, float]`` form); the values add up to ``epsilon_spent_``.
    epsilon_spent_ : float
    delta_spent_ : float
        Always 0.
    privacy_guarantee_ : str
        ``"exact"``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when fitted on a DataFrame with string column names.

    Notes
    -----
    **Privacy.** Neighbouring relation: add or remove one example (one row = one
    individual; relational data must be propositionalised per individual). Mechanism:
    two-sided geometric noise ``G(alpha)``, pmf ``proportional to exp(-alpha |s|)``, on
    every coverage count. Sensitivity: the ``2 beta`` counts of ``beta`` clauses have L1
    sensitivity ``beta`` (Thm 6.6), so ``alpha = epsilon / (k (l + 1) beta_i)`` for the
    smart search (with the errata's level-``i`` ``beta_i``) and
    ``epsilon / (k sum_{i<=l} C(|H_b|, i))`` for the naive one
    (:func:`skdp.mechanisms.sensitivity.ilp_query_alpha`). Accountant: sequential
    composition of pure-DP levels and rounds (Thms 6.8, 6.9); pruning, clause choice
    and cover removal are post-processing or row-wise filters driven by DP outputs.
    ``epsilon_spent_ = epsilon``, ``delta_spent_ = 0``, guarantee ``"exact"``. No true
    count is stored. Any epsilon-DP learner that is (delta, eta)-useful needs at least
    :func:`ilp_epsilon_lower_bound` (Thm 6.5).

    **Floating point.** Every release is exact in floating point: each is an integer
    count plus two-sided geometric noise sampled in integer arithmetic (Canonne, Kamath
    and Steinke 2020; ``alpha`` rounded down to 20 significant bits, which only adds
    noise), so the attack of Mironov (2012) does not apply. The noise comes from
    ``random_state``, not from a cryptographically secure source.

    ``decision_function`` returns the number of satisfied clauses minus 0.5 (so
    ``predict`` is ``decision_function > 0``); there is no ``predict_proba``: calibrated
    probabilities would need further noisy counts.

    References
    ----------
    .. [1] Lantz, E. (2016). Machine learning for risk prediction and privacy in
       electronic health records. PhD thesis, University of Wisconsin-Madison, ch. 6.
    .. [2] Zeng, C., Naughton, J. F., Cai, J.-Y., Page, D. and Lantz, E. (2014).
       On differentially private inductive logic programming. ILP 2013, LNCS 8812.
    .. [3] Ghosh, A., Roughgarden, T. and Sundararajan, M. (2009). Universally
       utility-maximizing privacy mechanisms. STOC.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.ilp import DPILPClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 2, size=(20000, 5))
    >>> y = X[:, 0] & X[:, 1]                      # planted rule x0 AND x1
    >>> clf = DPILPClassifier(epsilon=1.0, max_clause_length=2, random_state=0).fit(X, y)
    >>> clf.clauses_
    [('x0', 'x1')]
    >>> clf.predict([[1, 1, 0, 0, 0], [1, 0, 1, 1, 1]]).tolist()
    [1, 0]
    """

    _parameter_constraints: dict = {
        **DPEstimatorMixin._privacy_parameter_constraints,
        "n_clauses": [Interval(Integral, 1, None, closed="left")],
        "max_clause_length": [Interval(Integral, 0, None, closed="left")],
        "bottom_clause": ["array-like", None],
        "search": [StrOptions({"smart", "naive"})],
        "binarize": [Real, None],
        "min_pos": [Interval(Integral, None, None, closed="neither")],
        **DPEstimatorMixin._common_constraints("random_state"),
    }
    _parameter_constraints.pop("delta", None)

    def __init__(
        self,
        *,
        epsilon=1.0,
        n_clauses=1,
        max_clause_length=3,
        bottom_clause=None,
        search="smart",
        binarize=None,
        min_pos=1,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.n_clauses = n_clauses
        self.max_clause_length = max_clause_length
        self.bottom_clause = bottom_clause
        self.search = search
        self.binarize = binarize
        self.min_pos = min_pos
        self.random_state = random_state

    def _resolve_bottom_clause(self, n_atoms):
        if self.bottom_clause is None:
            return np.arange(n_atoms)
        names = getattr(self, "feature_names_in_", None)
        out = []
        for a in np.asarray(self.bottom_clause, dtype=object).ravel():
            if isinstance(a, str):
                if names is None or a not in set(names):
                    raise ValueError(f"bottom_clause names unknown atom {a!r}")
                out.append(int(np.nonzero(names == a)[0][0]))
            elif isinstance(a, Integral | np.integer) and 0 <= int(a) < n_atoms:
                out.append(int(a))
            else:
                raise ValueError(
                    f"bottom_clause entries must be column indices in [0, {n_atoms}) "
                    "or column names"
                )
        return np.unique(np.array(out, dtype=np.intp))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Learn the theory.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_atoms) with values in {0, 1}
            A ``dask.array.Array`` or ``dask.dataframe.DataFrame`` is counted partition
            by partition (:doc:`/dask`): each level's satisfy-counts are exact integer
            sums over the partitions, the noise is drawn once in this process, and the
            release is the same as for the same rows in memory.
        y : array-like of shape (n_samples,) with values in {0, 1}

        Returns
        -------
        self : DPILPClassifier
        """
        if any_dask(X, y):
            return self._fit_dask(X, y)
        X, y = validate_data(self, X, y, dtype="numeric", ensure_min_samples=1)
        columns = getattr(self, "feature_names_in_", None)
        X = self._atoms(X)
        y = np.asarray(y)
        if type_of_target(y, input_name="y") == "multiclass":
            raise ValueError("Only binary classification is supported (y in {0, 1}).")
        if y.dtype.kind not in "biuf" or not np.isin(y, (0, 1)).all():
            raise ValueError(
                "Unknown label type: y must be binary with values in {0, 1} (1 = positive)"
            )
        y = y.astype(np.int64)
        epsilon, _ = self._check_privacy_params()
        atoms = self._resolve_bottom_clause(X.shape[1])
        rng = fit_streams(
            self.random_state, ["noise"], estimator=self, X=X, y=y, order_invariant=True
        )["noise"]
        state = {"pos": X[y == 1]}
        Xneg = X[y == 0]
        removed = []

        def counts(level):
            for c in removed[state.get("n_removed", 0) :]:  # cover removal: positives only
                Xpos = state["pos"]
                covered = Xpos[:, list(c)].all(axis=1) if c else np.ones(len(Xpos), bool)
                state["pos"] = Xpos[~covered]
            state["n_removed"] = len(removed)
            return _counts(state["pos"], Xneg, level)

        return self._learn(epsilon, atoms, rng, counts, removed, X.shape[1], columns)

    def _learn(self, epsilon, atoms, rng, counts, removed, n_atoms, columns):
        """The rounds of clause search; ``counts(level)`` gives the true satisfy-counts
        of the positives not covered by the clauses appended to ``removed``."""
        k = self.n_clauses
        eps_round = epsilon / k
        clauses, coverage, breakdown = [], [], []
        for r in range(k):
            best, cov, ledger, _, _ = search_clause(
                None,
                None,
                atoms,
                epsilon=eps_round,
                max_clause_length=self.max_clause_length,
                search=self.search,
                min_pos=self.min_pos,
                rng=rng,
                counts=counts,
            )
            for entry in ledger:
                breakdown.append({"round": r, **entry})
            # add the clause only if its noisy coverage is positive (post-processing);
            # the round's budget is spent either way
            if best is not None and cov > 0 and best not in clauses:
                clauses.append(best)
                coverage.append(cov)
                removed.append(best)  # cover removal: positives only (Aleph)
        names = (
            [str(c) for c in columns] if columns is not None else [f"x{j}" for j in range(n_atoms)]
        )
        self.classes_ = np.array([0, 1])
        self.bottom_clause_ = atoms
        self.clause_indices_ = [tuple(int(a) for a in c) for c in clauses]
        self.clauses_ = [tuple(names[a] for a in c) for c in self.clause_indices_]
        self.clause_noisy_coverage_ = np.asarray(coverage, dtype=float)
        self.search_levels_ = breakdown
        self._record_privacy_spent(
            epsilon,
            0.0,
            guarantee="exact",
            breakdown={f"round {e['round']} level {e['level']}": e["epsilon"] for e in breakdown},
        )
        return self

    def _fit_dask(self, X, y):
        """``fit`` on Dask input: every level's satisfy-counts are summed per partition
        (:func:`~skdp.utils._rowsum.row_sum`, exact integers); the noise is drawn here,
        once per count, from the same stream as for in-memory input, so the release is
        identical. The rows never reach this process."""
        if y is None:
            raise ValueError("y is required")
        columns = column_names(X)
        Xa = as_dask_array(X, name="X") if is_dask_collection(X) else np.asarray(X)
        if Xa.ndim != 2:
            raise ValueError("X must be 2-D (n_samples, n_atoms)")
        if Xa.dtype.kind not in "biuf":
            raise ValueError("X must be binary (0/1 atoms), got a non-numeric array")
        ya = as_dask_array(y, name="y") if is_dask_collection(y) else np.asarray(y)
        if ya.ndim == 2 and ya.shape[1] == 1:
            ya = ya[:, 0]
        if ya.ndim != 1:
            raise ValueError("y must be 1-D")
        n = n_rows(Xa)
        if n_rows(ya) != n:
            raise ValueError("X and y have inconsistent numbers of samples")
        if n == 0:
            raise ValueError("X is empty (0 samples)")
        # one Dask array per input, on the same row chunks
        rows = _known_rows(Xa if is_dask_collection(Xa) else ya)
        Xa = _on_rows(Xa, rows)
        ya = _on_rows(ya, rows)
        if columns is not None:
            self.feature_names_in_ = np.asarray([str(c) for c in columns], dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        n_atoms = int(Xa.shape[1])
        self.n_features_in_ = n_atoms
        epsilon, _ = self._check_privacy_params()
        atoms = self._resolve_bottom_clause(n_atoms)
        # the digest sees what the in-memory path digests: the 0/1 atoms and y
        if self.binarize is not None:
            Xd = (Xa > self.binarize).astype(np.int32)
        else:
            Xd = Xa
        rng = fit_streams(
            self.random_state, ["noise"], estimator=self, X=Xd, y=ya, order_invariant=True
        )["noise"]
        names = [str(c) for c in columns] if columns is not None else None
        removed = []

        def counts(level):
            fn = functools.partial(_block_counts, level, tuple(removed), self.binarize, names)
            total = row_sum(fn, Xa, ya)
            return total[0], total[1]

        return self._learn(epsilon, atoms, rng, counts, removed, n_atoms, columns)

    def _atoms(self, X):
        """0/1 int32 atoms from validated ``X`` (raise on non-binary unless ``binarize``)."""
        if X.dtype.kind not in "biuf":
            raise ValueError("X must be binary (0/1 atoms), got a non-numeric array")
        if X.dtype.kind == "f" and not np.isfinite(X).all():
            raise nonfinite_error(X, "X")
        if self.binarize is not None:
            return (X > self.binarize).astype(np.int32)
        _check_binary(X, "X", getattr(self, "feature_names_in_", None))
        return X.astype(np.int32)

    def _satisfied(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype="numeric", reset=False)
        X = self._atoms(X).astype(bool)
        out = np.zeros((X.shape[0], len(self.clause_indices_)), dtype=bool)
        for j, c in enumerate(self.clause_indices_):
            out[:, j] = X[:, list(c)].all(axis=1) if c else True
        return out

    def decision_function(self, X):
        """Number of satisfied clauses minus 0.5 (positive iff predicted 1)."""
        return self._satisfied(X).sum(axis=1) - 0.5

    def predict(self, X):
        """1 iff some learned clause is satisfied (every atom of the clause is 1)."""
        return self._satisfied(X).any(axis=1).astype(np.int64)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags
