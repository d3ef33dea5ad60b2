"""Document layout analysis (``dogood eval --task layout``): region detections scored with COCO's mAP.

Predictions are COCO *results* files read as a model (:class:`dogood.models.coco_results.CocoResults`:
``--model FOLDER`` or ``--predictions FOLDER``, ``<config>.json`` per dataset, image and category ids those of
``dogood export --format coco``). Ground truth: the dataset's entities (regions, :mod:`dogood.sources.coco_layout`),
each its words' box and its label, categories 1..n in the order of the dataset's entity labels
(:func:`ground_truth`). Scores, in percent: pycocotools' ``COCOeval`` (``iouType="bbox"``, its default
parameters): ``mAP`` (AP at IoU .50:.05:.95, all areas, 100 detections), ``AP50`` and ``AP75``, as
``COCOeval.summarize`` reports them (``stats[0:3]``). COCOeval matches once over all pages; a bootstrap draw
re-accumulates it over the drawn pages, each entering as many times as drawn (:class:`CocoScorer`), so intervals,
pairing and severity sweeps are those of every task. Region detections carry scores but no page confidence: no
OOD detection section. After the rows, RoDLA's robustness figures, reconstructed (:mod:`dogood.eval.rodla`).
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from dogood.core.errors import ModelError
from dogood.eval.tasks.base import Scored, Task, TaskError, kept_labels, register

#: The scores of the task, as ``COCOeval.stats[0:3]``.
LAYOUT_METRICS = ("mAP", "AP50", "AP75")


def _require_pycocotools():
    try:
        from pycocotools.coco import COCO
        from pycocotools.cocoeval import COCOeval
    except ImportError:
        from dogood.core.extras import install_line

        raise TaskError(f"the layout task needs pycocotools, one of dogood's own dependencies: "
                        f"{install_line(None)}") from None
    return COCO, COCOeval


def ground_truth(docs, labels) -> dict[str, Any]:
    """A COCO ground-truth dict of documents' entities: images 1..n in order, categories 1..n in ``labels``'
    order, one annotation per entity with words (bbox the words' box), as ``dogood export --format coco``."""
    categories = {name: k for k, name in enumerate(labels, start=1)}
    images, annotations = [], []
    for image_id, doc in enumerate(docs, start=1):
        images.append({"id": image_id, "width": doc.width, "height": doc.height, "dogood_id": doc.id})
        for ent in doc.entities:
            box = doc.entity_box(ent)
            if box is None:
                continue
            x0, y0, x1, y1 = box
            annotations.append({"id": len(annotations) + 1, "image_id": image_id,
                                "category_id": categories.setdefault(ent.label, len(categories) + 1),
                                "bbox": [x0, y0, x1 - x0, y1 - y0], "area": (x1 - x0) * (y1 - y0), "iscrowd": 0})
    return {"images": images, "annotations": annotations,
            "categories": [{"id": k, "name": name} for name, k in categories.items()]}


class CocoScorer:
    """pycocotools' ``COCOeval`` run once over all pages; :meth:`score` re-accumulates it over any multiset of
    pages (a bootstrap draw) without matching again."""

    def __init__(self, gt: dict[str, Any], results: list[dict[str, Any]]):
        COCO, COCOeval = _require_pycocotools()
        with contextlib.redirect_stdout(io.StringIO()):
            self.coco = COCO()
            self.coco.dataset = json.loads(json.dumps(gt))
            self.coco.createIndex()
            known = {im["id"] for im in gt["images"]}
            stray = sorted({r.get("image_id") for r in results} - known, key=str)
            if stray:
                raise TaskError(f"predictions name image ids the dataset lacks: {stray[:5]}")
            dets = self.coco.loadRes(json.loads(json.dumps(results))) if results else COCO()
            if not results:
                dets.dataset = {"images": gt["images"], "annotations": [], "categories": gt["categories"]}
                dets.createIndex()
            self.evaluator = COCOeval(self.coco, dets, iouType="bbox")
            self.evaluator.evaluate()
        self.img_ids = list(self.evaluator.params.imgIds)
        self._all = list(self.evaluator.evalImgs)
        self._position = {img: k for k, img in enumerate(self.img_ids)}

    def score(self, img_ids=None) -> dict[str, float]:
        """``mAP``, ``AP50``, ``AP75`` (fractions) over ``img_ids`` (default all; repeats count as often as they
        occur)."""
        e = self.evaluator
        ids = self.img_ids if img_ids is None else [int(i) for i in img_ids]
        n_all = len(self.img_ids)
        cats, areas = len(e.params.catIds), len(e.params.areaRng)
        index = [self._position[i] for i in ids]
        e.evalImgs = [self._all[(k * areas + a) * n_all + i] for k in range(cats) for a in range(areas) for i in index]
        e.params.imgIds = ids
        e._paramsEval.imgIds = ids
        with contextlib.redirect_stdout(io.StringIO()):
            e.accumulate()
        e.evalImgs, e.params.imgIds, e._paramsEval.imgIds = self._all, self.img_ids, list(self.img_ids)
        return dict(zip(LAYOUT_METRICS, _summary(e.eval["precision"], e.params)))


def _summary(precision: np.ndarray, params) -> tuple[float, float, float]:
    """``COCOeval.summarize``'s first three numbers from its accumulated precision (all areas, the most
    detections): the mean of the entries that are not -1, at all IoUs, at .50 and at .75."""
    area = params.areaRngLbl.index("all")
    dets = len(params.maxDets) - 1
    out = []
    for thr in (None, 0.5, 0.75):
        p = precision if thr is None else precision[np.where(np.isclose(params.iouThrs, thr))[0]]
        p = p[:, :, :, area, dets]
        valid = p[p > -1]
        out.append(float(np.mean(valid)) if valid.size else -1.0)
    return tuple(out)


class _Pages:
    """What the bootstrap resamples for the layout task: a :class:`CocoScorer` over documents 1..n."""

    def __init__(self, scorer: CocoScorer, n: int):
        self.scorer, self.n = scorer, n

    def __len__(self) -> int:
        return self.n


@register
class LayoutTask(Task):
    name = "layout"
    title = "document layout analysis (COCO regions)"
    metric, metric_label = "mAP", "mAP"
    reads = ("token",)
    model_task = "layout"
    count_names = ()
    pooled = ("COCOeval's precision re-accumulated over the drawn pages, each as many times as drawn (matching is "
              "done once)")
    columns = (("AP50", "AP50", "pct"), ("AP75", "AP75", "pct"))
    confidences = False
    no_reference = "no default reference model for layout analysis (pass --reference FOLDER of another detector)"
    model_hint = ("--task layout scores region detections made elsewhere: give --predictions FOLDER (COCO results "
                  "JSON, <config>.json per dataset)")

    def begin(self, scored: Scored, model: Any) -> None:
        labels = list(kept_labels(scored.dataset.source))
        scored.extra["labels"] = labels
        scored.no_confidence = "region detections carry scores, not a page's confidence"

    def keep(self, scored: Scored, doc: Any, p: Any) -> None:
        labels = scored.extra["labels"]
        gold = []
        for ent in doc.entities:
            box = doc.entity_box(ent)
            if box is not None:
                if ent.label not in labels:
                    labels.append(ent.label)
                gold.append((ent.label, tuple(box)))
        regions = []
        for category, box, score in p.regions or ():
            if not (isinstance(category, int) and 1 <= category <= len(labels)):
                raise ModelError(f"document {doc.id!r} of {scored.dataset.name!r}: category_id {category!r} is not "
                                 f"one of the dataset's categories (1..{len(labels)}: {', '.join(labels)})")
            regions.append((labels[category - 1], tuple(float(v) for v in box), float(score)))
        scored.gold[doc.id], scored.pred[doc.id] = gold, regions

    def stats(self, scored: Scored, ids: Sequence[str]) -> _Pages:
        key = tuple(ids)
        cache = scored.extra.setdefault("scorers", {})
        if key not in cache:
            labels = scored.extra["labels"]
            category = {name: k for k, name in enumerate(labels, start=1)}
            gt = {"images": [], "annotations": [], "categories": [{"id": k, "name": n} for n, k in category.items()]}
            results = []
            for image_id, doc_id in enumerate(ids, start=1):
                gt["images"].append({"id": image_id, "dogood_id": doc_id})
                for label, (x0, y0, x1, y1) in scored.gold[doc_id]:
                    gt["annotations"].append({"id": len(gt["annotations"]) + 1, "image_id": image_id,
                                              "category_id": category[label], "bbox": [x0, y0, x1 - x0, y1 - y0],
                                              "area": (x1 - x0) * (y1 - y0), "iscrowd": 0})
                results += [{"image_id": image_id, "category_id": category[label],
                             "bbox": [x0, y0, x1 - x0, y1 - y0], "score": s}
                            for label, (x0, y0, x1, y1), s in scored.pred[doc_id]]
            cache[key] = _Pages(CocoScorer(gt, results), len(ids))
        return cache[key]

    def values(self, stats: _Pages, weights: np.ndarray) -> np.ndarray:
        pages = np.arange(1, stats.n + 1)
        return np.array([100.0 * stats.scorer.score(np.repeat(pages, w.astype(np.int64)))["mAP"]
                         for w in np.atleast_2d(weights)])

    def scores(self, scored: Scored, ids: Sequence[str]) -> dict[str, Any]:
        s = self.stats(scored, ids).scorer.score()
        return {k: 100.0 * v for k, v in s.items()}

    def conventions(self) -> list[str]:
        return ["Layout: pycocotools' COCOeval (bbox, default parameters) on the datasets' regions (entities); mAP "
                "= AP at IoU .50:.05:.95 (all areas, 100 detections), AP50, AP75, as COCOeval.summarize reports "
                "them, in percent; a category with no region on the pages scored counts as COCO counts it (-1: "
                "left out)."]

    def summaries(self, context: Any) -> dict[str, Any]:
        """RoDLA's figures (:mod:`dogood.eval.rodla`) over the paired OOD sets: their pages against the ID pages."""
        from dogood.eval import rodla

        levels = {}
        for d, row, pair in zip(context.ood_sets, context.report.ood, context.pairs):
            if pair.unpaired:
                continue
            pages = [(context.id_set.source.load(i), d.source.load(i)) for i in pair.docs]
            levels[d.config or d.name] = {"mAP": row["value"], **rodla.level_effects(pages)}
        if not levels:
            return {}
        out = {"levels": levels, **rodla.summarise(levels)}
        from dogood.core.extras import have, install_line

        if not have("pyrtools"):
            out["cw_ssim_note"] = f"1 − CW-SSIM needs pyrtools: {install_line('rodla')}"
        return {"rodla": out}

    def sections(self, report: Any) -> list[str]:
        from dogood.eval.formats import fmt_pct, fmt_ratio
        from dogood.eval.rodla import AGGREGATIONS, EFFECTS

        rob = (report.summaries or {}).get("rodla")
        if not rob:
            return []
        names = {"ms_ssim": "1 − MS-SSIM", "cw_ssim": "1 − CW-SSIM", "mean": "their mean"}
        lines = ["", "## RoDLA robustness (reconstructed)", "", rob["note"]
                 + (f" {rob['cw_ssim_note']}." if rob.get("cw_ssim_note") else ""), "",
                 "| Config | Pages | mAP | 1 − MS-SSIM | 1 − CW-SSIM |", "|---|---:|---:|---:|---:|"]
        for name, lv in rob["levels"].items():
            lines.append(f"| {name} | {lv['pages']} | {fmt_pct(lv['mAP'])} | {fmt_ratio(lv['ms_ssim'])} | "
                         f"{fmt_ratio(lv['cw_ssim'])} |")
        lines += ["", "| Perturbation | Levels | Mean mAP | " + " | ".join(f"mPE ({names[e]})" for e in EFFECTS)
                  + " | " + " | ".join(f"RD ({names[e]}, {a.replace('_', ' ')})" for e in EFFECTS for a in AGGREGATIONS)
                  + " |", "|---|---:|---:|" + "---:|" * (len(EFFECTS) * (1 + len(AGGREGATIONS)))]
        for p, v in rob["perturbations"].items():
            lines.append(f"| {p} | {len(v['levels'])} | {fmt_pct(v['mAP'])} | "
                         + " | ".join(fmt_ratio(v["mPE"][e]) for e in EFFECTS) + " | "
                         + " | ".join(fmt_ratio(v["RD"][e][a]) for e in EFFECTS for a in AGGREGATIONS) + " |")
        lines += ["", f"P-Avg (mean over perturbations of the level-mean mAP): {fmt_pct(rob['P-Avg'])}. mRD "
                      "(100 × the mean RD over perturbations), per reading:", "",
                  "| mPE from | " + " | ".join(a.replace("_", " ") for a in AGGREGATIONS) + " |",
                  "|---|" + "---:|" * len(AGGREGATIONS)]
        lines += [f"| {names[e]} | " + " | ".join(fmt_pct(rob["mRD"][e][a]) for a in AGGREGATIONS) + " |"
                  for e in EFFECTS]
        return lines

