"""A row of every FUNSD-style recipe goes through LayoutLMv3's processor unchanged: RGB images, in-range boxes.

The processor's tokenizer is a tiny byte-level BPE trained in the test
(no weights exist offline); the image processor is LayoutLMv3's own, which
raises on a 2-D (grayscale) array, so a row whose image decoded to mode L
would fail here.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from datasets import load_dataset  # noqa: E402

from dogood.pipeline.build import build  # noqa: E402
from dogood.pipeline.recipe import load_recipe  # noqa: E402

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "train_layoutlmv3.py"

#: Configs that need what no offline machine has (a masked LM's weights).
NEEDS_WEIGHTS = {"bert_attack"}
#: The FUNSD-style recipes; every config of each that runs offline is built (one row each).
RECIPES = ("funsd", "funsd-l", "funsd-i", "funsd-t", "funsd-fa")


@pytest.fixture(scope="module")
def processor():
    spec = importlib.util.spec_from_file_location("train_layoutlmv3", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    corpus = [["TO:", "DATE:", "FAX", "NUMBER:", "Name", "Page", "of", "the", "and", "Date", "R.J.", "Reynolds"]] * 4
    return module.tiny_processor(corpus)


@pytest.mark.parametrize("name", RECIPES)
def test_a_row_of_every_config_runs_through_the_layoutlmv3_processor(name, processor, funsd_dir, tmp_path):
    recipe = load_recipe(name)
    configs = [c for c in recipe.configs if not any(s.name in NEEDS_WEIGHTS for s in recipe.chain(c))]
    build(recipe, tmp_path / name, source_path=funsd_dir, configs=configs, limit=1, progress=False)
    for config in configs:
        ds = load_dataset(str(tmp_path / name), config, split="test")
        assert ds.features["image"].mode == "RGB"
        row = ds[0]
        assert row["image"].mode == "RGB", config
        # exactly the call of the LayoutLMv3 tutorials, on the row as it comes
        enc = processor(row["image"], row["tokens"], boxes=row["bboxes"], word_labels=row["ner_tags"],
                        truncation=True, return_tensors="pt")
        assert enc["pixel_values"].shape[1] == 3, config
        assert int(enc["bbox"].min()) >= 0 and int(enc["bbox"].max()) <= 1000, config
        labels = enc["labels"][enc["labels"] != -100]
        assert len(labels) > 0 and set(labels.tolist()) <= set(range(7)), config
