"""Package-shipped public tables shared by the benchmarks (statsmodels' ``fair`` and
``randhie``; statsmodels is not a dependency of skdp: without it :func:`statsmodels_table`
prints a note once and returns ``None``, and the scripts skip those rows).

Every bound below is declared from the codebook (``statsmodels.api.datasets.<name>.NOTE``)
or, where the codebook gives no range, as a stated plausibility cap; none is read off the
rows. ``expm_flow.py``, ``gan.py`` and ``marginal.py`` (hence ``synthesizers.py``) use
these boxes; ``kmedian.py`` and ``linear_regression.py`` load the tables here but keep
their own declared caps for their column subsets (fair: years married up to 40 and
children up to 10 there, 45 and 12 here), with which their recorded results were
measured. Within one benchmark every method gets the same boxes.
"""

from __future__ import annotations

import math

__all__ = [
    "FAIR_BOUNDS",
    "FAIR_INTEGER",
    "RANDHIE_BOUNDS",
    "integer_column_types",
    "statsmodels_table",
]

#: Fair (1978) Redbook survey, 6,366 married women. The codebook gives the ordinal scales
#: (ratings, religiousness, education, occupations); it gives no range for age, years
#: married and children, so generic ranges for married adults are declared.
FAIR_BOUNDS = {
    "rate_marriage": (1, 5),
    "age": (16.0, 60.0),
    "yrs_married": (0.0, 45.0),
    "children": (0.0, 12.0),
    "religious": (1, 4),
    "educ": (9, 20),
    "occupation": (1, 6),
    "occupation_husb": (1, 6),
}
#: Fair's integer-coded columns.
FAIR_INTEGER = ("rate_marriage", "religious", "educ", "occupation", "occupation_husb")

#: RAND Health Insurance Experiment, 20,190 person-years. lncoins = ln(coinsurance + 1)
#: with coinsurance in [0, 100] (codebook); lpi and fmde are logs of dollar amounts,
#: declared up to ln 8,100 = 9; disea, a chronic-disease count index, declared in
#: [0, 100]; the rest are 0/1 indicators.
RANDHIE_BOUNDS = {
    "lncoins": (0.0, math.log(101.0)),
    "idp": (0, 1),
    "lpi": (0.0, 9.0),
    "fmde": (0.0, 9.0),
    "physlm": (0, 1),
    "disea": (0.0, 100.0),
    "hlthg": (0, 1),
    "hlthf": (0, 1),
    "hlthp": (0, 1),
}

_CACHE: dict = {}


def statsmodels_table(name):
    """statsmodels' data set ``name`` as a DataFrame, or ``None`` (with a note printed
    once) when statsmodels is not installed."""
    if name not in _CACHE:
        try:
            from statsmodels.api import datasets
        except ImportError:
            print(f"note: statsmodels is not installed; the {name} rows are skipped")
            _CACHE[name] = None
        else:
            _CACHE[name] = getattr(datasets, name).load_pandas().data
    return _CACHE[name]


def integer_column_types(frame, bounds):
    """``column_types`` declaring as ``"integer"`` the bounded columns that a benchmark
    built as integers on purpose (its own codebook casts, e.g. ``FAIR_INTEGER``, or a
    simulator's integer draws).

    skdp takes a column's kind from declarations only (a pandas int64 dtype is a fact
    about the values); the benchmarks set these dtypes themselves before fitting, from
    the codebooks, so reading them back here is the benchmark's declaration, not a read
    of private data.
    """
    import pandas as pd

    return {
        c: "integer"
        for c in bounds
        if c in frame.columns and pd.api.types.is_integer_dtype(frame[c].dtype)
    }
