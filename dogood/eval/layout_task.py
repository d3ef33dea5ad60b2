"""Document layout analysis as an evaluation task: region detections scored with COCO's mAP, ID vs OOD.

``dogood eval --task layout --id DIR:CONFIG --ood DIR:CONFIG ... --predictions FOLDER`` reads, per dataset, a
COCO *results* JSON (``[{image_id, category_id, bbox: [x, y, w, h], score}]``) from ``FOLDER/<config>.json``
(``<name>.json`` for a dataset without config). Image and category ids are those of
``dogood export --format coco`` of the same config and split (images 1..n in the dataset's document order;
categories 1..n in the order of the build's entity labels): run the detector on the exported pages.

Ground truth: the dataset's entities (regions, :mod:`dogood.sources.coco_layout`), each its words' box and its
label (:func:`ground_truth`). Scores: pycocotools' ``COCOeval`` (``iouType="bbox"``, its default parameters):
``mAP`` (AP at IoU .50:.05:.95, all areas, 100 detections), ``AP50`` and ``AP75``, as ``COCOeval.summarize``
reports them (``stats[0:3]``). Intervals: a paired bootstrap over the documents every dataset has (the same
draws for ID and each OOD config; the drawn pages enter COCOeval's accumulation as many times as drawn),
percentile 95%.

RoDLA's robustness scores (Chen et al., CVPR 2024, arXiv 2403.14442). The paper's equations could not be
retrieved offline; what is implemented follows the authors' answer in their issue #6
(github.com/yufanchen96/RoDLA/issues/6): "compare each corruption's result with the baseline using the
paper's formula"; "P-Avg usually denotes the average mAP over all (12) perturbation types"; "the single P
represents the average score across the three different severity levels". Here, for a perturbation ``p``
(an OOD config; its levels ``p@1``, ``p@2``, ... are one perturbation) with levels ``s``:

- ``PE(p, s)``: the perturbation's effect on the pages, ``1 - MS-SSIM`` of each perturbed page against its clean
  (ID) page, averaged over pages (:func:`dogood.measures.quality.ms_ssim`; a page of another size is resized to
  the clean page's, as RoDLA's code compares them); ``mPE(p)`` its mean over the levels.
- ``D(p, s) = 1 - mAP(p, s)`` (the model's degradation); ``RD(p) = mean_s D(p, s) / mPE(p)``;
  ``mRD = 100 * mean_p RD(p)``; ``P-Avg`` the mean over ``p`` of ``mean_s mAP(p, s)``.

This is *inspired by* RoDLA's mPE/mRD (degradation normalised by how much the perturbation changed the page,
averaged over levels, then over perturbations): their exact effect term (which also uses CW-SSIM) and weighting
are not verified, so the figures are not comparable with the paper's tables.
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dogood.core.errors import DogoodError

#: The scores of the task, as ``COCOeval.stats[0:3]``.
LAYOUT_METRICS = ("mAP", "AP50", "AP75")


class LayoutEvalError(DogoodError):
    """Predictions or datasets that cannot be scored as a layout task."""


def _require_pycocotools():
    try:
        from pycocotools.coco import COCO
        from pycocotools.cocoeval import COCOeval
    except ImportError:
        from dogood.core.extras import install_line

        raise LayoutEvalError(f"the layout task needs pycocotools, one of dogood's own dependencies: "
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
                raise LayoutEvalError(f"predictions name image ids the dataset lacks: {stray[:5]}")
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
        """``mAP``, ``AP50``, ``AP75`` over ``img_ids`` (default all; repeats count as often as they occur)."""
        e = self.evaluator
        ids = self.img_ids if img_ids is None else list(img_ids)
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


def read_results(path: Path) -> list[dict[str, Any]]:
    """A COCO results JSON: a list of ``{image_id, category_id, bbox, score}``."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise LayoutEvalError(f"{path}: cannot read COCO results JSON ({exc})") from None
    if not isinstance(data, list) or not all(isinstance(r, dict) and {"image_id", "category_id", "bbox", "score"}
                                             <= set(r) for r in data):
        raise LayoutEvalError(f"{path}: expected a list of {{image_id, category_id, bbox, score}} (COCO results)")
    return data


def perturbation_of(name: str) -> tuple[str, int]:
    """``rotate@2`` -> ``("rotate", 2)``; a config without ``@`` is its own perturbation, level 1."""
    base, sep, level = name.rpartition("@")
    if sep and level.isdigit():
        return base, int(level)
    return name, 1


def rodla_scores(maps: dict[str, float], effects: dict[str, float]) -> dict[str, Any]:
    """mPE per perturbation, RD per perturbation, mRD and P-Avg from OOD configs' mAP and perturbation
    effects (both keyed by config name, ``p@s`` levels grouped); see the module docstring."""
    groups: dict[str, list[str]] = {}
    for name in maps:
        groups.setdefault(perturbation_of(name)[0], []).append(name)
    per = {}
    for p, names in groups.items():
        mpe = float(np.mean([effects[n] for n in names]))
        degradation = float(np.mean([1.0 - maps[n] for n in names]))
        per[p] = {"levels": sorted(names), "mAP": float(np.mean([maps[n] for n in names])), "mPE": mpe,
                  "RD": degradation / mpe if mpe > 0 else None}
    rds = [v["RD"] for v in per.values() if v["RD"] is not None]
    return {"perturbations": per, "mRD": 100.0 * float(np.mean(rds)) if rds else None,
            "P-Avg": float(np.mean([v["mAP"] for v in per.values()])) if per else None}


def page_effect(clean, perturbed) -> float:
    """``1 - MS-SSIM`` of a perturbed page against its clean page (resized to the clean page's size)."""
    from PIL import Image

    from dogood.measures.quality import ms_ssim

    a = clean.image.to_array()
    b = perturbed.image.to_array()
    if b.shape[:2] != a.shape[:2]:
        b = np.asarray(Image.fromarray(b).resize((a.shape[1], a.shape[0]), Image.BILINEAR))
    if a.ndim != b.ndim:
        a, b = (x if x.ndim == 2 else np.asarray(Image.fromarray(x).convert("L")) for x in (a, b))
    return 1.0 - ms_ssim(a, b)


@dataclass
class LayoutReport:
    """Scores of one layout evaluation (:func:`evaluate_layout`)."""

    id_name: str
    documents: int
    resamples: int
    rows: list[dict[str, Any]] = field(default_factory=list)
    robustness: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"task": "layout", "metric": "mAP", "id": self.id_name, "documents": self.documents,
                "resamples": self.resamples, "datasets": self.rows, "robustness": self.robustness}

    def to_markdown(self) -> str:
        lines = [f"# Layout analysis: {self.id_name} vs OOD ({self.documents} paired documents)", "",
                 "| dataset | mAP | 95% CI | AP50 | AP75 | mAP drop vs ID | 95% CI |", "|---|---|---|---|---|---|---|"]
        for r in self.rows:
            ci = r.get("mAP_ci") or (None, None)
            drop = r.get("drop")
            dci = r.get("drop_ci") or (None, None)
            lines.append(f"| {r['name']} | {r['mAP']:.3f} | {_ci(ci)} | {r['AP50']:.3f} | {r['AP75']:.3f} | "
                         f"{'' if drop is None else f'{drop:.3f}'} | {_ci(dci)} |")
        rob = self.robustness
        if rob.get("perturbations"):
            lines += ["", "## RoDLA-style robustness (inspired by; see dogood.eval.layout_task)", "",
                      "| perturbation | mean mAP | mPE | RD |", "|---|---|---|---|"]
            for p, v in rob["perturbations"].items():
                rd = "" if v["RD"] is None else f"{v['RD']:.3f}"
                lines.append(f"| {p} | {v['mAP']:.3f} | {v['mPE']:.3f} | {rd} |")
            mrd = rob.get("mRD")
            lines += ["", f"mRD = {'n/a' if mrd is None else f'{mrd:.1f}'}; P-Avg = {rob['P-Avg']:.3f}"]
        return "\n".join(lines) + "\n"

    def write(self, folder: str | Path) -> dict[str, Path]:
        """Write ``layout_report.json`` and ``.md`` as the folder ``folder``, made whole in a hidden partial folder
        and renamed into place (:func:`dogood.core.fs.commit_folder`), as ``dogood eval``'s other reports. A
        link, a file, or a folder holding anything but these two files is refused, never replaced."""
        from dogood.core.fs import commit_folder, is_link, partial_folder, recover_folder, remove_tree, seal_partial

        out = Path(folder)
        names = {"json": "layout_report.json", "markdown": "layout_report.md"}
        if is_link(out):
            raise DogoodError(f"report folder {out} is a symbolic link; dogood writes no report through a link: "
                              "pick another --out")
        if out.exists() and not out.is_dir():
            raise DogoodError(f"report folder {out} is a file; the layout report is a folder")

        def is_ours(path: Path) -> bool:
            return path.is_dir() and not is_link(path) and all(
                p.name in names.values() and p.is_file() and not is_link(p) for p in path.iterdir())

        if out.is_dir() and not is_ours(out):
            theirs = sorted(p.name for p in out.iterdir() if p.name not in names.values())
            raise DogoodError(f"report folder {out} holds {theirs[0]}, which is not a dogood layout report (the "
                              "report replaces the folder whole); refusing to replace it: pick another --out")
        out.parent.mkdir(parents=True, exist_ok=True)
        recover_folder(out, is_ours)
        tmp = partial_folder(out)
        try:
            (tmp / names["json"]).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")
            (tmp / names["markdown"]).write_text(self.to_markdown(), encoding="utf-8")
            seal_partial(tmp)
            commit_folder(tmp, out)
        except BaseException:
            remove_tree(tmp)
            raise
        return {key: out / name for key, name in names.items()}


def _ci(ci) -> str:
    return "" if ci[0] is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def _load(dataset, limit: int | None = None):
    source = dataset.source
    ids = list(source.ids())
    ids = ids[:limit] if limit is not None else ids
    return [source.load(i) for i in ids]


def _labels(dataset, docs) -> tuple[str, ...]:
    labels = getattr(dataset.source, "entity_labels", None)
    found = tuple(labels()) if callable(labels) else ()
    from dogood.core.schema import FUNSD_LABELS

    if not found:
        found = FUNSD_LABELS if {e.label for d in docs for e in d.entities} <= set(FUNSD_LABELS) else tuple(
            sorted({e.label for d in docs for e in d.entities}))
    return found


def predictions_for(folder: str | Path, dataset) -> Path:
    """``folder/<config>.json`` (or ``<name>.json``, ``/`` as ``_``) for a dataset."""
    folder = Path(folder)
    names = [n for n in (dataset.config, dataset.name.replace("/", "_")) if n]
    for name in names:
        if (folder / f"{name}.json").is_file():
            return folder / f"{name}.json"
    raise LayoutEvalError(f"no predictions for dataset {dataset.name!r}: expected {folder / (names[0] + '.json')}")


def evaluate_layout(id_dataset, ood_datasets, predictions: dict[str, Any] | str | Path, *, resamples: int = 1000,
                    seed: int = 0, limit: int | None = None, effects: bool = True) -> LayoutReport:
    """Score region predictions on the ID dataset and each OOD dataset (see the module docstring).

    ``predictions``: a folder (:func:`predictions_for`) or ``{dataset name: results list or path}``.
    ``effects``: measure each OOD page's perturbation effect for mPE/mRD (``1 - MS-SSIM``; off: no mRD).
    """
    sets = [id_dataset, *ood_datasets]
    docs = {d.name: _load(d, limit) for d in sets}
    labels = _labels(id_dataset, docs[id_dataset.name])
    common = {doc.id for doc in docs[id_dataset.name]}
    for d in ood_datasets:
        common &= {doc.id for doc in docs[d.name]}
    paired = [doc.id for doc in docs[id_dataset.name] if doc.id in common]
    if not paired:
        raise LayoutEvalError("the ID and OOD datasets share no document ids: nothing to pair")
    scorers, image_ids = {}, {}
    for d in sets:
        if isinstance(predictions, dict):
            results = predictions[d.name]
            results = read_results(Path(results)) if isinstance(results, (str, Path)) else results
        else:
            results = read_results(predictions_for(predictions, d))
        scorers[d.name] = CocoScorer(ground_truth(docs[d.name], labels), results)
        position = {doc.id: k for k, doc in enumerate(docs[d.name], start=1)}
        image_ids[d.name] = [position[i] for i in paired]
    rng = np.random.default_rng(seed)
    draws = [rng.integers(0, len(paired), len(paired)) for _ in range(resamples)]
    boot = {d.name: np.array([scorers[d.name].score([image_ids[d.name][k] for k in draw])["mAP"] for draw in draws])
            for d in sets} if resamples else {}
    report = LayoutReport(id_dataset.name, len(paired), resamples)
    id_score = scorers[id_dataset.name].score(image_ids[id_dataset.name])
    for d in sets:
        row = {"name": d.name, "role": "id" if d is id_dataset else "ood",
               **scorers[d.name].score(image_ids[d.name])}
        if resamples:
            row["mAP_ci"] = [float(v) for v in np.percentile(boot[d.name], [2.5, 97.5])]
        if d is not id_dataset:
            row["drop"] = id_score["mAP"] - row["mAP"]
            if resamples:
                row["drop_ci"] = [float(v) for v in np.percentile(boot[id_dataset.name] - boot[d.name], [2.5, 97.5])]
        report.rows.append(row)
    if effects and ood_datasets:
        clean = {doc.id: doc for doc in docs[id_dataset.name]}
        maps, pe = {}, {}
        for d in ood_datasets:
            key = d.config or d.name
            maps[key] = next(r["mAP"] for r in report.rows if r["name"] == d.name)
            pe[key] = float(np.mean([page_effect(clean[doc.id], doc) for doc in docs[d.name] if doc.id in common]))
        report.robustness = rodla_scores(maps, pe)
    return report
