"""The tabular front end shared by every synthesizer and density estimator.

One path from a user's table to what a model trains on::

    validate X  ->  public schema  ->  charged private fill of missing bounds  ->  encoder

It lives in :mod:`skdp.mechanisms` (layer 2) because its third step is a DP mechanism
(:func:`resolve_schema_bounds`); the first two need only :mod:`skdp.utils` and the last is
:class:`skdp.utils.schema.TabularEncoder`. Every estimator that takes a table with
declared ``bounds``, ``categories``, ``column_types`` or a whole ``schema`` inherits it, so
all of them accept the same inputs and raise the same errors (see the user guide's
"Bad input" contract).
"""

from __future__ import annotations

import warnings

import numpy as np

from skdp.exceptions import PrivacyLeakWarning
from skdp.mechanisms._bounds import BOUNDS_FRACTION, resolve_schema_bounds
from skdp.utils._rowsum import is_dask_collection, n_rows
from skdp.utils._sklearn_compat import check_is_fitted
from skdp.utils.schema import TabularEncoder, TabularSchema
from skdp.utils.validation import validate_data

__all__ = ["TabularFrontEnd", "declare_missing"]


class TabularFrontEnd:
    """Mixin: ``_validate_X``, ``_build_schema`` and ``_prepare_table``.

    The estimator must have the parameters ``schema``, ``bounds``, ``categories`` and
    ``column_types`` (``schema`` may be absent: then only the declared metadata are used).
    An estimator that models missing values has a ``missing`` parameter (``"error"`` or
    ``"category"``, see :func:`declare_missing`); one without it refuses a schema that
    declares a missing level.
    """

    def _validate_X(self, X, reset):
        """Validate ``X``: a DataFrame keeps its columns and dtypes; arrays are numeric.

        A Dask collection is validated from its metadata only (names, dtypes, number of
        columns; one count per partition for the number of rows) and returned as is.
        """
        if is_dask_collection(X):
            if hasattr(X, "columns") and hasattr(X, "dtypes"):
                validate_data(self, X._meta, reset=reset, skip_check_array=True)
            else:
                if X.ndim != 2:
                    raise ValueError(f"X must be 2-dimensional, got {X.ndim} dimension(s)")
                validate_data(
                    self, np.zeros((1, X.shape[1]), X.dtype), reset=reset, dtype="numeric"
                )
            if n_rows(X) == 0:
                raise ValueError("Found array with 0 sample(s) while a minimum of 1 is required.")
            return X
        if hasattr(X, "columns") and hasattr(X, "dtypes"):
            validate_data(self, X, reset=reset, skip_check_array=True)
            if len(X) == 0:
                raise ValueError("Found array with 0 sample(s) while a minimum of 1 is required.")
            return X
        finite = "allow-nan" if _missing_param(self) == "category" else True
        return validate_data(self, X, reset=reset, dtype="numeric", ensure_all_finite=finite)

    def _scoring_codes(self, X):
        """``(codes, outside)`` of the rows of ``X`` to score under the fitted model:
        ``X`` validated against the fit, its ordinal codes in ``schema_`` (numeric values
        clipped into their bounds) and the mask of rows with a numeric value outside the
        declared bounds (where a density is 0: ``score_samples`` gives ``-inf``)."""
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        outside = self.schema_.outside_bounds(X)
        codes = TabularEncoder(self.schema_, categorical="ordinal", clip=True).codes(X)
        return codes, outside

    def _build_schema(self, X):
        """The public schema: ``schema=`` as given, or one built from declared metadata.

        Only dtype families and the shape of ``X`` are read (plus the ``"data"`` opt-ins,
        which warn); :meth:`TabularSchema.from_data` never takes categories from pandas
        dtypes, nor a numeric column's integer/float kind. A ``schema=`` marked
        ``data_derived`` warns here and makes the fit non-private
        (:meth:`skdp.base.DPEstimatorMixin._nonprivate_options`). Missing levels are
        added by :meth:`_prepare_table` (:func:`declare_missing`).
        """
        schema = getattr(self, "schema", None)
        bounds, _ = _split_private_bounds(self.bounds)
        if schema is not None:
            # bounds="private" (the opt-in for the schema's missing bounds) may go with it
            if any(v is not None for v in (bounds, self.categories, self.column_types)):
                raise ValueError("pass either schema or bounds/categories/column_types")
            if isinstance(schema, dict):
                schema = TabularSchema.from_dict(schema)
            if not isinstance(schema, TabularSchema):
                raise TypeError("schema must be a TabularSchema or a dict (TabularSchema.to_dict)")
            n_cols = X.shape[1]
            if schema.n_columns != n_cols:
                raise ValueError(f"schema describes {schema.n_columns} columns but X has {n_cols}")
            if schema.data_derived:
                # the fit is recorded non-private by DPEstimatorMixin._nonprivate_options
                warnings.warn(
                    "schema is marked data_derived: some of its metadata were read off the "
                    'private data (a "data" opt-in or skdp schema --from-data), so this fit '
                    "is not differentially private (epsilon_spent_ = inf). Build the schema "
                    "from public metadata instead.",
                    PrivacyLeakWarning,
                    stacklevel=4,
                )
            return schema
        if isinstance(bounds, list | tuple) or hasattr(bounds, "shape"):
            bounds = tuple(bounds)
        if is_dask_collection(X):
            X = _dask_meta(X, bounds=bounds, categories=self.categories)
        missing = _missing_param(self)
        return TabularSchema.from_data(
            X,
            bounds=bounds,
            categories=self.categories,
            column_types=self.column_types,
            missing=missing if missing == "category" else None,
        )

    def _prepare_table(self, X, *, epsilon, rng, fraction=BOUNDS_FRACTION, encoder=None):
        """Schema, private bound fill and (optionally) an encoder for a validated ``X``.

        Parameters
        ----------
        X : DataFrame or ndarray
            Already validated by :meth:`_validate_X`.
        epsilon : float
            The estimator's total budget; missing bounds spend ``fraction * epsilon``.
        rng : numpy.random.Generator
            The fit's ``"bounds"`` stream.
        fraction : float, default=BOUNDS_FRACTION (0.1)
        encoder : dict or None
            Keyword arguments of :class:`TabularEncoder`; ``None`` builds no encoder.

        Returns
        -------
        schema : TabularSchema
            Complete (every numeric column bounded).
        epsilon_bounds : float
            What the private fill spent (0 when every bound was declared); charge it.
        encoder : TabularEncoder or None
        """
        schema = declare_missing(self._build_schema(X), _missing_param(self))
        self._check_missing(schema, X)
        if is_dask_collection(X) and schema.missing_bounds():
            raise ValueError(
                f"bounds of column(s) {list(schema.missing_bounds())} are missing: Dask input "
                "needs declared bounds for every numeric column (a private bound estimate "
                "over partitions is not implemented)"
            )
        # the opt-in to an estimate that may be unreliable: bounds="private", or
        # {column: "private"} for every column whose bounds are missing
        _, private = _split_private_bounds(self.bounds)
        unbounded = set(schema.missing_bounds())
        opt_in = private is True or (bool(unbounded) and unbounded <= set(private or ()))
        schema, eps_bounds = resolve_schema_bounds(
            schema, X, epsilon=epsilon, rng=rng, fraction=fraction, opt_in=opt_in
        )
        schema.check_complete()
        enc = None if encoder is None else TabularEncoder(schema, **encoder)
        return schema, eps_bounds, enc

    def _check_missing(self, schema, X):
        """Refuse what the declared missing levels cannot serve, before any row is read
        by a mechanism: a missing level for an estimator without one, a missing level
        without declared bounds (the private bound estimate does not skip missing
        cells), and missing cells in columns without a declared missing level (in a
        DataFrame; the message names the columns, never a value)."""
        declared = schema.missing_names
        offers = _missing_param(self) is not None
        if declared and not offers:
            raise ValueError(
                f"the schema declares a missing level for column(s) {declared}, which "
                f"{type(self).__name__} does not model; impute first with "
                "skdp.preprocessing.DPSimpleImputer (inside a skdp.pipeline.DPPipeline), "
                "or use a synthesizer with missing='category'"
            )
        unbounded = [n for n in schema.missing_bounds() if schema[n].missing]
        if unbounded:
            raise ValueError(
                f"bounds of column(s) {unbounded} are missing: a numeric column with a "
                "missing level needs declared bounds (the private bound estimate does "
                "not skip missing cells); declare them"
            )
        if hasattr(X, "columns") and hasattr(X, "isna") and not is_dask_collection(X):
            from skdp.utils._data_free import missing_values_message, nan_columns

            bad = [c for c in nan_columns(X) if c in schema._index and not schema[c].missing]
            if bad:
                raise ValueError(missing_values_message("X", bad, synthesizer=offers))


def _missing_param(estimator):
    """The estimator's ``missing`` parameter, or ``None`` if it has none."""
    try:
        params = estimator.get_params(deep=False)
    except Exception:  # noqa: BLE001
        return None
    return params.get("missing") if "missing" in params else None


def declare_missing(schema, missing):
    """The schema with the missing levels that ``missing`` declares.

    ``"category"`` declares a missing level on every column (:class:`ColumnSpec`,
    ``missing``); ``"error"`` or ``None`` keeps the schema's own declarations (a
    ``schema=`` may declare ``"missing": true`` per column). A declaration only: the data
    are not read to decide it, so neighbouring data sets get the same schema.
    """
    if missing is None or missing == "error":
        return schema
    if missing == "category":
        return schema.with_missing()
    raise ValueError(f'missing must be "error" or "category", got {missing!r}')


def _split_private_bounds(bounds):
    """``(bounds without the "private" opt-ins, opt-in)``: ``"private"`` gives ``(None,
    True)``; a dict gives the dict without its ``"private"`` entries (those columns'
    bounds are missing, to be estimated) and the set of their names; anything else
    ``(bounds, ())``."""
    if isinstance(bounds, str) and bounds == "private":
        return None, True
    if isinstance(bounds, dict):
        private = {k for k, v in bounds.items() if isinstance(v, str) and v == "private"}
        if private:
            return {k: v for k, v in bounds.items() if k not in private}, private
    return bounds, ()


def _dask_meta(X, *, bounds, categories):
    """The empty pandas/numpy stand-in of a Dask ``X`` whose dtypes build the schema; the
    ``"data"`` opt-ins (which read values) are refused for Dask input."""
    for name, value in (("bounds", bounds), ("categories", categories)):
        if isinstance(value, str) and value == "data":
            raise ValueError(f'{name}="data" is not supported for Dask input: declare the {name}')
    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        return X._meta
    return np.zeros((0, X.shape[1]), dtype=X.dtype)
