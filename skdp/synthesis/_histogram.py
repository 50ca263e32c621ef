"""DPHistogramSynthesizer: private (projected) histograms for synthetic data (Vinterbo 2012)."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, DensityMixin

from skdp.base import DPEstimatorMixin
from skdp.mechanisms._front_end import TabularFrontEnd
from skdp.synthesis._histogram_cells import (
    cell_counts,
    column_bins,
    lei_n_bins,
    noisy_cells,
    projection_groups,
)
from skdp.synthesis._histogram_groups import (
    COUNT_SYNTHESIS_DOCS,
    count_fit_inputs,
    keep_flat,
)
from skdp.synthesis._histogram_plan import HistogramPlan
from skdp.synthesis._histogram_sampling import HistogramSamplingMixin
from skdp.utils._deprecation import DEPRECATED, RenamedKeys, renamed_parameter
from skdp.utils._docstrings import groups_entry, insert_docs
from skdp.utils._keyword_init import keyword_init
from skdp.utils._logging import get_logger, log_progress, verbose_handler
from skdp.utils._patient_facts import PatientFactsMixin
from skdp.utils._rowsum import n_rows
from skdp.utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
)
from skdp.utils._tabular.constraints import tabular_constraints, tabular_params

__all__ = ["DPHistogramSynthesizer", "lei_n_bins"]

_logger = get_logger(__name__)


#: the ``groups`` entry of ``fit``
_GROUPS_DOC = groups_entry(
    """ and the noise
    and the threshold are that many times the row's (Notes, "Patients"). Needs
    declared bounds; with Dask input a Dask array or Series of labels aligned
    with the rows (bounded on the workers)."""
)


@insert_docs(**COUNT_SYNTHESIS_DOCS)
class DPHistogramSynthesizer(
    HistogramSamplingMixin,
    PatientFactsMixin,
    TabularFrontEnd,
    DPEstimatorMixin,
    DensityMixin,
    BaseEstimator,
):
    """Synthetic data from a differentially private (projected) histogram.

    The public schema defines a finite domain: numeric columns are cut into equal-width
    bins within their declared bounds, categorical and binary columns keep their
    declared levels. The table's histogram over that domain receives exact integer
    (discrete Laplace) noise on **every** cell (empty cells too), cells at or below
    ``threshold * log(n) / eps`` are set to 0, and synthetic rows are drawn from the
    surviving cells (Vinterbo 2012, as used by Lantz 2016 §5.4.1, with the thesis's
    Laplace noise replaced by its exact integer analogue).

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy loss of one ``fit`` (including a private bound estimate).
    bounds : None, "private", "data", (lo, hi), or dict {column: (lo, hi)}, default=None
        Public bounds of the numeric columns (see
        :meth:`skdp.utils.schema.TabularSchema.from_data`). Missing bounds are estimated
        privately with 10 % of ``epsilon`` (:func:`skdp.mechanisms.resolve_bounds`)
        {param_bounds_estimate}
    {param_categories}
    {param_column_types}
    {param_schema_tabular}
    {param_missing_cells}
    n_bins : "auto", int or dict {column: int}, default="auto"
        Bins per numeric column. ``"auto"``: Lei's heuristic :func:`lei_n_bins` with
        the public ``n`` and the number of columns of the column's histogram, and one
        bin per value for integer columns with a small declared domain (see
        ``max_integer_levels`` and Notes, "Bins"). An int (or a dict entry) is used as
        given, except that integer columns get at most one bin per integer; columns a
        dict leaves out follow ``"auto"``.
    projections : None or list of lists of column names, default=None
        ``None``: one joint histogram of all columns. Otherwise each listed group of
        columns (groups are disjoint) gets its own noisy histogram, with ``epsilon``
        split equally between the groups; synthetic rows combine independent draws
        from each group, and unlisted columns are drawn uniformly from their public
        domain. The projections must be chosen without looking at the data.
    mechanism : {"geometric", "laplace"}, default="geometric"
        The noise of the cells. ``"geometric"``: exact two-sided geometric (discrete Laplace) noise
        ``G(epsilon_g)``, pmf ``prop. to exp(-epsilon_g |k|)`` on the integers, drawn in
        integer arithmetic (Canonne, Kamath & Steinke 2020); released counts are
        integers. ``"laplace"``: continuous Laplace noise of scale ``1 / epsilon_g`` (the
        thesis) drawn in floating point, which is **not safe** against the attack of
        Mironov (2012) -- at ``epsilon=1`` about 10 % of the values released from a
        true count of 10 could not have come from 11 -- unless ``secure_mode=True``,
        which replaces it with exact discrete Laplace noise on the grid of multiples
        of ``2**-10``. All options are ``epsilon_g``-DP for a sensitivity-1 histogram
        in exact arithmetic.
    noise : {"geometric", "laplace"}
        Deprecated name of ``mechanism`` (``FutureWarning``; removed in 0.2). A fit with
        ``noise=`` releases the same values as with ``mechanism=`` (same seed).
    secure_mode : bool, default=False
        Draw the histogram noise from the operating system's cryptographically
        secure generator (``os.urandom``) instead of ``random_state``, and make
        ``mechanism="laplace"`` floating-point safe (see ``mechanism``). The noise is then not
        reproducible; :meth:`sample` still uses ``random_state``.
    threshold : float, default=0.5
        ``A`` in the filter threshold ``tau = A * log(n) / epsilon_group``.
    n_public : int, default=None
        Public row count used in the bin heuristic and the threshold. ``None`` uses
        ``n = len(X)``, which treats the size of the data as public (the library's
        add/remove relation with ``n`` public).
    representative : {"uniform", "midpoint"}, default="uniform"
        Numeric values of synthetic rows: drawn uniformly within their bin (integer
        columns: uniformly among the bin's integers), or the bin's midpoint (the
        thesis; integer columns: the middle integer of the bin, rounded down), which
        gives each numeric column only as many distinct values as it has bins. Both
        are data-independent and stay within the declared bounds.
    sampling : {"systematic", "iid"}, default="systematic"
        How :meth:`sample` draws the cells of ``n_samples`` rows from each noisy
        histogram: ``"systematic"`` gives every cell its expected number of rows
        rounded up or down (systematic sampling, rows in random order; each row is
        still an exact draw from the normalised counts), so a small sample keeps the
        histogram's marginals without multinomial sampling noise, like the synthetic
        data set ``D_eps`` (``n_samples=None``) but of any size; ``"iid"`` draws
        independent rows. Post-processing either way.
    {param_clip_tabular}
    max_cells : int, default=10**7
        Histograms with at most this many cells are noised densely; larger ones use the
        exact sparse sampler (see Notes).
    max_survivors : int, default=10**7
        The sparse sampler refuses (``ValueError``) when noise alone is expected to
        lift more than this many cells over the threshold. The decision uses public
        quantities only (the number of cells, ``epsilon_g`` and the threshold), never
        the number of occupied cells, and the message carries no count of the data.
    smoothing : float in [0, 1), default=1e-3
        Weight of the uniform density mixed into :meth:`score_samples` so that every
        in-domain point has a finite log-likelihood. Does not affect :meth:`sample`.
    max_integer_levels : int >= 0, default=32
        With ``n_bins="auto"``, an integer column whose declared bounds hold ``m``
        integers with ``k < m <= max(k, max_integer_levels)`` (``k`` its Lei bin
        count) may get one bin per value instead of ``k`` groups, within the noise
        budget of its histogram (Notes, "Bins"). ``0`` keeps Lei's groups.
    {param_max_rows_per_group_count}
    {param_verbose_count}
        Progress is always logged to the ``"skdp"`` logger: one record per released
        histogram (projection), with the number released so far, the planned total and
        the epsilon spent so far, all public (never a count of the rows).
    random_state : None, int, Generator or SeedSequence, default=None
        Seed of the noise and of :meth:`sample`. Keep it secret for a real release.

    Attributes
    ----------
    schema_ : TabularSchema
        The public schema used (bounds filled in).
    {attr_bounds_tabular}
    n_bins_ : dict {column: int}
        Number of bins (numeric; an integer column with one bin per value has as many
        bins as integers in its bounds) or levels (categorical, binary) per column.
    {attr_bin_edges}
    histograms_ : list of dict
        One per projection: ``columns``, ``shape`` (bins per column), ``cells``
        (sorted flat indices of surviving cells), ``counts`` (their noisy values, all
        ``> threshold``), ``threshold`` (``tau``), ``epsilon``, ``sparse``.
    uniform_columns_ : list
        Columns drawn uniformly (not in any projection).
    n_synthetic_ : int
        Rows of the synthetic data set ``D_eps`` (``sample(None)``; single projection).
    epsilon_spent_, delta_spent_, privacy_guarantee_ :
        ``epsilon``, 0, ``"exact"``.
    privacy_breakdown_ : dict {str: float}
        Epsilon of each part: ``"bounds"`` (the private bound estimate; 0 when every
        bound was declared), then ``"histogram"`` for a single histogram, or
        ``"histogram_1"``, ``"histogram_2"``, ... for several: ``"histogram_i"`` is
        the histogram ``histograms_[i - 1]`` (the ``i``-th projection, in the order of
        ``projections``; its columns are ``histograms_[i - 1]["columns"]``). They add
        up to ``epsilon_spent_``. (Before 0.2 a histogram's key was ``"histogram"``
        followed by the tuple of its columns, e.g. ``"histogram(0, 1, 2)"``; those keys
        still read, with a ``FutureWarning``.)
    noise_scale_ : dict {str: float}
        The scale ``b`` of each histogram's cell noise, in counts, keyed as in
        ``privacy_breakdown_`` (the histograms only): the noise's pmf (``"geometric"``,
        or ``secure_mode``) or density (``"laplace"``) is proportional to
        ``exp(-|x| / b)``, with ``b = 1 / epsilon_g`` (for the exact noise,
        ``epsilon_g`` rounded down to 20 significant bits first; Notes, "Floating
        point"); 0 at ``epsilon=inf``. Per patient (``groups``): ``b = k / epsilon_g``.
    privacy_unit_ : {"row", "group"}
        What ``epsilon`` protects: one row, or one patient with all their rows
        (``groups``).
    max_rows_per_group_ : int or None
        The contribution bound ``k`` of a patient-level fit; ``None`` per row.
    n_features_in_ : int
    feature_names_in_ : ndarray
        Only when ``X`` has string column names.

    Notes
    -----
    **Bins.** The grid is fixed before the data are read, from the public schema, the
    public ``n`` (``n_public``, or ``len(X)``), ``epsilon`` and the parameters.
    Categorical and binary columns (ordered categoricals included) have one cell per
    declared level. A numeric column in a histogram over ``d`` columns gets
    ``k = lei_n_bins(n, d)`` equal-width bins (integer columns: ``min(k, m)``
    contiguous groups of near-equal size of the ``m`` integers in the bounds); columns
    drawn uniformly use ``d`` = the number of columns. With ``n_bins="auto"`` an
    integer column with ``k < m <= max(k, max_integer_levels)`` then gets one bin per
    value: always when it is drawn uniformly (no cells are noised), and in a histogram
    one column at a time, smallest ``m`` first (ties in column order), as long as the
    histogram's *expected noise-only mass* -- ``n_cells * P(noise > tau) *
    E[noise | noise > tau]``, the number of synthetic rows that noise alone is
    expected to put on cells the data do not occupy -- stays at most ``max(0.1 n,
    that of Lei's grid)``. The cell count enters through this mass: it is ``n_cells``
    times about ``n^(-threshold) (threshold log(n) + 1) / epsilon_g``, so the
    expansion is free at large ``epsilon`` and refused where it would let noise
    outweigh a tenth of the data (at ``epsilon_g = 1`` and ``n = 3750``, a histogram
    may hold about 13,000 cells). Large grids are handled by the exact sparse sampler
    (``max_cells``). Synthetic numeric values are drawn uniformly within their bin
    (``representative="uniform"``), so a column with one bin per value reproduces
    the value itself.

    **Privacy.** Neighbouring relation: add or remove one row, ``n`` public (skdp's
    record of its relations: :ref:`neighbouring-relation`). With ``n_public=None`` the
    row count ``len(X)`` chooses the bin count and the threshold; pass ``n_public`` to
    decide them from a declared count. No other count of the data (such as the number
    of occupied cells) decides anything. Mechanism: two-sided geometric (discrete
    Laplace) noise ``G(epsilon_g)`` (or, with ``mechanism="laplace"``, Laplace noise of
    scale ``1 / epsilon_g``) on every cell of each histogram; each row falls in exactly
    one cell, so the L1 sensitivity
    is 1 (:func:`skdp.mechanisms.sensitivity.histogram_sensitivity`) and each
    histogram is ``epsilon_g``-DP; with ``g`` projections ``epsilon_g = epsilon_h / g``
    (sequential composition), where ``epsilon_h`` is ``epsilon`` minus what a private
    bound estimate spent. The guarantee is exact pure ``epsilon``-DP. Filtering,
    rounding, sampling and decoding are post-processing. The bin edges, the category
    sets and the bin representatives depend only on the public schema (with privately
    estimated bounds, if any), ``n``, the dimension, ``epsilon`` and the parameters,
    never on the data (Notes, "Bins"). For domains larger than ``max_cells`` the empty cells
    are not noised one by one: ``k ~ Binomial(n_cells, p)`` candidate cells
    (``p = P(noise alone exceeds tau)``: ``r^m / (1 + r)`` with ``r = exp(-eps)``,
    ``m = floor(tau) + 1`` for the geometric noise, ``exp(-eps tau)/2`` for Laplace)
    are placed uniformly over **all** cells with the tail values ``m +
    Geometric(1 - r)`` (``tau + Exp(eps)`` for Laplace; memoryless tails), and those
    on occupied cells are dropped: the same distribution as noising every cell.

    **Floating point.** With the default ``mechanism="geometric"`` every released count is
    an integer ``c + Z`` with ``Z`` drawn exactly (integer arithmetic, no float
    ``exp``/``log``), so any output reachable from a count ``c`` is reachable from
    ``c + 1`` with probability ratio at most ``exp(epsilon_g)``: the attack of
    Mironov (2012) on floating-point Laplace noise does not apply. ``epsilon_g`` is
    first rounded down to 20 significant bits (relative change below ``2^-19``; more
    noise). Not exact: in the sparse path the candidate count ``Binomial(n_cells, p)``
    comes from numpy's floating-point binomial sampler with a floating-point ``p``. Its
    parameters are public (they do not depend on the data, not even on the number of
    occupied cells) and the candidate cells (exact uniform integers) and their values
    (exact) follow it, so no output becomes impossible under a neighbouring data set;
    what remains is the sampler's rounding error in the law of one count (a ``delta``
    of the order of double precision), not a difference of support. The dense path (at
    most ``max_cells`` cells) is exact. ``mechanism="laplace"`` without ``secure_mode``
    keeps the thesis's floating-point Laplace and its weakness. With
    ``secure_mode=True`` the noise comes from ``os.urandom``. A private bound estimate
    (``bounds=None`` for a numeric column) draws its sparse-vector Laplace noise in
    floating point whatever ``mechanism`` and ``secure_mode`` say.

    A replace-one guarantee needs ``epsilon / 2``. Only noisy, filtered counts are
    stored.

    **Patients.** With ``fit(X, groups=g)`` the neighbouring relation is add or remove
    one patient with all their rows (:doc:`/patients`). Each patient keeps at most ``k =
    max_rows_per_group`` rows, chosen uniformly at random inside the mechanism from the
    fit's own stream (never "the first k"; every row is encoded and checked first, so a
    refusal never depends on the draw). The kept rows of one patient change a
    histogram's counts by a non-negative vector summing to at most ``k``: L1
    sensitivity ``k``, attained when the rows share a cell
    (:func:`skdp.mechanisms.sensitivity.histogram_sensitivity`). The plan multiplies it
    once: noise scale ``b = k / epsilon_g`` (exact discrete Laplace of parameter
    ``epsilon_g / k``) and threshold ``tau = A log(n) k / epsilon_g`` (the same multiple
    of the noise scale as per row), so each histogram is ``epsilon_g``-DP and the fit
    exact pure ``epsilon``-DP per patient (composition and post-processing as above).
    With ``n_public=None``, ``n`` is the number of rows kept (public as ``n`` is).
    Bounds must be declared (a private bound estimate per patient is not
    implemented). On Dask input the rows are encoded and the patients bounded on the
    workers (Dask's shuffle on the label, then the ``k`` rows of smallest keyed
    priority per patient, :func:`skdp.utils._groups_dask.bound_dask_rows`: a uniform
    ``k``-subset that depends on the patient's own rows only, so the sensitivity is the
    same ``k``); its random rows differ from the in-memory choice.

    *Synthetic rows, not patients.* :meth:`sample` draws rows from the noisy histogram
    of the contribution-bounded table: they carry no patient identity and no link
    between the rows of one patient (visits, within-patient correlation are not
    modelled), and a patient with more than ``k`` rows counts ``k`` times, so their rows
    are under-represented relative to the raw table (choose ``k`` near the usual number
    of rows per patient). ``n_synthetic_`` estimates the rows kept, not the patients.

    References
    ----------
    S. Vinterbo. "Differentially private projected histograms: construction and use
    for prediction." ECML PKDD 2012.

    J. Lei. "Differentially private M-estimators." NIPS 2011.

    {ref_canonne2020}

    {ref_mironov2012}

    E. Lantz. PhD thesis, University of Wisconsin-Madison, 2016, §5.4.1.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from skdp.synthesis import DPHistogramSynthesizer
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"age": rng.integers(20, 80, 2000),
    ...                    "sex": rng.choice(["F", "M"], 2000)})
    >>> synth = DPHistogramSynthesizer(epsilon=1.0, bounds={"age": (18, 90)},
    ...                                categories={"sex": ["F", "M"]},
    ...                                column_types={"age": "integer"}, random_state=0)
    >>> synth = synth.fit(df)
    >>> fake = synth.sample(5)
    >>> list(fake.columns), list(fake.dtypes) == list(df.dtypes)
    (['age', 'sex'], True)
    >>> bool(fake["age"].between(18, 90).all())
    True
    """

    #: {deprecated name: name}: seeds keep the old name (skdp.utils._random.fit_streams)
    _renamed_parameters = {"noise": "mechanism"}

    _parameter_constraints: dict = {
        "epsilon": DPEstimatorMixin._privacy_parameter_constraints["epsilon"],
        **tabular_constraints(missing=True),
        # at most 2**24 bins a column: the bin edges are built in memory
        "n_bins": [StrOptions({"auto"}), Interval(Integral, 1, 2**24, closed="both"), dict],
        "projections": [None, list],
        "mechanism": [StrOptions({"laplace", "geometric"})],
        "noise": [StrOptions({DEPRECATED}), StrOptions({"laplace", "geometric"})],
        "secure_mode": ["boolean"],
        "threshold": [Interval(Real, 0, None, closed="left")],
        "n_public": [None, Interval(Integral, 1, None, closed="left")],
        "representative": [StrOptions({"midpoint", "uniform"})],
        "sampling": [StrOptions({"systematic", "iid"})],
        "clip": ["boolean"],
        "max_cells": [Interval(Integral, 1, None, closed="left")],
        "max_survivors": [Interval(Integral, 1, None, closed="left")],
        "smoothing": [Interval(Real, 0, 1, closed="left")],
        "max_integer_levels": [Interval(Integral, 0, None, closed="left")],
        "max_rows_per_group": [None, Interval(Integral, 1, None, closed="left")],
        **DPEstimatorMixin._common_constraints("random_state", "verbose"),
    }

    __init__ = keyword_init(
        [
            ("epsilon", 1.0),
            *tabular_params(missing=True),
            ("n_bins", "auto"),
            ("projections", None),
            ("mechanism", "geometric"),
            ("noise", DEPRECATED),
            ("secure_mode", False),
            ("threshold", 0.5),
            ("n_public", None),
            ("representative", "uniform"),
            ("sampling", "systematic"),
            ("clip", True),
            ("max_cells", 10**7),
            ("max_survivors", 10**7),
            ("smoothing", 1e-3),
            ("max_integer_levels", 32),
            ("max_rows_per_group", None),
            *DPEstimatorMixin._common_params("verbose", "random_state"),
        ],
        qualname="DPHistogramSynthesizer.__init__",
    )

    # ------------------------------------------------------------------ fit
    @insert_docs(param_groups_fit=_GROUPS_DOC)
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, groups=None):
        """Fit the noisy histogram(s).

        Parameters
        ----------
        {param_fit_private_table}
        {param_groups_fit}

        Returns
        -------
        self
        """
        X = self._validate_X(X, reset=True)
        epsilon, _ = self._check_privacy_params()
        fi = count_fit_inputs(
            self, X, groups, n=n_rows(X), epsilon=epsilon, streams=["bounds", "noise", "groups"]
        )
        schema, encoder, kept = fi.schema, fi.encoder, fi.kept
        groups_, uniform = projection_groups(schema, self.projections)
        plan = HistogramPlan.build(
            epsilon=epsilon,
            eps_bounds=fi.eps_bounds,
            groups=groups_,
            uniform=uniform,
            n_public=fi.n_public,
            threshold=self.threshold,
            mechanism=renamed_parameter(self, "noise", "mechanism"),
            secure_mode=self.secure_mode,
            max_rows_per_group=fi.k,
        )
        binners = column_bins(
            schema,
            groups_,
            uniform,
            plan.n_public,
            plan.noise_mass,
            n_bins=self.n_bins,
            max_integer_levels=self.max_integer_levels,
        )
        # every row is encoded (and checked) before the rows beyond k are dropped
        on_workers = None if kept is None else kept.codes
        shapes, flats, totals = cell_counts(X, encoder, binners, groups_, codes=on_workers)
        flats = keep_flat(flats, kept)
        with verbose_handler(self.verbose):
            histograms = self._release(plan, shapes, flats, totals, fi.streams["noise"])
        return self._record(plan, schema, binners, histograms)

    def _release(self, plan, shapes, flats, totals, rng):
        """The noisy, filtered cells of every histogram, with the plan's noise and
        threshold; one progress record per histogram (public numbers only)."""
        histograms = []
        for i, (g, shape, flat, total) in enumerate(
            zip(plan.groups, shapes, flats, totals, strict=True)
        ):
            cells, counts, sparse = noisy_cells(
                flat,
                math.prod(shape),
                plan,
                rng,
                max_cells=self.max_cells,
                max_survivors=self.max_survivors,
                counts=total,
            )
            histograms.append(
                {
                    "columns": list(g),
                    "shape": shape,
                    "cells": cells,
                    "counts": counts,
                    "threshold": float(plan.threshold),
                    "epsilon": float(plan.eps_group),
                    "sparse": sparse,
                }
            )
            # public: the number of projections and the budget schedule
            log_progress(
                _logger,
                estimator="DPHistogramSynthesizer",
                phase="histogram",
                step=i + 1,
                total=len(plan.groups),
                epsilon_spent=plan.eps_bounds + (i + 1) * plan.eps_group,
            )
        return histograms

    def _record(self, plan, schema, binners, histograms):
        """Write the fitted attributes: the model and the plan's privacy facts."""
        self.schema_ = schema
        self.bounds_ = {c.name: c.bounds for c in schema if c.is_numeric}
        self.n_bins_ = {c: b.n_levels for c, b in binners.items()}
        self.bin_edges_ = {c.name: binners[c.name].edges.copy() for c in schema if c.is_numeric}
        self.histograms_ = histograms
        self.uniform_columns_ = list(plan.uniform)
        self.n_synthetic_ = (
            int(np.rint(histograms[0]["counts"]).sum()) if len(histograms) == 1 else None
        )
        self._binners = binners
        self._max_rows_per_group = plan.max_rows_per_group  # privacy_unit_, max_rows_...
        self.noise_scale_ = plan.noise_scales()
        self._record_privacy_spent(plan.epsilon_spent, 0.0, breakdown=plan.breakdown())
        # the keys before 0.2 (a tuple's repr) still read, with a FutureWarning
        old = {"histogram" + repr(g): part for g, part in zip(plan.groups, plan.parts, strict=True)}
        self.privacy_breakdown_ = RenamedKeys(
            self.privacy_breakdown_, old, "DPHistogramSynthesizer.privacy_breakdown_"
        )
        return self
