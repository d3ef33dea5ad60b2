"""Sources: read a dataset and produce :class:`~dogood.core.document.Document` records.

A source is bound to one split. It lists its document ids cheaply
(:meth:`ids`) and loads one document at a time (:meth:`load`), so a build can
stream, parallelise and skip bad documents one by one. Sources are plain
picklable objects: worker processes receive them as they are.

``schema`` says which output columns fit the data: ``"funsd"`` (word labels,
entities, links), ``"rvl_cdip"`` (a document class) or ``"docvqa"``
(questions and answers).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from dogood.core.document import Document
from dogood.core.errors import RecipeError, SourceError


class Source(Protocol):
    kind: str
    split: str
    schema: str

    def ids(self) -> Sequence[str]:
        """The document ids, in order: any sequence (a lazy one need store nothing per id); never copied by a build.

        A source may also have ``read_slice(start, stop)``: the documents at positions ``start..stop-1``, in order,
        equal to :meth:`load` of each (one pass over Parquet row groups)."""
        ...

    def load(self, doc_id: str) -> Document: ...

    def describe(self) -> dict[str, Any]:
        """What the data card says about where the data came from."""
        ...


SOURCE_KINDS = ("funsd", "rvl_cdip", "docvqa", "hf", "synthetic", "coco_layout", "funsd_mix")
#: Sources whose documents dogood draws (not a dataset's own pages): a config without shifts is no
#: in-distribution reference there, and the card says so.
DRAWN_KINDS = ("synthetic", "funsd_mix")


def open_source(spec: Mapping[str, Any], split: str, path: str | Path | None = None) -> Source:
    """Open the source a recipe's ``source:`` mapping names, for one split.

    ``path`` (the CLI's ``--source``) overrides where the data is read from.
    An option the source does not take is a :class:`RecipeError` naming it.
    """
    kind = spec.get("kind")
    options = {k: v for k, v in spec.items() if k not in ("kind", "split", "splits")}
    if kind == "funsd":
        from dogood.sources.funsd import FunsdSource as cls
    elif kind == "rvl_cdip":
        from dogood.sources.rvl_cdip import RvlCdipSource as cls
    elif kind == "docvqa":
        from dogood.sources.docvqa import DocVQASource as cls
    elif kind == "hf":
        from dogood.sources.hf_dataset import HFDatasetSource as cls
    elif kind == "synthetic":
        from dogood.sources.synthetic import SyntheticSource as cls
    elif kind == "coco_layout":
        from dogood.sources.coco_layout import CocoLayoutSource as cls
    elif kind == "funsd_mix":
        from dogood.sources.funsd_mix import FunsdMixSource as cls
    else:
        raise RecipeError(f"unknown source kind {kind!r}; expected one of {', '.join(SOURCE_KINDS)}")
    where = "name" if kind == "hf" else "root"
    known = {f.name for f in dataclasses.fields(cls) if f.init} - {"split"}
    aliases = set() if kind == "synthetic" else {"path", where}
    unknown = sorted(str(k) for k in set(options) - known - aliases)
    if unknown:
        raise RecipeError(f"source {kind!r} has no option {', '.join(map(repr, unknown))}; "
                          f"it takes {', '.join(sorted(known | aliases))}")
    for name, value in (("--source", path), *((f"source option {k}", v) for k, v in options.items())):
        if isinstance(value, (str, Path)) and str(value).lower().startswith("file:"):
            from urllib.parse import unquote, urlparse

            raise SourceError(f"{name} {str(value)!r} is a file: URL of this machine; pass the path itself "
                              f"({unquote(urlparse(str(value)).path) or 'the folder'}): a local source is recorded "
                              "by its content, a URL would be published as it is")
    if kind == "synthetic":
        if path is not None:
            raise RecipeError(f"the synthetic source generates its pages and reads no files; drop --source {path}")
        return cls(split=split, **options)
    location = path or options.pop("path", None) or options.pop(where, None)
    options.pop(where, None)
    return cls(**{where: location}, split=split, **options)
