"""Sources: read a dataset and produce :class:`~dogood.document.Document` records.

A source is bound to one split. It lists its document ids cheaply
(:meth:`ids`) and loads one document at a time (:meth:`load`), so a build can
stream, parallelise and skip bad documents one by one. Sources are plain
picklable objects: worker processes receive them as they are.

``schema`` says which output columns fit the data: ``"funsd"`` (word labels,
entities, links), ``"rvl_cdip"`` (a document class) or ``"docvqa"``
(questions and answers).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from dogood.document import Document
from dogood.errors import RecipeError


class Source(Protocol):
    kind: str
    split: str
    schema: str

    def ids(self) -> list[str]: ...

    def load(self, doc_id: str) -> Document: ...

    def describe(self) -> dict[str, Any]:
        """What the data card says about where the data came from."""
        ...


SOURCE_KINDS = ("funsd", "rvl_cdip", "docvqa", "hf", "synthetic")


def open_source(spec: Mapping[str, Any], split: str, path: str | Path | None = None) -> Source:
    """Open the source a recipe's ``source:`` mapping names, for one split.

    ``path`` (the CLI's ``--source``) overrides where the data is read from.
    """
    kind = spec.get("kind")
    options = {k: v for k, v in spec.items() if k not in ("kind", "split", "splits")}
    if kind == "funsd":
        from dogood.sources.funsd import FunsdSource

        return FunsdSource(root=path or options.pop("path", None), split=split, **options)
    if kind == "rvl_cdip":
        from dogood.sources.rvl_cdip import RvlCdipSource

        return RvlCdipSource(root=path or options.pop("path", None), split=split, **options)
    if kind == "docvqa":
        from dogood.sources.docvqa import DocVQASource

        return DocVQASource(root=path or options.pop("path", None), split=split, **options)
    if kind == "hf":
        from dogood.sources.hf import HFDatasetSource

        name = path or options.pop("path", None) or options.pop("name", None)
        return HFDatasetSource(name=name, split=split, **options)
    if kind == "synthetic":
        from dogood.sources.synthetic import SyntheticSource

        if path is not None:
            raise RecipeError(f"the synthetic source generates its pages and reads no files; drop --source {path}")
        return SyntheticSource(split=split, **options)
    raise RecipeError(f"unknown source kind {kind!r}; expected one of {', '.join(SOURCE_KINDS)}")
