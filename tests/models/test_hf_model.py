"""Hugging Face model adapters, offline: tiny random models built from configs, saved, loaded by path.

No weights are downloaded. Each model is a 1-layer transformer with a small
hidden size, saved with a tokenizer made here (a byte-level BPE trained on
FUNSD words for LayoutLMv3 and LiLT, a WordPiece vocabulary for BERT and
BROS) and, where the model reads the page, a 32x32 image processor.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from dogood.core.boxes import normalize_box  # noqa: E402
from dogood.core.document import Document, Entity, PageImage, Word  # noqa: E402
from dogood.core.schema import FUNSD_NER_TAGS, RVL_CDIP_CLASSES, iob_tags  # noqa: E402
from dogood.eval.metrics import funsd_entity_scores  # noqa: E402
from dogood.models import ModelError, load_model  # noqa: E402
from dogood.models.hf_model import HFDocumentClassifier, HFTokenClassifier, load_hf_model  # noqa: E402
from dogood.pipeline.build import build  # noqa: E402
from dogood.pipeline.recipe import load_recipe  # noqa: E402
from dogood.sources.hf_dataset import HFDatasetSource  # noqa: E402

EXTRA_WORDS = "Date Name Address Phone TO FROM SUBJECT Total Amount Signature Company Inc. R&D No. Fax".split()
FUNSD_IDS = {t: i for i, t in enumerate(FUNSD_NER_TAGS)}
RVL_IDS = {c: i for i, c in enumerate(RVL_CDIP_CLASSES)}


# -- fixtures: data ------------------------------------------------------------------


@pytest.fixture(scope="module")
def docs(funsd_dir, tmp_path_factory):
    """Three FUNSD test documents, built by dogood and read back from the dataset folder."""
    out = tmp_path_factory.mktemp("hf-models") / "funsd"
    build(load_recipe("funsd"), out, source_path=funsd_dir, num_proc=1, limit=3, progress=False)
    source = HFDatasetSource(name=out, split="test", config="original")
    return [source.load(doc_id) for doc_id in source.ids()]


def _token_words(doc):
    index, _ = iob_tags(doc)
    return [doc.words[i] for i in index]


# -- fixtures: tokenizers --------------------------------------------------------------


@pytest.fixture(scope="module")
def bpe_files(docs, tmp_path_factory):
    """vocab.json + merges.txt of a tiny byte-level BPE trained on the documents' words."""
    from tokenizers import ByteLevelBPETokenizer

    text = " ".join([w.text for d in docs for w in d.words] + EXTRA_WORDS)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator([text], vocab_size=600, min_frequency=2,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"], show_progress=False)
    folder = tmp_path_factory.mktemp("bpe")
    bpe.save_model(str(folder))
    return folder / "vocab.json", folder / "merges.txt"


@pytest.fixture(scope="module")
def layout_tokenizer(bpe_files):
    """A LayoutLMv3 tokenizer (words + 0-1000 boxes), as LayoutLMv3 and LiLT checkpoints ship."""
    from transformers import LayoutLMv3TokenizerFast

    vocab, merges = bpe_files
    return LayoutLMv3TokenizerFast(vocab_file=str(vocab), merges_file=str(merges), model_max_length=512)


@pytest.fixture(scope="module")
def bert_tokenizer(docs, tmp_path_factory):
    """A WordPiece tokenizer (BERT, BROS): characters and a few whole words."""
    from transformers import BertTokenizerFast

    chars = sorted({c for d in docs for w in d.words for c in w.text.lower() if not c.isspace()})
    whole = sorted({w.text.lower() for d in docs for w in d.words if w.text.strip()})[:200]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + whole + chars + ["##" + c for c in chars]
    path = tmp_path_factory.mktemp("wordpiece") / "vocab.txt"
    path.write_text("\n".join(dict.fromkeys(vocab)) + "\n", encoding="utf-8")
    return BertTokenizerFast(vocab_file=str(path), model_max_length=512)


def _image_processor(kind="layoutlmv3"):
    from transformers import BeitImageProcessor, LayoutLMv3ImageProcessor

    if kind == "layoutlmv3":  # apply_ocr=True, as in the Hub's LayoutLMv3 checkpoints: the adapter turns it off
        return LayoutLMv3ImageProcessor(size={"height": 32, "width": 32}, apply_ocr=True)
    return BeitImageProcessor(size={"height": 32, "width": 32}, do_center_crop=False)


# -- tiny models ---------------------------------------------------------------------


def _labels(names):
    return {"id2label": dict(enumerate(names)), "label2id": {n: i for i, n in enumerate(names)}}


def _layoutlmv3_config(tokenizer, names, **kw):
    from transformers import LayoutLMv3Config

    return LayoutLMv3Config(
        vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=64, coordinate_size=6, shape_size=4, input_size=32, patch_size=16,
        max_position_embeddings=514, pad_token_id=1, bos_token_id=0, eos_token_id=2, **_labels(names), **kw,
    )


def _dominate(model, index: int, value: float = 30.0):
    """Zero the output layer's weights and raise one label's bias: that label wins everywhere."""
    head = [m for m in model.modules() if isinstance(m, torch.nn.Linear) and m.out_features == model.config.num_labels][-1]
    with torch.no_grad():
        head.weight.zero_()
        head.bias.zero_()
        head.bias[index] = value
    return model


def _save(model, folder, *preprocessors):
    model.save_pretrained(folder)
    for p in preprocessors:
        p.save_pretrained(folder)
    return folder


def _layoutlmv3_token_model(folder, tokenizer, names=FUNSD_NER_TAGS, dominant=None):
    from transformers import LayoutLMv3ForTokenClassification, LayoutLMv3Processor

    torch.manual_seed(0)
    model = LayoutLMv3ForTokenClassification(_layoutlmv3_config(tokenizer, names))
    if dominant is not None:
        _dominate(model, names.index(dominant))
    return _save(model, folder, LayoutLMv3Processor(image_processor=_image_processor(), tokenizer=tokenizer))


@pytest.fixture(scope="module")
def layoutlmv3_dir(layout_tokenizer, tmp_path_factory):
    return _layoutlmv3_token_model(tmp_path_factory.mktemp("layoutlmv3"), layout_tokenizer)


@pytest.fixture(scope="module")
def question_dir(layout_tokenizer, tmp_path_factory):
    """A LayoutLMv3 tagger whose classifier always says B-QUESTION."""
    return _layoutlmv3_token_model(tmp_path_factory.mktemp("question"), layout_tokenizer, dominant="B-QUESTION")


class Spy:
    """Records the keyword inputs of every forward call of a model."""

    def __init__(self, model):
        self.calls: list[dict] = []
        self.handle = model.register_forward_pre_hook(self._hook, with_kwargs=True)

    def _hook(self, module, args, kwargs):
        self.calls.append({k: v.detach().clone() for k, v in kwargs.items() if isinstance(v, torch.Tensor)})


def _fed_boxes(call, tokenizer):
    """The bbox rows of the word sub-tokens (not special, not padding) of each row of a forward call."""
    special = set(tokenizer.all_special_ids)
    rows = []
    for ids, mask, boxes in zip(call["input_ids"], call["attention_mask"], call["bbox"]):
        rows.append([b.tolist() for i, m, b in zip(ids.tolist(), mask.tolist(), boxes) if m and i not in special])
    return rows


def _all_fed_boxes(spy, tokenizer):
    """The word sub-tokens' boxes over every forward call and row, in order."""
    return [box for call in spy.calls for row in _fed_boxes(call, tokenizer) for box in row]


def _expected_boxes(tokenizer, words, boxes, with_boxes):
    """Each word's box, once per sub-token of the word."""
    if with_boxes:
        enc = tokenizer(words, boxes=[[0, 0, 0, 0]] * len(words), add_special_tokens=False, verbose=False)
    else:
        enc = tokenizer(words, is_split_into_words=True, add_special_tokens=False, verbose=False)
    return [boxes[w] for w in enc.word_ids()]


# -- token classification: end to end --------------------------------------------------


def test_layoutlmv3_tags_every_token_word_of_a_built_funsd_dataset(docs, layoutlmv3_dir):
    model = load_hf_model(layoutlmv3_dir)
    assert isinstance(model, HFTokenClassifier) and model.task == "token"
    assert model.name == layoutlmv3_dir.name
    assert model.image_processor.apply_ocr is False  # dogood's words are used, never OCR
    preds = model.predict(docs)
    assert list(preds) == [d.id for d in docs]
    for doc in docs:
        pred = preds[doc.id]
        n = len(iob_tags(doc)[0])
        assert n > 0 and len(pred.tags) == len(pred.confidences) == n
        assert set(pred.tags) <= set(FUNSD_NER_TAGS)
        assert all(0.0 <= c <= 1.0 for c in pred.confidences)
        assert all(c >= 1 / len(FUNSD_NER_TAGS) for c in pred.confidences)  # the top of 7 probabilities
    assert model.predict(docs) == preds
    again = load_model(str(layoutlmv3_dir))  # the public entry point gives the same model
    assert isinstance(again, HFTokenClassifier) and again.predict(docs) == preds
    scores = funsd_entity_scores(docs, {k: list(p.tags) for k, p in preds.items()})
    assert {"precision", "recall", "f1", "support", "per_label"} <= set(scores)
    assert all(0.0 <= scores[k] <= 1.0 for k in ("precision", "recall", "f1"))
    gold_entities = sum(1 for d in docs for t in iob_tags(d)[1] if t.startswith("B-"))
    assert scores["support"] == gold_entities


def test_a_dominant_label_comes_out_for_every_word_with_confidence_near_one(docs, question_dir):
    preds = load_model(question_dir).predict(docs)
    for doc in docs:
        assert set(preds[doc.id].tags) == {"B-QUESTION"}
        assert min(preds[doc.id].confidences) > 0.999
    # every word is then a one-word question: exactly the gold one-word questions are right
    scores = funsd_entity_scores(docs, {k: list(p.tags) for k, p in preds.items()})
    n_words = sum(len(iob_tags(d)[0]) for d in docs)
    one_word = sum(1 for d in docs for t, nxt in zip(iob_tags(d)[1], iob_tags(d)[1][1:] + ["O"])
                   if t == "B-QUESTION" and nxt != "I-QUESTION")
    assert one_word > 0
    assert scores["per_label"]["QUESTION"]["precision"] == pytest.approx(one_word / n_words)
    assert scores["per_label"]["HEADER"]["f1"] == scores["per_label"]["ANSWER"]["f1"] == 0.0


def test_each_word_takes_the_label_and_probability_of_its_first_sub_token(docs, layoutlmv3_dir):
    model = load_hf_model(layoutlmv3_dir, batch_size=2, max_length=64)
    seen = []  # (input_ids, attention_mask, logits) of each forward call
    handle = model.model.register_forward_hook(
        lambda m, args, kwargs, out: seen.append((kwargs["input_ids"], kwargs["attention_mask"], out.logits)),
        with_kwargs=True,
    )
    preds = model.predict(docs)
    handle.remove()
    special = set(model.tokenizer.all_special_ids)
    fed = [logits for ids, mask, out in seen for row_ids, row_mask, row in zip(ids, mask, out)
           for i, m, logits in zip(row_ids.tolist(), row_mask.tolist(), row) if m and i not in special]
    owners = []  # (document, word) of each fed sub-token, in order
    for doc in docs:
        words = [w.text for w in _token_words(doc)]
        enc = model.tokenizer(words, boxes=[[0, 0, 0, 0]] * len(words), add_special_tokens=False, verbose=False)
        owners += [(doc.id, w) for w in enc.word_ids()]
    assert len(fed) == len(owners)
    first = {}
    for owner, logits in zip(owners, fed):
        first.setdefault(owner, logits)
    for doc in docs:
        pred = preds[doc.id]
        for w, (tag, conf) in enumerate(zip(pred.tags, pred.confidences)):
            probs = first[(doc.id, w)].softmax(-1)
            assert tag == FUNSD_NER_TAGS[int(probs.argmax())]
            assert conf == pytest.approx(float(probs.max()), abs=1e-6)


def test_labels_mapping_renames_model_labels(docs, layout_tokenizer, tmp_path):
    names = ("other", "title-start", "title-in", "key-start", "key-in", "value-start", "value-in")
    folder = _layoutlmv3_token_model(tmp_path / "renamed", layout_tokenizer, names=names, dominant="value-start")
    with pytest.raises(ModelError, match="title-start"):
        load_hf_model(folder)
    mapping = dict(zip(names, FUNSD_NER_TAGS))
    preds = load_hf_model(folder, labels=mapping).predict(docs[:1])
    assert set(preds[docs[0].id].tags) == {"B-ANSWER"}
    with pytest.raises(ModelError, match="no label"):
        load_hf_model(folder, labels={"not-a-label": "O"})


# -- token classification: chunking and boxes -----------------------------------------


def test_long_documents_are_cut_into_chunks_that_fit_and_lose_no_word(docs, question_dir):
    model = HFTokenClassifier(question_dir, max_length=32, batch_size=4, box_level="word")
    spy = Spy(model.model)
    doc = max(docs, key=lambda d: len(_token_words(d)))
    words = _token_words(doc)
    pred = model.predict([doc])[doc.id]
    spy.handle.remove()
    assert len(pred.tags) == len(words) and set(pred.tags) == {"B-QUESTION"}
    assert all(call["input_ids"].shape[1] <= 32 for call in spy.calls)
    chunks = [row for call in spy.calls for row in _fed_boxes(call, model.tokenizer)]
    assert len(chunks) > 2
    fed = [box for row in chunks for box in row]
    expected = _expected_boxes(model.tokenizer, [w.text for w in words],
                               [normalize_box(w.box, doc.width, doc.height) for w in words], with_boxes=True)
    assert fed == expected  # every sub-token of every word, in order, once: no word cut or dropped
    assert max(len(row) for row in chunks) <= 32 - 2  # <s> and </s> in each chunk
    assert model.predict([doc]) == {doc.id: pred}


@pytest.mark.parametrize("box_level", [None, "segment", "word"])
def test_layoutlmv3_gets_the_image_and_normalized_boxes_in_its_convention(docs, layoutlmv3_dir, box_level):
    """Segment boxes by default (the LayoutLMv3 FUNSD fine-tuning data), word boxes on request."""
    from dogood.core.schema import token_boxes

    model = load_hf_model(layoutlmv3_dir, batch_size=1, **({"box_level": box_level} if box_level else {}))
    assert model.box_level == (box_level or "segment") and model.takes_boxes
    spy = Spy(model.model)
    model.predict(docs)
    spy.handle.remove()
    assert len(spy.calls) >= len(docs)  # one chunk or more per document
    for call in spy.calls:
        assert call["pixel_values"].shape == (1, 3, 32, 32)
        assert call["bbox"][0, 0].tolist() == [0, 0, 0, 0]  # <s>
    fed = _all_fed_boxes(spy, model.tokenizer)
    expected = []
    for doc in docs:
        words = _token_words(doc)
        boxes = [normalize_box(b, doc.width, doc.height) for b in token_boxes(doc, model.box_level)]
        expected += _expected_boxes(model.tokenizer, [w.text for w in words], boxes, True)
    assert fed == expected
    words = {tuple(normalize_box(w.box, d.width, d.height)) for d in docs for w in _token_words(d)}
    if model.box_level == "segment":
        assert sum(tuple(b) not in words for b in fed) > len(fed) / 2  # most tokens get their segment's box


def test_lilt_gets_normalized_word_boxes_and_no_image(docs, layout_tokenizer, tmp_path):
    from transformers import LiltConfig, LiltForTokenClassification

    torch.manual_seed(0)
    config = LiltConfig(vocab_size=len(layout_tokenizer), hidden_size=48, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, channel_shrink_ratio=4, max_position_embeddings=514, pad_token_id=1,
                        **_labels(FUNSD_NER_TAGS))
    folder = _save(LiltForTokenClassification(config), tmp_path / "lilt", layout_tokenizer)
    model = load_model(folder, batch_size=1, box_level="word")
    assert isinstance(model, HFTokenClassifier) and model.image_processor is None
    spy = Spy(model.model)
    preds = model.predict(docs[:2])
    spy.handle.remove()
    assert all("pixel_values" not in call for call in spy.calls)
    expected = []
    for doc in docs[:2]:
        words = _token_words(doc)
        boxes = [normalize_box(w.box, doc.width, doc.height) for w in words]
        expected += _expected_boxes(model.tokenizer, [w.text for w in words], boxes, True)
        assert len(preds[doc.id].tags) == len(words)
    assert _all_fed_boxes(spy, model.tokenizer) == expected


def test_bros_gets_word_boxes_as_page_fractions(docs, bert_tokenizer, tmp_path):
    from transformers import BrosConfig, BrosForTokenClassification

    torch.manual_seed(0)
    config = BrosConfig(vocab_size=len(bert_tokenizer), hidden_size=64, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, **_labels(FUNSD_NER_TAGS))
    folder = _save(BrosForTokenClassification(config), tmp_path / "bros", bert_tokenizer)
    model = load_hf_model(folder, batch_size=1, box_level="word")
    spy = Spy(model.model)
    preds = model.predict(docs[:1])
    spy.handle.remove()
    doc = docs[0]
    for call in spy.calls:
        assert call["bbox"].dtype == torch.float32
        assert float(call["bbox"].min()) >= 0.0 and float(call["bbox"].max()) <= 1.0
    words = _token_words(doc)
    fractions = [[w.box[0] / doc.width, w.box[1] / doc.height, w.box[2] / doc.width, w.box[3] / doc.height] for w in words]
    expected = _expected_boxes(model.tokenizer, [w.text for w in words], fractions, with_boxes=False)
    np.testing.assert_allclose(np.array(_all_fed_boxes(spy, model.tokenizer)), np.array(expected), rtol=0, atol=1e-6)
    assert len(preds[doc.id].tags) == len(words)


def test_plain_text_tagger_gets_words_only_and_tags_words_with_no_sub_token(bert_tokenizer, tmp_path):
    from transformers import BertConfig, BertForTokenClassification

    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(bert_tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, **_labels(FUNSD_NER_TAGS))
    model = BertForTokenClassification(config)
    _dominate(model, FUNSD_IDS["I-ANSWER"])
    folder = _save(model, tmp_path / "bert", bert_tokenizer)
    page = PageImage.from_array(np.full((100, 200), 255, dtype=np.uint8))
    words = [Word("date", (10, 10, 40, 20)), Word("   ", (50, 10, 60, 20)), Word("\u200b", (70, 10, 80, 20)),
             Word("zz", (90, 10, 120, 20))]
    doc = Document("synthetic", page, words, (Entity(0, "answer", (0, 1, 2, 3)),))
    tagger = load_hf_model(folder)
    spy = Spy(tagger.model)
    pred = tagger.predict([doc])["synthetic"]
    spy.handle.remove()
    assert "bbox" not in spy.calls[0] and "pixel_values" not in spy.calls[0]
    assert len(pred.tags) == len(iob_tags(doc)[0]) == 3  # the blank word is not a token word
    assert pred.tags == ("I-ANSWER",) * 3


def test_documents_with_no_token_words_get_empty_predictions(layoutlmv3_dir):
    page = PageImage.from_array(np.full((50, 50, 3), 255, dtype=np.uint8))
    empty = Document("empty", page, (Word(" ", (1, 1, 5, 5)),))
    pred = load_hf_model(layoutlmv3_dir).predict([empty])["empty"]
    assert pred.tags == () and pred.confidences == ()


# -- document classification -----------------------------------------------------------


def test_image_classifier_predicts_rvl_cdip_classes(docs, tmp_path):
    from transformers import BeitConfig, BeitForImageClassification

    torch.manual_seed(0)
    config = BeitConfig(image_size=32, patch_size=16, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, **_labels(RVL_CDIP_CLASSES))
    model = _dominate(BeitForImageClassification(config), RVL_IDS["invoice"])
    folder = _save(model, tmp_path / "dit", _image_processor("beit"))
    clf = load_model(folder)
    assert isinstance(clf, HFDocumentClassifier) and clf.task == "document"
    preds = clf.predict(docs)
    assert {p.label for p in preds.values()} == {"invoice"}
    assert all(p.confidence > 0.999 for p in preds.values())
    assert clf.predict(docs) == preds


def test_layoutlmv3_sequence_classifier_truncates_and_predicts(docs, layout_tokenizer, tmp_path):
    from transformers import LayoutLMv3ForSequenceClassification, LayoutLMv3Processor

    torch.manual_seed(0)
    model = LayoutLMv3ForSequenceClassification(_layoutlmv3_config(layout_tokenizer, RVL_CDIP_CLASSES))
    _dominate(model, RVL_IDS["memo"])
    folder = _save(model, tmp_path / "lv3-seq", LayoutLMv3Processor(image_processor=_image_processor(), tokenizer=layout_tokenizer))
    clf = load_hf_model(folder, max_length=24, batch_size=2)
    spy = Spy(clf.model)
    preds = clf.predict(docs)
    spy.handle.remove()
    assert [p.label for p in preds.values()] == ["memo"] * len(docs)
    assert all(call["input_ids"].shape[1] <= 24 for call in spy.calls)
    assert all("bbox" in call and "pixel_values" in call for call in spy.calls)
    first = docs[0]
    boxes = [normalize_box(w.box, first.width, first.height) for w in _token_words(first)]
    fed = _fed_boxes(spy.calls[0], clf.tokenizer)[0]
    assert fed == _expected_boxes(clf.tokenizer, [w.text for w in _token_words(first)], boxes, True)[: len(fed)]


def test_text_classifier_with_generic_labels_needs_names(docs, bert_tokenizer, tmp_path):
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(bert_tokenizer), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, num_labels=16)
    model = _dominate(BertForSequenceClassification(config), RVL_IDS["resume"])
    folder = _save(model, tmp_path / "bert-seq", bert_tokenizer)
    with pytest.raises(ModelError, match="generic labels"):
        load_hf_model(folder)
    clf = load_hf_model(folder, labels=list(RVL_CDIP_CLASSES), max_length=40)
    spy = Spy(clf.model)
    preds = clf.predict(docs)
    spy.handle.remove()
    assert {p.label for p in preds.values()} == {"resume"}
    assert "bbox" not in spy.calls[0] and spy.calls[0]["input_ids"].shape[1] <= 40


def test_a_classifier_whose_labels_are_not_rvl_cdip_classes_is_refused(tmp_path):
    from transformers import BeitConfig, BeitForImageClassification

    config = BeitConfig(image_size=32, patch_size=16, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, **_labels(("cat", "dog")))
    folder = _save(BeitForImageClassification(config), tmp_path / "pets", _image_processor("beit"))
    with pytest.raises(ModelError, match="'cat', 'dog' are not RVL-CDIP classes"):
        load_hf_model(folder)
    with pytest.raises(ModelError, match="2 labels but 1 names"):
        load_hf_model(folder, labels=["letter"])
    clf = load_hf_model(folder, labels={"cat": "letter", "dog": "Scientific_Report"})
    assert clf.labels == ("letter", "scientific report")


# -- errors and loading ------------------------------------------------------------------


def test_a_missing_model_folder_is_an_error_naming_it(tmp_path):
    missing = tmp_path / "no-such-model"
    with pytest.raises(ModelError, match="no-such-model"):
        load_hf_model(missing)
    with pytest.raises(ModelError, match="no-such-model"):
        HFTokenClassifier(str(missing))
    with pytest.raises(ModelError, match="no-such-model"):
        load_model(str(missing))


def test_a_hub_id_that_cannot_be_fetched_offline_is_an_error_naming_it(monkeypatch):
    import huggingface_hub.constants
    import transformers.utils.hub

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(transformers.utils.hub, "_is_offline_mode", True)
    with pytest.raises(ModelError, match="dogood-tests/no-such-model"):
        load_hf_model("dogood-tests/no-such-model")
    with pytest.raises(ModelError, match="dogood-tests/no-such-model"):
        load_model("dogood-tests/no-such-model")


def test_generic_token_labels_need_names(layout_tokenizer, tmp_path, docs):
    from transformers import LayoutLMv3ForTokenClassification, LayoutLMv3Processor

    torch.manual_seed(0)
    config = _layoutlmv3_config(layout_tokenizer, [f"LABEL_{i}" for i in range(7)])
    folder = _save(LayoutLMv3ForTokenClassification(config), tmp_path / "generic",
                   LayoutLMv3Processor(image_processor=_image_processor(), tokenizer=layout_tokenizer))
    with pytest.raises(ModelError, match="generic labels.*pass labels="):
        load_model(folder)
    tagger = load_model(folder, labels=list(FUNSD_NER_TAGS))
    assert tagger.labels == FUNSD_NER_TAGS
    assert len(tagger.predict(docs[:1])[docs[0].id].tags) == len(_token_words(docs[0]))


def test_task_comes_from_the_architecture_or_the_argument(layoutlmv3_dir, tmp_path):
    import json
    import shutil

    bare = tmp_path / "bare"
    shutil.copytree(layoutlmv3_dir, bare)
    config = json.loads((bare / "config.json").read_text())
    config.pop("architectures")
    (bare / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match="cannot tell its task"):
        load_hf_model(bare)
    assert isinstance(load_hf_model(bare, task="token"), HFTokenClassifier)
    with pytest.raises(ModelError, match="not supported"):
        load_hf_model(layoutlmv3_dir, task="qa")


def test_importing_the_adapters_does_not_import_torch():
    code = "import sys, dogood.models.hf_model; sys.exit(int('torch' in sys.modules or 'transformers' in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_dogood_eval_scores_a_tiny_layoutlmv3_on_built_id_and_ood_datasets(funsd_dir, docs, question_dir, tmp_path, capsys):
    """End to end through the CLI: FUNSD and FUNSD-L built, a HF model folder scored on both, the report written."""
    import json

    from dogood.cli import main

    build(load_recipe("funsd"), tmp_path / "funsd", source_path=funsd_dir, limit=3, progress=False)
    build(load_recipe("funsd-l"), tmp_path / "funsd-l", source_path=funsd_dir, limit=3, configs=["merge"], progress=False)
    out = tmp_path / "report"
    code = main(["eval", "--model", str(question_dir), "--id", str(tmp_path / "funsd"),
                 "--ood", str(tmp_path / "funsd-l"), "--out", str(out), "--quiet", "--batch-size", "2"])
    assert code == 0, capsys.readouterr().err
    rows = json.loads((out / "report.json").read_text())["datasets"]
    assert [r["dataset"] for r in rows] == ["funsd/original", "funsd-l/merge"]
    # B-QUESTION for every word: the right entities are the gold one-word questions, on either layout
    tags = [iob_tags(d)[1] for d in docs]
    n_words = sum(len(t) for t in tags)
    n_gold = sum(1 for t in tags for x in t if x.startswith("B-"))
    one_word = sum(1 for t in tags for x, nxt in zip(t, t[1:] + ["O"]) if x == "B-QUESTION" and nxt != "I-QUESTION")
    expected = 100 * 2 * one_word / (n_words + n_gold)
    assert rows[0]["f1"] == pytest.approx(expected) and rows[1]["f1"] == pytest.approx(expected)
    assert rows[1]["change"] == pytest.approx(0.0)


def test_move_takes_a_hugging_face_token_model_as_scorer(docs, layoutlmv3_dir, question_dir):
    from dogood.shifts.layout.move import MoveEntities, entity_strength, model_fingerprint

    doc = docs[0]
    shift = MoveEntities(scorer=str(question_dir), shuffles=3, cache=False)
    # a model that says QUESTION for every word whatever the layout: every entity is strong
    strength = entity_strength(doc, shift.model, 3)
    spoken = [any(doc.words[i].text.strip() for i in e.word_ids) for e in doc.entities]
    assert (strength[spoken] == 1.0).all() and np.isnan(strength[~np.array(spoken)]).all()  # no token word: no score
    out = shift(doc, 0)
    assert out.provenance[-1].counts["strong"] == sum(spoken)
    assert out.provenance[-1].counts["moved"] >= 1
    assert str(question_dir.name) in model_fingerprint(shift.model)
    notes = shift.card_notes()[0]
    assert shift.params()["scorer"] in notes and str(question_dir) not in notes  # its content hash, no local path
    varied = entity_strength(doc, MoveEntities(scorer=str(layoutlmv3_dir), shuffles=3, cache=False).model, 3)
    assert ((0 <= varied[spoken]) & (varied[spoken] <= 1)).all()
