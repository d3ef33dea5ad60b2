"""examples/train_layoutlmv3.py, offline: a built FUNSD-L config through a LayoutLMv3 processor and training steps."""

from __future__ import annotations

import importlib.util
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from dogood.core.schema import FUNSD_NER_TAGS  # noqa: E402
from dogood.pipeline.build import build  # noqa: E402
from dogood.pipeline.recipe import load_recipe  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "examples" / "train_layoutlmv3.py"


@pytest.fixture(scope="module")
def funsd_l(funsd_dir, tmp_path_factory):
    """FUNSD-L's merge config, four documents."""
    out = tmp_path_factory.mktemp("examples") / "funsd-l"
    build(load_recipe("funsd-l"), out, source_path=funsd_dir, configs=["merge"], limit=4, progress=False)
    return out


@pytest.fixture(scope="module")
def script():
    """The example script, imported as a module."""
    spec = importlib.util.spec_from_file_location("train_layoutlmv3", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(*args):
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)


def _losses(stdout: str) -> list[float]:
    return [float(x) for x in re.findall(r"^step \d+ loss (\S+)$", stdout, re.M)]


def test_tiny_model_trains_on_a_built_config(funsd_l):
    proc = _run(funsd_l, "merge", "--tiny", "--steps", "2", "--limit", "4")
    assert proc.returncode == 0, proc.stderr
    losses = _losses(proc.stdout)
    assert len(losses) == 2 and all(math.isfinite(x) and x > 0 for x in losses), proc.stdout
    assert re.search(r"num_labels=(\d+)", proc.stdout).group(1) == "7"


def test_named_model_is_loaded_with_the_dataset_labels(funsd_l, script, tmp_path):
    """--model with a folder shaped like microsoft/layoutlmv3-base: no head, OCR on in its image processor."""
    from datasets import load_dataset
    from transformers import LayoutLMv3Model

    ds = load_dataset(str(funsd_l), "merge", split="test")
    processor = script.tiny_processor(ds["tokens"])
    processor.image_processor.apply_ocr = True
    base = LayoutLMv3Model(script.tiny_model(processor.tokenizer, ["O"]).config)
    base.save_pretrained(tmp_path / "base")
    processor.save_pretrained(tmp_path / "base")
    proc = _run(funsd_l, "merge", "--model", tmp_path / "base", "--steps", "1", "--batch-size", "1")
    assert proc.returncode == 0, proc.stderr
    assert len(_losses(proc.stdout)) == 1
    assert "num_labels=7" in proc.stdout


def test_encode_labels_first_subwords_and_keeps_boxes_in_range(funsd_l, script):
    from datasets import load_dataset

    ds = load_dataset(str(funsd_l), "merge", split="test")
    assert ds.features["ner_tags"].feature.names == list(FUNSD_NER_TAGS)
    processor = script.tiny_processor(ds["tokens"])
    rows = ds[0:2]
    enc = script.encode(processor, rows)
    length = script.TINY_MAX_LENGTH
    assert enc["input_ids"].shape == enc["labels"].shape == (2, length)
    assert enc["bbox"].shape == (2, length, 4)
    assert enc["pixel_values"].shape == (2, 3, script.TINY_IMAGE_SIZE, script.TINY_IMAGE_SIZE)
    assert int(enc["bbox"].min()) >= 0 and int(enc["bbox"].max()) <= 1000
    special = torch.tensor(processor.tokenizer.all_special_ids)
    columns = zip(enc["input_ids"], enc["attention_mask"], enc["labels"], rows["ner_tags"])
    for row, (ids, mask, labels, tags) in enumerate(columns):
        off = torch.isin(ids, special) | (mask == 0)
        assert off.any() and bool((labels[off] == -100).all())
        kept = labels[labels != -100]
        assert len(kept) > 0 and bool(((kept >= 0) & (kept <= 6)).all())
        # the first sub-token of each word carries the word's tag; transformers also labels the other byte
        # pieces of a multi-byte character such as '\u2611' (huggingface/transformers#19978), with the same tag
        word_ids = enc.word_ids(row)
        for k, (word, label) in enumerate(zip(word_ids, labels.tolist())):
            if word is not None and (k == 0 or word_ids[k - 1] != word):
                assert label == tags[word]
            if label != -100:
                assert word is not None and label == tags[word]
        seen = sorted({w for w in word_ids if w is not None})
        assert seen == list(range(len(seen))) and len(seen) <= len(tags)  # truncation cuts the tail only
