"""FUNSD in its official layout (Jaume et al. 2019, ``funsd-dataset.txt``).

``dataset/{training_data,testing_data}/{images,annotations}``: one PNG and one
JSON per form. The JSON's ``form`` list holds entities with ``id``, ``label``
(header, question, answer, other), ``words`` (``text`` + ``box``) and
``linking`` pairs. Everything is kept: words become the document's words in
JSON order (entity by entity), entities keep their ids, labels and links.
Empty words are kept in the record; the writer leaves them out of the
training columns, as the Hub's FUNSD loaders do. An entity's text and box are
not stored: they are derived from its words (the JSON's entity text differs
from its words joined by spaces in 264 of 9,743 entities, in all but 6 only
in spacing),
so shifts that change words cannot leave them stale.

Files are read through :mod:`dogood.core.fs`: regular files only (a FIFO or a device named like an annotation is an
error naming it, never a wait), an annotation at most ``Limits.json_bytes`` nested at most ``Limits.json_depth``,
a form of at most ``Limits.page_words`` words of at most ``Limits.word_chars`` characters each.
"""

from __future__ import annotations

import hashlib
import math
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dogood.core import fs
from dogood.core.document import Document, Entity, PageImage, Word
from dogood.core.downloads import download, extract_zip
from dogood.core.errors import DocumentError, SourceError
from dogood.core.paths import cache_dir, data_dir
from dogood.core.progress import one_time_step
from dogood.core.schema import FUNSD_LABELS, label_order  # noqa: F401 (FUNSD_LABELS: imported from here too)

FUNSD_URL = "https://guillaumejaume.github.io/FUNSD/dataset.zip"
FUNSD_SHA256 = "c31735649e4f441bcbb4fd0f379574f7520b42286e80b01d80b445649d54761f"
SPLIT_DIRS = {"train": "training_data", "test": "testing_data"}
#: :meth:`FunsdSource.content_sha256` of each split of the official release (dataset.zip, sha256 FUNSD_SHA256).
OFFICIAL_CONTENT_SHA256 = {
    "test": "69f8fceccf6fb9d9abb77400556b003c7a715a0303b9985edbed911cd6041b0c",
    "train": "ea75917d274dadf3fcb138d97b053c92969a5eeb115e42f4c861e36c71444c38",
}


def _looks_like_funsd(path: Path) -> bool:
    """A FUNSD-layout folder: ``training_data/annotations`` or ``testing_data/annotations`` (a test-only or
    train-only folder is one; the split asked for must be there, :class:`FunsdSource` checks)."""
    return any((path / d / "annotations").is_dir() for d in SPLIT_DIRS.values())


def find_funsd_root(path: str | Path | None = None, *, url: str = FUNSD_URL, sha256: str = FUNSD_SHA256) -> Path:
    """The FUNSD ``dataset`` folder: ``path``, else ``$DOGOOD_DATA_DIR/funsd``, else the cache, else download.

    ``path`` may be the ``dataset`` folder itself or a folder that contains it.
    The download is the official zip, checked against its sha256, extracted
    into ``<cache>/funsd``.
    """
    if path is not None:
        path = Path(path)
        for candidate in (path, path / "dataset"):
            if _looks_like_funsd(candidate):
                return candidate
        raise SourceError(
            f"{path} is not a FUNSD folder: expected training_data/annotations or testing_data/annotations "
            "(the official dataset.zip layout)"
        )
    shared = data_dir()
    if shared is not None and _looks_like_funsd(shared / "funsd" / "dataset"):
        return shared / "funsd" / "dataset"
    cached = cache_dir() / "funsd" / "dataset"
    if _looks_like_funsd(cached):
        return cached
    try:
        with one_time_step(f"downloading FUNSD ({url})", cached_in=cached):
            archive = download(url, cache_dir() / "downloads" / "funsd-dataset.zip", sha256)
    except SourceError as exc:
        raise SourceError(
            f"FUNSD was not found locally and could not be downloaded: {exc}. "
            "Pass the FUNSD dataset folder with --source PATH or set DOGOOD_DATA_DIR."
        ) from None
    extracted = extract_zip(archive, cache_dir() / "funsd" / f".extract-{os.getpid()}")
    try:
        if not _looks_like_funsd(extracted / "dataset"):
            raise SourceError(f"{archive}: the archive has no dataset/training_data and dataset/testing_data folders")
        (extracted / "dataset").rename(cached)
    finally:
        shutil.rmtree(extracted, ignore_errors=True)
    return cached


@dataclass
class FunsdSource:
    """Forms of one FUNSD split (``train`` or ``test``) as documents.

    Parameters
    ----------
    root : the FUNSD ``dataset`` folder; found by :func:`find_funsd_root` when ``None``. Any folder of
        FUNSD's layout works (CORD, SROIE or XFUND converted to FUNSD JSON); only the split read needs
        its folder (``testing_data/`` for ``test``).
    split : ``"train"`` or ``"test"``.
    labels : the entity labels, in tag order (``other`` is ``O``); a label outside them is an error
        naming the document. ``None``: the labels found in the split's annotations
        (:meth:`entity_labels`).
    """

    root: str | Path | None = None
    split: str = "test"
    labels: list[str] | None = None
    kind: str = field(default="funsd", init=False)
    schema: str = field(default="funsd", init=False)

    def __post_init__(self):
        if self.split not in SPLIT_DIRS:
            raise SourceError(f"FUNSD has splits {sorted(SPLIT_DIRS)}, not {self.split!r}")
        if self.labels is not None:
            if isinstance(self.labels, str) or not isinstance(self.labels, (list, tuple)) or not all(
                    isinstance(label, str) and label for label in self.labels):
                raise SourceError(f"the FUNSD source's labels must be a list of label names, got {self.labels!r}")
            self.labels = list(self.labels)
        self.root = find_funsd_root(self.root)
        self._dir = Path(self.root) / SPLIT_DIRS[self.split]
        if not (self._dir / "annotations").is_dir():
            raise SourceError(f"{self.root} has no {SPLIT_DIRS[self.split]}/annotations folder, so it has no "
                              f"{self.split!r} split (FUNSD's layout: training_data/ for train, testing_data/ for test)")
        self._found_labels: tuple[str, ...] | None = None

    def entity_labels(self) -> tuple[str, ...]:
        """The entity labels of this split, in tag order: the declared ``labels``, else those its annotations use
        (:func:`dogood.core.schema.label_order`: FUNSD's order when they are all FUNSD's, else sorted). Unreadable
        annotations are passed over here; loading their document reports them."""
        if self.labels is not None:
            return tuple(self.labels)
        if self._found_labels is None:
            found = set()
            for doc_id in self.ids():
                try:
                    form = _read_json(self.annotation_path(doc_id), doc_id).get("form")
                except (DocumentError, AttributeError):
                    continue
                for item in form if isinstance(form, list) else ():
                    label = item.get("label") if isinstance(item, dict) else None
                    if _usable_label(label):
                        found.add(label)
            self._found_labels = label_order(found)
        return self._found_labels

    def ids(self) -> list[str]:
        return sorted(p.stem for p in (self._dir / "annotations").glob("*.json"))

    def annotation_path(self, doc_id: str) -> Path:
        return self._dir / "annotations" / f"{doc_id}.json"

    def image_path(self, doc_id: str) -> Path:
        return self._dir / "images" / f"{doc_id}.png"

    def load(self, doc_id: str) -> Document:
        ann = self.annotation_path(doc_id)
        try:
            image = PageImage.from_file(self.image_path(doc_id))
        except DocumentError as exc:
            raise DocumentError(exc.reason, doc_id=doc_id, path=exc.path) from None
        return parse_funsd(doc_id, _read_json(ann, doc_id), image, source=str(ann), labels=self.labels)

    def content_sha256(self) -> str:
        """A sha256 over the files this split reads: each annotation and image, by relative path and content."""
        digest = hashlib.sha256()
        for doc_id in self.ids():
            for path, limit in ((self.annotation_path(doc_id), "json_bytes"), (self.image_path(doc_id), "image_bytes")):
                try:
                    data = fs.read_bytes(path, limit=limit)
                except (OSError, fs.FileRefused):
                    data = b""  # a missing or refused file is reported when its document is loaded
                name = os.fsencode(path.relative_to(self._dir))  # the file name's bytes, whatever they are
                digest.update(name + b"\0" + hashlib.sha256(data).hexdigest().encode("ascii") + b"\n")
        return digest.hexdigest()

    def describe(self) -> dict[str, Any]:
        """What the card says of the source: the official release only when the files read are its files."""
        content = self.content_sha256()
        if content != OFFICIAL_CONTENT_SHA256[self.split]:
            return {
                "kind": "funsd",
                "split": self.split,
                "name": "a FUNSD-layout folder whose files differ from the official FUNSD release",
                "content_sha256": content,
                "citation": "Jaume, Ekenel, Thiran. FUNSD: A Dataset for Form Understanding in Noisy Scanned Documents. ICDAR-OST 2019.",
                "license": "the terms of the folder's owner (FUNSD's own: non-commercial research and education use)",
                "license_name": "funsd-derived-folder",
            }
        return {
            "kind": "funsd",
            "split": self.split,
            "name": "FUNSD",
            "url": FUNSD_URL,
            "sha256": FUNSD_SHA256,
            "content_sha256": content,
            "citation": "Jaume, Ekenel, Thiran. FUNSD: A Dataset for Form Understanding in Noisy Scanned Documents. ICDAR-OST 2019.",
            "license": "FUNSD terms: non-commercial research and education use",
            "license_name": "funsd-research-and-education",
            "license_link": "https://guillaumejaume.github.io/FUNSD/",
        }


def _read_json(path: Path, doc_id: str) -> Any:
    """An annotation through the one reader (:func:`dogood.core.fs.read_json`), every failure a
    :class:`DocumentError` naming the document and the file."""
    try:
        return fs.read_json(path, what="annotation")
    except FileNotFoundError:
        raise DocumentError("annotation file not found", doc_id=doc_id, path=str(path)) from None
    except fs.MalformedFile as exc:
        raise DocumentError(f"malformed JSON ({exc.detail})", doc_id=doc_id, path=str(path)) from None
    except fs.FileRefused as exc:
        raise DocumentError(exc.reason, doc_id=doc_id, path=str(path)) from None
    except OSError as exc:
        raise DocumentError(f"cannot read the annotation ({exc.strerror or exc})", doc_id=doc_id,
                            path=str(path)) from None


def _usable_label(label: Any) -> bool:
    """An entity label that can name IOB tags: a non-empty string without spaces, not ``O``."""
    return isinstance(label, str) and bool(label) and not any(ch.isspace() for ch in label) and label != "O"


def parse_funsd(doc_id: str, annotation: Any, image: PageImage, *, source: str | None = None,
                labels: list[str] | tuple[str, ...] | None = None) -> Document:
    """Turn one parsed FUNSD JSON annotation into a :class:`Document`; ``labels``, when given, are the only
    entity labels allowed."""

    def fail(message: str) -> DocumentError:
        return DocumentError(message, doc_id=doc_id, path=source)

    if not isinstance(annotation, dict) or not isinstance(annotation.get("form"), list):
        raise fail("expected a JSON object with a 'form' list")
    words: list[Word] = []
    entities: list[Entity] = []
    most = fs.limits().page_words
    for k, item in enumerate(annotation["form"]):
        try:
            label = item["label"]
            ent_id = _whole(item["id"], "id")
            raw_words = item["words"]
            links = tuple((_whole(a, "linking"), _whole(b, "linking")) for a, b in item.get("linking", []))
            if not isinstance(raw_words, list):
                raise TypeError(f"'words' must be a list, got {type(raw_words).__name__}")
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            raise fail(f"entity {k} is malformed ({exc!r})") from None
        if not _usable_label(label):
            raise fail(f"entity {ent_id} has label {label!r}; a label is a non-empty name without spaces, not 'O'")
        if labels is not None and label not in labels:
            raise fail(f"entity {ent_id} has unknown label {label!r}; the source's labels are {', '.join(labels)}")
        word_ids = []
        for j, w in enumerate(raw_words):
            try:
                raw_box, text = w["box"], w["text"]
            except (KeyError, TypeError) as exc:
                raise fail(f"entity {ent_id} has a malformed word ({exc!r})") from None
            if not isinstance(text, str):
                raise fail(f"entity {ent_id} word {j}: text must be a string, got {text!r}")
            if not isinstance(raw_box, list) or not all(_is_number(v) for v in raw_box):
                raise fail(f"entity {ent_id} word {j} ({text!r}): box must be a list of 4 finite numbers, got {raw_box!r}")
            if len(raw_box) != 4:
                raise fail(f"entity {ent_id} has a word box of {len(raw_box)} numbers")
            box = tuple(int(v) for v in raw_box)
            words.append(Word(text, box))
            word_ids.append(len(words) - 1)
        entities.append(Entity(ent_id, label, tuple(word_ids), links))
        if len(words) > most:  # a form of a million words stops at the first entity beyond the limit
            break
    try:
        fs.check_words([w.text for w in words])
    except fs.FileRefused as exc:
        raise fail(exc.reason) from None
    return Document(id=doc_id, image=image, words=tuple(words), entities=tuple(entities), source=source)


def _whole(value: Any, what: str) -> int:
    """An entity id: a JSON integer or a string of one (never a boolean or a float such as 1.5)."""
    if isinstance(value, bool) or isinstance(value, float):
        raise ValueError(f"{what} must be an integer, got {value!r}")
    return int(value)


def _is_number(value: Any) -> bool:
    """A finite JSON number (not a boolean, a string, NaN or infinity)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def document_to_funsd_json(doc: Document) -> dict[str, Any]:
    """The official FUNSD JSON for a document (entity boxes are the union of word boxes)."""
    form = []
    for ent in doc.entities:
        box = doc.entity_box(ent)
        form.append(
            {
                "box": list(box) if box else [0, 0, 0, 0],
                "text": doc.entity_text(ent),
                "label": ent.label,
                "words": [{"box": list(doc.words[i].box), "text": doc.words[i].text} for i in ent.word_ids],
                "linking": [list(p) for p in ent.links],
                "id": ent.id,
            }
        )
    return {"form": form}
