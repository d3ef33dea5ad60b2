"""OOD detection and calibration (issue 28, part 2): every metric against scikit-learn / the reference definition."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve

from dogood.eval import calibration as cal
from dogood.eval import ood_detection as od
from dogood.eval.bootstrap import bootstrap_weights, weight_blocks


def _sklearn(id_scores, ood_scores, weights=None):
    """The four detection metrics as scikit-learn computes them: ID positive, score = confidence."""
    y = np.r_[np.ones(len(id_scores)), np.zeros(len(ood_scores))]
    s = np.r_[id_scores, ood_scores]
    fpr, tpr, _ = roc_curve(y, s, sample_weight=weights, drop_intermediate=False)
    return {"auroc": roc_auc_score(y, s, sample_weight=weights),
            "fpr95": fpr[np.argmax(tpr >= 0.95)],
            "aupr_in": average_precision_score(y, s, sample_weight=weights),
            "aupr_out": average_precision_score(1 - y, -s, sample_weight=weights)}


def test_detection_metrics_equal_sklearn_with_ties_and_weights():
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(150):
        n_id, n_ood = rng.integers(1, 25, size=2)
        id_s = np.round(rng.beta(4, 2, n_id), 1)  # rounding makes ties across and within the classes
        ood_s = np.round(rng.beta(2, 3, n_ood), 1)
        ours = od.detection_scores(id_s, ood_s)
        for k, v in _sklearn(id_s, ood_s).items():
            assert ours[k] == pytest.approx(v, abs=1e-12), k
        # bootstrap-style integer weights, several rows at once: each row equals sklearn with that sample_weight
        w = rng.integers(0, 3, size=(4, n_id + n_ood)).astype(float)
        rows = od.detection_scores(id_s, ood_s, w[:, :n_id], w[:, n_id:])
        for b in range(4):
            if w[b, :n_id].sum() == 0 or w[b, n_id:].sum() == 0:
                assert math.isnan(rows["auroc"][b])
                continue
            for k, v in _sklearn(id_s, ood_s, w[b]).items():
                assert rows[k][b] == pytest.approx(v, abs=1e-12), (k, b)
            checked += 1
    assert checked > 300


def test_fpr95_by_hand():
    # 20 ID documents, OOD at fixed scores: the threshold keeps 19 of 20 ID (TPR 0.95)
    id_s = np.arange(20, 0, -1) / 20  # 1.0, 0.95, ..., 0.05
    ood_s = np.array([0.99, 0.5, 0.11, 0.1, 0.01])
    # the 19th ID score is 0.1: OOD at or above it are 0.99, 0.5, 0.11 and 0.1 -> 4 of 5
    assert od.fpr_at_tpr(np.r_[id_s, ood_s], np.r_[np.ones(20, bool), np.zeros(5, bool)]) == pytest.approx(0.8)
    assert od.roc_auc([1.0, 0.0], [True, False]) == 1.0 and od.roc_auc([0.0, 1.0], [True, False]) == 0.0
    assert math.isnan(od.roc_auc([0.3, 0.4], [True, True]))


def _guo_ece(conf, correct, n_bins=15):
    """The definition, loop by loop (Guo et al. 2017; gpleiss/temperature_scaling's bin test)."""
    edges = np.linspace(0, 1, n_bins + 1)
    conf, correct = np.asarray(conf, float), np.asarray(correct, float)
    ece = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = (conf > lo) & (conf <= hi)
        if inside.any():
            ece += inside.mean() * abs(correct[inside].mean() - conf[inside].mean())
    return ece


def test_ece_equals_the_definition_on_bin_edges_and_sklearns_bins():
    edges = list(np.linspace(0, 1, 16))
    conf = np.array(edges[1:] + [0.0, 0.5, 0.51, 0.99, 1.0, 1 / 15, 2 / 15])  # every edge, a 0 in no bin
    correct = np.array([k % 2 for k in range(len(conf))])
    assert cal.expected_calibration_error(conf, correct) == pytest.approx(_guo_ece(conf, correct), abs=1e-15)
    # away from the edges, scikit-learn's uniform calibration curve gives the same bins
    rng = np.random.default_rng(0)
    conf = rng.uniform(0.02, 0.98, 500)
    conf = conf[np.abs(conf * 15 - np.round(conf * 15)) > 1e-6]
    correct = rng.random(len(conf)) < conf ** 0.7
    prob_true, prob_pred = calibration_curve(correct, conf, n_bins=15, strategy="uniform")
    counts = np.histogram(conf, bins=np.linspace(0, 1, 16))[0]
    counts = counts[counts > 0]
    assert cal.expected_calibration_error(conf, correct) == pytest.approx(
        float(np.sum(counts / len(conf) * np.abs(prob_true - prob_pred))), abs=1e-12)
    assert cal.expected_calibration_error(conf, correct) == pytest.approx(_guo_ece(conf, correct), abs=1e-12)


def test_document_weighted_ece_equals_the_resampled_items():
    rng = np.random.default_rng(1)
    docs = [(rng.random(k), rng.random(k) < 0.6) for k in (3, 5, 1, 4)]
    bins = np.stack([cal.document_bins(c, r) for c, r in docs])
    for w in bootstrap_weights(len(docs), 20, 5):
        conf = np.concatenate([np.repeat(c, m) for (c, _), m in zip(docs, w)]) if w.any() else np.array([])
        right = np.concatenate([np.repeat(r, m) for (_, r), m in zip(docs, w)]) if w.any() else np.array([])
        assert cal.ece_from_bins(bins, w[None])[0] == pytest.approx(_guo_ece(conf, right), abs=1e-12)


def test_weight_blocks_are_the_bootstrap_draws_in_order():
    rows = np.concatenate(list(weight_blocks(7, 600, 4, block=256)))
    assert rows.shape == (600, 7)
    assert all((r == w).all() for r, w in zip(rows, bootstrap_weights(7, 600, 4)))
    other = np.concatenate(list(weight_blocks(7, 600, 4, stream=1)))
    assert not (other == rows).all()  # the unpaired stream draws other documents
