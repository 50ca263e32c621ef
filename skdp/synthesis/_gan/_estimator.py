"""DPGANSynthesizer: DP AC-GAN (Beaulieu-Jones et al.) and RDP-CGAN (Torfi et al.) in one estimator.

The orchestration: parameters and ``fit`` (input, budget split, networks, training
loops, checkpoint selection); ``sample`` comes from :mod:`._sampling`. The class Notes
list where skdp departs from the papers. Only the modules that read private rows (the
critic and, with ``autoencoder=True``, the autoencoder) are trained with the DP-SGD
engine (:mod:`skdp.training`); the generator is post-processing of the private critic.
"""

from __future__ import annotations

from numbers import Integral, Real

from sklearn.base import BaseEstimator

from skdp.base import _DPSGD_SHARED, DPEstimatorMixin
from skdp.mechanisms._front_end import TabularFrontEnd
from skdp.synthesis._gan._checkpoint import CheckpointSelection
from skdp.synthesis._gan._presets import PRESETS
from skdp.synthesis._gan._run import STREAMS, fit_gan
from skdp.synthesis._gan._sampling import GANSamplingMixin
from skdp.utils._docstrings import insert_docs
from skdp.utils._keyword_init import keyword_init
from skdp.utils._patient_facts import PatientFactsMixin
from skdp.utils._sklearn_compat import Interval, StrOptions, _fit_context
from skdp.utils._tabular.constraints import tabular_constraints, tabular_params

__all__ = ["DPGANSynthesizer"]

_STREAMS = STREAMS  # the fit's named streams (:mod:`._run`)


@insert_docs
class DPGANSynthesizer(
    PatientFactsMixin, GANSamplingMixin, TabularFrontEnd, DPEstimatorMixin, BaseEstimator
):
    """Differentially private GAN synthesizer for tabular (and longitudinal) data.

    One estimator covers two papers as options: a DP AC-GAN
    (``conditional="acgan"``, ``loss="gan"``; Beaulieu-Jones et al.) and RDP-CGAN (a
    DP-trained convolutional autoencoder whose decoder maps generator codes to records, and
    a WGAN critic; ``autoencoder=True``, ``loss="wgan"``; Torfi et al.). Use
    :meth:`from_paper` for each paper's configuration.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy budget of one ``fit``: private bounds (when ``bounds=None``), the DP
        class prior, the noisy 1-way marginals, every autoencoder and critic step, and
        checkpoint selection.
        ``math.inf`` trains without clipping or noise.
    delta : float, default=1e-5
        Total delta, spent once by the joint account of the noisy 1-way marginals
        (``calibrate_marginals``) and DP-SGD; with a given ``noise_multiplier``, 0.1 of
        it to the marginals and the rest to DP-SGD. Keep it well below ``1 / n_samples``.
    noise_multiplier : float or None, default=None
        ``sigma`` of every DP-SGD step; ``None`` calibrates the smallest one whose
        ``T_ae + T_critic`` steps meet the DP-SGD share of the budget. A given value whose
        epsilon exceeds that share raises ``ValueError`` before training.
    max_grad_norm : float or None, default=None
        Per-record clipping norm ``C`` (flat L2 over all parameters of the private module).
        ``None``: ``5 * weight_clip`` for the weight-clipped WGAN critic (0.05 at the
        default ``weight_clip``; its per-record gradients are of that size, so a larger
        ``C`` would add noise that clipping never uses), 1.0 for the autoencoder and
        otherwise. A given value applies to every private module.
    bounds : None, "private", "data", (lo, hi) or dict {column: (lo, hi)}, default=None
        Public bounds of the numeric columns (values outside are clipped silently).
        ``None``: a private estimate at ``0.1 * epsilon``
        {param_bounds_estimate}
    categories : None, "data", dict {column: list} or list of lists, default=None
        Declared levels of the categorical columns; missing ones raise ``ValueError``.
    {param_column_types}
    schema : TabularSchema, dict or None, default=None
        A public :class:`~skdp.utils.schema.TabularSchema` (or its ``to_dict()``) instead
        of ``bounds``/``categories``/``column_types`` (giving both raises ``ValueError``);
        numeric columns without bounds are still estimated privately.
        {param_schema_data_derived}
    missing : {"error", "category"}, default="error"
        What a missing value (NaN, ``None``) in ``X`` is. ``"error"``: refused with a
        message naming the column (impute first with
        :class:`~skdp.preprocessing.DPSimpleImputer`, or drop those rows).
        ``"category"``: every column gets a declared *missing* level -- one more
        coordinate of a numeric column's bin block (beside its value bins) and of a
        categorical column's one-hot block (a binary column becomes a block of three) --
        learned by the same DP-SGD steps under the same budget (nothing else is
        released), and :meth:`sample` writes it back as NaN (``None`` in object
        columns; integer and bool columns come back as ``float64`` and ``object``). The
        level is a declaration: it exists whether or not the data hold a missing value.
        A ``schema`` may instead declare ``"missing": true`` on chosen columns. Needs
        ``numeric_encoding="bins"`` (the default) and declared bounds for numeric
        columns with a missing level.
    architecture : {"mlp", "conv1d"}, default="mlp"
        ``"conv1d"``: 1-D convolutions over ``feature_shape`` (the column order matters:
        put related columns, e.g. visits, next to each other).
    feature_shape : None or (channels, length), default=None
        Layout of the encoded row for ``"conv1d"`` (``None``: one channel of all encoded
        features). ``channels * length`` must equal the encoded width.
    hidden_size : int or None, default=None
        Width of the MLP layers or base channel count of the conv blocks (default 16; the
        five blocks use 1, 2, 4, 8, 8 times it). ``None`` for the MLP: 32 (a small critic
        keeps the DP-SGD noise, which grows with the number of parameters, below the
        signal; wider networks fitted worse in ``benchmarks/gan.py``).
    autoencoder : bool, default=False
        RDP-CGAN: pre-train an autoencoder with DP-SGD; the generator then emits a
        ``code_dim`` code that the (frozen) decoder maps to a record.
    code_dim : int, default=128
    latent_dim : int, default=100
    latent_distribution : {"normal", "uniform"}, default="normal"
        ``N(0, I)`` ([2]) or ``U(-1, 1)`` ([1]).
    loss : {"wgan", "gan"}, default="wgan"
        WGAN critic (critic minimises ``D(fake) - D(real)``, generator ``-D(fake)``) or the
        non-saturating GAN (binary cross-entropy with logits).
    n_critic : int or None, default=None
        Critic steps per generator step (``None``: 1; the generator's steps cost no
        privacy, so they are not rationed). Every critic step is an accounted DP-SGD
        step.
    weight_clip : float or None, default=0.01
        WGAN weight clipping of the critic after every step (post-processing); ignored for
        ``loss="gan"``; ``None`` disables it.
    conditional : {None, "acgan"}, default=None
        ``"acgan"``: ``fit`` needs ``y``; the critic gets an auxiliary classifier head and
        the generator a label input (AC-GAN); :meth:`sample_labeled` returns labels. Use
        it with ``loss="gan"`` as in [1]: with the WGAN critic's weight clipping the
        auxiliary head stays weak and, in our benchmark runs, the label-feature relation
        was learned poorly (even reversed).
    classes : None, "data" or array-like, default=None
        Declared labels for ``conditional="acgan"``; ``None`` raises ``ValueError``,
        ``"data"`` reads them off ``y`` (emits ``PrivacyLeakWarning``).
    class_prior : {"dp", "uniform"} or dict {class: probability}, default="dp"
        Label distribution of the fake rows: Laplace-noised class counts at
        ``0.05 * epsilon`` (``"dp"``), uniform, or a public user prior. Never real labels.
    label_embedding : {"concat", "multiply"}, default="concat"
        How the generator takes the label: ``[z, one_hot(c)]`` or ``z * Embedding(c)`` ([1]).
    aux_loss_weight : float or "auto", default="auto"
        Weight of the auxiliary classifier's cross-entropy in the critic's and the
        generator's losses (``conditional="acgan"`` only). ``"auto"``: 0.1 with
        ``loss="gan"``, 1.0 with ``loss="wgan"``: a public rule on the parameters, chosen
        by measured train-on-synthetic AUC and 2-way total variation
        (:ref:`gan-aux-weight`).
    clip_fake_gradients : bool, default=True
        Also clip each fake row's critic gradient to ``max_grad_norm`` (balances the real
        and fake sides; not needed for privacy).
    checkpoint_selection : None or CheckpointSelection, default=None
        The DP checkpoint selection of [1] (needs ``conditional="acgan"``) with the
        settings of a :class:`~skdp.synthesis.CheckpointSelection`, at ``0.2 * epsilon``
        in total; ``sample`` then draws evenly from the selected generators. ``None``:
        the final generator.
    n_iter : int or None, default=None
        Critic steps ``T_critic`` (each an accounted DP-SGD step). ``None``: a rule on
        public quantities only (``n`` is public, see Notes; ``B``; the parameter
        counts): ``T = max(100, min(ceil(50 / q), 2**32 / (3 B P)))`` with
        ``q = min(1, B / n)`` and ``P = 2 P_critic + P_generator`` (per-record critic
        gradients on the real and the fake rows, one batched generator pass), i.e. 50
        expected passes over the data within a fixed compute budget. ``T`` does not
        depend on ``epsilon``: the noise multiplier is calibrated to it and falls as the
        budget grows.
    n_iter_autoencoder : int or None, default=None
        Autoencoder steps ``T_ae`` (``autoencoder=True`` only; each an accounted DP-SGD
        step). ``None``: 10 expected passes, ``ceil(10 / q)``, within the same compute
        term (``2**32 / (B P_ae)``) and at least 100.
    batch_size : int or None, default=None
        Expected batch size ``B``; ``q = min(1, B / n)``. ``None``: four times a power
        of two near ``sqrt(8 n)`` between 64 and 1024 (fewer, larger DP-SGD steps for
        the same expected passes: less noise per step at the same budget) when the 50
        expected passes then still take at least 300 steps, else that power of two
        (at most ``n``).
    learning_rate : float, dict or None, default=None
        Adam learning rates: a float for all networks, or a dict with keys among
        ``"generator"``, ``"critic"`` and ``"autoencoder"`` (the others at their
        defaults). ``None``: 1e-3 for every network. Adam's betas are fixed at
        ``(0.5, 0.999)`` (Radford et al. 2016; [1]).
    integer_rounding : {"round", "floor"}, default="round"
        How integer columns are decoded with ``numeric_encoding="scaled"`` ([1] floors);
        the binned encoding rounds.
    numeric_encoding : {"bins", "scaled"}, default="bins"
        ``"bins"``: each numeric column's declared range is cut into ``n_bins``
        equal-width bins (public, data-independent); a value is a one-hot bin (a softmax
        output of the generator) plus its position in the bin (a sigmoid output), and
        ``sample`` draws the bin from the generator's probabilities and spreads the
        positions of a bin's rows uniformly in the generator's order (a DP-trained
        position output tends to sit at one value per column). An integer column
        with at most ``n_bins`` declared values gets one bin per value. ``"scaled"``:
        one sigmoid output per numeric column, the declared bounds scaled to [0, 1] (the
        papers' encoding; :meth:`from_paper` uses it).
    n_bins : int or None, default=None
        Bins per numeric column for ``"bins"`` (2 to 1024: each bin is a generator
        output). ``None``: from public ``n`` and
        ``epsilon``, ``clip(2 ** round(log2((n * epsilon) ** (1/3))), 4, 16)`` (16 at
        ``epsilon=inf``); non-decreasing in both (``n`` counts patients with ``groups``).
    max_rows_per_group : int or None, default=None
        The public number of rows a patient may contribute, required with ``groups``
        (from the visit schedule or the study protocol, never from the data;
        :doc:`/patients`). ``batch_size``, ``n`` and ``q`` then count patients.
    secure_mode : bool, default=False
        Draw the noise released outside DP-SGD from the operating system's
        cryptographically secure generator (``os.urandom``) by exact samplers: the DP
        class prior's counts get the floating-point-safe grid Laplace mechanism
        (:func:`skdp.mechanisms.add_laplace`) and checkpoint selection's report-noisy-max
        exact discrete Laplace noise on its integer utilities (Notes, "Floating point").
        The DP-SGD Gaussian noise, the Poisson sampling and a private bound estimate
        still draw from ``random_state`` in floating point; :meth:`sample` too. The noisy
        marginals of ``calibrate_marginals`` get the exact discrete Gaussian.
    calibrate_marginals : bool, default=True
        Release every column's 1-way marginal (its bins or levels) with Gaussian noise
        (L2 sensitivity ``sqrt(d)`` over ``d`` columns, ``k sqrt(d)`` per patient) and,
        after training, shift the generator's output logits so that its mean output
        matches them (post-processing; each row keeps its own conditional
        probabilities). With ``conditional="acgan"`` the marginals are released per
        class (each column's table with the label: the same sensitivity and noise) and
        each label gets its own shift, so the generator's rows for a class match that
        class's noisy marginals. With a calibrated ``noise_multiplier=None`` the release takes
        0.5 (small budgets) to 0.2 (large ones) of the Gaussian-DP budget ``mu^2`` in
        one account with every DP-SGD step (Notes); with a given ``noise_multiplier``
        it gets its own ``0.2 * epsilon`` and ``0.1 * delta`` (zCDP-calibrated).
        Ignored with ``autoencoder=True``. ``False``: the papers' method
        (:meth:`from_paper` sets it).
    {param_accountant_dpsgd}
    device : {"auto", "cpu", "cuda"}, default="auto"
    dtype : {"float32", "float64"}, default="float32"
    {param_n_jobs_torch}
        the expected batch size times the number of parameters of all networks),
        {n_jobs_torch_end}
    verbose : int, default=0
        Show progress on standard error (phase, step, DP-SGD epsilon spent so far; no
        loss): attaches a handler to the ``"skdp"`` logger for the duration of ``fit``
        (see :mod:`logging`; the records are logged either way).
    random_state : None, int, SeedSequence or Generator, default=None
        Seeds every stream. Keep it secret for real releases: anyone holding it can
        regenerate and subtract the noise.

    Attributes
    ----------
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only for DataFrame input with string column names.
    schema_ : skdp.utils.schema.TabularSchema
    bounds_ : dict {column: (lo, hi)}
    n_encoded_features_ : int
    n_bins_ : dict {column: int}
        The number of bins of each discretised column (glossary ``n_bins_``): a numeric
        column of ``numeric_encoding="bins"`` has ``n_bins`` bins, or one per value for
        an integer column with at most ``n_bins`` declared values; a categorical or
        binary column has its declared levels (its categories count as its bins); a
        declared missing level is one more bin. Numeric columns of
        ``numeric_encoding="scaled"`` are not discretised and have no entry.
        (Previously one int for every column: the ``n_bins`` in effect, or None with
        ``"scaled"``.)
    classes_ : ndarray or None
    class_prior_ : ndarray or None
        DP, uniform or user prior over ``classes_`` (conditional models).
    generator_ : torch.nn.Module
        The final (or first selected) generator, eval mode.
    generators_ : list of torch.nn.Module
        Generators ``sample`` draws from (the selected checkpoints, or ``[generator_]``).
    decoder_ : torch.nn.Module or None
        The DP-trained decoder (``autoencoder=True``).
    selected_checkpoints_ : list of (int, str) or None
        ``(checkpoint step, scorer)`` of each selected generator.
    noise_multiplier_ : float
        The DP-SGD noise standard deviation over the clipping norm, of every autoencoder
        and critic step (calibrated, or ``noise_multiplier``; 0 at ``epsilon=inf``).
    noise_scale_ : dict {str: float}
        The Laplace scale of each noisy release that is not a DP-SGD step, keyed like
        ``privacy_breakdown_``: ``"prior"``, the noise on each class count of
        ``class_prior="dp"`` (``1 / eps_prior``), and ``"selection"``, the noise on each
        checkpoint's utility in each report-noisy-max round (``1 / eps_r``, Notes), and
        ``"marginals"``, the Gaussian standard deviation on each count of the noisy 1-way
        marginals (``calibrate_marginals``); 0 where the part releases nothing noisy or
        ``epsilon=inf``.
    noisy_marginals_ : list of ndarray or None
        The released 1-way marginals (noisy, projected onto the simplex): one per
        numeric column's bins, categorical column's levels and binary column
        (``[P(False), P(True)]``), in that order; ``None`` without ``calibrate_marginals``.
        With ``conditional="acgan"``: the class prior's mixture of
        ``noisy_class_marginals_`` (post-processing).
    noisy_class_marginals_ : list of list of ndarray
        Only for ``conditional="acgan"`` with ``calibrate_marginals``: the released
        marginals among the rows of each class of ``classes_`` (noisy, projected onto the
        simplex), one list like ``noisy_marginals_`` per class.
    sample_rate_ : float
    n_iter_ : int
        Critic steps executed (accounted DP-SGD steps; the generator took
        ``n_iter_ // n_critic`` steps).
    n_iter_autoencoder_ : int
        Autoencoder steps executed (accounted DP-SGD steps; 0 without the autoencoder).
    loss_curve_ : ndarray of shape ``(n_iter_,)``
        The critic's loss on each step's fake rows (its objective's fake-row term, plus the
        auxiliary term for ``"acgan"``): a function of the private critic and of fake rows
        only. The real-row term is never recorded by a private fit.
    history_ : dict of list
        Per-component curves at the logged steps: ``"step"``, ``"epsilon"`` (DP-SGD
        epsilon so far), ``"generator"`` (generator loss) and ``"critic_fake"`` (mean
        critic output on fake rows); plus ``"autoencoder"``/``"critic_real"`` (real-row
        losses) only when ``epsilon=inf``.
    epsilon_spent_, delta_spent_ : float
    privacy_breakdown_ : dict {str: float}
        ``{"bounds", "prior", "dpsgd", "selection", "marginals"}`` epsilons; they add up to
        ``epsilon_spent_`` (a fit made non-private by a ``"data"`` opt-in adds
        ``"nonprivate": inf``).
    privacy_guarantee_ : {"exact", "approximate", "none"}
    privacy_unit_ : {"row", "group"}
        What ``epsilon_spent_`` protects: one row, or one patient (``groups``).
    max_rows_per_group_ : int or None
        The contribution bound of a patient-level fit (``None`` per row).
    device_ : str

    Notes
    -----
    **Privacy.** Neighbouring datasets differ by adding or removing one row (with its
    label); ``n`` is public (it sets ``q`` and the default step counts).
    Mechanisms, composed sequentially (their epsilons add up):

    * missing numeric bounds: pure-DP estimate at ``0.1 * epsilon``
      (:func:`skdp.mechanisms.resolve_bounds`);
    * ``class_prior="dp"``: Laplace(1/eps_prior) on the class counts (L1 sensitivity 1),
      clipped at 0 and normalised (uniform if all are 0), ``eps_prior = 0.05 * epsilon``;
    * DP-SGD (Poisson-subsampled Gaussian mechanism) for every autoencoder step and every
      critic step: each real row's gradient of its own loss is clipped to L2 norm ``C``
      (sensitivity ``C``), ``N(0, sigma^2 C^2 I)`` is added once to the sum, the result
      (plus the fake-side gradient, which depends on no real row) is divided by the
      expected batch size ``q n``. All ``T_ae + T_critic`` steps are composed by one
      accountant, calibrated so that the total meets the DP-SGD share;
    * checkpoint selection: each candidate's utility is a count of correctly labelled
      private rows (changes by at most 1, monotone), chosen by report-noisy-max with
      ``Lap(1 / eps_r)``, ``eps_r = eps_selection / (k * n_scorers)``;
    * ``calibrate_marginals=True``: the count of every bin or level of each of the ``d``
      discrete blocks of the encoded row (``conditional="acgan"``: of every (class,
      level) cell of each block's table with the label; a row is in one cell of each of
      the ``d`` tables either way, so the L2 sensitivity is ``sqrt(d)``) with ``N(0,
      sigma^2)``, ``sigma = sqrt(d) / mu_m``, ``mu_m = sqrt(s) mu`` and ``mu`` the
      largest Gaussian-DP parameter within what is left of ``(epsilon, delta)`` after
      the bounds, prior and selection (:func:`skdp.accounting.gdp_mu`; Dong, Roth & Su
      2022: Gaussian-DP composes as ``mu^2`` adds, so the release takes the share ``s``
      of it). ``s`` is public, a function of ``mu`` alone: 0.5 for ``mu <= 0.5``
      (DP-SGD's noise large: the samples' 2-way error is mostly that of their 1-way
      marginals), 0.2 for ``mu >= 2`` (DP-SGD's noise small), ``0.5 - 0.15 log2(2 mu)``
      between (measured in :doc:`/benchmarks_synthesis`). This Gaussian release and
      every DP-SGD step are composed in one account (:mod:`skdp.accounting._mixed`):
      with ``accountant="pld"`` their privacy loss distributions (the release as one
      step at sampling rate 1) and the minimum with the RDP bound, else (``"rdp"``,
      ``"gdp_clt"``, or ``secure_mode``'s discrete Gaussian) Rényi DP (Mironov 2017)
      converted once (Balle et al. 2020); DP-SGD's ``sigma`` is the smallest that keeps
      both within that remainder at the whole ``delta`` (exact). The breakdown's
      ``"marginals"`` is the release's own epsilon at ``delta`` (closed form, Balle &
      Wang 2018), ``"dpsgd"`` the joint account less it. With ``noise_multiplier``
      given, the two are split: the release at ``(0.2 epsilon, 0.1 delta)`` (``sigma =
      sqrt(d / (2 rho))``, ``rho`` from :func:`skdp.accounting.zcdp_rho`) and DP-SGD
      alone at ``0.9 delta``. The generators' output logits are shifted after training
      so that their mean output matches the release: post-processing.

    The binned numeric encoding (``numeric_encoding="bins"``) is a function of the public
    schema (declared or privately estimated bounds) and of public ``n`` and ``epsilon``
    only (the rule under ``n_bins``); the encoded rows are read
    only by the DP-SGD steps, so it adds no mechanism and no charge.

    Accountant (default ``"pld"``): the privacy loss distribution of the subsampled Gaussian
    composed numerically (pessimistic discretisation, both neighbouring directions),
    reported as the minimum with the RDP bound (exact orders, improved conversion); both are
    proven bounds (``"exact"``); ``"gdp_clt"`` is approximate. The generator (and its
    checkpoints) never reads a real row, a real label or a data statistic: it is trained
    only through the private critic on fake rows with labels from the private/public prior,
    so it is post-processing. Real and fake rows pass through the critic in separate forward
    passes and no private module has BatchNorm. The fitted object holds no un-noised
    statistic of the data (no critic, no encoder, no real-data loss).

    **Floating point.** The DP-SGD Gaussian noise (torch), its Poisson sampling and the
    sparse-vector noise of a private bound estimate are drawn in floating point; their
    guarantee is for the mathematical mechanism (Mironov 2012). So, by default, are the
    Laplace noise on the class counts (``class_prior="dp"``) and the report-noisy-max
    Laplace noise of checkpoint selection. With ``secure_mode=True`` these two are exact:
    the class counts are released on a power-of-two grid with exact discrete Laplace
    noise (:func:`skdp.mechanisms.add_laplace`, scale at most ``(1 + 2**-10) k / eps_prior``),
    and each selection round adds exact discrete Laplace noise of scale ``k / eps_r``
    (pmf proportional to ``exp(-eps_r |x| / k)``) to the integer utilities and reports
    the first maximiser: ``eps_r``-DP for monotone integer utilities of sensitivity ``k``,
    since the discrete Laplace tail satisfies ``P(X >= t + k) >= exp(-eps_r) P(X >= t)``
    for every integer ``t`` (the proof of Dwork & Roth 2014, Claim 3.9, with integer
    thresholds). Both then draw from ``os.urandom``.

    Each ``fit`` is a new release (a refit does not compose with the previous one inside
    this object: charge both to a :class:`~skdp.accounting.PrivacyLedger`).

    **Patients.** With ``groups`` the neighbouring relation is add or remove one patient
    with all their rows (:doc:`/patients`; without it the guarantee is per row, group
    privacy for people with several rows). Each patient keeps at most
    ``k = max_rows_per_group`` rows, chosen uniformly at random inside the mechanism;
    numeric bounds must be declared. Every DP-SGD step Poisson-samples patients at rate
    ``q`` (the accountant's rate) and clips one term per sampled patient to ``C``
    (sensitivity ``C`` per patient; noise once per step; divided by the expected number
    of sampled patients): for the autoencoder the sum of the patient's row gradients
    over ``k``, for the critic the mean of the patient's row gradients, so that its
    real-row term stays a mean like its fake-row term (each patient weighs equally in
    the real distribution the critic compares). The class counts of the DP prior and
    each checkpoint's utility have L1 sensitivity ``k`` (Laplace ``k / eps_prior`` and
    ``k / eps_r``). ``epsilon`` and ``delta`` are then per patient.

    Deviations from the papers: Poisson sampling (both used other samplers), declared
    bounds scale the data to [0, 1] ([1] used raw values; by default numeric columns are
    binned on their declared bounds, see ``numeric_encoding``), the WGAN critic's head has
    no bias (the objective does not depend on it), noise once per step on the
    sum ([2]'s algorithm adds it per micro-batch, its code under-noises), no BatchNorm in
    the critic ([2]), GroupNorm instead of BatchNorm in the generator, no dropout in the
    critic ([1]), conv1d instead of [1]'s conv2d, Adam betas ``(0.5, 0.999)`` for every
    network ([2] used ``(0.9, 0.999)``), and the classic-conversion epsilon of [1] is
    reported with the tighter improved conversion.

    References
    ----------
    .. [1] B. K. Beaulieu-Jones et al., "Privacy-preserving generative deep neural networks
       support clinical data sharing", Circ. Cardiovasc. Qual. Outcomes, 2019.
    .. [2] A. Torfi, E. A. Fox, C. K. Reddy, "Differentially private synthetic medical data
       generation using convolutional GANs", Information Sciences, 2022.
    .. [3] M. Abadi et al., "Deep Learning with Differential Privacy", CCS 2016.
    .. [4] I. Mironov, K. Talwar, L. Zhang, "Rényi Differential Privacy of the Sampled
       Gaussian Mechanism", 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.synthesis import DPGANSynthesizer
    >>> X = np.random.default_rng(0).normal(size=(200, 3))
    >>> gan = DPGANSynthesizer(epsilon=2.0, bounds=(-4.0, 4.0), hidden_size=16, latent_dim=8,
    ...                        n_iter=5, batch_size=50, device="cpu", random_state=0)
    >>> gan = gan.fit(X)
    >>> gan.epsilon_spent_ <= 2.0, gan.n_iter_, gan.loss_curve_.shape
    (True, 5, (5,))
    >>> gan.sample(4).shape
    (4, 3)
    """

    #: parameters added after fixed-seed releases were pinned: left out of the seed
    #: material at these defaults (``skdp.utils._random.fit_streams``)
    _later_parameters = {"secure_mode": False, "calibrate_marginals": True}

    _parameter_constraints: dict = {
        **DPEstimatorMixin._privacy_parameter_constraints,
        "noise_multiplier": [None, Interval(Real, 0, None, closed="neither")],
        "max_grad_norm": [None, Interval(Real, 0, None, closed="neither")],
        **tabular_constraints(missing=True),
        "architecture": [StrOptions({"mlp", "conv1d"})],
        "feature_shape": [None, tuple, list],
        "hidden_size": [None, Interval(Integral, 1, None, closed="left")],
        "autoencoder": ["boolean"],
        "code_dim": [Interval(Integral, 1, None, closed="left")],
        "latent_dim": [Interval(Integral, 1, None, closed="left")],
        "latent_distribution": [StrOptions({"normal", "uniform"})],
        "loss": [StrOptions({"wgan", "gan"})],
        "n_critic": [None, Interval(Integral, 1, None, closed="left")],
        "weight_clip": [None, Interval(Real, 0, None, closed="neither")],
        "conditional": [None, StrOptions({"acgan"})],
        "classes": [None, StrOptions({"data"}), "array-like"],
        "class_prior": [StrOptions({"dp", "uniform"}), dict],
        "label_embedding": [StrOptions({"concat", "multiply"})],
        "aux_loss_weight": [StrOptions({"auto"}), Interval(Real, 0, None, closed="left")],
        "clip_fake_gradients": ["boolean"],
        "checkpoint_selection": [None, CheckpointSelection],
        "n_iter": [None, Interval(Integral, 1, None, closed="left")],
        "n_iter_autoencoder": [None, Interval(Integral, 1, None, closed="left")],
        "batch_size": [None, Interval(Integral, 1, None, closed="left")],
        "learning_rate": [None, Interval(Real, 0, None, closed="neither"), dict],
        "integer_rounding": [StrOptions({"round", "floor"})],
        "numeric_encoding": [StrOptions({"bins", "scaled"})],
        "n_bins": [None, Interval(Integral, 2, 1024, closed="both")],
        "max_rows_per_group": [None, Interval(Integral, 1, None, closed="left")],
        "secure_mode": ["boolean"],
        "calibrate_marginals": ["boolean"],
        **DPEstimatorMixin._common_constraints(*_DPSGD_SHARED),
    }

    __init__ = keyword_init(
        [
            ("epsilon", 1.0),
            ("delta", 1e-5),
            ("noise_multiplier", None),
            ("max_grad_norm", None),
            *tabular_params(missing=True),
            ("architecture", "mlp"),
            ("feature_shape", None),
            ("hidden_size", None),
            ("autoencoder", False),
            ("code_dim", 128),
            ("latent_dim", 100),
            ("latent_distribution", "normal"),
            ("loss", "wgan"),
            ("n_critic", None),
            ("weight_clip", 0.01),
            ("conditional", None),
            ("classes", None),
            ("class_prior", "dp"),
            ("label_embedding", "concat"),
            ("aux_loss_weight", "auto"),
            ("clip_fake_gradients", True),
            ("checkpoint_selection", None),
            ("n_iter", None),
            ("n_iter_autoencoder", None),
            ("batch_size", None),
            ("learning_rate", None),
            ("integer_rounding", "round"),
            ("numeric_encoding", "bins"),
            ("n_bins", None),
            ("max_rows_per_group", None),
            ("secure_mode", False),
            ("calibrate_marginals", True),
            *DPEstimatorMixin._common_params(*_DPSGD_SHARED),
        ],
        qualname="DPGANSynthesizer.__init__",
    )

    @classmethod
    def from_paper(cls, name, **overrides):
        """An estimator configured as in one of the two papers (Beaulieu-Jones et al. 2019;
        Torfi et al. 2022).

        Parameters
        ----------
        name : {"sprint_acgan", "rdp_cgan"}
            ``"sprint_acgan"``: Beaulieu-Jones et al.'s DP AC-GAN on SPRINT (3 x 12
            blood-pressure/medication grid, label = treatment arm; ``sigma = 1``,
            ``C = 1e-4``, batch 1, 500 epochs of the paper's 6,000 training rows as
            ``n_iter=3_000_000``, DP top-5 checkpoint selection per scorer with 0.2 of
            ``epsilon = 2.5``). ``"rdp_cgan"``: Torfi et al.'s RDP-CGAN (DP conv
            autoencoder + conv WGAN, ``epsilon = 1``, sigma calibrated).
        **overrides
            Any constructor parameter (e.g. a larger ``batch_size`` or ``bounds``).

        Returns
        -------
        DPGANSynthesizer
        """
        if name not in PRESETS:
            raise ValueError(f"name must be one of {sorted(PRESETS)}, got {name!r}")
        return cls(**{**PRESETS[name], **overrides})

    # --------------------------------------------------------------------- fit
    @_fit_context(prefer_skip_nested_validation=True)
    @insert_docs
    def fit(self, X, y=None, *, groups=None):
        """Fit the DP GAN.

        Parameters
        ----------
        {param_X_private_records}
        y : array-like of shape (n_samples,), optional
            Labels (used only with ``conditional="acgan"``; ignored otherwise).
        {param_groups_dpsgd_tabular}

        Returns
        -------
        self
        """
        return fit_gan(self, X, y, groups)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self.missing == "category"
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.target_tags.required = False
        return tags
