"""DocVQA (Mathew et al. 2021) in its official layout: page images, OCR, questions and answers.

One folder per split, as the RRC download unpacks::

    ROOT/{split}/{split}_v1.0.json      {"data": [{questionId, question, image, answers, ...}]}
    ROOT/{split}/documents/<page>.png   page images (``image`` in the JSON is relative to the split folder)
    ROOT/{split}/ocr_results/<page>.json  Microsoft Read OCR: recognitionResults[].lines[].words[]

One :class:`~dogood.core.document.Document` per page, with every question about
it as a :class:`~dogood.core.document.QAPair` (``id`` = ``questionId``). Words
come from the page's OCR file (each word's 8-number polygon becomes its
axis-aligned box, clipped to the page); a page without one is read with
Tesseract (``ocr=True``) or has no words. The test split has no answers:
its QA pairs have empty answer tuples. DocVQA is not redistributable: the
user downloads it from https://rrc.cvc.uab.es/?ch=17 and points ``--source``
at it (or ``$DOGOOD_DATA_DIR/docvqa``).

Files are read through :mod:`dogood.core.fs`: a page's ``image`` is a relative name inside the split folder
(absolute names, ``..`` and links out are refused), the JSON files are bounded in size and nesting, a page's OCR
in words (``Limits.page_words``, ``Limits.word_chars``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dogood.core import fs
from dogood.core.document import Document, PageImage, QAPair, Word
from dogood.core.errors import DocumentError, SourceError
from dogood.core.paths import data_dir


@dataclass
class DocVQASource:
    """DocVQA pages of one split, with their questions and answers.

    Parameters
    ----------
    root : the folder holding ``train/``, ``val/``, ``test/`` (default
        ``$DOGOOD_DATA_DIR/docvqa``).
    split : ``train``, ``val`` or ``test``.
    ocr : read a page with Tesseract when it has no OCR file.
    """

    root: str | Path | None = None
    split: str = "val"
    ocr: bool = True
    kind: str = field(default="docvqa", init=False)
    schema: str = field(default="docvqa", init=False)

    def __post_init__(self):
        if self.root is None:
            base = data_dir()
            self.root = base / "docvqa" if base else None
        if self.root is None or not Path(self.root).is_dir():
            raise SourceError(
                "DocVQA is not available offline and cannot be downloaded automatically: get it from "
                "https://rrc.cvc.uab.es/?ch=17 and pass its folder with --source (or put it in $DOGOOD_DATA_DIR/docvqa)"
            )
        self.root = Path(self.root)
        self.folder = self.root / self.split if (self.root / self.split).is_dir() else self.root
        self.qa_file = _find_qa_file(self.folder, self.split)
        try:
            data = fs.read_json(self.qa_file, what="DocVQA question file")
        except fs.MalformedFile as exc:
            raise SourceError(f"{self.qa_file}: not valid JSON ({exc.detail})") from None
        except fs.FileRefused as exc:
            raise SourceError(str(exc)) from None
        except OSError as exc:
            raise SourceError(f"{self.qa_file}: cannot read the question file ({exc.strerror or exc})") from None
        try:
            entries = data["data"] if isinstance(data, dict) else data
            pages: dict[str, dict[str, Any]] = {}
            for n, q in enumerate(entries):
                if not isinstance(q, dict) or "image" not in q or "question" not in q:
                    raise SourceError(f"{self.qa_file}: entry {n} needs 'image' and 'question'")
                try:
                    fs.relative_name(q["image"], "image", "the split folder")
                except fs.FileRefused as exc:
                    raise SourceError(f"{self.qa_file}: entry {n}: {exc.reason}") from None
                page_id = Path(q["image"]).stem
                page = pages.setdefault(page_id, {"image": q["image"], "qa": []})
                answers = q.get("answers") or []
                if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
                    raise SourceError(f"{self.qa_file}: entry {n} (question {q.get('questionId')}): 'answers' must be a list of strings")
                page["qa"].append(QAPair(str(q["question"]), tuple(answers), str(q.get("questionId", f"{page_id}-{len(page['qa'])}"))))
        except (KeyError, TypeError) as exc:
            raise SourceError(f"{self.qa_file}: not in the DocVQA format ({exc!r})") from None
        self._pages = pages

    def ids(self) -> list[str]:
        return sorted(self._pages)

    def load(self, doc_id: str) -> Document:
        page = self._pages.get(doc_id)
        if page is None:
            raise DocumentError("no such page in the DocVQA split", doc_id=doc_id, path=str(self.qa_file))
        try:
            image_path = fs.confine(page["image"], self.folder, "image")
        except fs.FileRefused as exc:
            raise DocumentError(exc.reason, doc_id=doc_id, path=str(self.qa_file)) from None
        if not image_path.exists():
            raise DocumentError("page image is missing", doc_id=doc_id, path=str(image_path))
        try:
            image = PageImage.from_file(image_path)
        except DocumentError as exc:
            raise DocumentError(exc.reason, doc_id=doc_id, path=exc.path) from None
        ocr_path = self.folder / "ocr_results" / f"{doc_id}.json"
        if ocr_path.exists():
            words = read_ocr_words(ocr_path, image.width, image.height, doc_id)
        elif self.ocr:
            from dogood.page.ocr import ocr_words

            words = ocr_words(image)
        else:
            words = ()
        return Document(doc_id, image, tuple(words), qa=tuple(page["qa"]), source=str(image_path))

    def describe(self) -> dict[str, Any]:
        return {"kind": "docvqa", "split": self.split, "root": os.fspath(self.root), "questions": str(self.qa_file.name),
                "name": "DocVQA", "license": "DocVQA terms (https://rrc.cvc.uab.es/?ch=17): research use",
                "license_name": "docvqa-terms", "license_link": "https://rrc.cvc.uab.es/?ch=17"}


def _find_qa_file(folder: Path, split: str) -> Path:
    for name in (f"{split}_v1.0_withQT.json", f"{split}_v1.0.json"):
        if (folder / name).is_file():
            return folder / name
    found = sorted(p for p in folder.glob("*.json") if split in p.name)
    if found:
        return found[0]
    raise SourceError(f"no DocVQA question file for split {split!r} in {folder} (expected {split}_v1.0.json)")


def read_ocr_words(path: Path, width: int, height: int, doc_id: str) -> list[Word]:
    """Words of a DocVQA OCR file (Microsoft Read: ``recognitionResults[].lines[].words[]``), boxes clipped to the page."""
    try:
        data = fs.read_json(path, what="OCR file")
    except fs.MalformedFile as exc:
        raise DocumentError(f"OCR file is not valid JSON ({exc.detail})", doc_id=doc_id, path=str(path)) from None
    except fs.FileRefused as exc:
        raise DocumentError(exc.reason, doc_id=doc_id, path=str(path)) from None
    except OSError as exc:
        raise DocumentError(f"cannot read the OCR file ({exc.strerror or exc})", doc_id=doc_id, path=str(path)) from None
    most = fs.limits().page_words
    try:
        words = []
        for result in data["recognitionResults"]:
            for line in result.get("lines", ()):
                for w in line.get("words", ()):
                    xs, ys = w["boundingBox"][0::2], w["boundingBox"][1::2]
                    x0, x1 = max(0, min(xs)), min(width, max(xs))
                    y0, y1 = max(0, min(ys)), min(height, max(ys))
                    if x1 < x0 or y1 < y0:
                        continue  # entirely off the page
                    words.append(Word(str(w["text"]), (x0, y0, x1, y1)))
                    if len(words) > most:
                        break
        fs.check_words([w.text for w in words])
        return words
    except fs.FileRefused as exc:
        raise DocumentError(exc.reason, doc_id=doc_id, path=str(path)) from None
    except (KeyError, TypeError, ValueError) as exc:
        raise DocumentError(f"OCR file is not in the Microsoft Read format ({exc!r})", doc_id=doc_id, path=str(path)) from None
