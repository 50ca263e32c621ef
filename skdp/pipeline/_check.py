"""``check_pipeline_privacy``: which steps of a composite estimator learn without a guarantee."""

from __future__ import annotations

from skdp.utils._meta_privacy import PipelinePrivacyReport, StepPrivacy
from skdp.utils._meta_privacy import check_pipeline_privacy as _check

__all__ = ["PipelinePrivacyReport", "StepPrivacy", "check_pipeline_privacy"]


def check_pipeline_privacy(estimator):
    """The privacy verdict of an estimator, a pipeline or any nesting of meta-estimators.

    Walks :class:`~sklearn.pipeline.Pipeline` (and :class:`DPPipeline`),
    :class:`~sklearn.compose.ColumnTransformer` and
    :class:`~sklearn.pipeline.FeatureUnion` to any depth, classifies every leaf step
    and composes their spend. :class:`DPPipeline` refuses to fit exactly when this
    report has a step that learns without a guarantee.

    Parameters
    ----------
    estimator : estimator
        Fitted or not. Before ``fit`` a DP step is counted at its declared
        ``epsilon``/``delta`` parameters (an upper bound of what it will spend); after
        ``fit`` at its ``epsilon_spent_``/``delta_spent_``.

    Returns
    -------
    report : PipelinePrivacyReport
        ``report.steps`` (one :class:`StepPrivacy` per leaf: name, class, status,
        epsilon, delta, guarantee, reason), ``report.epsilon``, ``report.delta``,
        ``report.privacy_guarantee``, ``report.is_private`` and
        ``report.learns_without_guarantee``; ``print(report)`` shows a table.

    Notes
    -----
    **Rules** (conservative: what is not recognised learns without a guarantee).

    *Private*: a skdp DP estimator or transformer (anything built on
    :class:`skdp.base.DPEstimatorMixin`), charged its ``epsilon_spent_``/``delta_spent_``
    (before ``fit``: its ``epsilon``/``delta`` parameters; a step without an
    ``epsilon`` parameter declares 0). It *learns without a guarantee* instead when it
    is not private: ``epsilon=inf``, a non-private option such as ``bounds="data"``
    (``nonprivate_options_``), or a fitted ``privacy_guarantee_ = "none"``.

    *Public* (spends 0, exact):

    * ``"passthrough"``, ``"drop"``, ``None``;
    * a skdp transformer whose class sets ``_skdp_public_transform = True`` and whose
      spend is 0 (the public-metadata transformers of :mod:`skdp.preprocessing`; a
      class may set the marker only if its ``fit`` reads nothing but declared metadata
      and the number of rows and columns);
    * :class:`~skdp.preprocessing.RowwiseFunctionTransformer`: a function the user
      declares to act on each row alone. A plain
      :class:`~sklearn.preprocessing.FunctionTransformer` *learns without a guarantee*:
      its ``func`` receives the whole batch and may compute a statistic of it
      (``lambda A: A - A.mean(0)`` centres by the private mean), which skdp cannot tell
      from a row-wise function;
    * :class:`~sklearn.preprocessing.Normalizer`,
      :class:`~sklearn.preprocessing.Binarizer`,
      :class:`~sklearn.preprocessing.PolynomialFeatures` (``fit`` reads only the number
      of columns) and ``MissingIndicator(features="all")``;
    * :class:`~sklearn.preprocessing.OneHotEncoder` only with explicit
      ``categories=[...]`` lists, ``handle_unknown="ignore"`` (or
      ``"infrequent_if_exist"``), ``drop=None``, ``min_frequency=None`` and
      ``max_categories=None``. With ``categories="auto"`` it reads the category set off
      the rows; frequency options count the rows. The unseen-value rule is skdp's
      *input-domain rule*, the same for every step and estimator: a value outside the
      declared domain may be refused before anything is released, by an error that
      names the column and never the value (as :class:`~skdp.preprocessing.PublicOneHotEncoder`
      with ``handle_unknown="error"`` and every skdp estimator with declared categories
      do); a step may not print the value (scikit-learn's ``handle_unknown="error"``
      does: "Found unknown categories ['...']") nor fit on through it with a warning
      (``"warn"``, or ``drop`` set).

    *Learns without a guarantee*: every other estimator (scikit-learn's scalers,
    imputers, ``OrdinalEncoder``, ``KBinsDiscretizer``, classifiers, ...), unknown
    meta-estimators (their composition is not known), and a ``ColumnTransformer``
    column selector that is a callable other than
    :func:`~sklearn.compose.make_column_selector` (it may read the rows to choose the
    columns).

    **Composition.** Every leaf step is fitted on the same rows -- the branches of a
    ``ColumnTransformer`` or ``FeatureUnion`` see different columns of the *same* rows,
    which is not parallel composition -- so the spends add: ``epsilon = sum(epsilon_i)``,
    ``delta = min(1, sum(delta_i))``, ``inf`` when a step learns without a guarantee.
    The guarantee is the weakest of the steps' (``"none" < "approximate" < "exact"``).
    Relation: add or remove one row, ``n`` public, that of every skdp estimator.

    Not covered: a ``ColumnTransformer`` with ``sparse_threshold > 0`` chooses a dense or
    sparse output from the density of the transformed rows (one bit of the data, which
    changes no value); set ``sparse_threshold=0`` to remove it.

    Examples
    --------
    >>> from sklearn.compose import ColumnTransformer
    >>> from sklearn.preprocessing import OneHotEncoder, StandardScaler
    >>> from skdp.linear_model import DPLinearRegression
    >>> from skdp.pipeline import check_pipeline_privacy, make_dp_pipeline
    >>> from skdp.preprocessing import DPStandardScaler
    >>> ct = ColumnTransformer([
    ...     ("age", DPStandardScaler(epsilon=0.5, bounds=(18, 90)), ["age"]),
    ...     ("bmi", StandardScaler(), ["bmi"]),
    ...     ("sex", OneHotEncoder(categories=[["F", "M"]], handle_unknown="ignore"), ["sex"]),
    ... ])
    >>> report = check_pipeline_privacy(make_dp_pipeline(ct, DPLinearRegression()))
    >>> [(s.name, s.status) for s in report.steps]  # doctest: +NORMALIZE_WHITESPACE
    [('columntransformer__age', 'private'),
     ('columntransformer__bmi', 'learns_without_guarantee'),
     ('columntransformer__sex', 'public'),
     ('columntransformer__remainder', 'public'),
     ('dplinearregression', 'private')]
    >>> report.epsilon, report.privacy_guarantee
    (inf, 'none')
    """
    return _check(estimator)
