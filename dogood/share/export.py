"""Export a built dataset folder for pipelines outside Hugging Face ``datasets``.

:func:`export` reads every row of a built folder back into its full record
(:class:`~dogood.sources.hf_dataset.HFDatasetSource`) and writes, per config:

- ``funsd-json``: FUNSD's own layout, ``<config>/testing_data/{annotations,images}/<id>.{json,png}``
  (``training_data`` for ``train``; other splits under their own name; FUNSD's split folder that was
  not built is created empty), so ``dogood build --source <dest>/<config>`` with a ``funsd`` source and
  any FUNSD reader take it as the official folder. The JSON is :func:`~dogood.sources.funsd.document_to_funsd_json`'s:
  ``form: [{id, label, words: [{text, box}], box, text, linking}]``, entity boxes and texts derived from the words.
- ``coco``: ``<config>/<split>/annotations.json``, a COCO-style detection file (``images``,
  ``annotations`` with ``bbox: [x, y, w, h]`` in pixels and ``category_id``, ``categories``), one
  annotation per entity (category: its label; the default for FUNSD-style data) or, with ``level="word"``
  (the default for data without entities), per word (its entity's label;
  ``word`` for a word in no entity); pages in ``<config>/<split>/images/``. Category ids are 1..n in the
  order of the build's entity labels. A build made with ``quads: true`` gives each word's (and each one-word
  entity's, as a ``coco_layout`` region) quad as its ``segmentation`` polygon.
- ``jsonl``: ``<config>/<split>/documents.jsonl``, one JSON object per document: ``id``, ``image``
  (path relative to the file), ``width``, ``height``, ``words``, ``boxes`` (pixels, ``[x0, y0, x1, y1]``),
  ``labels`` (each word's entity label or ``null``), ``label`` (the document class or ``null``).

Pages are written as their stored bytes when PNG (or JPEG, for ``coco``/``jsonl``), else as PNG of
their pixels. The destination is assembled under a hidden ``.<name>.partial-<pid>`` folder and renamed
when complete (:func:`dogood.pipeline.safety.commit`), with ``dogood_export.json`` marking it as dogood's; an
existing destination is replaced only with ``overwrite`` and only when dogood exported it.
"""

from __future__ import annotations

import fnmatch
import io
import json
import re
from pathlib import Path
from typing import Any

from PIL import Image

from dogood.core.document import Document
from dogood.core.errors import DogoodError
from dogood.core.fs import (
    FileRefused,
    check_name,
    check_no_links,
    naming,
    partial_folder,
    read_json,
    remove_tree,
    seal_partial,
)
from dogood.core.schema import FUNSD_LABELS
from dogood.pipeline.safety import commit, is_dogood_build, portable, read_build_info, verify_recorded

FORMATS = ("funsd-json", "coco", "jsonl")
#: FUNSD's folder name for each split (``dogood.sources.funsd.SPLIT_DIRS``).
FUNSD_SPLIT_DIRS = {"train": "training_data", "test": "testing_data"}
MARKER_FILE = "dogood_export.json"


class ExportError(DogoodError):
    """An export that cannot be written: an unknown format or config, a destination that is not ours."""


def default_destination(folder: str | Path, fmt: str) -> Path:
    """``<folder>-<format>`` beside the built folder."""
    folder = Path(folder)
    return folder.with_name(f"{folder.name}-{fmt}")


def export(folder: str | Path, fmt: str, dest: str | Path | None = None, *, configs: list[str] | None = None,
           level: str | None = None, overwrite: bool = False) -> dict[str, Any]:
    """Write the built ``folder`` in ``fmt`` (one of :data:`FORMATS`) to ``dest``; see the module docstring.

    ``configs``: names, globs or comma lists (default: all). ``level`` (coco): ``entity`` or ``word``; default
    ``entity`` for FUNSD-style data, ``word`` for data without entities (OCR words). Returns ``{"path", "configs": {config: {split: n}}}``.
    """
    folder = Path(folder)
    if fmt not in FORMATS:
        raise ExportError(f"unknown export format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if not folder.is_dir() or not is_dogood_build(folder):
        raise ExportError(f"{folder} is not a dataset folder dogood built (no dogood_build.json written by dogood)")
    check_no_links(folder, "the dataset folder")  # nothing outside the folder is read as if it were its data
    info = _read_info(folder)
    # what is exported is what the build wrote: every shard against the sha256 its build recorded (a tampered
    # shard, say quads of 1e38, is refused, named, before a row is read)
    verify_recorded(folder, ExportError, extra_ok=True, info=info)
    level = level or ("entity" if info.get("schema", "funsd") == "funsd" else "word")
    if level not in ("entity", "word"):
        raise ExportError(f"--level must be entity or word, got {level!r}")
    if fmt == "funsd-json" and info.get("schema", "funsd") != "funsd":
        raise ExportError(f"{folder} holds {info.get('schema')}-style data, which has no FUNSD entities; "
                          "export it as coco or jsonl")
    chosen = _select(folder, info, configs)
    dest = Path(dest) if dest is not None else default_destination(folder, fmt)
    _check_destination(dest, folder, overwrite)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = partial_folder(dest)  # a killed export's leftover beside dest is removed first
    counts: dict[str, dict[str, int]] = {}
    try:
        for config in chosen:
            counts[config] = {}
            for split in _splits(folder, config):
                docs = _documents(folder, config, split)
                if fmt == "coco":
                    counts[config][split] = _write_coco(docs, tmp / config, split, level, _build_labels(info))
                else:
                    writer = {"funsd-json": _write_funsd, "jsonl": _write_jsonl}[fmt]
                    counts[config][split] = writer(docs, tmp / config, split, level)
            if fmt == "funsd-json":
                for name in FUNSD_SPLIT_DIRS.values():  # a FUNSD folder has both; the one not built stays empty
                    for sub in ("annotations", "images"):
                        (tmp / config / name / sub).mkdir(parents=True, exist_ok=True)
        marker = {"written_by": "dogood", "export_format": fmt, "level": level if fmt == "coco" else None,
                  "recipe": info.get("recipe"), "version": info.get("version"), "seed": info.get("seed"),
                  "box_level": info.get("box_level"), "dogood_version": info.get("dogood_version"),
                  "limit": info.get("limit"), "source": portable(info.get("source")), "documents": counts}
        _write(tmp / MARKER_FILE, json.dumps(marker, indent=2, sort_keys=True) + "\n")
        seal_partial(tmp)
        commit(tmp, dest)
    except OSError as exc:  # a full disk, a quota: the file it was writing, as it would have been named
        remove_tree(tmp)
        name = str(exc.filename or "")
        shown = dest / Path(name).relative_to(tmp) if name.startswith(str(tmp)) else (name or dest)
        raise ExportError(f"cannot write {shown}: {exc.strerror or exc} (nothing was exported; {dest} is as it "
                          "was)") from None
    except BaseException:
        remove_tree(tmp)
        raise
    return {"path": dest, "configs": counts}


# -- what to export -----------------------------------------------------------------------------------------
def _read_info(folder: Path) -> dict:
    """``dogood_build.json``, checked: every config and split name it gives, and every ``data/`` folder and
    shard file name, is a safe name (:func:`dogood.core.fs.check_name`) before it becomes a path."""
    try:
        info = read_build_info(folder)
    except (OSError, FileRefused) as exc:
        raise ExportError(f"{folder}/dogood_build.json cannot be read ({getattr(exc, 'reason', exc)})") from None
    chains = info.get("chains") if isinstance(info, dict) else None
    if not isinstance(chains, dict):
        raise ExportError(f"{folder}/dogood_build.json has no 'chains' mapping")
    where = f"{folder}/dogood_build.json"
    for config in chains:
        _name(config, f"{where}: config name", config=True)
    for config, splits in (info.get("splits") or {}).items() if isinstance(info.get("splits"), dict) else ():
        _name(config, f"{where}: config name", config=True)
        for split in splits if isinstance(splits, dict) else ():
            _name(split, f"{where}: split name")
    data = folder / "data"
    for sub in sorted(data.iterdir()) if data.is_dir() else ():
        _name(sub.name, f"{folder}: folder data/", config=True)
    return info


def _name(name, what: str, config: bool = False) -> str:
    try:
        return check_name(name, what, config=config)
    except DogoodError as exc:
        raise ExportError(str(exc)) from None


def _select(folder: Path, info: dict, patterns: list[str] | None) -> list[str]:
    built = [c for c in info.get("chains", {}) if (folder / "data" / c).is_dir()]
    if not built:
        raise ExportError(f"{folder} has no data/<config> folders")
    if not patterns:
        return built
    found: set[str] = set()
    for pattern in (p.strip() for value in patterns for p in value.split(",")):
        if pattern:
            hits = set(fnmatch.filter(built, pattern))
            if not hits:
                raise ExportError(f"{folder} has no config matching {pattern!r}; it has {', '.join(built)}")
            found |= hits
    return [c for c in built if c in found]


def _splits(folder: Path, config: str) -> list[str]:
    names = sorted({p.name.split("-")[0] for p in (folder / "data" / config).glob("*.parquet")})
    return [_name(n, f"{folder}/data/{config}: split name (from a shard file's name)") for n in names]


def _documents(folder: Path, config: str, split: str):
    import datasets

    from dogood.sources.hf_dataset import HFDatasetSource

    enabled = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        source = HFDatasetSource(name=str(folder), config=config, split=split)
    finally:
        if enabled:
            datasets.enable_progress_bars()
    for doc_id in source.ids():
        yield source.load(doc_id)


def _check_destination(dest: Path, folder: Path, overwrite: bool) -> None:
    resolved, root = dest.resolve(), folder.resolve()
    if resolved == root or root in resolved.parents or resolved in root.parents:
        raise ExportError(f"--to {dest} overlaps the dataset folder {folder}; export beside it, e.g. the default "
                          f"{default_destination(folder, 'FORMAT')}")
    if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
        raise ExportError(f"--to {dest} exists and is not a folder; refusing to replace it")
    if dest.exists() and any(dest.iterdir()):
        try:
            ours = read_json(dest / MARKER_FILE, what=MARKER_FILE).get("written_by") == "dogood"
        except (OSError, AttributeError, FileRefused):
            ours = False
        if not ours:
            raise ExportError(f"--to {dest} exists and is not a dogood export (no {MARKER_FILE}); refusing to "
                              "replace it: move it away or pick another --to")
        if not overwrite:
            raise ExportError(f"--to {dest} already exists; pass --overwrite to replace it")


# -- files --------------------------------------------------------------------------------------------------
def file_stem(doc_id: str) -> str:
    """A file name for a document id: characters other than letters, digits, ``.``, ``_``, ``-`` become ``_``."""
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", doc_id)
    return "_" + stem if stem.startswith(".") or not stem else stem


def _page_bytes(doc: Document, jpeg_ok: bool) -> tuple[bytes, str]:
    """The page's stored bytes when PNG (or JPEG when ``jpeg_ok``), else a PNG of its pixels; with the suffix."""
    data = doc.image.encoded_bytes()
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return data, ".png"
    if jpeg_ok and data.startswith(b"\xff\xd8\xff"):
        return data, ".jpg"
    buf = io.BytesIO()
    Image.fromarray(doc.image.to_array()).save(buf, format="PNG")
    return buf.getvalue(), ".png"


class _Names:
    """File stems, refusing two documents of one split whose ids give the same file name."""

    def __init__(self, where: str):
        self.where, self.seen = where, {}

    def __call__(self, doc_id: str) -> str:
        stem = file_stem(doc_id)
        if self.seen.setdefault(stem, doc_id) != doc_id:
            raise ExportError(f"{self.where}: documents {self.seen[stem]!r} and {doc_id!r} map to the same file "
                              f"name {stem!r}")
        return stem


def _write_funsd(docs, config_dir: Path, split: str, level: str) -> int:
    from dogood.sources.funsd import document_to_funsd_json

    base = config_dir / FUNSD_SPLIT_DIRS.get(split, split)
    (base / "annotations").mkdir(parents=True, exist_ok=True)
    (base / "images").mkdir(parents=True, exist_ok=True)
    names, n = _Names(f"{config_dir.name} {split}"), 0
    for doc in docs:
        stem = names(doc.id)
        data, _ = _page_bytes(doc, jpeg_ok=False)
        _write(base / "images" / f"{stem}.png", data)
        _write(base / "annotations" / f"{stem}.json", json.dumps(document_to_funsd_json(doc), ensure_ascii=False))
        n += 1
    return n


def _write(path: Path, data: bytes | str) -> None:
    """Write one file of the export; a failure (a full disk) names it (:func:`dogood.core.fs.naming`)."""
    with naming(path):
        path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))


def _labels(doc: Document) -> list[str | None]:
    return [None if ent is None else ent.label for ent in doc.word_entity()]


def _write_page(doc: Document, base: Path, names: _Names) -> str:
    data, suffix = _page_bytes(doc, jpeg_ok=True)
    rel = f"images/{names(doc.id)}{suffix}"
    _write(base / rel, data)
    return rel


def _quad_polygon(word) -> list[list[float]]:
    """A word's quad (built with ``quads: true``) as a COCO polygon; none without one."""
    return [list(word.quad)] if word.quad is not None else []


def _build_labels(info: dict) -> tuple[str, ...]:
    """The entity labels of a FUNSD-style build (its ``labels``, else FUNSD's); none for other schemas."""
    if info.get("schema", "funsd") != "funsd":
        return ()
    return tuple(info.get("labels") or FUNSD_LABELS)


def _write_coco(docs, config_dir: Path, split: str, level: str, labels: tuple[str, ...] = ()) -> int:
    """Category ids: the build's entity labels first, 1..n in their order (so every config and split, and a
    ``coco_layout`` build of a COCO folder whose ids are 1..n, number them alike), then other names as met."""
    base = config_dir / split
    (base / "images").mkdir(parents=True, exist_ok=True)
    names = _Names(f"{config_dir.name} {split}")
    images, annotations = [], []
    categories = {name: k for k, name in enumerate(labels, start=1)}

    def category(name: str) -> int:
        return categories.setdefault(name, len(categories) + 1)

    for image_id, doc in enumerate(docs, start=1):
        entry = {"id": image_id, "file_name": _write_page(doc, base, names), "width": doc.width,
                 "height": doc.height, "dogood_id": doc.id}
        if doc.label:
            entry["label"] = doc.label
        images.append(entry)
        if level == "entity":
            items = [(doc.entity_box(ent), ent.label, doc.entity_text(ent), {"entity_id": ent.id},
                      _quad_polygon(doc.words[ent.word_ids[0]]) if len(ent.word_ids) == 1 else [])
                     for ent in doc.entities]
        else:
            items = [(w.box, label or "word", w.text, {"word_id": i}, _quad_polygon(w))
                     for i, (w, label) in enumerate(zip(doc.words, _labels(doc)))]
        for box, label, text, extra, polygon in items:
            if box is None:
                continue
            x0, y0, x1, y1 = box
            annotations.append({"id": len(annotations) + 1, "image_id": image_id, "category_id": category(label),
                                "bbox": [x0, y0, x1 - x0, y1 - y0], "area": (x1 - x0) * (y1 - y0), "iscrowd": 0,
                                "segmentation": polygon, "text": text, **extra})
    coco = {"info": {"description": f"dogood export of config {config_dir.name}, split {split}"},
            "images": images, "annotations": annotations,
            "categories": [{"id": i, "name": name, "supercategory": "text"} for name, i in categories.items()]}
    _write(base / "annotations.json", json.dumps(coco, ensure_ascii=False) + "\n")
    return len(images)


def _write_jsonl(docs, config_dir: Path, split: str, level: str) -> int:
    base = config_dir / split
    (base / "images").mkdir(parents=True, exist_ok=True)
    names, n = _Names(f"{config_dir.name} {split}"), 0
    with naming(base / "documents.jsonl"), open(base / "documents.jsonl", "w", encoding="utf-8") as fh:
        for doc in docs:
            record = {"id": doc.id, "image": _write_page(doc, base, names), "width": doc.width, "height": doc.height,
                      "words": [w.text for w in doc.words], "boxes": [list(w.box) for w in doc.words],
                      "labels": _labels(doc), "label": doc.label or None}
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            n += 1
    return n
