"""The tabular front end's first shared step: input validation and the public schema.

Synthesizers that take a table (array or DataFrame) with declared ``bounds``,
``categories``, ``column_types`` or a whole ``schema`` share these two steps, so that
every one of them accepts the same inputs and raises the same errors.
"""

from __future__ import annotations

from skdp.utils._sklearn_compat import validate_data
from skdp.utils.schema import TabularSchema

__all__ = ["TabularInputMixin"]


class TabularInputMixin:
    """``_validate_X`` and ``_build_schema`` for estimators with schema parameters.

    The estimator must have the parameters ``schema``, ``bounds``, ``categories`` and
    ``column_types``.
    """

    def _validate_X(self, X, reset):
        """Validate ``X``: a DataFrame keeps its columns and dtypes; arrays are numeric."""
        if hasattr(X, "columns") and hasattr(X, "dtypes"):
            validate_data(self, X, reset=reset, skip_check_array=True)
            if len(X) == 0:
                raise ValueError("Found array with 0 sample(s) while a minimum of 1 is required.")
            return X
        return validate_data(self, X, reset=reset, dtype="numeric")

    def _build_schema(self, X):
        """The public schema: ``schema=`` as given, or one built from declared metadata.

        Only dtypes and the shape of ``X`` are read (plus the ``"data"`` opt-ins, which
        warn); :meth:`TabularSchema.from_data` never takes categories from pandas dtypes.
        """
        if self.schema is not None:
            if any(v is not None for v in (self.bounds, self.categories, self.column_types)):
                raise ValueError("pass either schema or bounds/categories/column_types")
            schema = self.schema
            if isinstance(schema, dict):
                schema = TabularSchema.from_dict(schema)
            return schema
        return TabularSchema.from_data(
            X, bounds=self.bounds, categories=self.categories, column_types=self.column_types
        )
