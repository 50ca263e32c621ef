"""The patient as the privacy unit in the count-based synthesizers
(:class:`~skdp.synthesis.DPHistogramSynthesizer`,
:class:`~skdp.synthesis.DPMarginalSynthesizer`): ``fit(X, groups=)`` with the
constructor's ``max_rows_per_group`` (:doc:`/patients`).

Both synthesizers release noisy histograms (marginals) of the rows over a public grid and
select marginals with scores whose sensitivity is the marginals' L1 sensitivity. Each
patient is bounded to at most ``k`` rows, chosen uniformly at random inside the mechanism
(:func:`skdp.utils._groups.bound_contributions`, from the fit's own ``"groups"`` stream),
so every marginal's L1 and L2 sensitivity is ``k``
(:func:`skdp.mechanisms.sensitivity.histogram_sensitivity` with ``max_rows_per_group``);
the plans multiply it once.

The rows are encoded (and checked: ``clip=False``, unknown categories) **before** any is
dropped, so whether ``fit`` refuses never depends on which rows were kept at random.
"""

from __future__ import annotations

import warnings

import numpy as np

from skdp.utils._groups import bound_contributions, patient_codes
from skdp.utils._rowsum import any_dask

__all__ = ["PatientFactsMixin", "kept_rows", "refuse_dask_groups", "synthesis_patients"]


def refuse_dask_groups(est, X, groups):
    """Refuse ``groups`` with Dask input (a patient's rows must be together to be
    bounded), before anything is read or computed."""
    if groups is not None and any_dask(X, groups):
        patient_codes(est, groups, 0, dask_input=True)  # raises, naming groups=


def synthesis_patients(est, X, groups, n):
    """``(codes, k)`` of a patient-level fit of the validated ``X`` (``n`` rows);
    ``(None, None)`` without ``groups``.

    Refuses, naming the parameter: ``groups`` without ``max_rows_per_group``, a bad
    bound or bad labels (:func:`skdp.utils._groups.patient_codes`), and numeric columns
    whose bounds are left to a private estimate (per patient it is not implemented);
    the message names the columns of the public schema, never a value.
    """
    codes, k = patient_codes(est, groups, n)
    if codes is None:
        return None, None
    with warnings.catch_warnings():  # the fit's own _prepare_table warns, once
        warnings.simplefilter("ignore")
        missing = list(est._build_schema(X).missing_bounds())
    if missing:
        raise ValueError(
            f"bounds of column(s) {missing} are left to a private estimate with groups=: "
            "a private bound estimate per patient is not implemented; declare bounds "
            "(doc/choosing_bounds.rst)"
        )
    return codes, k


def kept_rows(codes, k, rng):
    """The sorted indices of the rows kept when each patient keeps at most ``k`` rows
    chosen uniformly at random with ``rng``; ``None`` for a row-level fit."""
    if codes is None:
        return None
    return bound_contributions(codes, k, rng)


def n_public_rows(n_public, n, keep):
    """The public row count of the bin rule and the threshold: declared ``n_public``, or
    the rows used (all ``n``, or the ``len(keep)`` rows kept per patient; public as
    ``n`` is, :ref:`neighbouring-relation`)."""
    if n_public is not None:
        return int(n_public)
    return int(n) if keep is None else int(len(keep))


class PatientFactsMixin:
    """``privacy_unit_`` and ``max_rows_per_group_`` from the fitted plan's ``k`` (kept in
    ``_max_rows_per_group``, set by ``_record``)."""

    @property
    def privacy_unit_(self):
        """``"row"`` (add/remove one row) or ``"group"`` (add/remove one patient with all
        their rows, ``groups=``)."""
        return "row" if self._max_rows_per_group is None else "group"

    @property
    def max_rows_per_group_(self):
        """The contribution bound ``k`` of a patient-level fit, ``None`` per row."""
        return self._max_rows_per_group


def keep_flat(flats, keep):
    """Each histogram's cell indices of the kept rows (all of them when ``keep`` is
    ``None``)."""
    if keep is None:
        return flats
    return [None if f is None else np.asarray(f)[keep] for f in flats]
