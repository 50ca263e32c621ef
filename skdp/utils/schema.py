"""The shared tabular schema and encoders used by every synthesizer.

A :class:`TabularSchema` is the *public* description of a table: its columns in
order, each a :class:`ColumnSpec` that is numeric (``"continuous"`` or ``"integer"``,
with declared ``bounds=(lo, hi)``), ``"binary"`` (declared levels ``{0, 1}`` or
``{False, True}``) or ``"categorical"`` (with its declared ``categories``). It also
records each column's output dtype (from its declared kind and levels), so that
synthetic output is a DataFrame with the same columns and order and the declared types.

:class:`TabularEncoder` maps a table to a float matrix and back, per record and
using only the schema (no statistic of the data), so it costs no privacy:

* numeric columns are clipped to their declared bounds (or, with ``clip=False``,
  out-of-bounds values raise) and scaled affinely to ``numeric_range``;
* categorical columns are one-hot encoded (``numeric_range`` endpoints as the off/on
  values) or ordinal-encoded (integer codes ``0..K-1``);
* binary columns become one column holding the ``numeric_range`` endpoints.

The inverse map is post-processing: numeric values are unscaled and clipped to the
bounds, integers rounded, categoricals decoded by argmax (one-hot) or rounding
(ordinal), binaries thresholded at the midpoint.

Where the metadata come from (:doc:`privacy_guarantees`, "Metadata"):

* column kinds come from ``column_types``, else from the *family* of the dtype only
  (bool -> binary with the levels ``{False, True}`` that the dtype itself fixes; pandas
  ``Categorical``, object/string -> categorical; any number -> continuous), never from
  values. An integer dtype does not make a column ``"integer"``: pandas makes a column
  int64 only when every value is whole, so that split is a fact of the values. Declare
  ``"integer"``, or opt in with ``column_types="data"`` (warns; not private). Output
  dtypes follow the kinds (integer -> int64, continuous -> float64, levels -> the dtype
  that holds the declared levels; a ``category``, string or bool input keeps its dtype);
* a schema whose metadata were read off the data (any ``"data"`` opt-in) is marked
  ``data_derived``; an estimator given it through ``schema=`` reports a non-private fit;
* bounds are declared (``{column: (lo, hi)}``, a ``(lo, hi)`` pair for every numeric
  column, or per-feature arrays); ``bounds="data"`` reads them off the data with a
  :class:`~skdp.exceptions.PrivacyLeakWarning`; ``bounds=None`` leaves them missing so
  that the *estimator* can fill them with a private estimate
  (:func:`skdp.mechanisms.resolve_schema_bounds`: this module is layer 0 and cannot
  import :mod:`skdp.mechanisms`);
* categories come only from ``categories=`` (or a complete schema); missing ones raise
  ``ValueError``, unless the user opts in with ``categories="data"`` (warns). A pandas
  ``CategoricalDtype`` does *not* count as declared: ``df.astype("category")`` builds
  its categories from the private rows, so one extra row with a rare level would change
  the schema, the encoding width and the dtype of every synthetic sample. Only the
  dtype's ``ordered`` flag is kept.

Error messages name the column, never a value.

The implementation is split by concern in the private package ``skdp.utils._tabular``:
``columns`` (column kinds, :class:`ColumnSpec`), ``schema`` (:class:`TabularSchema`),
``inference`` (building the columns from declared metadata and dtypes) and ``encoder``
(:class:`TabularEncoder` and the output dtype rules); this module is its public face.

Examples
--------
>>> import pandas as pd
>>> from skdp.utils.schema import TabularSchema, TabularEncoder
>>> df = pd.DataFrame({"age": [30, 52], "sex": ["F", "M"], "bmi": [21.5, 30.1]})
>>> schema = TabularSchema.from_data(
...     df, bounds={"age": (18, 90), "bmi": (15.0, 50.0)}, categories={"sex": ["F", "M"]},
...     column_types={"age": "integer"},
... )
>>> [(c.name, c.kind) for c in schema]
[('age', 'integer'), ('sex', 'categorical'), ('bmi', 'continuous')]
>>> enc = TabularEncoder(schema)
>>> Z = enc.transform(df)
>>> Z.shape
(2, 4)
>>> back = enc.inverse_transform(Z)
>>> list(back.dtypes) == list(df.dtypes), back["sex"].tolist(), back["age"].tolist()
(True, ['F', 'M'], [30, 52])
"""

from skdp.utils._tabular.columns import (
    COLUMN_KINDS,
    ColumnSpec,
    kind_from_dtype,
    output_dtype,
    structural_kind,
)
from skdp.utils._tabular.encoder import TabularEncoder, assemble
from skdp.utils._tabular.schema import TabularSchema

__all__ = [
    "COLUMN_KINDS",
    "ColumnSpec",
    "TabularEncoder",
    "TabularSchema",
    "assemble",
    "kind_from_dtype",
    "output_dtype",
    "structural_kind",
]
