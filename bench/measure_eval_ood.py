"""Issue 28: what the OOD-detection bootstrap and the OCR engines cost, as ratios measured in one run.

1. OOD detection with bootstrap intervals (AUROC, FPR95, AUPR-In, AUPR-Out over B resamples of 50 ID and 50
   OOD documents): dogood's vectorised weighted curves (dogood.eval.ood_detection, all resamples at once) against
   scikit-learn called once per resample with the drawn documents (roc_auc_score, roc_curve,
   average_precision_score twice), after checking that both give the same numbers.
2. OCR per page on FUNSD test pages, cache off: Tesseract (dogood.page.ocr, in-process when tesserocr is the
   system's) and RapidOCR 3.x (one ONNX thread), against a no-op that only decodes the page; process CPU seconds
   (all threads) and wall seconds.

    python bench/measure_eval_ood.py [--resamples 1000] [--pages 3]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def detection(resamples: int) -> None:
    from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve

    from dogood.eval.bootstrap import weight_blocks
    from dogood.eval.ood_detection import detection_scores

    rng = np.random.default_rng(0)
    id_s, ood_s = rng.beta(5, 2, 50), rng.beta(3, 3, 50)
    start = time.perf_counter()
    ours = {k: [] for k in ("auroc", "fpr95", "aupr_in", "aupr_out")}
    for w in weight_blocks(50, resamples, 0, 0):
        res = detection_scores(id_s, ood_s, w, w)  # paired-style: one draw for both sides
        for k in ours:
            ours[k].append(res[k])
    t_ours = time.perf_counter() - start
    ours = {k: np.concatenate(v) for k, v in ours.items()}

    start = time.perf_counter()
    ref = {k: [] for k in ours}
    for w in np.concatenate(list(weight_blocks(50, resamples, 0, 0))):
        y = np.r_[np.ones(50), np.zeros(50)]
        s = np.r_[id_s, ood_s]
        ww = np.r_[w, w].astype(float)
        keep = ww > 0
        y, s, ww = y[keep], s[keep], ww[keep]
        fpr, tpr, _ = roc_curve(y, s, sample_weight=ww, drop_intermediate=False)
        ref["auroc"].append(roc_auc_score(y, s, sample_weight=ww))
        ref["fpr95"].append(fpr[np.argmax(tpr >= 0.95)])
        ref["aupr_in"].append(average_precision_score(y, s, sample_weight=ww))
        ref["aupr_out"].append(average_precision_score(1 - y, -s, sample_weight=ww))
    t_ref = time.perf_counter() - start
    worst = max(float(np.max(np.abs(ours[k] - np.array(ref[k])))) for k in ours)
    print(f"OOD detection, {resamples} resamples of 50+50 documents: dogood {t_ours:.3f} s, scikit-learn per "
          f"resample {t_ref:.3f} s: {t_ref / t_ours:.1f}x; largest difference {worst:.1e}")


def ocr(pages: int) -> None:
    from dogood.models.ocr_engine import RapidOCREngine
    from dogood.page.ocr import ocr_engine, ocr_records
    from dogood.sources.funsd import FunsdSource

    src = FunsdSource(split="test")
    docs = [src.load(i) for i in src.ids()[:pages]]

    def clock(fn):
        c0, w0 = time.process_time(), time.perf_counter()
        for d in docs:
            fn(d)
        return (time.process_time() - c0) / pages, (time.perf_counter() - w0) / pages

    noop = clock(lambda d: d.image.__class__.from_bytes(d.image.encoded_bytes()).to_array())
    tess = clock(lambda d: ocr_records(d.image, cache=False))
    try:
        rapid_engine = RapidOCREngine(threads=1, cache=False)
        rapid_engine.read(docs[0].image)  # load the networks once, outside the clock
        rapid = clock(lambda d: rapid_engine.read(d.image))
    except Exception as exc:  # not installed: say so
        rapid = None
        print(f"RapidOCR not measured: {exc}")
    print(f"OCR per page ({pages} FUNSD test pages, cache off; Tesseract engine: {ocr_engine()}; load "
          f"{os.getloadavg()[0]:.1f}):")
    print(f"  no-op (decode): {noop[0]:.3f} CPU s, {noop[1]:.3f} wall s")
    print(f"  Tesseract:      {tess[0]:.2f} CPU s, {tess[1]:.2f} wall s")
    if rapid:
        print(f"  RapidOCR:       {rapid[0]:.2f} CPU s, {rapid[1]:.2f} wall s; CPU ratio RapidOCR/Tesseract "
              f"{rapid[0] / tess[0]:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--pages", type=int, default=3)
    args = parser.parse_args()
    detection(args.resamples)
    ocr(args.pages)


if __name__ == "__main__":
    main()
