"""Sensitivities of the sums behind regression metrics (MSE, MAE, R²)."""

from __future__ import annotations

import math

__all__ = ["regression_sum_sensitivities"]


def regression_sum_sensitivities(lo, hi):
    """Replace-one L1 sensitivities of the sums behind the DP regression metrics.

    With the true targets ``y`` and the predictions ``p`` clipped to the declared target
    range ``[lo, hi]`` (width ``R = hi - lo``), and the number of rows ``N`` public:

    * ``SSE = sum (y_i - p_i)**2``: each term lies in ``[0, R**2]`` and replacing one row
      changes one term, so ``Delta = R**2``;
    * ``SAE = sum |y_i - p_i|``: likewise ``Delta = R``;
    * ``SST = sum (y_i - mean(y))**2``: ``SST`` is the minimum over ``c`` of
      ``sum (y_i - c)**2``. With ``c`` the mean of ``D``, replacing row 1 by ``y_1'``
      gives ``SST(D') <= SST(D) - (y_1 - c)**2 + (y_1' - c)**2 <= SST(D) + R**2``, and
      symmetrically, so ``Delta = R**2``.

    The predictions come from a model fitted on other rows (the scorer's convention), so
    replacing a scored row changes its label and its prediction, both inside
    ``[lo, hi]``.

    Parameters
    ----------
    lo, hi : float
        The declared (public) target range, ``lo < hi``, both finite.

    Returns
    -------
    dict
        ``{"sse": R**2, "sae": R, "sst": R**2}``.

    Examples
    --------
    >>> from skdp.mechanisms.sensitivity import regression_sum_sensitivities
    >>> regression_sum_sensitivities(0.0, 2.0)
    {'sse': 4.0, 'sae': 2.0, 'sst': 4.0}
    """
    lo, hi = float(lo), float(hi)
    width = hi - lo
    square = width * width  # inf (not OverflowError) for a huge width
    if not (math.isfinite(lo) and math.isfinite(hi)) or not (width > 0) or math.isinf(square):
        raise ValueError(
            "bounds_y must be a finite (lo, hi) pair with lo < hi and a width whose "
            "square is finite"
        )
    return {"sse": square, "sae": width, "sst": square}
