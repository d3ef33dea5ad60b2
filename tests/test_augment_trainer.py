"""A real training loop (issue 37): the HF Trainer trains a tiny LayoutLMv3 (built here, no weights) on FUNSD word rows
shifted by dogood.transform in 2 DataLoader workers for 2 epochs; each epoch's rows are the in-process transform's."""

from __future__ import annotations

import hashlib
import math
import pickle
import zlib

import numpy as np
import pytest

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

from datasets import load_dataset  # noqa: E402

import dogood  # noqa: E402
from dogood.pipeline.build import build  # noqa: E402
from dogood.pipeline.recipe import load_recipe  # noqa: E402

HUB_FUNSD = ("id", "tokens", "bboxes", "ner_tags", "image")
N = 4
LENGTH = 96  # tokens a row gives the model
VOCAB = 512


def row_key(row) -> int:
    """A row's content (id, tokens, boxes, labels, pixels) as one number, comparable across processes."""
    digest = hashlib.sha256(repr((row["id"], row["tokens"], row["bboxes"], row["ner_tags"])).encode())
    digest.update(np.asarray(row["image"]).tobytes())
    return int.from_bytes(digest.digest()[:8], "big") >> 1


def collate(rows):
    """Shifted Hub rows to LayoutLMv3 inputs (a word's id hashed from its text; no tokenizer offline), with each
    row's key for the test."""
    n = min(LENGTH, max(len(r["tokens"]) for r in rows))
    ids = torch.zeros(len(rows), n, dtype=torch.long)
    boxes = torch.zeros(len(rows), n, 4, dtype=torch.long)
    labels = torch.full((len(rows), n), -100, dtype=torch.long)
    mask = torch.zeros(len(rows), n, dtype=torch.long)
    pixels = torch.zeros(len(rows), 3, 32, 32)
    for b, row in enumerate(rows):
        k = min(n, len(row["tokens"]))
        ids[b, :k] = torch.tensor([5 + zlib.crc32(t.encode()) % (VOCAB - 5) for t in row["tokens"][:k]])
        boxes[b, :k] = torch.tensor(row["bboxes"][:k])
        labels[b, :k] = torch.tensor(row["ner_tags"][:k])
        mask[b, :k] = 1
        image = np.asarray(row["image"].convert("RGB").resize((32, 32)), np.float32) / 255.0
        pixels[b] = torch.from_numpy(image).permute(2, 0, 1)
    return {"input_ids": ids, "bbox": boxes, "labels": labels, "attention_mask": mask, "pixel_values": pixels,
            "row_keys": torch.tensor([row_key(r) for r in rows], dtype=torch.long)}


class RecordingTrainer(transformers.Trainer):
    """The Trainer, noting the rows each training step got (in the main process) by epoch."""

    seen: dict[int, list[int]]

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        keys = inputs.pop("row_keys")
        self.seen.setdefault(math.floor(self.state.epoch or 0), []).extend(keys.tolist())
        return super().compute_loss(model, inputs, return_outputs=return_outputs,
                                    num_items_in_batch=num_items_in_batch)


@pytest.fixture(scope="module")
def rows(funsd_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("trainer") / "funsd"
    build(load_recipe("funsd"), out, source_path=funsd_dir, limit=N, progress=False, box_level="word")
    ds = load_dataset(str(out), "original", split="test")
    return ds.remove_columns([c for c in ds.column_names if c not in HUB_FUNSD])


@pytest.mark.parametrize("persistent", [False, True])
def test_the_trainer_trains_on_each_epochs_own_rows(rows, tmp_path, persistent):
    chain = dogood.Compose([{"shift": "char_deletion", "fraction": 0.2, "render": True},  # text, redrawn
                            {"shift": "center_shift", "delta": 0.1},                      # layout
                            {"shift": "distort", "kinds": ["perspective"]}])              # image
    t = dogood.transform(chain, seed=3, per_epoch=True)
    config = transformers.LayoutLMv3Config(
        vocab_size=VOCAB, hidden_size=48, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
        max_position_embeddings=LENGTH + 4, coordinate_size=8, shape_size=8, input_size=32, patch_size=16,
        num_labels=7, has_relative_attention_bias=False, has_spatial_attention_bias=False)
    torch.manual_seed(0)
    model = transformers.LayoutLMv3ForTokenClassification(config)
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path / "run"), num_train_epochs=2, per_device_train_batch_size=2, learning_rate=1e-3,
        dataloader_num_workers=2, dataloader_persistent_workers=persistent, remove_unused_columns=False,
        report_to=[], save_strategy="no", logging_strategy="no", disable_tqdm=True, use_cpu=True, seed=0)
    trainer = RecordingTrainer(model=model, args=args, train_dataset=rows.with_transform(t), data_collator=collate,
                               callbacks=[t.trainer_callback()])
    trainer.seen = {}
    before = [p.detach().clone() for p in model.parameters()]
    trainer.train()
    assert any(not torch.equal(a, b.detach()) for a, b in zip(before, model.parameters()))  # it trained

    expected = {}
    for epoch in (0, 1):
        own = pickle.loads(pickle.dumps(t))  # the in-process transform, at this epoch
        own.set_epoch(epoch)
        shifted = [own(rows[i]) for i in range(N)]
        expected[epoch] = sorted(row_key(r) for r in shifted)
        for row, source in zip(shifted, rows):  # labels and boxes stay with their words
            assert row["ner_tags"] == source["ner_tags"] and len(row["bboxes"]) == len(row["tokens"])
            assert all(a == b or (len(a) == len(b) - 1) for a, b in zip(row["tokens"], source["tokens"]))
            boxes, was = np.array(row["bboxes"]), np.array(source["bboxes"])
            assert (boxes[:, 2] >= boxes[:, 0]).all() and (boxes[:, 3] >= boxes[:, 1]).all()
            assert boxes.min() >= 0 and boxes.max() <= 1000
            moved = np.abs((boxes[:, :2] + boxes[:, 2:]) - (was[:, :2] + was[:, 2:])) / 2
            assert np.median(moved) < 40 and (moved > 0).mean() > 0.5  # moved, each with its own word
            assert row["tokens"] != source["tokens"]
            assert not np.array_equal(np.asarray(row["image"]), np.asarray(source["image"]))
    assert sorted(trainer.seen[0]) == expected[0]
    assert sorted(trainer.seen[1]) == expected[1]
    assert set(expected[0]).isdisjoint(expected[1])  # every row drawn anew in epoch 1
