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

On Dask input the rows' codes are computed on the workers, and the patients are bounded
there by :func:`skdp.utils._groups_dask.bound_dask_rows` (Dask's shuffle on the label,
then the ``k`` rows of smallest keyed priority per patient: uniform ``k``-subsets, a
function of the patient's own rows); the counts of the kept rows are summed on the
workers, and the client receives the counts and one row count per partition.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from skdp.utils._groups import bound_contributions, patient_codes
from skdp.utils._random import fit_streams
from skdp.utils._rowsum import _array_row_chunks, _frame_lengths, is_dask_collection

__all__ = [
    "COUNT_SYNTHESIS_DOCS",
    "CountFitInputs",
    "KeptRows",
    "count_fit_inputs",
    "kept_rows",
    "synthesis_patients",
]

#: docstring paragraphs shared by both count-based synthesizers (``insert_docs``)
COUNT_SYNTHESIS_DOCS = {
    "param_max_rows_per_group_count": """max_rows_per_group : int or None, default=None
    The public number of rows one patient may contribute when ``fit`` is given
    ``groups`` (from the visit schedule or the study protocol, never from the
    data): rows beyond it are dropped at random inside the mechanism, and the
    guarantee holds per patient (Notes, "Patients"). Required with ``groups``.""",
    "param_verbose_count": """verbose : int, default=0
    Positive: show the progress of ``fit`` on standard error (glossary ``verbose``).""",
    # the parameters and returns of both mixins' ``score_samples``
    "score_samples_sections": """Parameters
----------
X : DataFrame or array-like of shape (n_samples, n_columns)

Returns
-------
ndarray of shape (n_samples,)""",
}


@dataclass(frozen=True)
class CountFitInputs:
    """What a count-based synthesizer's ``fit`` works on (:func:`count_fit_inputs`)."""

    streams: dict
    schema: object
    eps_bounds: float
    encoder: object
    kept: object
    k: int | None
    n_public: int


def count_fit_inputs(est, X, groups, *, n, epsilon, streams):
    """The common start of both count-based synthesizers' ``fit`` on the validated
    ``X`` (``n`` rows): the patients (:func:`synthesis_patients`), the fit's named noise
    ``streams`` (their names, in order; ``"bounds"`` and ``"groups"`` among them), the
    public schema and its ordinal encoder (a private bound estimate from the
    ``"bounds"`` stream, :meth:`~skdp.mechanisms._front_end.TabularFrontEnd._prepare_table`),
    the rows kept per patient (:func:`kept_rows`) and the public row count
    (:func:`n_public_rows`). Returns a :class:`CountFitInputs`.
    """
    codes, k = synthesis_patients(est, X, groups, n)
    rngs = fit_streams(
        est.random_state,
        streams,
        estimator=est,
        X=X,
        groups=codes,
        # in memory the kept rows depend on the row order: a permuted copy must not
        # reuse the noise on other rows (on Dask they do not)
        order_invariant=codes is None or is_dask_collection(X),
    )
    schema, eps_bounds, encoder = est._prepare_table(
        X,
        epsilon=epsilon,
        rng=rngs["bounds"],
        encoder={"categorical": "ordinal", "clip": est.clip},
    )
    kept = kept_rows(X, encoder, codes, k, rngs["groups"])  # <= k rows per patient
    n_public = n_public_rows(est.n_public, n, kept)
    return CountFitInputs(rngs, schema, eps_bounds, encoder, kept, k, n_public)


def synthesis_patients(est, X, groups, n):
    """``(codes, k)`` of a patient-level fit of the validated ``X`` (``n`` rows);
    ``(None, None)`` without ``groups``. On Dask input ``codes`` are the labels (a 1-D
    Dask array, or the checked in-memory labels).

    Refuses, naming the parameter: ``groups`` without ``max_rows_per_group``, a bad
    bound or bad labels, Dask ``groups`` beside in-memory ``X``
    (:func:`skdp.utils._groups.patient_codes`), and numeric columns whose bounds are
    left to a private estimate (per patient it is not implemented); the message names
    the columns of the public schema, never a value.
    """
    dask_input = is_dask_collection(X)
    codes, k = patient_codes(est, groups, n, dask_input=dask_input, dask_ok=True)
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


@dataclass(frozen=True)
class KeptRows:
    """The rows a patient-level fit releases: ``index`` (sorted, in memory) or ``codes``
    (a lazy Dask array of the kept rows' encoder codes, on the workers), and their
    number ``n`` (public, as the number of rows is)."""

    n: int
    index: np.ndarray | None = None
    codes: object = None


def kept_rows(X, encoder, codes, k, rng):
    """The rows kept when each patient keeps at most ``k`` rows chosen uniformly at
    random with ``rng`` (a :class:`KeptRows`); ``None`` for a row-level fit.

    In memory: :func:`skdp.utils._groups.bound_contributions` on the labels' codes.
    Dask: every row is encoded on the workers (``encoder.codes``: clipping, the
    ``clip=False`` and unknown-level checks, all rows), then
    :func:`skdp.utils._groups_dask.bound_dask_rows` keeps at most ``k`` per patient.
    """
    if codes is None:
        return None
    if not is_dask_collection(X):
        index = bound_contributions(codes, k, rng)
        return KeptRows(n=int(index.shape[0]), index=index)
    from skdp.utils._groups_dask import bound_dask_rows

    (kept,), n = bound_dask_rows([dask_codes(X, encoder)], codes, k, rng)
    return KeptRows(n=int(n), codes=kept)


def _encode(block, encoder):
    return np.asarray(encoder.codes(block), dtype=np.float64)


def dask_codes(X, encoder):
    """A lazy Dask array (``n_rows x n_columns``, float64, known row chunks) of the
    encoder's codes of every row of the Dask collection ``X``, computed on the workers
    (one pass for the partitions' lengths when Dask does not know them)."""
    import dask
    import dask.array as da

    d = encoder.schema.n_columns
    if hasattr(X, "columns"):  # a Dask DataFrame: one block per partition
        lengths = _frame_lengths(X)
        blocks = [
            da.from_delayed(dask.delayed(_encode)(part, encoder), (m, d), dtype=np.float64)
            for part, m in zip(X.to_delayed(), lengths, strict=True)
        ]
        return da.concatenate(blocks, axis=0)
    X = X.rechunk((_array_row_chunks(X), -1))
    return X.map_blocks(_encode, encoder, dtype=np.float64, chunks=(X.chunks[0], (d,)))


def n_public_rows(n_public, n, kept):
    """The public row count of the bin rule and the threshold: declared ``n_public``, or
    the rows used (all ``n``, or the ``kept.n`` rows kept per patient; public as ``n``
    is, :ref:`neighbouring-relation`)."""
    if n_public is not None:
        return int(n_public)
    return int(n) if kept is None else int(kept.n)


def keep_flat(flats, kept):
    """Each histogram's cell indices of the rows kept in memory (all of them when
    ``kept`` is ``None``)."""
    if kept is None:
        return flats
    return [None if f is None else np.asarray(f)[kept.index] for f in flats]
