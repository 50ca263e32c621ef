"""One ``fit`` of :class:`~skdp.synthesis.DPGANSynthesizer`, from validated parameters to
fitted attributes: input, patient bounding (``groups=``), the public schema, the budget
plan (:class:`~skdp.synthesis._gan._budget.GANPlan`), the class prior, the step counts
and calibrated noise, the training loops and checkpoint selection.
"""

from __future__ import annotations

import math

from skdp.synthesis._gan import _budget
from skdp.synthesis._gan._encoding import BinnedEncoder, default_n_bins, n_bins_per_column
from skdp.synthesis._gan._fit import check_params, parameter_counts, step_counts, train_networks
from skdp.synthesis._gan._label_prior import class_prior, encode_labels
from skdp.synthesis._gan._marginals import (
    marginal_blocks,
    pooled_marginals,
    release_class_marginals,
    release_marginals,
)
from skdp.synthesis._gan._patients import gan_patient_codes
from skdp.utils._groups import bound_contributions
from skdp.utils._random import fit_streams

__all__ = ["STREAMS", "fit_gan"]

#: The fit's named streams (append new ones at the end: row-level seeds stay as they were).
STREAMS = [
    "bounds", "prior", "init", "autoencoder", "critic", "latent", "selection", "groups",
    "marginals",
]  # fmt: skip


def _schema(est, X, n, epsilon, streams):
    """``(schema, eps_bounds, encoder)``: the public schema (missing bounds privately,
    row-level fits only), and the encoder (binned on public ``n``, ``epsilon``)."""
    schema, eps_bounds, encoder = est._prepare_table(
        X,
        epsilon=epsilon,
        rng=streams["bounds"],
        fraction=_budget.BOUNDS_FRACTION,
        encoder=dict(categorical="onehot", numeric_range=(0.0, 1.0), integer_margin=0.5),
    )
    if schema.missing_names and est.numeric_encoding != "bins":
        raise ValueError(
            f"column(s) {schema.missing_names} have a missing level, which needs "
            "numeric_encoding='bins' (the scaled encoding has no coordinate for it)"
        )
    if est.numeric_encoding == "bins":  # public: schema, n, epsilon
        encoder = BinnedEncoder(schema, est.n_bins or default_n_bins(n, epsilon))
    return schema, eps_bounds, encoder


def _plan(est, epsilon, delta, eps_bounds, prior_share, k, n_marginals):
    """The fit's :class:`~skdp.synthesis._gan._budget.GANPlan` (``n_marginals``: the
    columns of the noisy 1-way release, 0 without it). The marginals and DP-SGD share
    one account when DP-SGD's noise is calibrated (``noise_multiplier=None``)."""
    selection = est.checkpoint_selection
    rounds = selection.top_k * len(selection.scorers) if selection is not None else 1
    eps_prior = prior_share if math.isfinite(prior_share) else 0.0  # inf: not private
    eps_selection = _budget.selection_share(epsilon, selection=selection is not None)
    eps_marginals = _budget.marginals_share(epsilon, marginals=n_marginals > 0)
    joint = None
    if eps_marginals > 0 and est.noise_multiplier is None:
        joint = joint_accountant(est)
        eps_marginals = _budget.joint_marginals_epsilon(
            epsilon - eps_bounds - eps_prior - eps_selection, delta
        )
    return _budget.GANPlan(
        epsilon=epsilon,
        delta=delta,
        eps_bounds=eps_bounds,
        eps_prior=eps_prior,
        eps_selection=eps_selection,
        selection_rounds=rounds,
        max_rows_per_group=k,
        secure_mode=bool(est.secure_mode),
        eps_marginals=eps_marginals,
        n_marginals=n_marginals,
        joint_accountant=joint,
    )


def fit_gan(est, X, y=None, groups=None):
    """Fit ``est`` (a :class:`~skdp.synthesis.DPGANSynthesizer`) and return it."""
    params = est.get_params(deep=False)
    check_params(params)
    X = est._validate_X(X, reset=True)
    n_rows = int(X.shape[0])
    codes, k = gan_patient_codes(est, X, groups, n_rows)
    n = n_rows if codes is None else int(codes.max()) + 1  # rows or patients (public)
    private = math.isfinite(est.epsilon)
    epsilon, delta = est._check_privacy_params(n_samples=n, require_delta=private)
    streams = fit_streams(est.random_state, STREAMS, estimator=est, X=X, y=y, groups=codes)
    keep = None
    if codes is not None:  # at most k rows per patient, chosen at random
        keep = bound_contributions(codes, k, streams["groups"])
        X, codes = (X.iloc[keep] if hasattr(X, "iloc") else X[keep]), codes[keep]

    schema, eps_bounds, encoder = _schema(est, X, n, epsilon, streams)
    Z = encoder.transform(X)
    conditional = est.conditional == "acgan"
    share = _budget.prior_share(epsilon, conditional=conditional, class_prior=est.class_prior)
    blocks = []  # without an autoencoder (public parameters)
    if est.calibrate_marginals and not est.autoencoder:
        blocks = marginal_blocks(encoder)
    plan = _plan(est, epsilon, delta, eps_bounds, share, k, len(blocks))

    # -- labels and the class prior (counts: sensitivity 1 per row, k per patient)
    classes, labels, prior = None, None, None
    if conditional:
        classes, labels = encode_labels(y, est.classes, n_rows=n_rows)
        labels = labels if keep is None else labels[keep]
        prior, _ = class_prior(
            est.class_prior, classes, labels, share, streams["prior"],
            sensitivity=plan.count_sensitivity, secure_mode=plan.secure_mode,
        )  # fmt: skip
    targets = class_targets = None
    if blocks:  # the noisy 1-way marginals (Gaussian, sensitivity sqrt(d) k), per class
        targets, class_targets = _release(Z, blocks, labels, classes, prior, plan, streams)

    # -- step counts (public: n, batch_size, parameter counts) and the calibrated noise
    n_params = None
    if est.n_iter is None or (est.autoencoder and est.n_iter_autoencoder is None):
        n_params = parameter_counts(encoder, classes, params)
    batch, q, t_ae, t_critic = step_counts(params, n, n_params=n_params, rows_per_unit=k or 1)
    params = {**params, "batch_size": batch}
    sigma = _calibrate(plan, q, t_ae + t_critic, est)
    run, gens, selected = train_networks(
        Z, labels, prior, encoder, classes, params, q=q, sigma=sigma, private=private,
        t_ae=t_ae, t_critic=t_critic, eps_sel=plan.eps_selection, streams=streams,
        units=None if codes is None else (codes, k), sensitivity=plan.count_sensitivity,
        secure_mode=plan.secure_mode,
        marginals=None if targets is None else (blocks, class_targets or targets),
    )  # fmt: skip
    _record(est, plan, schema, encoder, classes, prior, gens, selected, run)
    est.noisy_marginals_ = targets  # noisy (or None): what the generators are calibrated to
    vars(est).pop("noisy_class_marginals_", None)  # only for a label (a refit drops it)
    if class_targets is not None:
        est.noisy_class_marginals_ = class_targets
    return est


def _release(Z, blocks, labels, classes, prior, plan, streams):
    """``(noisy 1-way marginals, noisy marginals per class or None)``: with a label
    (the AC-GAN) the release is per class
    (:func:`~skdp.synthesis._gan._marginals.release_class_marginals`, the same
    sensitivity and noise) and the 1-way marginals are their mixture under the class
    prior; else :func:`~skdp.synthesis._gan._marginals.release_marginals`."""
    sigma, rng, secure = plan.marginals_sigma, streams["marginals"], plan.secure_mode
    if labels is None:
        return release_marginals(Z, blocks, sigma, rng, secure_mode=secure), None
    per_class = release_class_marginals(
        Z, labels, len(classes), blocks, sigma, rng, secure_mode=secure
    )
    return pooled_marginals(per_class, prior), per_class


def joint_accountant(est):
    """The accountant of the joint account (:mod:`skdp.accounting._mixed`): ``"pld"``
    when the fit's accountant is, except with ``secure_mode`` (its discrete Gaussian
    marginals are accounted by their Rényi-DP bound, that of the continuous Gaussian at
    the same scale); else ``"rdp"`` (``"gdp_clt"`` is approximate: never for the joint
    account)."""
    return "pld" if est.accountant == "pld" and not est.secure_mode else "rdp"


def _calibrate(plan, q, steps, est):
    """The DP-SGD noise multiplier: for the DP-SGD share alone, or (``plan.joint``: no
    user-given multiplier) in one account with the noisy marginals
    (:func:`joint_accountant`)."""
    if not plan.joint:
        return _budget.calibrate_noise(  # 0 when epsilon=inf
            plan.eps_dpsgd, plan.delta_dpsgd, q, steps, noise_multiplier=est.noise_multiplier,
            accountant=est.accountant,
        )  # fmt: skip
    from skdp.accounting._mixed import calibrate_joint_noise

    return calibrate_joint_noise(
        epsilon=plan.eps_joint, delta=plan.delta, sample_rate=q, steps=steps,
        gaussian_noise_multiplier=plan.marginals_noise_multiplier,
        accountant=plan.joint_accountant,
    )  # fmt: skip


def _dpsgd_epsilon(plan, run, est):
    """The ``"dpsgd"`` entry of the breakdown: the run's own account, or (joint) the
    joint account of the marginals and every executed step less the marginals' share."""
    if not plan.joint:
        return run.epsilon(plan.delta_dpsgd)
    from skdp.accounting._mixed import joint_history_epsilon

    joint = joint_history_epsilon(
        gaussian_noise_multiplier=plan.marginals_noise_multiplier, history=run.step_history(),
        delta=plan.delta, accountant=plan.joint_accountant,
    )  # fmt: skip
    return max(joint - plan.eps_marginals, 0.0)


def _record(est, plan, schema, encoder, classes, prior, gens, selected, run):
    """The fitted attributes; every privacy fact comes from ``plan`` and ``run``."""
    private = math.isfinite(plan.epsilon)
    est.schema_ = schema
    est.bounds_ = {c.name: c.bounds for c in schema if c.is_numeric}
    est._encoder = encoder
    est.n_encoded_features_ = encoder.n_encoded_features_
    est.n_bins_ = n_bins_per_column(schema, encoder)
    est.classes_ = classes
    est.class_prior_ = prior
    est.generators_ = gens
    est.generator_ = gens[0]
    est.decoder_ = run.nets["decoder"] if est.autoencoder else None
    est.selected_checkpoints_ = selected
    est._max_rows_per_group = plan.max_rows_per_group
    breakdown = plan.breakdown(
        _dpsgd_epsilon(plan, run, est) if private else math.inf,
        nonprivate=bool(est._nonprivate_options()),
    )
    est.noise_scale_ = plan.noise_scales()
    run.record(est, breakdown=breakdown, delta=plan.delta)  # the DP-SGD facts, the spend
