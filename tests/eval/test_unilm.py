"""dogood eval's F1 equals the LayoutLMv3 FUNSD fine-tuning example's (issue 28 part 7).

The reference is the evaluation path of microsoft/unilm ``layoutlmv3/examples/run_funsd_cord.py`` (unchanged
since the LayoutLMv3 release) with its loader ``layoutlmft/data/funsd.py``, re-implemented here from their text:

- words and tags from the FUNSD JSON, files in sorted order: blank words dropped, an entity left empty skipped,
  ``other`` -> ``O``, else ``B-``/``I-`` + the upper-cased label; boxes ``int(1000 * x / size)`` and, by default
  (segment-level layout), every word of an entity given the union of the entity's normalised word boxes;
- ``tokenizer(words, truncation=True, return_overflowing_tokens=True, is_split_into_words=True)`` with a fast
  RoBERTa-style tokenizer (``add_prefix_space=True``): a document longer than 512 sub-tokens becomes several
  windows, each its own sequence;
- labels on the first sub-token of each word, -100 elsewhere (``label_all_tokens`` False); padding to 512;
- ``compute_metrics``: argmax of the logits, positions whose label is -100 dropped, seqeval with its default
  (lenient) chunking, ``overall_f1`` = micro F1.

The model is a tiny LayoutLMv3 token classifier built here (random weights, ``visual_embed=False``: the example's
image transforms are not the Hub image processor's, and pixels are not what this test is about), saved with its
tokenizer and read back by dogood as any Hugging Face model folder. Predictions and F1 are compared exactly on the
FUNSD test documents that fit one 512-token window (all but a few: the per-document and per-window scores then
coincide); dogood cuts a longer document at a word boundary and the example mid-word, so on all 50 documents the
two F1s are only close.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")
seqeval_metrics = pytest.importorskip("seqeval.metrics")

from dogood.core.schema import FUNSD_NER_TAGS, iob_tags  # noqa: E402
from dogood.eval import evaluate  # noqa: E402
from dogood.models import load_model  # noqa: E402

LABELS = ["O", "B-HEADER", "I-HEADER", "B-QUESTION", "I-QUESTION", "B-ANSWER", "I-ANSWER"]  # funsd.py's ClassLabel


def unilm_examples(split_dir):
    """``_generate_examples`` of layoutlmft/data/funsd.py: tokens, segment-level bboxes, ner_tags per document."""
    from PIL import Image

    out = []
    for file in sorted(p.name for p in (split_dir / "annotations").iterdir()):
        data = json.loads((split_dir / "annotations" / file).read_text(encoding="utf8"))
        with Image.open(split_dir / "images" / file.replace("json", "png")) as im:
            size = im.size
        tokens, bboxes, tags = [], [], []
        for item in data["form"]:
            words = [w for w in item["words"] if w["text"].strip() != ""]
            if not words:
                continue
            norm = [[int(1000 * b[0] / size[0]), int(1000 * b[1] / size[1]), int(1000 * b[2] / size[0]),
                     int(1000 * b[3] / size[1])] for b in (w["box"] for w in words)]
            if item["label"] == "other":
                tags += ["O"] * len(words)
            else:
                tags += ["B-" + item["label"].upper()] + ["I-" + item["label"].upper()] * (len(words) - 1)
            tokens += [w["text"] for w in words]
            line = [min(b[0] for b in norm), min(b[1] for b in norm), max(b[2] for b in norm), max(b[3] for b in norm)]
            bboxes += [line] * len(words)  # get_line_bbox: the segment's box for each of its words
        out.append({"id": file[:-5], "tokens": tokens, "bboxes": bboxes, "ner_tags": tags})
    return out


def unilm_evaluate(model, tokenizer, examples):
    """tokenize_and_align_labels + the collator's padding + compute_metrics: per-window word predictions, metrics."""
    enc = tokenizer([e["tokens"] for e in examples], padding=False, truncation=True, return_overflowing_tokens=True,
                    is_split_into_words=True)
    true_predictions, true_labels, per_doc = [], [], {}
    for b in range(len(enc["input_ids"])):
        word_ids = enc.word_ids(batch_index=b)
        ex = examples[enc["overflow_to_sample_mapping"][b]]
        labels, boxes, prev = [], [], None
        for wid in word_ids:
            if wid is None:
                labels.append(-100)
                boxes.append([0, 0, 0, 0])
            else:
                labels.append(LABELS.index(ex["ner_tags"][wid]) if wid != prev else -100)
                boxes.append(ex["bboxes"][wid])
            prev = wid
        n = len(labels)
        pad = 512 - n  # DataCollatorForKeyValueExtraction: padding="max_length", max_length=512
        ids = enc["input_ids"][b] + [tokenizer.pad_token_id] * pad
        mask = [1] * n + [0] * pad
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids]), attention_mask=torch.tensor([mask]),
                           bbox=torch.tensor([boxes + [[0, 0, 0, 0]] * pad])).logits[0].numpy()
        predictions = np.argmax(logits, axis=1)
        labels = labels + [-100] * pad
        true_predictions.append([LABELS[p] for p, l in zip(predictions, labels) if l != -100])
        true_labels.append([LABELS[l] for p, l in zip(predictions, labels) if l != -100])
        per_doc.setdefault(ex["id"], []).extend(true_predictions[-1])
    metrics = {"precision": seqeval_metrics.precision_score(true_labels, true_predictions),
               "recall": seqeval_metrics.recall_score(true_labels, true_predictions),
               "f1": seqeval_metrics.f1_score(true_labels, true_predictions),
               "accuracy": seqeval_metrics.accuracy_score(true_labels, true_predictions)}
    return metrics, per_doc, len(enc["input_ids"])


@pytest.fixture(scope="module")
def tiny_layoutlmv3(funsd_dir, tmp_path_factory):
    """A 1-layer LayoutLMv3 token classifier (random weights, seeded) with a byte-level BPE fitted to FUNSD."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import (
        LayoutLMv3Config,
        LayoutLMv3ForTokenClassification,
        LayoutLMv3TokenizerFast,
    )

    words = [w["text"] for split in ("training_data", "testing_data")
             for f in sorted((funsd_dir / split / "annotations").glob("*.json"))
             for item in json.loads(f.read_text(encoding="utf8"))["form"] for w in item["words"]]
    bpe = ByteLevelBPETokenizer(add_prefix_space=True)
    bpe.train_from_iterator([" ".join(words)], vocab_size=12000, min_frequency=1,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"], show_progress=False)
    files = tmp_path_factory.mktemp("bpe")
    bpe.save_model(str(files))
    folder = tmp_path_factory.mktemp("tiny-layoutlmv3")
    tok = LayoutLMv3TokenizerFast(vocab_file=str(files / "vocab.json"), merges_file=str(files / "merges.txt"),
                                  model_max_length=512)
    tok.save_pretrained(folder)
    torch.manual_seed(0)
    config = LayoutLMv3Config(vocab_size=len(tok), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                              intermediate_size=64, coordinate_size=4, shape_size=8, max_position_embeddings=514,
                              visual_embed=False, num_labels=len(LABELS), id2label=dict(enumerate(LABELS)),
                              label2id={t: i for i, t in enumerate(LABELS)}, pad_token_id=1, bos_token_id=0,
                              eos_token_id=2)
    model = LayoutLMv3ForTokenClassification(config).eval()
    with torch.no_grad():  # spread the classifier's biases so that every tag is predicted somewhere
        model.classifier.weight.mul_(20.0)
    model.save_pretrained(folder)
    return folder, files


def test_f1_and_predictions_equal_the_layoutlmv3_funsd_example(tiny_layoutlmv3, funsd_dir, tmp_path):
    import shutil

    from transformers import LayoutLMv3ForTokenClassification, RobertaTokenizerFast

    folder, files = tiny_layoutlmv3
    reference_model = LayoutLMv3ForTokenClassification.from_pretrained(folder).eval()
    # the example loads AutoTokenizer(..., use_fast=True, add_prefix_space=True): RoBERTa's byte-level BPE
    reference_tok = RobertaTokenizerFast(vocab_file=str(files / "vocab.json"), merges_file=str(files / "merges.txt"),
                                         add_prefix_space=True, model_max_length=512)
    examples = unilm_examples(funsd_dir / "testing_data")
    # the documents of one window (the example cuts a longer one mid-word, dogood at a word boundary)
    lengths = [len(reference_tok(e["tokens"], is_split_into_words=True)["input_ids"]) for e in examples]
    fit = [e for e, n in zip(examples, lengths) if n <= 512]
    assert 45 <= len(fit) < 50
    subset = tmp_path / "funsd-one-window" / "testing_data"
    for kind, ext in (("annotations", "json"), ("images", "png")):
        (subset / kind).mkdir(parents=True)
        for e in fit:
            shutil.copy(funsd_dir / "testing_data" / kind / f"{e['id']}.{ext}", subset / kind)
    metrics, per_doc, windows = unilm_evaluate(reference_model, reference_tok, fit)
    assert windows == len(fit)

    model = load_model(str(folder))
    assert model.sees == frozenset({"text", "layout"}) and model.box_level == "segment"
    report = evaluate(model, str(subset.parent), str(subset.parent), resamples=0)
    assert report.id["documents"] == len(fit)
    from dogood.sources.funsd import FunsdSource

    src = FunsdSource(root=subset.parent, split="test")
    docs = [src.load(i) for i in src.ids()]
    assert [d.id for d in docs] == [e["id"] for e in fit]
    preds = model.predict(docs)
    for doc, ex in zip(docs, fit):
        assert iob_tags(doc)[1] == ex["ner_tags"]  # the same words and gold tags
        assert list(preds[doc.id].tags) == per_doc[ex["id"]], doc.id  # the same prediction for every word
    tags = [t for d in docs for t in preds[d.id].tags]
    assert len(set(tags)) >= 5 and any(t.startswith("B-") for t in tags)  # not a degenerate tagger
    assert metrics["f1"] > 0
    assert report.id["f1"] == pytest.approx(100 * metrics["f1"], abs=1e-10)  # dogood reports in percent
    assert report.id["precision"] == pytest.approx(100 * metrics["precision"], abs=1e-10)
    assert report.id["recall"] == pytest.approx(100 * metrics["recall"], abs=1e-10)
    assert set(FUNSD_NER_TAGS) == set(LABELS)

    # all 50 documents: the two ways cut the longer documents apart differently, so only their F1s are close
    all_metrics, all_per_doc, all_windows = unilm_evaluate(reference_model, reference_tok, examples)
    assert all_windows > 50
    full = evaluate(model, "funsd", "funsd", resamples=0)
    assert abs(full.id["f1"] - 100 * all_metrics["f1"]) < 1.0
