"""Private preprocessing: scalers, encoders and imputers with a stated privacy cost.

Fitting scikit-learn's scalers, encoders or imputers on private rows leaks: their fitted
statistics (means, minima, category sets, fill values) are un-noised functions of the
data. The transformers here either read nothing off the rows
(:class:`PublicBoundsScaler`, :class:`PublicOneHotEncoder`,
``DPSimpleImputer(strategy="constant")``, and :class:`RowwiseFunctionTransformer` for a
function the user declares row-wise: ``epsilon_spent_ = 0``) or release their
statistics with a differential-privacy mechanism inside a stated ``epsilon``
(:class:`DPStandardScaler`, ``DPSimpleImputer(strategy="mean" | "median")``). Every one
reports ``epsilon_spent_``, ``delta_spent_`` and ``privacy_guarantee_`` like the
estimators, returns DataFrames under ``set_output(transform="pandas")`` and has
``get_feature_names_out``. Numpy only; no torch.
"""

from __future__ import annotations

from skdp.preprocessing._imputer import DPSimpleImputer
from skdp.preprocessing._public import PublicBoundsScaler, PublicOneHotEncoder
from skdp.preprocessing._rowwise import RowwiseFunctionTransformer
from skdp.preprocessing._scaler import DPStandardScaler, standard_scaler_sensitivities

__all__ = [
    "DPSimpleImputer",
    "DPStandardScaler",
    "PublicBoundsScaler",
    "PublicOneHotEncoder",
    "RowwiseFunctionTransformer",
    "standard_scaler_sensitivities",
]
