"""Docstring paragraphs shared by several public objects, and the helper that inserts them.

A paragraph that several estimators or functions document in the same words (a parameter
they share, a reference they cite) is written once in :data:`FRAGMENTS`; a docstring names
it on a line of its own as ``{name}``, and :func:`insert_docs` replaces that line with the
paragraph, indented like the line. The rendered ``__doc__`` (what ``help``, numpydoc,
Sphinx and doctest read) is the same as if the paragraph had been written out; only the
source is shorter. Used sparingly, as scikit-learn and opacus do: a paragraph becomes a
fragment only where its meaning is the same in every docstring that uses it.
"""

from __future__ import annotations

import re

__all__ = ["FRAGMENTS", "groups_entry", "insert_docs"]

#: name -> paragraph, written without indentation (a numpydoc entry: its header line, then
#: its description indented by four spaces).
FRAGMENTS: dict[str, str] = {
    # ------------------------------------------------------------------ references
    "ref_mironov2012": """\
I. Mironov. "On Significance of the Least Significant Bits for Differential
Privacy." CCS 2012.""",
    "ref_canonne2020": """\
C. L. Canonne, G. Kamath, T. Steinke. "The Discrete Gaussian for Differential
Privacy." NeurIPS 2020.""",
    "ref_dwork2006": """\
C. Dwork, F. McSherry, K. Nissim, A. Smith. "Calibrating noise to sensitivity
in private data analysis". TCC 2006.""",
    "ref_dwork_roth2014_groups": """\
C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy",
2014 (Thm 3.16: composition; Thm 2.2: group privacy).""",
    "ref_mironov2017": """\
I. Mironov, "Rényi Differential Privacy", CSF 2017.""",
    "ref_balle2020": """\
B. Balle et al., "Hypothesis Testing Interpretations and Renyi Differential
Privacy", AISTATS 2020.""",
    "ref_mironov_talwar_zhang2019": """\
I. Mironov, K. Talwar, L. Zhang, "Rényi Differential Privacy of the Sampled
Gaussian Mechanism", arXiv:1908.10530, 2019.""",
    # ---------------------------------------------------- tabular estimators' metadata
    "param_categories": """\
categories : None, "data", dict {column: list} or list of lists, default=None
    Declared levels of categorical columns. Missing categories raise ``ValueError``
    (``"data"``: the leaky opt-in, with a warning).""",
    "param_column_types": """\
column_types : None, "data", dict {column: kind} or list, default=None
    ``"continuous"``, ``"integer"``, ``"binary"`` or ``"categorical"`` per column.
    Undeclared columns take the kind of their dtype's family (bool -> binary, any
    number -> continuous, object/string/category -> categorical): an integer dtype
    does not make a column ``"integer"`` (pandas infers it from the values; see
    :doc:`/privacy_guarantees`, "Metadata"), so declare ``"integer"`` for whole-number
    columns. The output dtype follows the kind (integer -> int64, continuous ->
    float64). ``"data"`` takes the kinds from the dtypes (warns; not private).""",
    "param_schema_data_derived": """\
A schema marked ``data_derived`` (metadata read off the data) makes the fit
non-private (``epsilon_spent_ = inf``, ``"schema"`` in ``nonprivate_options_``).""",
    # ------------------------------------- the histogram and marginal synthesizers
    "param_bounds_estimate": """\
where public ``n``, the number of estimated columns and ``epsilon`` make it
reliable; otherwise ``fit`` refuses with a ``ValueError`` that says what to
declare (bounds, or ``column_types`` ``"binary"`` for 0/1 columns;
:doc:`/choosing_bounds`). ``"private"`` (or ``{column: "private"}`` for every
column left to the estimate) is the explicit opt-in to that estimate even where
it cannot be reliable (with a :class:`~skdp.exceptions.BoundsEstimateWarning`).
``"data"``: read off the data (not private; emits
:class:`~skdp.exceptions.PrivacyLeakWarning`).""",
    "param_schema_tabular": """\
schema : TabularSchema or dict, default=None
    A complete public schema instead of ``bounds``/``categories``/``column_types``.
    A schema marked ``data_derived`` (metadata read off the data) makes the fit
    non-private (``epsilon_spent_ = inf``, ``"schema"`` in ``nonprivate_options_``).""",
    "param_missing_cells": """\
missing : {"error", "category"}, default="error"
    What a missing value (NaN, ``None``) in ``X`` is. ``"error"``: refused with a
    message naming the column (impute first with
    :class:`~skdp.preprocessing.DPSimpleImputer`, or drop those rows).
    ``"category"``: every column gets a declared *missing* level -- one more bin
    beside the value bins of a numeric column, one more level after the categories
    of a categorical or binary column -- whose count is released with the other
    cells, by the same mechanism under the same budget (a row still falls in one
    cell, so nothing extra is released or spent), and :meth:`sample` writes it back
    as NaN (``None`` in object columns; integer and bool columns come back as
    ``float64`` and ``object``). The level is a declaration: it exists whether or
    not the data hold a missing value, so neighbouring data sets get the same grid.
    A ``schema`` may instead declare ``"missing": true`` on chosen columns. A
    numeric column with a missing level needs declared bounds.""",
    "param_clip_tabular": """\
clip : bool, default=True
    Clip numeric values to the bounds (silently); ``False`` raises ``ValueError``.""",
    "attr_bin_edges": """\
bin_edges_ : dict {column: ndarray}
    Bin edges of numeric columns (integer columns: the first integer of each bin,
    then one past the last).""",
    "attr_bounds_tabular": """\
bounds_ : dict {column: (lo, hi)}
    Bounds of the numeric columns (declared or privately estimated).""",
    "param_X_private_records": """\
X : array-like or DataFrame of shape (n_samples, n_features)
    Private records. NaN/inf raise ``ValueError``; numeric values outside the
    bounds are clipped; unknown categories raise ``ValueError``.""",
    "param_fit_private_table": """\
X : DataFrame or array-like of shape (n_samples, n_columns)
    The private table (a response column is just another column).
    A Dask DataFrame or array is counted partition by partition with the
    same release (:doc:`/dask`; bounds and categories must be declared).
y : None
    Ignored.""",
    # ------------------------------------------------------------ fitted attributes
    "attr_features_in": """\
n_features_in_ : int
feature_names_in_ : ndarray of str
    Only when ``X`` has string column names (a DataFrame).""",
    "attr_spent_pure_exact": """\
epsilon_spent_ : float
delta_spent_ : float
    Always 0.
privacy_guarantee_ : str
    ``"exact"``.""",
    # -------------------------------------------- patient-level estimators (groups=)
    "attr_patient_facts": """\
privacy_unit_ : {"row", "group"}
    What ``epsilon_spent_`` protects: one row, or one patient with all their rows
    (``groups``).
max_rows_per_group_ : int or None
    The contribution bound of a patient-level fit (``None`` per row).""",
    "param_groups_dpsgd_tabular": """\
groups : array-like of shape (n_samples,), default=None
    The patient of each row, as in scikit-learn's ``GroupKFold``: the guarantee
    is then per patient (each keeps at most ``max_rows_per_group`` rows, chosen
    at random; patients are sampled and clipped, Notes). In memory only; needs
    declared bounds.""",
    # ------------------------------------------------------------- DP-SGD estimators
    "param_accountant_dpsgd": """\
accountant : {"pld", "rdp", "gdp_clt"}, default="pld"
    Registry key (:func:`skdp.accounting.get_accountant`). ``"pld"``: numerical
    composition of privacy loss distributions, reported as ``min(PLD, RDP)``, a
    proven bound that is tighter than ``"rdp"`` (less noise for the same budget);
    ``"rdp"``: the Rényi-DP bound alone; ``"gdp_clt"``: the DP-NF paper's CLT
    approximation (``privacy_guarantee_="approximate"``).""",
    "param_max_rows_per_group_dpsgd": """\
max_rows_per_group : int or None, default=None
    The public number of rows a patient may contribute, required with ``groups``
    (from the visit schedule or the study protocol, never from the data;
    :doc:`/patients`). ``batch_size`` then counts patients.""",
    # the ``n_jobs`` entry of the torch estimators: its first line, then the estimator's
    # own "work of a step" (a line or more ending in ``),``), then these lines
    "param_n_jobs_torch": """\
n_jobs : int or None, default=None
    Torch CPU threads used by ``fit`` (``torch.set_num_threads``); the previous count
    is restored afterwards, also when ``fit`` raises. ``None``: one thread on the CPU
    when a step is small (its work at most :data:`skdp.utils._torch.SMALL_STEP_WORK`
    = 2**24; the work of a step is""",
    "n_jobs_torch_end": """\
where an OpenMP pool costs more than it saves and collapses when other
processes keep the cores busy; otherwise torch's current setting. An int: that
many threads; negative values count back from the available CPUs (``-1``: all).
It is not seed material: a seeded fit draws the same noise whatever ``n_jobs``.""",
}
#: the opening of the ``groups`` entry of a patient-level ``fit``, up to the rows a patient
#: keeps: ``param_groups`` ends it there, :func:`groups_entry` goes on
_GROUPS_OPENING = """\
groups : array-like of shape (n_samples,), default=None
    The patient (or other privacy unit) of each row, as in scikit-learn's
    ``GroupKFold``. With ``groups`` the guarantee is per patient: each patient
    keeps at most ``max_rows_per_group`` rows (chosen at random)"""
FRAGMENTS["param_groups"] = _GROUPS_OPENING + "."


def groups_entry(rest):
    """The ``groups`` entry of a patient-level ``fit``: the shared opening, whose last line
    (the rows a patient keeps) ``rest`` goes on (what ``k`` multiplies, what the
    estimator needs), in lines of the entry's own indentation."""
    return _GROUPS_OPENING + rest


#: the pair cited for noise drawn in floating point (Mironov's attack, then the discrete
#: mechanisms that avoid it)
FRAGMENTS["refs_floating_point"] = (
    FRAGMENTS["ref_mironov2012"] + "\n\n" + FRAGMENTS["ref_canonne2020"]
)

_PLACEHOLDER = re.compile(r"^([ \t]*)(\.\. \[\w+\] )?\{(\w+)\}[ \t]*$", re.M)


def insert_docs(obj=None, /, **fragments):
    """Replace each ``{name}`` line of ``obj.__doc__`` by its paragraph; return ``obj``.

    A decorator for functions and classes: ``@insert_docs`` takes the paragraphs of
    :data:`FRAGMENTS`; ``@insert_docs(name=text, ...)`` adds a module's own (shared by
    that module's docstrings only). Each line of the paragraph is indented like the
    placeholder line; blank lines stay empty. A numbered citation ``.. [1] {name}``
    keeps its label on the first line and indents the others by three more spaces
    (numpydoc's References, where each docstring numbers its own). Only a line holding
    nothing but ``{name}`` (or a label and ``{name}``) is a placeholder, so braces
    elsewhere in a docstring are left alone; an unknown ``name`` raises ``KeyError``
    at import time.
    """
    if obj is None:
        return lambda target: insert_docs(target, **fragments)
    table = {**FRAGMENTS, **fragments}

    def expand(match):
        indent, label, name = match.group(1), match.group(2), match.group(3)
        lines = table[name].strip("\n").splitlines()
        if label:  # a citation: its label, then its continuation lines under the text
            head, rest = indent + label + lines[0], indent + "   "
            return "\n".join([head] + [rest + line if line.strip() else "" for line in lines[1:]])
        return "\n".join(indent + line if line.strip() else "" for line in lines)

    if obj.__doc__:
        obj.__doc__ = _PLACEHOLDER.sub(expand, obj.__doc__)
    return obj
