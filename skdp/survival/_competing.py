"""Competing risks: the target with an event type per row, and DPAalenJohansen, the
cumulative incidence of each event type with differential privacy."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from skdp.survival._band import SurvivalCurveBase, band_from_draws, step_lookup
from skdp.survival._histogram import cause_increments, fit_curves
from skdp.survival._release import _competing_status
from skdp.survival._target import _check_time
from skdp.utils._keyword_init import keyword_init
from skdp.utils._sklearn_compat import _fit_context, check_is_fitted

__all__ = ["DPAalenJohansen", "make_competing_risks_target"]


def make_competing_risks_target(event, time):
    """Build a competing-risks target: an event type per row (0 = censored) and a time.

    Parameters
    ----------
    event : array-like of int, shape (n_samples,)
        ``0`` where the row was censored, else the type of the event that ended its
        follow-up (``1``, ``2``, ...; e.g. 1 = relapse, 2 = death without relapse).
    time : array-like of shape (n_samples,)
        Time of the event or of censoring: finite and ``>= 0``.

    Returns
    -------
    y : numpy structured array of shape (n_samples,)
        Fields ``("event", int64)`` and ``("time", float64)``: the layout of
        :func:`~skdp.survival.make_survival_target` with an integer first field.

    Raises
    ------
    ValueError
        Arrays of different lengths, event types that are not integers ``>= 0``, or a
        negative, NaN or infinite time; the message names the parameter.

    Examples
    --------
    >>> from skdp.survival import make_competing_risks_target
    >>> y = make_competing_risks_target([1, 0, 2], [5.0, 8.0, 2.5])
    >>> y.dtype.names, y["event"].tolist()
    (('event', 'time'), [1, 0, 2])
    """
    status = _competing_status(np.asarray(event), "event")
    time = _check_time(time, "time")
    if status.shape[0] != time.shape[0]:
        raise ValueError(
            f"event and time must have one entry per row, got {status.shape[0]} and {time.shape[0]}"
        )
    y = np.empty(status.shape[0], dtype=[("event", np.int64), ("time", np.float64)])
    y["event"], y["time"] = status, time
    return y


def _check_event_types(event_types):
    if isinstance(event_types, (str, bytes)) or not hasattr(event_types, "__len__"):
        raise TypeError("event_types must be a sequence of the public event types (ints >= 1)")
    types = tuple(event_types)
    ok = all(isinstance(t, Integral) and not isinstance(t, bool) and t >= 1 for t in types)
    if not types or not ok or len(set(types)) != len(types):
        raise ValueError(
            "event_types must list distinct public event types, whole numbers >= 1 (0 is censoring)"
        )
    return tuple(int(t) for t in types)


class DPAalenJohansen(SurvivalCurveBase):
    """Cumulative incidence with competing risks (Aalen--Johansen), with differential
    privacy, and its confidence band.

    The private counterpart of lifelines' ``AalenJohansenFitter`` for all event types
    at once. One noisy histogram of (grid interval, status) is released, with one
    column for censoring and one per declared event type; every curve and band is
    computed from it alone.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy loss of one ``fit``. ``math.inf``: the exact grouped estimate.
    max_time : float
        The public study horizon, required; later times are censored there.
    event_types : sequence of int, default=(1, 2)
        The public event types (ints ``>= 1``; ``0`` in the target is censoring). A
        row with another type is refused with a ``ValueError``.
    time_grid, n_intervals, n_bootstrap, max_rows_per_group, random_state
        As in :class:`DPKaplanMeier`.

    Attributes
    ----------
    time_grid_ : ndarray of shape (m + 1,)
        As in :class:`DPKaplanMeier`.
    cumulative_incidence_ : ndarray of shape (m + 1, n_event_types)
        The private ``F_c(e_j)`` of each event type, in the order of ``event_types``.
    survival_function_ : ndarray of shape (m + 1,)
        The private probability of no event of any type.
    cumulative_hazard_ : ndarray of shape (m + 1, n_event_types)
        The private cause-specific Nelson--Aalen hazards.
    at_risk_ : ndarray of shape (m,)
    bootstrap_incidence_ : ndarray of shape (n_bootstrap, m + 1, n_event_types)
    event_types_ : tuple of int
    noise_scale_, epsilon_spent_, delta_spent_, privacy_guarantee_, \
privacy_breakdown_, privacy_unit_, max_rows_per_group_
        As in :class:`DPKaplanMeier`.

    Notes
    -----
    **Privacy.** As :class:`DPKaplanMeier` with more columns: neighbouring relation
    add or remove one row (one patient with all their rows with ``groups``); each row
    is counted once in the histogram of (interval, status), so the L1 sensitivity is
    1 (``k`` with ``groups``, after each patient's rows are bounded to ``k`` at
    random) whatever the number of event types; discrete Laplace noise of scale
    ``Delta / epsilon`` on every cell; pure ``epsilon``-DP, exact accounting.
    Post-processing: the number at risk (suffix sums, isotonic), the cause-specific
    cumulative hazards (life-table denominator, isotonic), the event-free survival
    ``S`` and ``F_c(e_{j+1}) = F_c(e_j) + S(e_j) dH_c,j`` (Aalen and Johansen 1978,
    on the grid). The band is the parametric bootstrap through the mechanism of
    :class:`DPKaplanMeier`, with the event type drawn per interval.

    **Floating point.** As :class:`DPKaplanMeier`: every released count gets exact
    integer noise (Mironov's 2012 attack on floating-point noise does not apply);
    everything after is floating-point post-processing.

    References
    ----------
    O. O. Aalen, S. Johansen. "An Empirical Transition Matrix for Non-homogeneous
    Markov Chains Based on Censored Observations." Scandinavian Journal of Statistics
    5(3), 1978.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.survival import DPAalenJohansen, make_competing_risks_target
    >>> rng = np.random.default_rng(0)
    >>> t1, t2 = rng.exponential(10, 4000), rng.exponential(20, 4000)
    >>> event = np.where(t1 < t2, 1, 2)
    >>> y = make_competing_risks_target(event, np.minimum(t1, t2))
    >>> aj = DPAalenJohansen(epsilon=1.0, max_time=30.0, random_state=0).fit(y)
    >>> f = aj.predict([30.0])[0]  # true: 2/3 (1 - e^-4.5), 1/3 (1 - e^-4.5)
    >>> bool(abs(f[0] - 0.659) < 0.05 and abs(f[1] - 0.330) < 0.05)
    True
    """

    _parameter_constraints: dict = {
        **SurvivalCurveBase._parameter_constraints,
        "event_types": ["array-like"],
    }

    __init__ = keyword_init(
        [
            ("epsilon", 1.0),
            ("max_time", None),
            ("event_types", (1, 2)),
            ("time_grid", None),
            ("n_intervals", None),
            ("n_bootstrap", 200),
            ("max_rows_per_group", None),
            ("random_state", None),
        ],
        qualname="DPAalenJohansen.__init__",
    )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, y, *, groups=None):
        """Release the private cumulative incidence of every event type.

        Parameters
        ----------
        y : structured array of shape (n_samples,)
            (event type, time): :func:`make_competing_risks_target` (0 = censored).
        groups : array-like of shape (n_samples,), default=None
            The patient of each row; the guarantee is then per patient (needs
            ``max_rows_per_group``).

        Returns
        -------
        self
        """
        types = _check_event_types(self.event_types)
        counts, plan, band_rng = self._release(
            y, groups, event_types=types, n_columns=len(types) + 1
        )
        n_risk, hazard, survival = fit_curves(counts[0])
        self.event_types_ = types
        self.at_risk_ = n_risk
        self.cumulative_hazard_ = hazard
        self.survival_function_ = survival
        self.cumulative_incidence_ = cause_increments(hazard, survival)
        self.bootstrap_incidence_ = self._bootstrap(
            counts,
            plan,
            band_rng,
            lambda _, h, s: cause_increments(h, s),
            self.cumulative_incidence_.shape,
        )
        return self

    def predict(self, times, *, interpolate=False):
        """The private cumulative incidence of each event type at ``times`` (a step
        function; ``interpolate=True``: linear between the grid edges).

        Returns
        -------
        ndarray of shape (n_times, n_event_types)
        """
        check_is_fitted(self, "cumulative_incidence_")
        out = step_lookup(
            self.time_grid_, self.cumulative_incidence_, times, interpolate=interpolate
        )
        return out if out.ndim == 2 else out[None]  # one row per time, also for a scalar

    def predict_interval(self, times, alpha=0.05, *, interpolate=False):
        """Pointwise ``1 - alpha`` intervals of each cumulative incidence, noise included
        (``interpolate`` as in :meth:`predict`).

        Returns
        -------
        ndarray of shape (n_times, n_event_types, 2)
        """
        check_is_fitted(self, "cumulative_incidence_")
        est = self.cumulative_incidence_
        draws = self.bootstrap_incidence_ if self.bootstrap_incidence_.shape[0] else est[None]
        lower, upper = band_from_draws(est, draws, alpha)
        band = np.stack([lower, upper], axis=-1)
        out = step_lookup(self.time_grid_, band, times, interpolate=interpolate)
        return out if out.ndim == 3 else out[None]  # one row per time, also for a scalar

    def plot(self, ax=None, *, alpha=0.05, **kwargs):
        """Draw each cumulative incidence as a step function with its band.

        Returns
        -------
        ax : matplotlib Axes
        """
        import matplotlib.pyplot as plt

        check_is_fitted(self, "cumulative_incidence_")
        ax = plt.gca() if ax is None else ax
        band = self.predict_interval(self.time_grid_, alpha=alpha)
        for c, value in enumerate(self.event_types_):
            (line,) = ax.step(
                self.time_grid_, self.cumulative_incidence_[:, c], where="post",
                label=f"event type {value}", **kwargs,
            )  # fmt: skip
            ax.fill_between(
                self.time_grid_, band[:, c, 0], band[:, c, 1], step="post", alpha=0.25,
                color=line.get_color(), linewidth=0,
            )  # fmt: skip
        ax.set_xlabel("time")
        ax.set_ylabel("cumulative incidence")
        return ax
