"""Document layout analysis (issue 29 part 4, issue 39): the coco_layout source, export --format coco round trip,
and ``dogood eval --task layout`` (pycocotools' COCOeval, the report every task writes, RoDLA's figures
reconstructed), on a COCO folder made from FUNSD's entity boxes (header, question, answer, other)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from dogood.cli.main import main
from dogood.eval.rodla import cw_ssim, summarise
from dogood.eval.tasks.layout import CocoScorer, ground_truth
from dogood.pipeline.build import build
from dogood.pipeline.recipe import parse_recipe
from dogood.share.export import export
from dogood.sources.coco_layout import CocoLayoutSource

CATEGORIES = ["header", "question", "answer", "other"]
FORMS = 6


@pytest.fixture(scope="module")
def coco_folder(funsd_test, tmp_path_factory):
    """A COCO folder (``test.json``, ``test/<id>.png``) of FUNSD forms, one region per entity with words."""
    root = tmp_path_factory.mktemp("coco-layout")
    (root / "test").mkdir()
    images, annotations = [], []
    for image_id, doc_id in enumerate(list(funsd_test.ids())[:FORMS], start=1):
        doc = funsd_test.load(doc_id)
        shutil.copy(funsd_test.image_path(doc_id), root / "test" / f"{doc_id}.png")
        images.append({"id": image_id, "file_name": f"{doc_id}.png", "width": doc.width, "height": doc.height})
        for ent in doc.entities:
            box = doc.entity_box(ent)
            if box is None:
                continue
            x0, y0, x1, y1 = box
            annotations.append({"id": len(annotations) + 1, "image_id": image_id, "iscrowd": 0,
                                "category_id": CATEGORIES.index(ent.label) + 1, "bbox": [x0, y0, x1 - x0, y1 - y0],
                                "area": (x1 - x0) * (y1 - y0), "segmentation": []})
    coco = {"images": images, "annotations": annotations,
            "categories": [{"id": k + 1, "name": n, "supercategory": "layout"} for k, n in enumerate(CATEGORIES)]}
    (root / "test.json").write_text(json.dumps(coco))
    return root


RECIPE = {"name": "layout-check", "version": "1.0.0", "source": {"kind": "coco_layout"}, "splits": ["test"],
          "seed": 0, "configs": {"original": [], "rotate": [{"shift": "rotate"}],
                                 "scan": [{"shift": "scan_quality", "kinds": ["noise"]}]}}


@pytest.fixture(scope="module")
def built(coco_folder, tmp_path_factory):
    out = tmp_path_factory.mktemp("layout-build") / "layout"
    build(parse_recipe(RECIPE), out, source_path=coco_folder, progress=False, configs=["original", "rotate"])
    return out


def _regions(coco: dict) -> dict[str, list]:
    """file stem -> sorted (category name, category id, bbox) of its annotations."""
    names = {c["id"]: c["name"] for c in coco["categories"]}
    stem = {im["id"]: Path(im["file_name"]).stem for im in coco["images"]}
    out: dict[str, list] = {s: [] for s in stem.values()}
    for a in coco["annotations"]:
        out[stem[a["image_id"]]].append((names[a["category_id"]], a["category_id"], [float(v) for v in a["bbox"]]))
    return {k: sorted(v) for k, v in out.items()}


def test_source_reads_regions_as_labelled_entities(coco_folder, funsd_test):
    source = CocoLayoutSource(root=coco_folder, split="test")
    assert source.entity_labels() == tuple(CATEGORIES)
    ids = source.ids()
    assert ids == list(funsd_test.ids())[:FORMS]
    doc, form = source.load(ids[0]), funsd_test.load(ids[0])
    expected = sorted((e.label, form.entity_box(e)) for e in form.entities if form.entity_box(e) is not None)
    assert sorted((e.label, doc.entity_box(e)) for e in doc.entities) == expected
    assert all(len(e.word_ids) == 1 for e in doc.entities)


def test_build_and_export_coco_round_trip(built, coco_folder, tmp_path):
    dest = tmp_path / "exported"
    export(built, "coco", dest)
    original = json.loads((coco_folder / "test.json").read_text())
    exported = json.loads((dest / "original" / "test" / "annotations.json").read_text())
    # identical boxes and categories (names and ids), page by page
    assert _regions({**exported, "images": [{**im, "file_name": im["dogood_id"]} for im in exported["images"]]}) \
        == _regions(original)
    assert [c["name"] for c in exported["categories"]] == CATEGORIES
    # the turned config keeps every region and its category; its boxes moved
    turned = json.loads((dest / "rotate" / "test" / "annotations.json").read_text())
    assert len(turned["annotations"]) == len(original["annotations"])
    assert sorted(a["category_id"] for a in turned["annotations"]) == sorted(a["category_id"] for a in original["annotations"])
    assert [a["bbox"] for a in turned["annotations"]] != [a["bbox"] for a in exported["annotations"]]


def test_rows_carry_regions_and_categories(built):
    import pyarrow.parquet as pq

    rows = pq.read_table(next((built / "data" / "rotate").glob("test-*.parquet"))).to_pylist()
    row = rows[0]
    full = row["dogood"]
    labels = [e["label"] for e in full["entities"]]
    assert set(labels) <= set(CATEGORIES) and len(labels) == len(full["words"])
    w, h = full["width"], full["height"]
    for e in full["entities"]:
        x0, y0, x1, y1 = full["word_boxes"][e["word_ids"][0]]
        assert 0 <= x0 < x1 <= w and 0 <= y0 < y1 <= h


# -- scoring -----------------------------------------------------------------------------------------------------------

def _gt(coco_folder):
    source = CocoLayoutSource(root=coco_folder, split="test")
    return ground_truth([source.load(i) for i in source.ids()], CATEGORIES)


def _interpolated_ap(k: int, n: int, precision: float = 1.0) -> float:
    """COCO's 101-point AP when k of n regions are found, all ranked at one precision: ``precision`` times the
    share of recall thresholds 0, .01, ..., 1 at or below k/n."""
    return precision * (np.floor(100 * k / n + 1e-9) + 1) / 101 if k else 0.0


def _known_errors(gt, drop_every=3, false_positive=True):
    """Predictions from the ground truth: every region exact (score 0.9) but each ``drop_every``-th of a
    category missed, and one false positive per category scored above all (1.0) far from any region."""
    results, kept = [], {}
    seen: dict[int, int] = {}
    for a in gt["annotations"]:
        c = a["category_id"]
        seen[c] = seen.get(c, 0) + 1
        if seen[c] % drop_every == 0:
            continue
        kept[c] = kept.get(c, 0) + 1
        results.append({"image_id": a["image_id"], "category_id": c, "bbox": a["bbox"], "score": 0.9})
    if false_positive:
        for c in seen:
            results.append({"image_id": 1, "category_id": c, "bbox": [1, 1, 3, 3], "score": 1.0})
    return results, kept, seen


def test_map_equals_hand_computed_and_pycocotools(coco_folder, tmp_path):
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    gt = _gt(coco_folder)
    results, kept, seen = _known_errors(gt)
    # exact boxes: every IoU threshold gives the same AP; the false positive ranked first caps precision at k/(k+1)
    expected = np.mean([_interpolated_ap(kept[c], seen[c], kept[c] / (kept[c] + 1)) for c in seen])
    scores = CocoScorer(gt, results).score()
    assert scores["mAP"] == pytest.approx(expected, abs=1e-12)
    assert scores["AP50"] == pytest.approx(expected, abs=1e-12) and scores["AP75"] == pytest.approx(expected, abs=1e-12)
    # pycocotools on the same files (summarize's stats): the hand-computed value; then with boxes also shrunk to
    # IoU 0.8, ours equal to pycocotools'
    (tmp_path / "gt.json").write_text(json.dumps(gt))

    def pycocotools_stats(dets):
        (tmp_path / "dt.json").write_text(json.dumps(dets))
        with contextlib.redirect_stdout(io.StringIO()):
            coco = COCO(str(tmp_path / "gt.json"))
            e = COCOeval(coco, coco.loadRes(str(tmp_path / "dt.json")), "bbox")
            e.evaluate(), e.accumulate(), e.summarize()
        return e

    assert list(pycocotools_stats(results).stats[:3]) == pytest.approx([expected] * 3, abs=1e-12)
    shrunk = [{**r, "bbox": [r["bbox"][0], r["bbox"][1], r["bbox"][2] * 0.8, r["bbox"][3]]} for r in results]
    e = pycocotools_stats(shrunk)
    ours = CocoScorer(gt, shrunk).score()
    assert [ours["mAP"], ours["AP50"], ours["AP75"]] == pytest.approx(list(e.stats[:3]), abs=1e-12)
    assert ours["AP50"] == ours["AP75"] > ours["mAP"]  # IoU 0.8 passes .50 and .75; fails .85 and up


def test_bootstrap_draw_equals_cocoeval_on_duplicated_pages(coco_folder):
    """Re-accumulating over a multiset of pages is COCOeval on a dataset where the drawn pages repeat."""
    gt = _gt(coco_folder)
    results, _, _ = _known_errors(gt, drop_every=2, false_positive=False)
    results = [{**r, "bbox": [r["bbox"][0] + 1, r["bbox"][1], r["bbox"][2], r["bbox"][3]]} for r in results]
    draw = [1, 1, 3, 4, 4, 4]
    copies_gt = {"images": [], "annotations": [], "categories": gt["categories"]}
    copies_dt = []
    for new_id, old in enumerate(draw, start=1):
        copies_gt["images"].append({**next(im for im in gt["images"] if im["id"] == old), "id": new_id})
        for a in gt["annotations"]:
            if a["image_id"] == old:
                copies_gt["annotations"].append({**a, "id": len(copies_gt["annotations"]) + 1, "image_id": new_id})
        copies_dt += [{**r, "image_id": new_id} for r in results if r["image_id"] == old]
    assert CocoScorer(gt, results).score(draw) == pytest.approx(CocoScorer(copies_gt, copies_dt).score(), abs=1e-12)


def test_rodla_figures_follow_each_stated_reading():
    levels = {"rotate@1": {"mAP": 80.0, "ms_ssim": 0.1, "cw_ssim": 0.3, "mean": 0.2},
              "rotate@2": {"mAP": 60.0, "ms_ssim": 0.3, "cw_ssim": 0.5, "mean": 0.4},
              "blur": {"mAP": 50.0, "ms_ssim": 0.25, "cw_ssim": None, "mean": None}}
    out = summarise(levels)
    rot, blur = out["perturbations"]["rotate"], out["perturbations"]["blur"]
    assert rot["levels"] == ["rotate@1", "rotate@2"] and rot["mAP"] == pytest.approx(70.0)
    assert rot["mPE"] == pytest.approx({"ms_ssim": 0.2, "cw_ssim": 0.4, "mean": 0.3})
    # degradations 0.2 and 0.4: the ratio of the means, and the mean of the levels' ratios
    assert rot["RD"]["ms_ssim"]["ratio_of_means"] == pytest.approx(0.3 / 0.2)
    assert rot["RD"]["ms_ssim"]["mean_of_ratios"] == pytest.approx((0.2 / 0.1 + 0.4 / 0.3) / 2)
    assert rot["RD"]["cw_ssim"]["ratio_of_means"] == pytest.approx(0.3 / 0.4)
    assert blur["RD"]["ms_ssim"]["ratio_of_means"] == pytest.approx(0.5 / 0.25) and blur["mPE"]["cw_ssim"] is None
    assert out["mRD"]["ms_ssim"]["ratio_of_means"] == pytest.approx(100 * (1.5 + 2.0) / 2)
    assert out["mRD"]["cw_ssim"]["ratio_of_means"] is None  # blur has no CW-SSIM: no mean over perturbations
    assert out["P-Avg"] == pytest.approx((70.0 + 50.0) / 2) and "Reconstructed" in out["note"]


def test_cw_ssim_is_one_for_equal_pages_and_falls_with_noise():
    pytest.importorskip("pyrtools")
    rng = np.random.default_rng(0)
    page = np.full((256, 256), 230.0)
    page[40:200:12, 30:220] = 20.0  # lines of "text"
    assert cw_ssim(page, page) == pytest.approx(1.0, abs=1e-12)
    a = cw_ssim(page, page + rng.normal(0, 10, page.shape))
    b = cw_ssim(page, page + rng.normal(0, 60, page.shape))
    assert 0 < b < a < 1
    with pytest.raises(ValueError, match="too small"):
        cw_ssim(page[:40, :40], page[:40, :40])


def _layout_predictions(built, tmp_path):
    """Exact predictions on ID, known misses on the turned pages; the exported ground truth of both."""
    dest = tmp_path / "exported"
    export(built, "coco", dest)
    preds = tmp_path / "preds"
    preds.mkdir()
    id_gt = json.loads((dest / "original" / "test" / "annotations.json").read_text())
    ood_gt = json.loads((dest / "rotate" / "test" / "annotations.json").read_text())
    exact = [{"image_id": a["image_id"], "category_id": a["category_id"], "bbox": a["bbox"], "score": 0.9}
             for a in id_gt["annotations"]]
    (preds / "original.json").write_text(json.dumps(exact))
    ood, kept, seen = _known_errors(ood_gt, drop_every=2, false_positive=False)
    (preds / "rotate.json").write_text(json.dumps(ood))
    return preds, kept, seen


def test_eval_task_layout_end_to_end(built, tmp_path, capsys):
    """``dogood eval --task layout`` on the build: exact predictions on ID, known misses on the turned pages; the
    report every task writes, in percent, with RoDLA's figures."""
    preds, kept, seen = _layout_predictions(built, tmp_path)
    out = tmp_path / "report"
    assert main(["eval", "--task", "layout", "--id", f"{built}:original", "--ood", f"{built}:rotate",
                 "--predictions", str(preds), "--out", str(out), "--bootstrap", "50", "--quiet"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["report.csv", "report.json", "report.md", "report.png"]
    report = json.loads((out / "report.json").read_text())
    assert report["task"] == "layout" and report["metric"] == "mAP" and report["scale"] == "percent"
    rows = {r["role"]: r for r in report["datasets"]}
    assert rows["id"]["mAP"] == pytest.approx(100.0) and rows["id"]["value"] == rows["id"]["mAP"]
    expected = 100 * np.mean([_interpolated_ap(kept[c], seen[c]) for c in seen])
    assert rows["ood"]["mAP"] == pytest.approx(expected, abs=1e-10)
    assert rows["ood"]["change"] == pytest.approx(expected - 100.0, abs=1e-10)  # negative: worse than ID
    low, high = rows["ood"]["ci"]["change"]
    assert low <= expected - 100.0 <= high < 0
    rodla = report["summaries"]["rodla"]
    rot = rodla["perturbations"]["rotate"]
    assert 0 < rot["mPE"]["ms_ssim"] < 1
    assert rot["RD"]["ms_ssim"]["ratio_of_means"] == pytest.approx((1 - expected / 100) / rot["mPE"]["ms_ssim"])
    assert rodla["mRD"]["ms_ssim"]["ratio_of_means"] == pytest.approx(100 * rot["RD"]["ms_ssim"]["ratio_of_means"])
    md = (out / "report.md").read_text()
    assert "## RoDLA robustness (reconstructed)" in md and "1 − CW-SSIM" in md and "ratio of means" in md
    assert f"| {rows['ood']['dataset']} | image | {rows['ood']['documents']} | 100.00 " in md
    assert "| Dataset | Role | Split | Docs | AP50 | AP75 | mAP [95% CI] |" in md
    assert "## OOD detection" not in md  # region detections give no page confidence
    assert "mAP" in capsys.readouterr().out


def test_the_same_figures_in_evaluate_and_compare(built, tmp_path):
    """``dogood.compare`` takes what ``evaluate`` takes (a predictions folder by name, the layout task) and gives
    the same scores, in percent."""
    import dogood

    preds, _, _ = _layout_predictions(built, tmp_path)
    report = dogood.evaluate(str(preds), f"{built}:original", f"{built}:rotate", task="layout", resamples=0)
    both = dogood.compare(str(preds), str(preds), [f"{built}:original", f"{built}:rotate"], task="layout",
                          resamples=20)
    assert both["original"]["before"] == report.id["value"] and both["rotate"]["after"] == report.ood[0]["value"]
    assert both["rotate"]["change"] == 0.0 and both["rotate"]["ci"] == [0.0, 0.0]
    assert both["rotate"]["metric"] == "mAP"


def test_region_boxes_round_outwards_and_stay_on_the_page():
    from dogood.sources.coco_layout import region_box

    assert region_box([10.2, 5.7, 3.1, 4.0], 100, 100) == (10, 5, 14, 10)
    assert region_box([10, 20, 30, 40], 100, 100) == (10, 20, 40, 60)  # whole pixels: as given
    assert region_box([90, 90, 20, 20], 100, 100) == (90, 90, 100, 100)


def test_a_folder_without_annotations_is_a_named_error(tmp_path, capsys):
    from dogood.core.errors import SourceError

    with pytest.raises(SourceError, match="no annotation file for split 'val'"):
        CocoLayoutSource(root=tmp_path, split="val")
    recipe = tmp_path / "r.yaml"
    recipe.write_text("name: r\nversion: 1.0.0\nsource: {kind: coco_layout}\nsplits: [val]\nconfigs: {original: []}\n")
    assert main(["build", str(recipe), "--source", str(tmp_path), "--out", str(tmp_path / "out")]) != 0
    err = capsys.readouterr().err
    assert "dogood: error: coco_layout: no annotation file" in err and "Traceback" not in err
    assert main(["eval", "--task", "layout", "--id", str(tmp_path), "--ood", str(tmp_path)]) != 0
    assert "--predictions" in capsys.readouterr().err


def test_quads_export_as_segmentation_polygons(coco_folder, tmp_path):
    """Built with quads: true, a turned region's COCO segmentation is its four corners, inside its bbox."""
    out = tmp_path / "quads"
    build(parse_recipe({**RECIPE, "quads": True}), out, source_path=coco_folder, progress=False, limit=2,
          configs=["original", "rotate"])
    export(out, "coco", tmp_path / "exported")
    plain = json.loads((tmp_path / "exported" / "original" / "test" / "annotations.json").read_text())
    turned = json.loads((tmp_path / "exported" / "rotate" / "test" / "annotations.json").read_text())
    for a in plain["annotations"]:  # unshifted: the bbox's corners
        x, y, w, h = a["bbox"]
        assert a["segmentation"] == [[x, y, x + w, y, x + w, y + h, x, y + h]]
    for a in turned["annotations"]:
        (poly,) = a["segmentation"]
        xs, ys = np.array(poly[0::2]), np.array(poly[1::2])
        x, y, w, h = a["bbox"]
        assert xs.min() >= x - 1 and xs.max() <= x + w + 1 and ys.min() >= y - 1 and ys.max() <= y + h + 1
    assert any(len({round(v) for v in a["segmentation"][0][1::2]}) > 2 for a in turned["annotations"])  # sloped




# -- what a user can get wrong: one `dogood: error:` line naming the file and the field ---------------------------

def _run_layout(built, preds, out, capsys, *extra):
    code = main(["eval", "--task", "layout", "--id", f"{built}:original", "--ood", f"{built}:rotate",
                 "--predictions", str(preds), "--out", str(out), "--bootstrap", "0", "--quiet", *extra])
    err = capsys.readouterr().err
    return code, err


@pytest.mark.parametrize("entry, message", [
    ({"image_id": 1, "category_id": 1, "bbox": [1, 2, "x", 4], "score": 0.5}, "entry 0: bbox must be"),
    ({"image_id": 1, "category_id": 1, "bbox": [1, 2, 3], "score": 0.5}, "entry 0: bbox must be"),
    ({"image_id": 1, "category_id": 1, "bbox": [1, 2, -3, 4], "score": 0.5}, "entry 0: bbox [1, 2, -3, 4] has a negative"),
    ({"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": "high"}, "entry 0: score must be a finite number"),
    ({"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": float("nan")}, "entry 0: score must be a finite"),
    ({"image_id": 1, "category_id": "1", "bbox": [1, 2, 3, 4], "score": 0.5}, "entry 0: category_id must be an integer"),
    ({"image_id": 1, "category_id": True, "bbox": [1, 2, 3, 4], "score": 0.5}, "entry 0: category_id must be an integer"),
    ({"image_id": 1.0, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 0.5}, "entry 0: image_id must be an integer"),
    ({"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4]}, "entry 0: no score"),
    ({"image_id": 99, "category_id": 1, "bbox": [1, 2, 3, 4], "score": 0.5}, "image_id 99 is not one of"),
    ({"image_id": 1, "category_id": 7, "bbox": [1, 2, 3, 4], "score": 0.5},
     "category_id 7 is not one of the dataset's categories (1..4: header, question, answer, other)"),
])
def test_bad_detections_are_refused_naming_the_file_and_the_field(built, tmp_path, capsys, entry, message):
    """Each was a raw traceback, or (an unknown or string category_id) a silent mAP of 0.000."""
    preds, _, _ = _layout_predictions(built, tmp_path)
    bad = json.loads((preds / "rotate.json").read_text())
    (preds / "rotate.json").write_text(json.dumps([entry] + bad))
    out = tmp_path / "report"
    code, err = _run_layout(built, preds, out, capsys)
    assert code == 1 and err.count("dogood: error:") == 1 and "Traceback" not in err
    assert str(preds / "rotate.json") in err and message in err
    assert not out.exists()  # nothing was written


@pytest.mark.parametrize("content, message", [
    ('{"images": [], "annotations": [], "categories": []}', "a COCO annotation file (images, annotations, categories), "
                                                          "not a results list"),
    ('{"a": 1}', "expected a list of {image_id, category_id, bbox, score} (COCO results), not a JSON dict"),
    ("[1, 2]", "entry 0: not an object"),
    ("[{", "malformed JSON"),
    (b"\xff\xfe[]", "malformed JSON ('utf-8' codec can't decode"),
])
def test_results_files_of_the_wrong_shape_are_refused(built, tmp_path, capsys, content, message):
    preds, _, _ = _layout_predictions(built, tmp_path)
    target = preds / "original.json"
    target.write_bytes(content if isinstance(content, bytes) else content.encode())
    code, err = _run_layout(built, preds, tmp_path / "report", capsys)
    assert code == 1 and err.count("dogood: error:") == 1 and "Traceback" not in err
    assert str(target) in err and message in err


def test_a_negative_bootstrap_is_a_usage_error(built, tmp_path, capsys):
    preds, _, _ = _layout_predictions(built, tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(["eval", "--task", "layout", "--id", f"{built}:original", "--ood", f"{built}:rotate", "--predictions",
              str(preds), "--bootstrap", "-1", "--quiet"])
    assert exc.value.code == 2 and "--bootstrap: must be 0 or more, got -1" in capsys.readouterr().err
    from dogood.eval import EvalError, evaluate

    with pytest.raises(EvalError, match="bootstrap resamples must be 0 or more, got -1"):
        evaluate(str(preds), f"{built}:original", f"{built}:rotate", task="layout", resamples=-1)


def test_duplicate_category_ids_are_refused(coco_folder, tmp_path, capsys):
    """Two categories with id 2 relabelled one's regions as the other's, without a word."""
    shutil.copytree(coco_folder, tmp_path / "coco")
    data = json.loads((tmp_path / "coco" / "test.json").read_text())
    data["categories"].append({"id": 2, "name": "signature"})
    (tmp_path / "coco" / "test.json").write_text(json.dumps(data))
    from dogood.core.errors import SourceError

    with pytest.raises(SourceError, match=r"test.json: categories 'question' and 'signature' share the id 2"):
        CocoLayoutSource(root=tmp_path / "coco", split="test")


def test_tiny_pages_are_scored_without_the_measures_they_are_too_small_for(tmp_path, capsys):
    """Pages of 40 x 30 pixels: too small for MS-SSIM's five scales and CW-SSIM's four levels; scored, the RoDLA
    effects shown as unmeasured, no traceback."""
    from PIL import Image

    root = tmp_path / "tiny"
    (root / "test").mkdir(parents=True)
    images, annotations = [], []
    for k in range(3):
        Image.new("L", (40, 30), 255).save(root / "test" / f"p{k}.png")
        images.append({"id": k + 1, "file_name": f"p{k}.png", "width": 40, "height": 30})
        annotations.append({"id": k + 1, "image_id": k + 1, "category_id": 1, "bbox": [5, 5, 20, 10], "area": 200,
                            "iscrowd": 0})
    (root / "test.json").write_text(json.dumps({"images": images, "annotations": annotations,
                                                "categories": [{"id": 1, "name": "text"}]}))
    out = tmp_path / "built"
    build(parse_recipe(RECIPE), out, source_path=root, progress=False, configs=["original", "rotate"])
    preds = tmp_path / "preds"
    preds.mkdir()
    for config in ("original", "rotate"):
        (preds / f"{config}.json").write_text(json.dumps(
            [{"image_id": k + 1, "category_id": 1, "bbox": [5, 5, 20, 10], "score": 0.9} for k in range(3)]))
    code = main(["eval", "--task", "layout", "--id", f"{out}:original", "--ood", f"{out}:rotate", "--predictions",
                 str(preds), "--out", str(tmp_path / "report"), "--bootstrap", "20", "--quiet"])
    err = capsys.readouterr().err
    assert code == 0 and "Traceback" not in err
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["datasets"][0]["mAP"] == pytest.approx(100.0)
    level = report["summaries"]["rodla"]["levels"]["rotate"]
    assert level["ms_ssim"] is None and level["cw_ssim"] is None
    assert report["summaries"]["rodla"]["mRD"]["ms_ssim"]["ratio_of_means"] is None
