"""DPMarginalSynthesizer: marginal-based synthetic data, AIM (McKenna et al. 2022) and MST
(McKenna, Miklau & Sheldon 2021)."""

from __future__ import annotations

import warnings
from numbers import Integral, Real

from sklearn.base import BaseEstimator, DensityMixin

from skdp.base import DPEstimatorMixin
from skdp.mechanisms._front_end import TabularFrontEnd
from skdp.synthesis._histogram_groups import COUNT_SYNTHESIS_DOCS, count_fit_inputs
from skdp.synthesis._marginal_aim import fit_rounds
from skdp.synthesis._marginal_clip import clipped_statistic
from skdp.synthesis._marginal_counts import table_counts
from skdp.synthesis._marginal_fit import MarginalFitMixin, fit_tree, release_one_way
from skdp.synthesis._marginal_model import discretizers, marginal_n_bins
from skdp.synthesis._marginal_plan import BUDGET_FRACTIONS, MarginalPlan, budget_shares
from skdp.synthesis._marginal_sampling import MarginalSamplingMixin
from skdp.utils._deprecation import DEPRECATED, REMOVED_IN
from skdp.utils._docstrings import groups_entry, insert_docs
from skdp.utils._keyword_init import keyword_init
from skdp.utils._logging import verbose_handler
from skdp.utils._patient_facts import PatientFactsMixin
from skdp.utils._rowsum import n_rows
from skdp.utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
)
from skdp.utils._tabular.constraints import tabular_constraints, tabular_params

__all__ = ["DPMarginalSynthesizer", "marginal_n_bins"]

#: the fit's named noise streams, in order (append new ones at the end)
_STREAMS = ("bounds", "one_way", "select", "two_way", "groups")


#: the ``groups`` entry of ``fit``
_GROUPS_DOC = groups_entry(
    """ and every
    sensitivity is that many times the row's (Notes, "Patients"). Needs
    declared bounds; with Dask input a Dask array or Series of labels aligned
    with the rows (bounded on the workers)."""
)


@insert_docs(**COUNT_SYNTHESIS_DOCS)
class DPMarginalSynthesizer(
    MarginalFitMixin,
    MarginalSamplingMixin,
    PatientFactsMixin,
    TabularFrontEnd,
    DPEstimatorMixin,
    DensityMixin,
    BaseEstimator,
):
    """Synthetic data from private low-order marginals (AIM by default, or MST).

    Two selections share the discretisation, the noisy 1-way release, the
    compression, the sampling and the privacy facts. The default,
    ``selection="auto"``, is AIM (McKenna et al. 2022; see ``selection`` and the
    Notes) for three or more columns (in memory or Dask), MST otherwise. The MST
    method of McKenna, Miklau & Sheldon (2021), winner of the 2018 NIST
    differential-privacy synthetic-data challenge, with numpy/scipy only:

    1. **Discretise** every column from the public schema: numeric columns into
       equal-width bins within their declared bounds (integer columns with a small
       declared range get one bin per value), categorical and binary columns keep their
       declared levels.
    2. **Measure all 1-way marginals** with noise. Cells whose noisy count is below
       three noise standard deviations are merged into one "rare" value per column
       (MST's domain compression; post-processing).
    3. **Select** ``d - 1`` pairs of columns forming a spanning tree: Kruskal's
       algorithm where each edge is picked by the exponential mechanism, scored by how
       badly the independent model (from the noisy 1-way marginals) fits the pair's
       2-way marginal (L1 distance).
    4. **Measure the chosen 2-way marginals** with noise.
    5. **Estimate** a consistent, non-negative tree model: every 1-way marginal is the
       inverse-variance weighted combination of its own measurement and of the
       margins of the measured 2-way marginals that contain it, projected onto the
       probability simplex (least squares); every 2-way marginal is the least-squares
       projection of its measurement onto the tables with exactly those margins (the
       transportation polytope; Dykstra's algorithm). On a tree the edges are the
       junction tree's cliques, and these locally consistent marginals define the
       distribution ``p(x) = prod_edges p(x_i, x_j) / prod_nodes p(x_i)^(deg - 1)``.
    6. **Sample** ancestrally along the tree, undo the compression (a rare value
       becomes one of the merged cells, drawn in proportion to the positive part of
       their noisy counts, mixed with the uniform law), and draw numeric values
       uniformly within their bin (integers uniformly among the bin's integers).

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy loss of one ``fit`` (including a private bound estimate).
    delta : float, default=1e-5
        ``delta > 0``: (discrete) Gaussian measurements and the zCDP accountant, with
        the exact conversion of the total zCDP to ``(epsilon, delta)``. ``delta = 0``:
        pure ``epsilon``-DP with (discrete) Laplace measurements.
    bounds : None, "private", "data", (lo, hi), or dict {column: (lo, hi)}, default=None
        Public bounds of the numeric columns (see
        :meth:`skdp.utils.schema.TabularSchema.from_data`). Missing bounds are
        estimated privately with 10 % of ``epsilon``
        (:func:`skdp.mechanisms.resolve_schema_bounds`)
        {param_bounds_estimate}
    {param_categories}
    {param_column_types}
    {param_schema_tabular}
    {param_missing_cells}
    n_bins : "auto", int or dict {column: int}, default="auto"
        Bins per numeric column. ``"auto"``: :func:`marginal_n_bins` from the public
        ``n`` and the noise scale of the 2-way measurements (8 to 32 bins; with AIM,
        the noise of ``d`` equal rounds of its budget, a public reference since its
        annealed rounds' noise depends on the releases). Integer
        columns whose declared range holds at most ``max(n_bins, 32)`` integers get
        one bin per value, larger ones at most one bin per integer.
    one_way_fraction, selection_fraction, two_way_fraction : float, default=1/3
        The fractions (in ``(0, 1]``, adding up to 1) of the budget left after a
        private bound estimate (of ``rho`` under zCDP, of ``epsilon`` under pure DP)
        for the 1-way measurements, the selection and the 2-way measurements (the
        parts of ``privacy_breakdown_``), as in MST. With one column everything goes
        to the 1-way marginal; with two columns the selection is free (one candidate)
        and its fraction is spread over the measurements in proportion; with
        ``selection="aim"`` the rounds get ``selection_fraction + two_way_fraction``,
        each round split ``0.1 : 0.9`` between its selection and its measurement.
    budget_split : tuple of three floats
        Deprecated (removed in 0.2; ``FutureWarning``): the relative shares ``(a, b,
        c)`` of the same three parts, normalised to add up to 1. With ``a + b + c = 1``
        it releases the same values as ``one_way_fraction=a``,
        ``selection_fraction=b``, ``two_way_fraction=c`` (the same seed gives the same
        noise); other shares split the budget as their normalised fractions do.
    selection : {"auto", "aim", "mst"}, default="auto"
        How the marginals beyond the 1-way ones are chosen and measured. ``"auto"``:
        ``"aim"``, or ``"mst"`` for tables of at most two columns (one pair: MST
        measures it with the whole budget, AIM would spend a tenth of each round on a
        choice that has one candidate); the choice reads only the column count and is
        kept in ``selection_``. ``"mst"``:
        MST's spanning tree of 2-way marginals (steps 3-5 above). ``"aim"``: AIM's
        adaptive rounds (McKenna et al. 2022): after the 1-way release, annealed
        rounds each pick one marginal of two or three columns by the exponential
        mechanism, with AIM's quality score (the L1 error of the current model's
        marginal minus the expected L1 norm of the noise the measurement would add),
        measure it and re-fit the model: a graphical model on the junction tree of
        everything measured, fitted to all the noisy measurements by mirror descent
        (Private-PGM; McKenna, Sheldon & Miklau 2019). Candidates are the marginals
        of at most 10,000 compressed cells that keep every clique of the model within
        10,000 cells and the model within 200,000; the model is sampled exactly,
        clique by clique. On Dask input the exact counts of every candidate are
        summed on the workers before the first round, in one pass per 2**21 cells of
        candidates (one pass for most tables; each partition's partial holds at most
        16 MiB of counts); the rounds then run on the client.
    compress : bool, default=True
        Merge the 1-way cells whose noisy count is below three noise standard
        deviations before selecting and measuring the 2-way marginals (MST).
    n_public : int, default=None
        Public row count used by ``n_bins="auto"``. ``None`` uses ``len(X)`` (the
        library's add/remove relation with ``n`` public). With an int ``n_bins`` no
        decision reads ``n``.
    {param_clip_tabular}
    sampling : {"systematic", "iid"}, default="systematic"
        How :meth:`sample` draws its rows from the fitted model, column by column in
        the model's (ancestral) order. ``"systematic"``: among the rows that share the
        values of the columns a column is drawn after, the column's values come from
        systematic sampling, so each value appears its expected number of times
        rounded up or down; every row is still an exact draw from the model, but the
        sample's marginals carry almost no multinomial sampling noise, which matters
        for small samples (Private-PGM's synthetic data, used by MST and AIM in
        smartnoise-synth, rounds in the same spirit). ``"iid"``: independent rows.
        Post-processing either way; it does not change the fit or the guarantee.
    smoothing : float in [0, 1), default=1e-3
        Weight of the uniform distribution mixed into every factor of the model in
        :meth:`score_samples` (so that in-domain rows have a finite log-likelihood).
        Does not affect :meth:`sample`.
    secure_mode : bool, default=False
        Draw the measurements' exact discrete Gaussian (or Laplace) noise from the
        operating system's cryptographically secure generator (``os.urandom``) instead
        of ``random_state``; the released counts are then not reproducible. The
        exponential-mechanism selections and a private bound estimate still draw from
        ``random_state`` (Notes, "Floating point"); :meth:`sample` too.
    {param_max_rows_per_group_count}
    contribution : {"sample", "clip"}, default="sample"
        Patient-level zCDP fits (``groups`` and ``delta > 0``) only. ``"clip"``: the
        2-way (MST) or rounds' (AIM) measurements sum each patient's count vector
        clipped to L2 norm ``sqrt(k)``, so their noise is ``sqrt(k)`` times the row's
        instead of ``k`` times (Notes, "Patients"). In memory only. Under pure DP
        (``delta=0``) with ``groups`` it warns and bounds rows as ``"sample"`` does;
        without ``groups`` it changes nothing.
    {param_verbose_count}
        Progress is always logged to the ``"skdp"`` logger: one record per stage (the
        1-way release; MST's tree selection and 2-way release, or AIM's rounds), with
        the epsilon spent so far by the public budget split (never a count, nor the
        number of AIM rounds).
    random_state : None, int, Generator or SeedSequence, default=None
        Seed of the noise and of the selection. ``None``: fresh OS entropy (what a
        real release uses). Nothing of it is stored.

    Attributes
    ----------
    selection_ : {"aim", "mst"}
        The selection used (``selection`` with ``"auto"`` resolved).
    schema_ : TabularSchema
        The public schema used (bounds filled in).
    {attr_bounds_tabular}
    n_bins_ : dict {column: int}
        Number of bins (numeric) or levels (categorical, binary) per column.
    {attr_bin_edges}
    noisy_one_way_ : dict {column: ndarray of int}
        The released noisy 1-way counts (one per bin).
    supports_ : dict {column: ndarray of bool}
        Bins kept by the compression; the others form the column's rare value (the
        last value of its compressed domain).
    noisy_two_way_ : dict {(column, column): ndarray of int} or None
        The released noisy 2-way counts of the tree's pairs, over the compressed
        domains (rows: first column). ``None`` with ``selection="aim"``.
    tree_ : list of (column, column) or None
        The selected pairs, in the order Kruskal's algorithm picked them. ``None``
        with ``selection="aim"``.
    cliques_ : list of tuples of columns or None
        ``selection="aim"``: the cliques of the model's junction tree (the maximal
        cliques of the triangulated graph that joins the columns of every measured
        marginal; a column in no measured marginal is a clique of its own);
        ``None`` with ``"mst"``.
    noisy_marginals_ : dict {tuple of columns: list of ndarray of int} or None
        ``selection="aim"``: every released noisy measurement of the rounds, by
        marginal (axes in the marginal's column order, compressed domains).
    clique_marginals_ : dict {tuple of columns: ndarray} or None
        ``selection="aim"``: the fitted distribution of each clique of ``cliques_``.
    rounds_ : list of dict or None
        ``selection="aim"``: one entry per round, the chosen ``"marginal"``, the
        ``"rho_selection"`` and ``"rho_measurement"`` it spent
        (``"epsilon_selection"`` and ``"epsilon_measurement"`` under pure DP; ``None``
        without noise) and the measurement's ``"noise_scale"``. The spellings of before
        0.2 (``"rho_select"``, ``"rho_measure"``, ``"epsilon_select"``,
        ``"epsilon_measure"``) still read, with a ``FutureWarning``.
    node_marginals_ : dict {column: ndarray}
        The estimated 1-way distributions over the compressed domains.
    edge_marginals_ : dict {(column, column): ndarray} or None
        The estimated 2-way distributions of the tree's pairs (rows: first column),
        consistent with ``node_marginals_``. ``None`` with ``selection="aim"``.
    n_records_ : float
        Noisy estimate of the number of rows (from the measurements).
    mechanism_ : str
        The noise of the measurements: ``"gaussian"`` (zCDP), ``"laplace"`` (pure
        DP) or ``"none"`` (``epsilon=inf``).
    noise_scale_ : dict of str to float
        The noise of each measurement stage, keyed like ``privacy_breakdown_``:
        ``"one_way"`` and ``"two_way"`` (the discrete Gaussian's ``sigma`` or the
        discrete Laplace's scale ``b``; with ``selection="aim"`` the first round's,
        the later rounds' are in ``rounds_``). ``noise_`` (the dict of
        ``"mechanism"``, ``"one_way_scale"``, ``"two_way_scale"`` and
        ``"select_epsilon"``) is its deprecated form (``FutureWarning``; removed in
        0.2).
    rho_ : float or None
        zCDP spent by the noisy stages (``None`` under pure DP).
    rho_breakdown_ : dict or None
        ``rho`` of each stage (``None`` under pure DP), keyed like
        ``privacy_breakdown_``.
    epsilon_spent_, delta_spent_, privacy_guarantee_ :
        The ``(epsilon, delta)`` guarantee (``"exact"``).
    privacy_breakdown_ : dict
        Epsilon attributed to ``"bounds"``, ``"one_way"``, ``"selection"`` and
        ``"two_way"``; sums to ``epsilon_spent_``. (``"selection"`` was spelled ``"select"``
        before the fitted vocabulary of :doc:`/glossary`.) Fixed before any row is read by
        the public budget split: with ``selection="aim"`` the last two are the rounds' whole
        shares of selection and measurement (``rounds_`` lists each round's charge; rounds
        that stop early because no candidate is left spend less).
    n_features_in_ : int
    feature_names_in_ : ndarray
        Only when ``X`` has string column names.
    privacy_unit_ : {"row", "group"}
        What ``(epsilon, delta)`` protects: one row, or one patient with all their rows
        (``groups``).
    max_rows_per_group_ : int or None
        The contribution bound ``k`` of a patient-level fit; ``None`` per row.

    Notes
    -----
    **Privacy.** Neighbouring relation: add or remove one row, ``n`` public (skdp's
    record: :ref:`neighbouring-relation`); ``n`` is read only by ``n_bins="auto"`` (or
    ``n_public`` replaces it). Every marginal is a histogram of the rows over a
    data-independent grid (the bins and, after the noisy 1-way release, the
    compressed domains), so one row changes one cell by one: **L1 and L2
    sensitivity 1**. The selection score of a pair is ``||M_ij(D) - n_hat
    p_i p_j||_1``, where the product model ``n_hat p_i p_j`` is computed from the noisy
    1-way marginals only (its total ``n_hat`` too, so it does not read ``n``); a row
    changes ``M_ij(D)`` by one in one cell, so the score's **sensitivity is 1**.

    *Approximate DP* (``delta > 0``, the default): the budget left after a private
    bound estimate is a zCDP budget ``rho`` split by the three ``*_fraction`` parameters
    into ``rho_1``, ``rho_s`` and ``rho_2``. The ``d`` 1-way marginals get exact discrete Gaussian
    noise with ``sigma_1^2 = d / (2 rho_1)`` per cell, and the ``d - 1`` 2-way marginals
    ``sigma_2^2 = (d - 1) / (2 rho_2)``: each is ``1 / (2 sigma^2)``-zCDP (Canonne,
    Kamath & Steinke 2020, Thm. 4: the discrete Gaussian has the Gaussian's zCDP).
    Each of the ``d - 1`` selection rounds is an exponential mechanism with
    ``epsilon_r = sqrt(8 rho_s / (d - 1))``, which is ``epsilon_r^2 / 8``-zCDP (it is
    ``epsilon_r``-bounded-range; Cesar & Rogers 2021). zCDP composes additively, and
    the total is converted to ``(epsilon, delta)`` with the tight conversion of
    Canonne, Kamath & Steinke (2020, Prop. 12) minimised over all real orders
    (:func:`skdp.accounting.zcdp_rho`). A private bound estimate (pure
    ``epsilon_b``-DP) is charged whichever way leaves more ``rho``: sequentially in
    ``(epsilon, delta)`` (``rho = zcdp_rho(epsilon - epsilon_b, delta)``), or inside
    zCDP as ``epsilon_b^2 / 2`` (``rho = zcdp_rho(epsilon, delta) - epsilon_b^2 / 2``).
    ``privacy_breakdown_`` attributes ``epsilon_b`` to the bounds and the rest of
    ``epsilon`` to the stages in proportion to their ``rho``.

    *Pure DP* (``delta = 0``): the budget left after the bounds is split by the
    fractions into ``epsilon_1 + epsilon_s + epsilon_2`` and composed
    sequentially: exact discrete Laplace noise of scale ``d / epsilon_1`` on every
    1-way cell and ``(d - 1) / epsilon_2`` on every 2-way cell, and
    ``epsilon_s / (d - 1)`` per exponential-mechanism round.

    *AIM's rounds* (``selection="aim"``; McKenna et al. 2022): the 1-way release is
    the same (its share ``one_way_fraction``); the rest of the budget, ``rho_R``, is
    spent in annealed rounds. Round ``t`` gets ``rho_t``: an exponential mechanism with
    ``epsilon_t = sqrt(8 * 0.1 rho_t)`` (``0.1 rho_t``-zCDP) picks a marginal ``r`` of
    two or three columns with the score ``||M_r(D) - n_hat p_r||_1 - sqrt(2 / pi)
    sigma_t |r|``, where ``p_r`` is the current model's distribution of ``r`` and
    ``n_hat`` its noisy total (both functions of earlier noisy releases only), ``|r|``
    the number of cells and every weight 1, so the **score's sensitivity is 1**; the
    chosen marginal (L2 sensitivity 1) gets exact discrete Gaussian noise with
    ``sigma_t^2 = 1 / (2 * 0.9 rho_t)``. The schedule is AIM's: ``rho_1 = rho_R /
    (16 d)``; a round whose measurement moved the model's marginal of ``r`` by less
    than ``sqrt(2 / pi) sigma_t |r|`` in L1 (post-processing) makes ``rho_{t+1} = 4
    rho_t``, otherwise ``rho_{t+1} = rho_t``; a round that would leave less than two
    rounds' budget spends all that is left. The number of rounds thus depends on the
    noisy releases, and the charges are chosen adaptively; the Rényi privacy filter
    of Feldman & Zrnic (2021), applied at every order (a zCDP filter), bounds the
    whole by
    ``rho_1-way + sum_t rho_t = rho`` exactly (``rounds_`` lists each round's
    charge), and the total is converted to ``(epsilon, delta)`` as above. Under pure
    DP the rounds share ``epsilon_R`` the same way (``epsilon_1 = epsilon_R / (16 d)``,
    doubled after a round that moved the model by less than its noise): ``0.1
    epsilon_t`` for the exponential mechanism and discrete Laplace noise of scale
    ``1 / (0.9 epsilon_t)``, composed under the pure-DP filter of Rogers et al. (2016).
    Without noise (``epsilon = inf``) there are ``d`` rounds. The candidates (at most
    10,000 cells over the compressed domains, which come from the noisy 1-way
    release; every clique of the triangulated model within 10,000 cells and the model
    within 200,000) and the model they are scored against are post-processing.

    Compression, the selection scores' model, estimation, sampling and decoding are
    post-processing of the noisy measurements; only noisy quantities are stored. Under
    replace-one (a removal and an addition) a fit at ``(epsilon, delta)`` is
    ``(2 epsilon, (1 + e^epsilon) delta)``-DP by group privacy (pure DP: ``2 epsilon``).

    **Patients.** With ``fit(X, groups=g)`` the neighbouring relation is add or remove
    one patient with all their rows (:doc:`/patients`). Each patient keeps at most ``k =
    max_rows_per_group`` rows, chosen uniformly at random inside the mechanism from the
    fit's own stream (every row is binned and checked first). The kept rows of one
    patient change any marginal by a non-negative vector summing to at most ``k``: L1
    **and** L2 sensitivity ``k`` (both attained when the rows share a cell;
    :func:`skdp.mechanisms.sensitivity.histogram_sensitivity`), the ``d`` 1-way
    marginals together ``d k`` in L1 and ``sqrt(d) k`` in L2, and every selection score
    above (MST's and AIM's, ``||M(D) - q||_1 - c`` with ``q`` and ``c`` from earlier
    noisy releases) moves by at most ``k``. The plan multiplies both sensitivities by
    ``k`` once: every ``sigma`` and Laplace scale is ``k`` times the row's (a discrete
    Gaussian of ``sigma`` on an L2-sensitivity-``k`` query is ``k^2 / (2 sigma^2)``-zCDP,
    the same ``rho`` as per row) and each exponential mechanism runs on scores of
    sensitivity ``k`` at the same epsilon. The budget split, AIM's filter and the
    conversion to ``(epsilon, delta)`` are unchanged, so the fit is ``(epsilon,
    delta)``-DP per patient. With ``n_public=None``, ``n`` is the number of rows kept
    (public as ``n`` is). Bounds must be declared. On Dask input the rows are binned
    and the patients bounded on the workers (a uniform ``k``-subset per patient that
    depends on the patient's own rows only,
    :func:`skdp.utils._groups_dask.bound_dask_rows`). With ``contribution="clip"`` (zCDP)
    each patient's count vector ``v`` in a 2-way or round measurement enters as ``s v``,
    ``s = min(1, sqrt(k) / ||v||_2)``, scaled by ``R = 1024`` and rounded down on
    integers: L2 sensitivity ``sqrt(k)`` (``R sqrt(k)`` on the integers, checked exactly),
    so ``sigma`` is ``sqrt(k)`` times the row's at the same ``rho``
    (:func:`skdp.mechanisms.sensitivity.clipped_histogram_sensitivity`); the 1-way
    release and the selection scores keep sensitivity ``k``. A patient with several rows
    in one cell weighs ``s < 1`` there; each noisy clipped marginal is brought to the
    1-way estimate of the row total by a factor clamped to ``[1, sqrt(k)]``
    (post-processing).

    *Synthetic rows, not patients.* The model is a distribution of one row of the
    contribution-bounded table: :meth:`sample` returns rows with no patient identity and
    no link between the rows of one patient (visits, within-patient correlation are not
    modelled), and a patient with more than ``k`` rows weighs ``k`` rows, so their rows
    are under-represented relative to the raw table (choose ``k`` near the usual number
    of rows per patient). ``n_records_`` estimates the rows kept, not the patients.

    **Floating point.** Every released count (``noisy_one_way_``, ``noisy_two_way_``)
    is an integer count plus integer noise drawn exactly in integer arithmetic
    (Canonne, Kamath & Steinke 2020), so the attack of Mironov (2012) on
    floating-point noise does not apply to them; the discrete Gaussian's ``sigma^2``
    and the discrete Laplace's scale are rounded *up* to 20 significant bits (more
    noise), and the ``rho`` of the conversion is checked against ``delta`` in floating
    point. Not exact in floating point: the exponential-mechanism selection (Gumbel-max
    sampling of floating-point scores) and, when bounds are not declared, the private
    bound estimate; their guarantees are those of the mathematical mechanisms. With
    ``secure_mode=True`` the measurements' noise comes from ``os.urandom``; the
    selections and the bound estimate keep ``random_state``'s streams.

    **Utility.** The tree keeps every 1-way marginal and the ``d - 1`` strongest pair
    dependencies (as judged privately); dependencies not on the tree are only kept
    through the tree's paths. ``selection="aim"`` (after McKenna et al. 2022) chooses
    its marginals adaptively, including 3-way ones, so it can keep a dependency of one
    column on two others jointly that no tree of 2-way marginals holds; its model is
    the maximum-entropy graphical model on the junction tree of the measured marginals
    that fits all the measurements in (inverse-variance weighted) least squares,
    found by entropic mirror descent with exact belief propagation (Private-PGM,
    McKenna, Sheldon & Miklau 2019).
    ``doc/benchmarks_synthesis.rst`` compares both selections with smartnoise-synth's
    MST and AIM. ``benchmarks/marginal.py`` compares it
    with :class:`~skdp.synthesis.DPHistogramSynthesizer` on four tables: lower 1- and 2-way total
    variation everywhere (at ``epsilon = 1`` and 10); train-on-synthetic AUC higher on
    one table and lower on three, where the label depends on several columns jointly.

    References
    ----------
    R. McKenna, G. Miklau, D. Sheldon. "Winning the NIST Contest: A scalable and
    general approach to differentially private synthetic data." Journal of Privacy
    and Confidentiality 11(3), 2021.

    {ref_canonne2020}

    {ref_mironov2012}

    M. Bun, T. Steinke. "Concentrated Differential Privacy: Simplifications,
    Extensions, and Lower Bounds." TCC 2016.

    M. Cesar, R. Rogers. "Bounding, Concentrating, and Truncating: Unifying Privacy
    Loss Composition for Data Analytics." ALT 2021.

    R. McKenna, B. Mullins, D. Sheldon, G. Miklau. "AIM: An Adaptive and Iterative
    Mechanism for Differentially Private Synthetic Data." VLDB 2022.

    R. McKenna, D. Sheldon, G. Miklau. "Graphical-model based estimation and inference
    for differential privacy." ICML 2019.

    V. Feldman, T. Zrnic. "Individual Privacy Accounting via a Rényi Filter."
    NeurIPS 2021.

    R. Rogers, A. Roth, J. Ullman, S. Vadhan. "Privacy Odometers and Filters:
    Pay-as-you-Go Composition." NeurIPS 2016.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from skdp.synthesis import DPMarginalSynthesizer
    >>> rng = np.random.default_rng(0)
    >>> age = rng.integers(20, 80, 2000)
    >>> df = pd.DataFrame({"age": age,
    ...                    "sex": rng.choice(["F", "M"], 2000),
    ...                    "sbp": 100 + 0.6 * age + rng.normal(0, 8, 2000)})
    >>> synth = DPMarginalSynthesizer(
    ...     epsilon=1.0, bounds={"age": (18, 90), "sbp": (80.0, 200.0)},
    ...     categories={"sex": ["F", "M"]}, column_types={"age": "integer"},
    ...     random_state=0).fit(df)
    >>> fake = synth.sample(5, random_state=0)
    >>> list(fake.columns), list(fake.dtypes) == list(df.dtypes)
    (['age', 'sex', 'sbp'], True)
    >>> bool(fake["age"].between(18, 90).all())
    True
    >>> synth.privacy_guarantee_, synth.epsilon_spent_, synth.delta_spent_
    ('exact', 1.0, 1e-05)
    """

    #: added after fixed-seed releases were pinned: left out of the seed material at this
    #: default (skdp.utils._random.fit_streams), so default releases are unchanged
    _later_parameters = {"secure_mode": False, "contribution": "sample"}
    #: ``budget_split`` (deprecated) is the seed material's name of the three fractions
    #: (their tuple), so a fixed seed releases the same values under either spelling
    _renamed_parameters = {"budget_split": BUDGET_FRACTIONS}

    _parameter_constraints: dict = {
        **DPEstimatorMixin._privacy_parameter_constraints,
        **tabular_constraints(missing=True),
        # at most 2**24 bins a column: the bin edges are built in memory
        "n_bins": [StrOptions({"auto"}), Interval(Integral, 1, 2**24, closed="both"), dict],
        "one_way_fraction": [Interval(Real, 0, 1, closed="right")],
        "selection_fraction": [Interval(Real, 0, 1, closed="right")],
        "two_way_fraction": [Interval(Real, 0, 1, closed="right")],
        "budget_split": [StrOptions({DEPRECATED}), tuple, list],
        "selection": [StrOptions({"auto", "mst", "aim"})],
        "compress": ["boolean"],
        "n_public": [None, Interval(Integral, 1, None, closed="left")],
        "clip": ["boolean"],
        "sampling": [StrOptions({"systematic", "iid"})],
        "smoothing": [Interval(Real, 0, 1, closed="left")],
        "secure_mode": ["boolean"],
        "max_rows_per_group": [None, Interval(Integral, 1, None, closed="left")],
        "contribution": [StrOptions({"sample", "clip"})],
        **DPEstimatorMixin._common_constraints("random_state", "verbose"),
    }

    @property
    def noise_(self):
        """Deprecated (removed in 0.2): ``mechanism_`` and ``noise_scale_`` in the
        layout of before (``FutureWarning``)."""
        if "noise_scale_" not in vars(self):
            raise AttributeError("'DPMarginalSynthesizer' object has no attribute 'noise_'")
        warnings.warn(
            "DPMarginalSynthesizer.noise_ is deprecated and will be removed in skdp "
            f"{REMOVED_IN}; use mechanism_ and noise_scale_",
            FutureWarning,
            stacklevel=2,
        )
        return {
            "mechanism": self.mechanism_,
            "one_way_scale": self.noise_scale_["one_way"],
            "two_way_scale": self.noise_scale_["two_way"],
            "select_epsilon": self._select_epsilon,
        }

    __init__ = keyword_init(
        [
            ("epsilon", 1.0),
            ("delta", 1e-5),
            *tabular_params(missing=True),
            ("n_bins", "auto"),
            *((name, 1 / 3) for name in BUDGET_FRACTIONS),
            ("budget_split", DEPRECATED),
            ("selection", "auto"),
            ("compress", True),
            ("n_public", None),
            ("clip", True),
            ("sampling", "systematic"),
            ("smoothing", 1e-3),
            ("secure_mode", False),
            ("max_rows_per_group", None),
            ("contribution", "sample"),
            *DPEstimatorMixin._common_params("verbose", "random_state"),
        ],
        qualname="DPMarginalSynthesizer.__init__",
    )

    # ------------------------------------------------------------------- fit
    @insert_docs(param_groups_fit=_GROUPS_DOC)
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, groups=None):
        """Measure the marginals, select the tree and estimate the model.

        Parameters
        ----------
        {param_fit_private_table}
        {param_groups_fit}

        Returns
        -------
        self
        """
        with verbose_handler(self.verbose):
            return self._fit(X, groups)

    def _fit(self, X, groups):
        X = self._validate_X(X, reset=True)
        n = n_rows(X)
        epsilon, delta = self._check_privacy_params(n_samples=n)
        share = budget_shares(self)
        fi = count_fit_inputs(self, X, groups, n=n, epsilon=epsilon, streams=_STREAMS)
        schema, streams = fi.schema, fi.streams
        plan = MarginalPlan.build(
            epsilon=epsilon,
            delta=delta,
            eps_bounds=fi.eps_bounds,
            n_columns=len(schema.names),
            share=share,
            selection=self.selection,
            n_public=fi.n_public,
            max_rows_per_group=fi.k,
            secure_mode=self.secure_mode,
            clip=self.contribution == "clip",
        )
        discs = discretizers(schema, plan.n_public, plan.bins_sd, self.n_bins)
        # every row is binned (and checked) before the rows beyond k are dropped
        stats = table_counts(
            X, encoder=fi.encoder, discs=discs, names=list(schema.names), kept=fi.kept
        )
        one_way = release_one_way(stats, plan, streams["one_way"], compress=self.compress)
        clipped = clipped_statistic(self, groups, n, fi.kept, stats, plan)
        fit_model = fit_rounds if plan.selection == "aim" else fit_tree
        model = fit_model(stats, one_way, plan, streams, clipped)
        return self._record(plan, schema, discs, one_way, model)
