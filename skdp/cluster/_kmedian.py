"""SubsampledExpMedian: private k-median with the subsampled exponential mechanism.

Lantz 2016, ch. 8 (Lantz, Boyd and Page 2015).
"""

from __future__ import annotations

import functools
import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from skdp.base import DPEstimatorMixin
from skdp.cluster._kmedian_costs import (
    _METRICS,
    _all_subsets,
    _box_sets,
    _kpp_subsets,
    _nearest,
    _negative_costs,
    _uniform_subsets,
    kmedian_costs,
)
from skdp.cluster._kmedian_plan import KMedianPlan, plan_kmedian
from skdp.cluster._kmedian_rounds import BoxSearchRounds
from skdp.mechanisms import exponential_mechanism, subsampled_exponential_mechanism
from skdp.utils._docstrings import insert_docs
from skdp.utils._groups import bound_contributions, patient_codes
from skdp.utils._keyword_init import keyword_init
from skdp.utils._parts import single_part_renamed
from skdp.utils._patient_facts import PatientFactsMixin
from skdp.utils._random import fit_streams
from skdp.utils._rowsum import check_dask_input, is_dask_collection, n_rows
from skdp.utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
    check_is_fitted,
    validate_data,
)

__all__ = ["SubsampledExpMedian", "kmedian_costs"]

#: the fit's random streams: the mechanisms' noise, the rows kept per patient
_STREAMS = ["noise", "groups"]


def _finite_cost(total):
    """The cost as a float, refused where it overflowed float64."""
    total = float(total)
    if not np.isfinite(total):
        raise ValueError("the k-median cost of X overflows float64 (values near 1e308); rescale X")
    return total


@insert_docs
class SubsampledExpMedian(
    PatientFactsMixin, BoxSearchRounds, DPEstimatorMixin, ClusterMixin, BaseEstimator
):
    """Differentially private k-median with the subsampled exponential mechanism.

    ``n_candidates`` sets of ``n_clusters`` centres are drawn from a data-independent
    base distribution over a public candidate set ``candidates``, and one is selected
    with the exponential mechanism whose quality is the negative (truncated) k-median
    cost of the private data (Lantz 2016, Def. 8.1). ``n_candidates=None`` runs the
    plain exponential mechanism over all ``C(|V|, k)`` subsets of the candidate set
    instead (for comparison; feasible only for small settings).

    With only a public box ``bounds`` (the default use: ``k``, ``epsilon`` and the box),
    the output space is continuous and a single subsample cannot cover it, so the search
    runs in rounds (``n_rounds``): round 1 counts the points in the cells of a public grid
    on the box, adds discrete Laplace noise to the counts, and takes a weighted k-median
    of the noisy cells (post-processing) as the starting centres (``first_round``); where
    the public numbers allow it, a private Lloyd step of k-medians follows
    (``median_step``); each later round is a subsampled exponential mechanism over
    ``n_candidates`` centre sets drawn around the previous round's choice, in a cube
    that shrinks by a factor 0.7 per round. The rounds compose to ``epsilon``.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of centres ``k``.
    epsilon : float, default=1.0
        Total privacy loss of one ``fit`` (pure epsilon-DP). ``math.inf`` selects the
        best sampled candidate set (the optimum when ``n_candidates=None``).
    n_candidates : int, "auto" or None, default="auto"
        Number ``m`` of candidate sets drawn from the base distribution (per round of the
        box search). ``"auto"``: with ``candidates``, ``ceil(6 k ln |V|)`` (the iteration
        count of Gupta et al.'s private local search, the thesis's ``ssemauto``); with
        the box, 512 per round. ``None``: the plain exponential mechanism over every
        k-subset of ``candidates``.
    candidates : array-like of shape (n_candidates_points, n_features) or None
        Public candidate centres ``V``. Centres are chosen among them.
    bounds : (lo, hi) of scalars or per-feature arrays, or None, default=None
        Public box. Without ``candidates``, centres are searched in this box (see
        ``n_rounds``). It is not used to clip data (the cost is truncated instead, see
        Notes).
    base : {"uniform", "kmeans++"}, default="uniform"
        Base distribution of a candidate set: a uniform random k-subset of ``V`` (or k
        uniform points of the box), or a k-means++ seeding on ``V`` (``candidates``
        needed). Either way it is independent of the private data.
    kpp_weighting : {"square", "inverse"}, default="square"
        k-means++ weighting of later centres by the squared distance to the nearest
        chosen one (standard), or by its inverse (the literal description of Lantz
        2016, §8.3.1.1; spreads centres less).
    sensitivity : float or None, default=None
        Cap ``Delta`` on each point's contribution to the cost and sensitivity of the
        quality. ``None``: the diameter of the public domain, i.e. of ``candidates``
        (or of the box ``bounds``).
    metric : {"euclidean", "manhattan"}, default="euclidean"
    chunk_size : int, default=2**22
        Approximate number of distances held in memory at once during cost evaluation.
    n_rounds : int or "auto", default="auto"
        Rounds of the box search (``bounds`` without ``candidates``). ``1``: the
        thesis's single subsampled exponential mechanism with ``n_candidates`` sets of
        ``k`` points uniform in the box. ``"auto"``: from the public box, ``epsilon`` and
        the number of points (``box_search_schedule``: enough rounds that the last
        radius reaches the displacement the selection can resolve, 2 to 12). Round 1
        and the local rounds; the median step (``median_step``), when it runs, is one
        more. Must be 1 or ``"auto"`` with ``candidates``.
    n_public : int or None, default=None
        Public number of private points used by the ``"auto"`` schedule of the box
        search. ``None``: ``len(X)``, which treats the row count as public (as
        ``KMeans`` and the library's other estimators that read ``n``); pass a declared
        number for a strict add/remove guarantee on the count.
    first_round : {"auto", "histogram", "grid"}, default="auto"
        Round 1 of the box search. ``"histogram"``: noisy cell counts on a public grid
        (``g`` cells per axis from the public ``d``, ``n`` and round 1's epsilon, see
        Notes), then a weighted k-median of the noisy cells. ``"grid"``: the exponential
        mechanism over k-subsets of a coarse public grid (the search of earlier
        versions). ``"auto"``: the histogram whenever its grid has at most 2**16 cells
        (up to 16 features), else the grid subsets.
    median_step : {"auto"} or bool, default="auto"
        After round 1 of the box search, move each coordinate of each centre to a
        private median of its points' coordinates (one Lloyd step of k-medians, within
        one round-1 cell of the current value; see Notes), with 30 % of the local
        rounds' budget. ``"auto"``: only when the scale of the step's rank error,
        ``(4 d / epsilon_m) ln(window)``, is at most a tenth of the mean cluster size
        ``n / k`` (public numbers only); ``True``/``False``: always/never.
    secure_mode : bool, default=False
        Draw the box histogram's discrete Laplace noise from ``os.urandom`` (exact
        integer sampling either way; not reproducible with ``random_state``). The
        exponential-mechanism choices still use the fit's generator (see Notes).
    max_rows_per_group : int or None, default=None
        The public number of rows one patient may contribute when ``fit`` gets
        ``groups`` (from the visit schedule or the study protocol, never from the
        data): rows beyond it are dropped at random and every round's sensitivity is
        that many times the row's, so ``epsilon`` holds per patient (:doc:`/patients`).
        Required with ``groups``.
    random_state : None, int, Generator or SeedSequence, default=None
        Seed of the candidate sampling and of the selection. ``None`` draws fresh OS
        entropy. Keep it secret for a real release.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    center_indices_ : ndarray of shape (n_clusters,) or None
        Rows of ``candidates`` chosen as centres (``None`` for the box base).
    n_candidates_ : int
        Number of candidate sets the exponential mechanisms chose from (summed over
        rounds; the histogram round has none).
    n_rounds_ : int
        Rounds of the search (1 except for the multi-round box search, where the median
        step counts as one).
    first_round_ : {"histogram", "grid"} or None
        Round 1 of the box search as run (``None`` without the box search).
    first_round_cells_ : int or None
        Cells per axis of the histogram round's grid (public), else ``None``.
    median_step_ : bool
        Whether the private median step ran (then it is round 2).
    round_epsilons_ : ndarray of shape (n_rounds,)
        Privacy loss of each round (public; sums to ``epsilon``).
    privacy_breakdown_ : dict
        ``{"round_t": epsilon_t}`` (rounds numbered from 1; ``"round t"`` in releases
        before this one), or ``{"round": epsilon}`` for one round (e.g. with
        ``candidates``; its key ``"round_1"`` of before 0.2 still reads, with a
        ``FutureWarning``), the same losses in the shared ``dict[str, float]`` form (keys
        as in ``doc/glossary.rst``); the values add up to ``epsilon_spent_``. Both
        come from the fit's public plan (``_kmedian_plan.plan_kmedian``), computed
        from the parameters, ``n_features`` and the public row count before any data
        are read.
    round_sensitivities_ : ndarray of shape (n_rounds,)
        Sensitivity ``Delta_t`` of each round (public): for round 1, 2 (the L1
        sensitivity of the histogram's counts) or ``Delta`` (the grid round's quality);
        1 for the median step (the rank utility); twice the largest centre move for the
        local rounds (capped at ``Delta``).
    sensitivity_ : float
        The cap ``Delta`` on each point's cost (public; per patient the quality moves
        by up to ``k Delta``, see ``round_sensitivities_``).
    {attr_patient_facts}
    {attr_spent_pure_exact}
    {attr_features_in}

    Notes
    -----
    **Privacy.** Neighbouring relation: add, remove or move (replace) one private
    point (the thesis's relation for ch. 8; for add/remove, the library default, the
    guarantee is the same). Mechanism: the subsampled exponential mechanism (Lantz 2016,
    Def. 8.1 and Thm 8.2), which is exact pure ``epsilon``-DP because the candidate sets
    are sampled independently of the data; the exponent is ``epsilon * q / (2 Delta)``.
    Quality ``q(F) = -sum_x min(Delta, d(x, F))``: the truncation at ``Delta`` makes the
    sensitivity exactly ``Delta`` for any data, and it changes nothing when every private
    point lies in the convex hull of ``candidates`` (Euclidean metric; the default
    ``Delta`` is then the diameter of ``candidates``). Accountant: a single
    pure-DP mechanism, ``epsilon_spent_ = epsilon``, ``delta_spent_ = 0``,
    ``privacy_guarantee_ = "exact"``. The fitted estimator stores no private statistic:
    in particular no cost, ``inertia_`` or training ``labels_`` (``fit_predict`` returns
    the labels without storing them). ``score`` evaluates the cost of the data it is
    given and is not private.

    **Box search.** Round 1 with ``first_round="histogram"`` (the default for up to 16
    features): the points are counted in the ``g**d`` cells of a regular grid on the box
    (points outside it in the edge cells) and each count gets independent discrete
    Laplace noise of scale ``2 / epsilon_1`` (Ghosh et al. 2009; sampled exactly with
    integer arithmetic, Canonne, Kamath and Steinke 2020). Adding or removing a point
    changes one count by 1 and moving one changes two, so the counts' L1 sensitivity is
    at most 2 and the release is exactly ``epsilon_1``-DP under every relation above.
    ``g`` is the largest number of cells per axis with ``g**d <= min(2**16, n)`` and
    ``g**d / epsilon_1 <= 0.1 n`` (the positive part of the noise on empty cells then adds at most
    about a tenth of ``n`` as spurious mass), but at least 2 and with at least ``k``
    cells; it reads only ``d``, ``k``, ``epsilon_1`` and ``n_public`` (or ``len(X)``).
    The starting centres are a weighted k-median of the cell centres with the noisy
    counts (negative ones set to 0) as weights: weighted k-means++ seeding and Lloyd
    steps, restarted, keeping the run with the smallest weighted truncated cost; this is
    post-processing of the counts (its random restarts use the fit's stream, not the
    data). The local rounds then start from cubes of half-width ``1 / (2 g)`` of the box.
    **Median step** (``median_step``; round 2 when it runs, with ``epsilon_m = 0.3`` times
    the local rounds' total, which shrink by that much): every point is assigned to its
    nearest current centre (an earlier private release), and each coordinate ``a`` of
    each centre ``j`` is chosen by the exponential mechanism among the points
    ``lo + (hi - lo) i / 256`` within one round-1 cell of its current value (public),
    with utility ``-|#{x in j: x_a < v} - #{x in j: x_a > v}|`` (a private median;
    McSherry and Talwar 2007, Smith 2011), sensitivity 1 and ``epsilon_m / (2 d)``.
    Adding or removing a point changes the utilities of one centre's ``d`` choices by at
    most 1; moving one changes those of at most two centres, or of one by 2, so the step
    is ``epsilon_m``-DP under every relation above.
    Round 1 with ``first_round="grid"``: the exponential mechanism over the k-subsets of
    a public coarse grid with at least ``4 k`` points (all of them when scoring them costs at most
    ``ROUND1_WORK`` distance lookups for ``min(n, cells)`` scored points, a public bound on
    the occupied cells, else that many uniform draws, at least 4,096), exponent
    ``epsilon_1 / (2 Delta)``; its quality scores each private point by the centre of its
    cell in a grid twice as fine (``sum_x min(Delta, d(cell(x), F))``, each term still in
    ``[0, Delta]``), which only makes scoring cheaper. Neither the number of subsets nor
    the quality depends on how many cells the data occupy. Round ``t >= 2``: the
    subsampled exponential mechanism over ``n_candidates`` sets drawn around the previous
    choice ``F0`` (set 0 is ``F0``; each other set moves every centre, or one, uniformly in
    a cube of public half-width ``r_t``). Every candidate moves each centre by at most
    ``rho_t = ||r_t||`` in the metric, so ``|min(Delta, d(x, F)) - min(Delta, d(x, F0))| <=
    rho_t`` for every point ``x``; the exponential mechanism's law is unchanged by adding
    the ``F``-independent ``cost(D, F0)`` to the quality, and the sum of the per-point
    differences changes by at most ``rho_t`` (add/remove) or ``2 rho_t`` (move). The round's
    exponent is ``epsilon_t / (2 Delta_t)`` with ``Delta_t = min(Delta, 2 rho_t + 4 u)``, a
    public number (``u``: the grid step of the exact accumulation below; rounding can move
    a point's term by ``rho_t`` plus about one step). Each round is exactly
    ``epsilon_t``-DP; the candidate sets depend on the data only through the earlier
    private choices (adaptive composition), and the ``epsilon_t`` (``round_epsilons_``)
    sum to ``epsilon``. The grid, the radii and the split read only
    the box, ``epsilon``, ``k`` and ``n_public`` (or ``len(X)``).

    **Patients.** With ``groups`` the neighbouring relation is add or remove one
    patient with all their rows (:doc:`/patients`). Each patient keeps at most ``k =
    max_rows_per_group`` rows, chosen uniformly at random inside the mechanism; the
    number of rows kept is treated as public as ``n`` is (or pass ``n_public``). Every
    quality above is a sum of per-row terms, so a patient moves it by at most ``k``
    times the row bound (:func:`~skdp.mechanisms.sensitivity.group_sensitivity`):
    ``k Delta`` for the exponential mechanisms and the grid round
    (:func:`~skdp.mechanisms.sensitivity.kmedian_cost_sensitivity`), ``k Delta_t`` for
    the local rounds, ``k`` for the median step's rank utilities (the ``k d``
    choices' utilities move by at most ``k d`` in total) and ``k`` for the histogram's
    counts (L1, add/remove). The plan multiplies each round's sensitivity by ``k``
    once, so each round is ``epsilon_t``-DP per patient and the rounds compose to
    ``epsilon``. The box search's public schedule reads ``n / k`` where it reads
    ``epsilon n`` (what the selections can resolve) and the histogram's noise scale
    ``k / epsilon_1`` in its grid rule. The candidate sets are drawn without looking at
    the data: nothing is subsampled from the rows, so no amplification by subsampling is
    claimed, per row or per patient. Dask input with ``groups`` is refused.

    **Exact accumulation.** Each point's term ``min(Delta, d(x, F))`` is rounded to the
    nearest multiple of ``u = Delta 2^-40`` and the integers are summed exactly (int64
    blocks combined with a carry), on in-memory and Dask input alike. Rounding is
    monotone and maps ``Delta`` to ``2^40 u``, so every rounded term stays in ``[0,
    Delta]`` and the sensitivity above is unchanged; a cost moves by at most ``n u / 2``
    (about ``4.6e-13 n Delta``), far below the mechanism's resolution ``2 Delta /
    epsilon``. The costs then do not depend on the order or the grouping of the rows.

    **Dask input** (:doc:`/dask`). A ``dask.array.Array`` or ``dask.dataframe.DataFrame``
    ``X`` is scored partition by partition on the workers: every pass returns to the
    client only the exact cost vector of the round's candidate sets (the box search's
    first round counts each partition's points per cell on the worker, or, with
    ``first_round="grid"``, snaps them to the cells there). The candidate
    sets are drawn on the client from public numbers and earlier private choices; no row
    reaches it. ``n`` (for ``n_public=None``) is the row count from the partitions'
    lengths, as ``len(X)`` for in-memory input. With an integer ``random_state`` the
    stream is bound to a digest of the multiset of rows, so the release is bit-identical
    to the in-memory one for every partitioning (and for a permutation of the rows).

    **Floating point.** Not exact in floating point: the exponential-mechanism choice
    among the candidate sets uses floating-point log-weights and Gumbel draws
    (Gumbel-max); the guarantee is for the mathematical mechanism (Mironov 2012). The
    candidate sets themselves are drawn without looking at the data. The histogram
    round is exact (integer noise); ``secure_mode=True`` draws that noise from
    ``os.urandom``, but not the Gumbel draws, which no exact sampler covers yet.

    References
    ----------
    .. [1] Lantz, E. (2016). Machine learning for risk prediction and privacy in
       electronic health records. PhD thesis, University of Wisconsin-Madison, ch. 8.
    .. [2] Lantz, E., Boyd, K. and Page, D. (2015). Subsampled exponential mechanism:
       differential privacy in large output spaces. AISec.
    .. [3] McSherry, F. and Talwar, K. (2007). Mechanism design via differential
       privacy. FOCS.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.cluster import SubsampledExpMedian
    >>> rng = np.random.default_rng(0)
    >>> V = rng.uniform(-1, 1, size=(100, 2))          # public candidate centres
    >>> X = np.vstack([rng.normal(-0.5, 0.1, (50, 2)), rng.normal(0.5, 0.1, (50, 2))])
    >>> km = SubsampledExpMedian(n_clusters=2, epsilon=5.0, candidates=V, random_state=0)
    >>> km.fit(X).cluster_centers_.shape
    (2, 2)
    >>> km.n_candidates_
    56

    From a user's defaults, ``k``, ``epsilon`` and the public box:

    >>> est = SubsampledExpMedian(n_clusters=2, bounds=(-1, 1), random_state=0).fit(X)
    >>> est.cluster_centers_.shape, est.n_rounds_ > 1
    ((2, 2), True)
    """

    _parameter_constraints: dict = {
        # pure epsilon: no delta parameter
        "epsilon": DPEstimatorMixin._privacy_parameter_constraints["epsilon"],
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "n_candidates": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}), None],
        "candidates": ["array-like", None],
        "bounds": [tuple, list, np.ndarray, None],
        "base": [StrOptions({"uniform", "kmeans++"})],
        "kpp_weighting": [StrOptions({"square", "inverse"})],
        "sensitivity": [Interval(Real, 0, None, closed="neither"), None],
        "metric": [StrOptions(set(_METRICS))],
        "chunk_size": [Interval(Integral, 1, None, closed="left")],
        "n_rounds": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "n_public": [Interval(Integral, 1, None, closed="left"), None],
        "first_round": [StrOptions({"auto", "histogram", "grid"})],
        "median_step": ["boolean", StrOptions({"auto"})],
        "secure_mode": ["boolean"],
        "max_rows_per_group": [None, Interval(Integral, 1, None, closed="left")],
        **DPEstimatorMixin._common_constraints("random_state"),
    }
    #: parameters added after fixed-seed releases were pinned: left out of the seed
    #: material at these defaults (``skdp.utils._random.fit_streams``)
    _later_parameters = {"secure_mode": False}

    __init__ = keyword_init(
        [
            ("n_clusters", 2),
            ("epsilon", 1.0),
            ("n_candidates", "auto"),
            ("candidates", None),
            ("bounds", None),
            ("base", "uniform"),
            ("kpp_weighting", "square"),
            ("sensitivity", None),
            ("metric", "euclidean"),
            ("chunk_size", 1 << 22),
            ("n_rounds", "auto"),
            ("n_public", None),
            ("first_round", "auto"),
            ("median_step", "auto"),
            ("secure_mode", False),
            ("max_rows_per_group", None),
            ("random_state", None),
        ],
        qualname="SubsampledExpMedian.__init__",
    )

    @_fit_context(prefer_skip_nested_validation=True)
    @insert_docs
    def fit(self, X, y=None, *, groups=None):
        """Select ``n_clusters`` centres privately.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Private points: a numpy array, a pandas DataFrame, or a Dask array or
            DataFrame (scored per partition; see Notes).
        y : None
            Ignored.
        {param_groups}
            Every round's sensitivity is that many times the row's (Notes). In memory
            only.

        Returns
        -------
        self : SubsampledExpMedian
        """
        X, n = self._validate_rows(X)
        codes, k = patient_codes(self, groups, n, dask_input=is_dask_collection(X))
        if codes is not None:  # the rows kept: at most k per patient (public, as n)
            n = int(np.minimum(np.bincount(codes), k).sum())
        plan = plan_kmedian(self, X.shape[1], n, k)
        # the release is a function of the multiset of rows: a chunk-invariant digest
        # (with groups the kept subset depends on the row order: order-dependent)
        streams = fit_streams(
            self.random_state,
            _STREAMS,
            estimator=self,
            X=X,
            groups=codes,
            order_invariant=codes is None,
        )
        rng = streams["noise"]
        if codes is not None:  # at most k rows per patient, chosen at random
            X = X[bound_contributions(codes, k, streams["groups"])]
        if plan.variant == "box_search":
            chosen = self._box_search(X, plan, rng)
        elif plan.variant == "enumerate":
            chosen = self._select_enumerated(X, plan, rng)
        else:
            chosen = self._select_subsampled(X, plan, rng)
        return self._record(plan, chosen)

    def _validate_rows(self, X):
        """``(X, n)``: validated numpy rows, or a Dask collection checked for metadata
        only (its values are checked block by block on the workers)."""
        if not is_dask_collection(X):
            X = validate_data(self, X, dtype=np.float64, ensure_min_samples=1)
            return X, X.shape[0]
        X, _ = check_dask_input(self, X)
        n = n_rows(X)
        if n < 1:
            raise ValueError("Found array with 0 sample(s) while a minimum of 1 is required.")
        return X, n

    def _select_enumerated(self, X, plan, rng):
        """The plain exponential mechanism over all ``C(|V|, k)`` subsets of the
        candidates (``n_candidates=None``): the chosen subset's indices."""
        V = plan.candidates
        subsets = _all_subsets(V.shape[0], plan.n_clusters)
        return self._select_subset(X, V, subsets, plan.epsilon, plan, rng)

    def _select_subsampled(self, X, plan, rng):
        """One subsampled exponential mechanism over ``plan.n_sets`` candidate sets drawn
        from the candidates (index subsets) or uniform in the box (centre sets); with
        ``epsilon = inf``, the best of them."""
        sample = self._candidate_sampler(plan)
        utility = functools.partial(
            _negative_costs,
            X,
            V=plan.candidates,
            metric=plan.metric,
            cost_sensitivity=plan.cost_sensitivity,
            chunk_size=self.chunk_size,
        )
        if math.isinf(plan.epsilon):
            cands = sample(plan.n_sets, rng)
            return cands[int(np.argmax(utility(cands)))]
        cands, best = subsampled_exponential_mechanism(
            sample,
            utility,
            m=plan.n_sets,
            epsilon=plan.epsilon,
            sensitivity=plan.round_sensitivities[0],
            rng=rng,
        )
        return np.asarray(cands)[int(best)]

    def _candidate_sampler(self, plan):
        """The data-independent base distribution ``(m, rng) -> candidate sets``."""
        k, V = plan.n_clusters, plan.candidates
        if V is None:
            return functools.partial(_box_sets, *plan.box, k)
        if self.base == "uniform":
            return functools.partial(_uniform_subsets, V.shape[0], k)
        return functools.partial(
            _kpp_subsets, V, k, metric=plan.metric, weighting=self.kpp_weighting
        )

    def _record(self, plan: KMedianPlan, chosen):
        """Write the fitted attributes: the centres, and the public facts of ``plan``."""
        if plan.candidates is not None:
            self.center_indices_ = np.sort(np.asarray(chosen, dtype=np.intp))
            self.cluster_centers_ = plan.candidates[self.center_indices_].copy()
        else:
            self.center_indices_ = None
            self.cluster_centers_ = np.asarray(chosen, dtype=float).copy()
        search = plan.search
        self.sensitivity_ = float(plan.cost_sensitivity)
        self.n_candidates_ = int(plan.n_candidates)
        self.n_rounds_ = plan.n_rounds
        self.first_round_ = search.first_round if search is not None else None
        self.first_round_cells_ = search.cells if search is not None else None
        self.median_step_ = bool(search is not None and search.median_step)
        self.round_epsilons_ = np.asarray(plan.round_epsilons, dtype=float)
        self.round_sensitivities_ = np.asarray(plan.round_sensitivities, dtype=float)
        self._max_rows_per_group = plan.max_rows_per_group  # privacy_unit_, max_rows_...
        self._record_privacy_spent(
            plan.epsilon_spent, 0.0, guarantee="exact", breakdown=plan.privacy_breakdown
        )
        self.privacy_breakdown_ = single_part_renamed(
            self.privacy_breakdown_, "round", "SubsampledExpMedian.privacy_breakdown_"
        )
        return self

    @staticmethod
    def _select(q, epsilon, sensitivity, rng):
        """Index of the exponential mechanism's choice (the best one at ``epsilon = inf``)."""
        if math.isinf(epsilon):
            return int(np.argmax(q))
        return int(exponential_mechanism(q, epsilon=epsilon, sensitivity=sensitivity, rng=rng))

    def predict(self, X):
        """Index of the nearest centre for each row of ``X`` (post-processing).

        A Dask ``X`` gives a lazy 1-D Dask array (nothing is computed here).
        """
        check_is_fitted(self)
        if is_dask_collection(X):
            Xa, _ = check_dask_input(self, X, reset=False)
            return Xa.rechunk({1: -1}).map_blocks(
                _nearest, self.cluster_centers_, self.metric, drop_axis=1, dtype=np.int64
            )
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return _nearest(X, self.cluster_centers_, self.metric)

    def fit_predict(self, X, y=None, *, groups=None):
        """Fit, then return the nearest-centre labels of ``X`` (not stored)."""
        return self.fit(X, groups=groups).predict(X)

    def score(self, X, y=None):
        """Negative (untruncated) k-median cost of ``X`` for the fitted centres.

        Not differentially private: it evaluates the data it is given. NaN or infinite
        values raise ``ValueError`` for numpy and Dask input alike (a Dask partition is
        checked on the workers, in the same pass as the cost), and so does a cost that
        overflows float64 (values near ``1e308``) instead of returning ``-inf``.
        """
        check_is_fitted(self)
        if is_dask_collection(X):  # summed on the workers; one float comes back
            Xa, _ = check_dask_input(self, X, reset=False)
            dist = Xa.rechunk({1: -1}).map_blocks(
                _nearest, self.cluster_centers_, self.metric, True, drop_axis=1, dtype=float
            )
            import dask  # already imported: X is a Dask collection

            total, bad = dask.compute(dist.sum(), (~np.isfinite(Xa)).any())
            if bool(bad):  # what validate_data refuses for numpy input
                from skdp.utils._data_free import MISSING_VALUES_ADVICE

                raise ValueError(
                    "Input X contains NaN or infinity (values not shown). If it holds "
                    "missing values: " + MISSING_VALUES_ADVICE
                )
            return -_finite_cost(total)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return -_finite_cost(
            kmedian_costs(
                X, self.cluster_centers_[None], metric=self.metric, chunk_size=self.chunk_size
            )[0]
        )
