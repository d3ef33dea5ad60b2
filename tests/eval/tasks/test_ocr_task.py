"""dogood eval --task ocr (issue 28 parts 5 and 6): OCR engines as models, and the OCR + tagger pipeline."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dogood.cli import main
from dogood.core.document import Document, Entity, PageImage, Word
from dogood.core.schema import iob_tags
from dogood.eval import evaluate
from dogood.eval.tasks.ocr import iou_matrix, match_words, ocr_counts, ocr_scores
from dogood.models import ModelError, load_model
from dogood.models.pipeline_model import PipelineModel
from dogood.models.predictions import Prediction, read_predictions


def test_word_matching_and_counts_by_hand():
    gold = [("Date:", (10, 10, 60, 30)), ("10/12/98", (70, 10, 150, 30)), ("TO", (10, 50, 40, 70)),
            ("Name", (200, 200, 260, 220)), ("Fax", (300, 10, 330, 40))]
    pred = [("Date:", (11, 9, 61, 31)),       # IoU ~0.92, same text: right
            ("10/12/9B", (72, 10, 150, 30)),  # IoU 0.975, one character wrong
            ("TO", (10, 50, 80, 70)),         # IoU 30/70 < 0.5, but the gold box lies wholly inside it: right
            ("Fax", (305, 18, 325, 32)),      # IoU 280/900, but wholly inside the loose gold box: right
            ("extra", (400, 400, 450, 420)),
            ("Name", (240, 200, 300, 220))]   # a third of the gold box, a third of its own: apart
    assert iou_matrix([gold[2][1]], [pred[2][1]])[0, 0] == pytest.approx(30 / 70)
    texts = ([t for t, _ in gold], [t for t, _ in pred])
    assert match_words([b for _, b in gold], [b for _, b in pred], *texts) == [(0, 0), (1, 1), (2, 2), (4, 3)]
    assert match_words([b for _, b in gold], [b for _, b in pred]) == [(0, 0), (1, 1)]  # boxes alone: IoU >= 0.5
    counts, right = ocr_counts(gold, pred)
    # exact, predicted, gold, box-matched, edits, gold chars, bag of words
    assert counts.tolist() == [3, 6, 5, 4, 1, 5 + 8 + 2 + 3, 4]
    assert right.tolist() == [True, False, True, True, False, False]
    s = ocr_scores(counts)
    assert (s["recall"], s["precision"], s["box_recall"], s["bag_recall"]) == (60.0, 50.0, 80.0, 80.0)
    assert s["cer"] == pytest.approx(100 / 18)
    # one predicted word for two gold words: the higher IoU wins, the other gold word stays unmatched
    assert match_words([(0, 0, 10, 10), (0, 0, 10, 9)], [(0, 0, 10, 10)]) == [(0, 0)]
    # equal text is paired first: "form" goes to the gold "form" it overlaps less, not to "name" it overlaps more
    assert match_words([(0, 0, 10, 10), (5, 0, 15, 10)], [(1, 0, 11, 10)], ["name", "form"], ["form"]) == [(1, 0)]
    # a word of other text lying inside a gold box, but at IoU < 0.5: not paired (a fragment, not the word)
    assert match_words([(0, 0, 100, 10)], [(0, 0, 20, 10)], ["Hello"], ["He"]) == []


def test_tesseract_reads_the_page_and_reads_nothing_on_a_blank_one(funsd_test):
    engine = load_model("tesseract", task="ocr")
    assert engine.task == "ocr" and engine.sees == frozenset({"image"})
    report = evaluate(engine, "funsd", [], task="ocr", limit=2, ablate=["image"], resamples=100)
    # the ID recall, recomputed from what Tesseract reads
    from dogood.page.ocr import ocr_records

    total = np.zeros(7, np.int64)
    for doc_id in funsd_test.ids()[:2]:
        doc = funsd_test.load(doc_id)
        gold = [(w.text, w.box) for w in doc.words if w.text.strip()]
        total += ocr_counts(gold, [(r["text"], tuple(r["box"])) for r in ocr_records(doc.image)])[0]
    assert report.id["recall"] == pytest.approx(100 * total[0] / total[2]) and report.id["recall"] > 15
    assert report.id["gold_words"] == total[2] and report.id["cer"] == pytest.approx(100 * total[4] / total[5])
    assert report.id["bag_recall"] == pytest.approx(100 * total[6] / total[2])
    assert report.id["recall"] <= report.id["bag_recall"]  # placement can only cost words
    (blank,) = report.ablations
    assert blank["value"] == 0.0 and blank["predicted_words"] == 0 and blank["change"] == -report.id["recall"]
    md = report.to_markdown()
    assert "OCR against the pages' exact words and boxes" in md and "Tesseract" in md and "| word recall" in md
    assert "| Bag-of-words recall |" in md
    with pytest.raises(ModelError, match="cannot be scored without its layout"):
        evaluate(engine, "funsd", [], task="ocr", ablate=["layout"])
    with pytest.raises(ModelError, match="pass --task ocr"):
        evaluate(engine, "funsd", [], ablate=["image"])


def test_ocr_predictions_file(funsd_test, tmp_path):
    doc = funsd_test.load(funsd_test.ids()[0])
    gold = [w for w in doc.words if w.text.strip()]
    path = tmp_path / "ocr.jsonl"
    words = [{"text": w.text, "box": list(w.box), "confidence": 0.9} for w in gold[:10]]
    path.write_text(json.dumps({"id": doc.id, "words": words}) + "\n")
    preds = read_predictions(path, "ocr")
    assert preds[doc.id].words[0] == (gold[0].text, gold[0].box, 0.9)
    r = evaluate(load_model(path, task="ocr"), "funsd", "funsd", task="ocr", limit=1, resamples=0)
    assert r.id["recall"] == pytest.approx(100 * 10 / len(gold)) and r.id["precision"] == 100.0 and r.id["cer"] == 0.0
    assert r.ood[0]["ood_detection"]["auroc"] == 50.0  # the same page on both sides
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": doc.id, "words": [{"text": "x", "box": [5, 5, 1, 1]}]}) + "\n")
    with pytest.raises(Exception, match="negative size"):
        read_predictions(bad, "ocr")


def _page(words, entities=()):
    return Document("p", PageImage.from_array(np.full((100, 300), 255, np.uint8)), words=tuple(words),
                    entities=tuple(entities))


def test_pipeline_passes_predicted_entities_back_to_the_gold_words():
    gold = _page([Word("Name", (10, 10, 50, 20)), Word("of", (55, 10, 70, 20)), Word("form", (75, 10, 110, 20)),
                  Word("John", (150, 10, 190, 20)), Word("Smith", (195, 10, 240, 20)), Word("x", (10, 60, 20, 70))],
                 [Entity(0, "question", (0, 1, 2)), Entity(1, "answer", (3, 4)), Entity(2, "other", (5,))])
    # the OCR read "Name of" as one word, "form" on its own, "John Smith" as one word, and missed "x"
    read = _page([Word("Nameof", (10, 10, 70, 20)), Word("form", (75, 10, 110, 20)), Word("JohnSmith", (150, 10, 240, 20))])

    class Engine:
        name, task = "fake-ocr", "ocr"

        def predict(self, docs):
            return {d.id: Prediction(d.id, words=tuple((w.text, w.box, 1.0) for w in read.words)) for d in docs}

    class Tagger:
        name, task = "fake-tagger", "token"

        def predict(self, docs):
            return {d.id: Prediction(d.id, tags=("B-QUESTION", "B-QUESTION", "B-ANSWER")) for d in docs}

    pipe = PipelineModel(Engine(), Tagger())
    assert pipe.name == "pipeline:fake-ocr+fake-tagger" and pipe.sees == frozenset({"image"})
    tags = pipe.predict([gold])["p"].tags
    # Name, of: the first predicted question; form: a second question (B-); John, Smith: one answer; x: read by nobody
    assert tags == ("B-QUESTION", "I-QUESTION", "B-QUESTION", "B-ANSWER", "I-ANSWER", "O")
    assert iob_tags(gold)[1] == ["B-QUESTION", "I-QUESTION", "I-QUESTION", "B-ANSWER", "I-ANSWER", "O"]
    with pytest.raises(ModelError, match="write pipeline:ENGINE\\+TAGGER"):
        load_model("pipeline:nothing")


@pytest.fixture(scope="module")
def word_baseline(funsd_train, tmp_path_factory):
    """The CRF baseline trained on FUNSD train's word boxes: the boxes an OCR engine gives the pipeline's tagger."""
    from dogood.models.baseline import BaselineTagger, train_baseline

    docs = [funsd_train.load(i) for i in funsd_train.ids()]
    model = train_baseline(docs, max_iterations=80, box_level="word")
    return BaselineTagger.load(model.save(tmp_path_factory.mktemp("baseline") / "funsd-baseline-word.dogood-model"))


def test_pipeline_refuses_a_tagger_of_segment_boxes(trained_baseline):
    """The engine's words carry word boxes and no segments: a tagger trained on segment boxes would read another
    convention than its own (main's rule for every model given boxes)."""
    assert trained_baseline.box_level == "segment"
    with pytest.raises(ModelError, match="reads segment boxes, but the OCR engine gives word boxes"):
        load_model(f"pipeline:tesseract+{trained_baseline.source}")


def test_ocr_refuses_words_that_carry_their_segment_box():
    """Hub rows at segment level (no full record): each word's box is its entity's, no OCR gold."""
    import io

    import datasets
    from PIL import Image

    from dogood.eval import EvalError

    engine = load_model("tesseract", task="ocr")
    png = io.BytesIO()
    Image.new("L", (100, 100), 255).save(png, format="PNG")
    names = ["O", "B-HEADER", "I-HEADER", "B-QUESTION", "I-QUESTION", "B-ANSWER", "I-ANSWER"]
    features = datasets.Features({"id": datasets.Value("string"), "tokens": datasets.Sequence(datasets.Value("string")),
                                  "bboxes": datasets.Sequence(datasets.Sequence(datasets.Value("int64"))),
                                  "ner_tags": datasets.Sequence(datasets.ClassLabel(names=names)),
                                  "image": datasets.Image()})
    # one question of two words, both carrying the question's (segment) box, and one answer
    segment = datasets.Dataset.from_dict({"id": ["a"], "tokens": [["w0", "w1", "w2"]],
                                          "bboxes": [[[0, 10, 18, 20], [0, 10, 18, 20], [20, 10, 28, 20]]],
                                          "ner_tags": [[3, 4, 5]], "image": [{"bytes": png.getvalue(), "path": None}]},
                                         features=features)
    with pytest.raises(EvalError, match="carry their segment's box"):
        evaluate(engine, segment, segment, task="ocr", resamples=0)


def test_pipeline_tesseract_baseline_end_to_end(word_baseline, tmp_path, capsys):
    out = tmp_path / "r"
    code = main(["eval", "--model", f"pipeline:tesseract+{word_baseline.source}", "--id", "funsd", "--ablate",
                 "image", "--limit", "3", "--bootstrap", "50", "--quiet", "--out", str(out)])
    assert code == 0
    data = json.loads((out / "report.json").read_text())
    assert data["model"].startswith("pipeline:tesseract+") and data["sees"] == ["image"]
    id_row = data["datasets"][0]
    assert 2 < id_row["f1"] < 70  # OCR errors cost entities the CRF finds on the gold words
    (blank,) = data["ablations"]
    assert blank["value"] == 0.0 and blank["change"] == -id_row["f1"]
    assert id_row["calibration"]["ece"] is None  # the pipeline's tags carry no per-token confidence


def test_rapidocr_reads_words_with_boxes(funsd_test):
    pytest.importorskip("rapidocr")
    pytest.importorskip("onnxruntime")
    engine = load_model("rapidocr", task="ocr")
    doc = funsd_test.load(funsd_test.ids()[0])
    top = doc.image.to_array()[:260]  # the page's top quarter: a few seconds on a CPU
    crop = Document(doc.id, PageImage.from_array(top), words=tuple(w for w in doc.words if w.box[3] <= 260))
    words = engine.predict([crop])[doc.id].words
    assert len(words) > 10 and all(0 <= b[0] <= b[2] <= crop.width and 0 <= b[1] <= b[3] <= 260 for _, b, _ in words)
    counts, _ = ocr_counts([(w.text, w.box) for w in crop.words if w.text.strip()], [(t, b) for t, b, _ in words])
    s = ocr_scores(counts)
    assert s["box_recall"] >= 40 and s["recall"] >= 40 and s["cer"] < 20  # a real detector and recogniser
    again = engine.predict([crop])[doc.id].words  # from the cache: the same words
    assert again == words


def test_configs_whose_words_were_re_read_by_ocr_are_left_out(funsd_dir, tmp_path):
    from dogood.eval import EvalError
    from dogood.pipeline.build import build
    from dogood.pipeline.recipe import load_recipe

    out = tmp_path / "funsd-i"
    build(load_recipe("funsd-i"), out, source_path=funsd_dir, limit=1, configs=["distort", "distort_reocr"],
          progress=False)
    engine = load_model("tesseract", task="ocr")
    report = evaluate(engine, "funsd", str(out), task="ocr", resamples=0)
    assert [r["dataset"] for r in report.ood] == ["funsd-i/distort"]
    assert any(w.startswith("funsd-i/distort_reocr left out: its words were re-read by OCR (reocr)")
               for w in report.warnings)
    assert 0 < report.ood[0]["value"] < 100  # the distorted page against its exact, re-projected words
    with pytest.raises(EvalError, match="re-read by OCR"):
        evaluate(engine, f"{out}:distort_reocr", str(out), task="ocr", resamples=0)


def test_engine_options_are_passed_and_written_in_the_report(tmp_path, capsys):
    from dogood.models.ocr_engine import load_engine

    out = tmp_path / "r"
    common = ["eval", "--task", "ocr", "--id", "funsd", "--ablate", "image", "--limit", "1", "--bootstrap", "0",
              "--quiet"]
    assert main([*common, "--model", "tesseract", "--ocr-option", "psm=6", "--out", str(out)]) == 0
    data = json.loads((out / "report.json").read_text())
    assert data["model_options"] == {"psm": "6"} and "config --psm 6" in data["model_description"]
    assert "Model options: psm=6." in (out / "report.md").read_text()
    capsys.readouterr()
    assert main([*common, "--model", "tesseract", "--ocr-option", "psm"]) == 1
    assert "dogood: error: --ocr-option 'psm': write KEY=VALUE" in capsys.readouterr().err
    assert main(common) == 1  # the default model is a tagger: say what to give
    assert "give --model tesseract or rapidocr" in capsys.readouterr().err
    with pytest.raises(ModelError, match="a key and a value without spaces or quotes"):
        load_engine("tesseract", psm="6 -c x=1")  # no flags smuggled through a value
    with pytest.raises(ModelError, match="Tesseract's --psm takes a number"):
        load_engine("tesseract", psm="six")
    with pytest.raises(ModelError, match="RapidOCR takes no option psm"):
        load_engine("rapidocr", psm="6")
