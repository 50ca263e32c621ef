"""
A private pipeline from CSV to a tuned model with one total epsilon
====================================================================

A health-data workflow, private end to end. We read a mixed-type table with missing
values from a CSV file, impute, encode and scale it with **declared** public metadata
(clinical ranges, category lists), fit a DP logistic regression, tune its regularisation
with a DP grid search and DP AUC scores, and read **one total** privacy cost that the
library computes: every fold fit, every scorer call and the final refit.

Nothing below looks at the data to choose bounds, categories or folds. The only numbers
taken from the rows are released through a DP mechanism and counted.
"""

# %%
# A clinical-style table with missing values
# ------------------------------------------
# A simulated cohort stands in for a real one (the library is judged on real tables
# that cannot ship with it). It is written to CSV and read back, as a user would.
import math
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

from skdp.accounting import PrivacyLedger
from skdp.linear_model import DPLogisticRegression
from skdp.metrics import make_dp_scorer
from skdp.model_selection import DPGridSearchCV
from skdp.pipeline import check_pipeline_privacy, make_dp_pipeline
from skdp.preprocessing import DPSimpleImputer, PublicBoundsScaler, PublicOneHotEncoder

rng = np.random.default_rng(0)
n = 6000
age = rng.uniform(20, 90, n)
sbp = np.clip(rng.normal(110 + 0.5 * age, 15), 80, 220)
bmi = np.clip(rng.normal(27, 5, n), 15, 50)
smoker = rng.choice(["never", "former", "current"], n, p=[0.5, 0.3, 0.2])
logit = -9 + 0.06 * age + 0.02 * sbp + 0.05 * bmi + 0.8 * (smoker == "current")
outcome = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
table = pd.DataFrame({"age": age, "sbp": sbp, "bmi": bmi, "smoker": smoker, "outcome": outcome})
table.loc[rng.random(n) < 0.08, "bmi"] = np.nan  # missing measurements
table.loc[rng.random(n) < 0.05, "smoker"] = np.nan  # and a missing category

csv = Path(tempfile.mkdtemp()) / "cohort.csv"
table.to_csv(csv, index=False)
df = pd.read_csv(csv)
X, y = df.drop(columns="outcome"), df["outcome"].to_numpy()
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
print(X_train.isna().mean().round(3).to_dict())

# %%
# Declared metadata, not data-derived
# -----------------------------------
# Bounds come from clinical plausibility ranges and categories from the data
# dictionary. A bound that is too narrow clips values; one that is too wide adds noise,
# but neither leaks anything.
LOW, HIGH = [18.0, 70.0, 12.0], [100.0, 250.0, 60.0]  # age, sbp, bmi
SMOKER = ["never", "former", "current", "missing"]

numeric = make_dp_pipeline(
    # the column means are DP releases (noisy sum over a noisy count), charged
    DPSimpleImputer(strategy="mean", epsilon=0.1, bounds=(LOW, HIGH)),
    PublicBoundsScaler(bounds=(LOW, HIGH)),
)
categorical = make_dp_pipeline(
    DPSimpleImputer(strategy="constant", fill_value="missing"),  # free
    PublicOneHotEncoder(categories=[SMOKER]),
)
prep = ColumnTransformer(
    [("num", numeric, ["age", "sbp", "bmi"]), ("cat", categorical, ["smoker"])]
)
model = make_dp_pipeline(
    prep,
    # delta=0: pure epsilon-DP objective perturbation, whose ridge 1/C the search below
    # tunes (the default mechanism="auto" may pick DP-SGD on a table this small, which
    # spends delta=1e-5 and has no C)
    DPLogisticRegression(
        epsilon=0.5, delta=0.0, classes=[0, 1], bounds_X=(0.0, 1.0), random_state=None
    ),
)
print(check_pipeline_privacy(model))

# %%
# A scikit-learn scaler in the same place would be refused
# --------------------------------------------------------
from sklearn.preprocessing import StandardScaler  # noqa: E402

leaky = make_dp_pipeline(StandardScaler(), DPLogisticRegression(epsilon=0.5, classes=[0, 1]))
try:
    leaky.fit(X_train[["age", "sbp"]], y_train)
except ValueError as exc:
    print("refused:", str(exc).split(";")[0])

# %%
# Tune C with a DP grid search and one total
# ------------------------------------------
# The folds are assigned without reading the rows; each candidate is cross-validated
# with a DP AUC (replace-one, N public); the refit is counted. The total is computed
# before any row is read and charged once to the ledger.
ledger = PrivacyLedger(epsilon_budget=40.0, delta_budget=1e-5)
search = DPGridSearchCV(
    model,
    param_grid={"dplogisticregression__C": [0.1, 1.0, 10.0]},
    scoring=make_dp_scorer("roc_auc", epsilon=0.2),
    cv=3,
    ledger=ledger,
)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)
    search.fit(X_train, y_train)

print("best C:", search.best_params_)
print("noisy CV AUC per candidate:", np.round(search.cv_results_["mean_test_score"], 3))
print("total epsilon of the search (replace-one):", round(search.epsilon_spent_, 3))
print("breakdown:", {k: round(v[0], 3) for k, v in search.privacy_breakdown_.items()})
print("ledger:", round(ledger.epsilon_spent, 3))

# %%
# The same total by hand
# ----------------------
# Each candidate's pipeline spends 0.1 (imputer) + 0.5 (model) = 0.6 under add/remove,
# 1.2 under replace-one (group privacy). Each row is in k - 1 = 2 training folds of each
# of the 3 candidates, is scored once per candidate at 0.2, and is in the refit.
per_fit = 2 * (0.1 + 0.5)
hand = 3 * (2 * per_fit) + 3 * 0.2 + per_fit
print("hand count:", round(hand, 3), "library:", round(search.epsilon_spent_, 3))
assert math.isclose(hand, search.epsilon_spent_, rel_tol=1e-9)

# %%
# Held-out check (outside the private analysis: the test rows are a separate set)
auc = roc_auc_score(y_test, search.predict_proba(X_test)[:, 1])
print(f"held-out AUC of the tuned private model: {auc:.3f}")

# %%
# For reference only, the non-private model on the same declared-metadata features
from sklearn.linear_model import LogisticRegression  # noqa: E402

features = search.best_estimator_[:-1]  # the fitted preprocessing (a DP release)
reference = LogisticRegression().fit(features.transform(X_train), y_train)
ref_auc = roc_auc_score(y_test, reference.predict_proba(features.transform(X_test))[:, 1])
print(f"held-out AUC of non-private logistic regression: {ref_auc:.3f}")

# %%
# Where the budget went
# ---------------------
import matplotlib.pyplot as plt  # noqa: E402

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
Cs = [str(p["dplogisticregression__C"]) for p in search.cv_results_["params"]]
ax1.bar(Cs, search.cv_results_["mean_test_score"], color="tab:blue")
ax1.axhline(ref_auc, color="k", ls="--", label="non-private, held out")
ax1.set_xlabel("C")
ax1.set_ylabel("noisy CV AUC (a DP release)")
ax1.set_ylim(0, 1)
ax1.legend(fontsize=8)
parts = {k: v[0] for k, v in search.privacy_breakdown_.items()}
ax2.bar(list(parts), list(parts.values()), color="tab:orange")
ax2.set_ylabel("epsilon (replace-one)")
ax2.set_title(f"total {search.epsilon_spent_:.1f}", fontsize=10)
fig.tight_layout()

if __name__ == "__main__" and "__file__" in globals():  # a script run, not sphinx-gallery
    fig.savefig(Path(__file__).with_suffix(".png"), dpi=80)
