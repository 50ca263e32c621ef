"""DPPipeline with groups=: the patient is the privacy unit of the whole pipeline."""

import pytest

from skdp.auditing import LaplaceCountRelease
from skdp.datasets import LONGITUDINAL_EHR_BOUNDS, make_longitudinal_ehr
from skdp.linear_model import DPLinearRegression
from skdp.pipeline import make_dp_pipeline
from skdp.preprocessing import PublicBoundsScaler


def _data():
    X, y, event, groups = make_longitudinal_ehr(300, random_state=0)
    lo, hi = LONGITUDINAL_EHR_BOUNDS()
    return X, y, event, groups, (lo, hi)


def test_groups_reach_every_private_step_and_the_total_is_per_patient():
    X, y, _, groups, (lo, hi) = _data()
    pipe = make_dp_pipeline(
        PublicBoundsScaler(bounds=(lo, hi)),
        DPLinearRegression(epsilon=1.0, bounds_X=(-1, 1), bounds_y=(0, 150), max_rows_per_group=3),
    )
    pipe.fit(X, y, groups=groups)
    reg = pipe[-1]
    assert reg.privacy_unit_ == "group" and reg.max_rows_per_group_ == 3
    assert pipe.privacy_unit_ == "group" and pipe.epsilon_spent_ == 1.0
    # the same pipeline without groups: per row
    pipe.fit(X, y)
    assert pipe.privacy_unit_ == "row" and pipe[-1].privacy_unit_ == "row"


def test_a_private_step_without_groups_support_is_refused():
    X, _, _, groups, (lo, hi) = _data()
    pipe = make_dp_pipeline(
        PublicBoundsScaler(bounds=(lo, hi)),
        LaplaceCountRelease(epsilon=1.0, n_ids=10),  # an audit control: per row only
    )
    with pytest.raises(ValueError, match="does not support patient-level privacy"):
        pipe.fit(X, groups=groups)
    assert not hasattr(pipe, "privacy_unit_")
