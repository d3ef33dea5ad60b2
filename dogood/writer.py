"""Write documents as a Hugging Face dataset: Parquet shards plus a README card.

The folder is laid out as on the Hub::

    README.md                                   card with ``configs:`` YAML
    data/<config>/<split>-00000-of-00002.parquet
    dogood_build.json                           what was built, from what

so ``datasets.load_dataset(folder, config, split=...)`` loads it offline
exactly as it would from a Hub repo. Parquet files carry the ``datasets``
features in their schema metadata (ClassLabel names, Image). Rows are written
in source order in fixed-size shards and row groups, so the bytes depend only
on the documents, never on worker count.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
from jinja2 import Environment, StrictUndefined
from huggingface_hub import DatasetCard, DatasetCardData
from datasets.info import DatasetInfo, DatasetInfosDict
from datasets.splits import SplitDict, SplitInfo

from dogood.document import Document
from dogood.schema import document_to_row, features_for

ROW_GROUP_SIZE = 100


def shard_path(folder: Path, config: str, split: str, shard: int, num_shards: int) -> Path:
    return Path(folder) / "data" / config / f"{split}-{shard:05d}-of-{num_shards:05d}.parquet"


class ShardWriter:
    """Streams rows of one (config, split) into ``num_shards`` Parquet files.

    Row ``index`` (the document's position in its source) picks the shard
    (``index // shard_size``), so shard boundaries do not move when documents
    are skipped. Rows must arrive in increasing index order.
    """

    def __init__(self, folder: Path, config: str, split: str, schema: str, num_docs: int, shard_size: int):
        self.folder, self.config, self.split = Path(folder), config, split
        self.features = features_for(schema)
        self.arrow_schema = self.features.arrow_schema
        self.shard_size = shard_size
        self.num_shards = max(1, -(-num_docs // shard_size))
        self._shard = -1
        self._writer: pq.ParquetWriter | None = None
        self._rows: list[dict[str, Any]] = []
        self.num_rows = 0
        self.num_bytes = 0

    def write(self, index: int, row: dict[str, Any]) -> None:
        shard = min(index // self.shard_size, self.num_shards - 1)
        if shard < self._shard:
            raise ValueError(f"rows out of order: index {index} after shard {self._shard}")
        while self._shard < shard:
            self._open_next()
        self._rows.append(row)
        self.num_rows += 1
        if len(self._rows) >= ROW_GROUP_SIZE:
            self._flush()

    def close(self) -> None:
        while self._shard < self.num_shards - 1:  # empty trailing shards still exist
            self._open_next()
        self._flush()
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def _open_next(self) -> None:
        self._flush()
        if self._writer is not None:
            self._writer.close()
        self._shard += 1
        path = shard_path(self.folder, self.config, self.split, self._shard, self.num_shards)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._writer = pq.ParquetWriter(path, self.arrow_schema)

    def _flush(self) -> None:
        if not self._rows:
            return
        table = pa.Table.from_pylist(self._rows, schema=self.arrow_schema)
        self.num_bytes += table.nbytes
        self._writer.write_table(table)
        self._rows = []


def documents_to_dataset(docs: list[Document], schema: str) -> datasets.Dataset:
    """An in-memory ``datasets.Dataset`` of documents, with the schema's features."""
    features = features_for(schema)
    table = pa.Table.from_pylist([document_to_row(d, schema) for d in docs], schema=features.arrow_schema)
    return datasets.Dataset(table)


def card_template_path() -> Path:
    """The card template: shipped in ``data_cards/`` (package ``dogood.data_cards``)."""
    import importlib.resources

    try:
        path = Path(str(importlib.resources.files("dogood.data_cards") / "dataset_card.md"))
        if path.is_file():
            return path
    except ModuleNotFoundError:
        pass
    return Path(__file__).resolve().parents[1] / "data_cards" / "dataset_card.md"


def render_card(
    *,
    recipe,
    schema: str,
    source: dict[str, Any],
    splits_info: dict[str, dict[str, dict[str, Any]]],
    stats: dict[str, dict[str, dict[str, Any]]],
    skipped: list[dict[str, str]],
    dogood_version: str,
    notes: dict[str, list[str]] | None = None,
) -> str:
    """The dataset card (README.md) of a built folder.

    ``splits_info[config][split]`` has ``num_examples``, ``num_bytes`` and
    ``num_shards``; ``stats[config][split]`` the per-config statistics;
    ``notes[config]`` lines the config's shifts add (:meth:`Shift.card_notes`).
    """
    features = features_for(schema)
    card_data = DatasetCardData(
        pretty_name=recipe.name,
        license="other",
        task_categories={"funsd": ["token-classification"], "docvqa": ["document-question-answering"]}.get(
            schema, ["image-classification"]),
        tags=["document-ai", "out-of-distribution", "do-good", "dogood"],
        source_datasets=[source.get("name", source.get("kind", "unknown"))],
        configs=[
            {
                "config_name": config,
                "data_files": [{"split": split, "path": f"data/{config}/{split}-*.parquet"} for split in by_split],
            }
            for config, by_split in splits_info.items()
        ],
    )
    infos = {}
    for config, by_split in splits_info.items():
        split_dict = SplitDict()
        for split, info in by_split.items():
            split_dict.add(SplitInfo(name=split, num_examples=info["num_examples"], num_bytes=info["num_bytes"]))
        infos[config] = DatasetInfo(features=features, splits=split_dict, config_name=config, version=recipe.version)
    DatasetInfosDict(infos).to_dataset_card_data(card_data)
    chains = {config: recipe.configs[config] for config in splits_info}
    template = Environment(undefined=StrictUndefined, keep_trailing_newline=True).from_string(
        card_template_path().read_text(encoding="utf-8")
    )
    body = template.render(
        card_data=card_data.to_yaml(),
        recipe=recipe,
        schema=schema,
        source=source,
        chains=chains,
        stats=stats,
        skipped=skipped,
        dogood_version=dogood_version,
        notes=notes or {},
    )
    return str(DatasetCard(body))
