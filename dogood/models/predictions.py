"""Predictions of models run elsewhere: one JSON object per line, keyed by document id.

Each line holds ``id`` and, by task:

- token classification (FUNSD-style): ``ner_tags``, one IOB tag name per
  token (the words with non-blank text, in the dataset's ``tokens`` order),
  and optionally ``confidences``, one number in [0, 1] per token;
- document classification (RVL-CDIP-style): ``label``, a class name (or its
  index), and optionally ``confidence``;
- question answering (DocVQA-style): ``answers``, a mapping of question id to
  answer text;
- OCR (``dogood eval --task ocr``): ``words``, a list of ``{"text": ...,
  "box": [x0, y0, x1, y1], "confidence": ...}`` (pixel boxes on the page as
  given; ``confidence`` optional, in [0, 1]).

:func:`read_predictions` reads and checks a file on its own;
:func:`check_against` checks it against the documents it claims to score.
Every error names the file, the line and the document.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from dogood.core import fs
from dogood.core.document import Document
from dogood.core.errors import DogoodError
from dogood.core.schema import FUNSD_NER_TAGS, RVL_CDIP_CLASSES, iob_tags

TASKS = ("token", "document", "qa", "ocr")


class PredictionError(DogoodError):
    """A predictions file does not fit the documents or its own format."""


@dataclass(frozen=True)
class Prediction:
    """A model's output for one document."""

    id: str
    tags: tuple[str, ...] | None = None
    confidences: tuple[float, ...] | None = None
    label: str | None = None
    confidence: float | None = None
    answers: dict[str, str] | None = None
    #: OCR: ``(text, (x0, y0, x1, y1), confidence or None)`` per word read, pixel boxes.
    words: tuple[tuple[str, tuple[int, int, int, int], float | None], ...] | None = None
    #: Layout: ``(category id, (x0, y0, x1, y1), score)`` per detected region, pixel boxes
    #: (:class:`dogood.models.coco_results.CocoResults`).
    regions: tuple[tuple[int, tuple[float, float, float, float], float], ...] | None = None


def read_predictions(path: str | Path, task: str) -> dict[str, Prediction]:
    """Read a JSONL predictions file for ``task`` (``token``, ``document`` or ``qa``)."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {', '.join(TASKS)}, got {task!r}")
    path = Path(path)
    if not path.exists():
        raise PredictionError(f"predictions file {path} does not exist")
    out: dict[str, Prediction] = {}
    try:
        with io.TextIOWrapper(fs.open_file(path, limit="jsonl_bytes", what="predictions file"), encoding="utf-8") as fh:
            _read_lines(fh, path, task, out)
    except fs.FileRefused as exc:
        raise PredictionError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise PredictionError(f"predictions file {path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise PredictionError(f"predictions file {path}: cannot read it ({exc.strerror or exc})") from None
    return out


def _read_lines(fh, path: Path, task: str, out: dict[str, Prediction]) -> None:
    """Parse the lines of a predictions file into ``out``."""
    for n, line in enumerate(fh, 1):
        if not line.strip():
            continue
        where = f"{path}, line {n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PredictionError(f"{where}: not valid JSON ({exc})") from None
        except RecursionError:
            raise PredictionError(f"{where}: not valid JSON (nested too deeply)") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
            raise PredictionError(f"{where}: each line must be an object with a string 'id'")
        doc_id = obj["id"]
        where = f"{where} (document {doc_id!r})"
        if doc_id in out:
            raise PredictionError(f"{where}: a second prediction for the same document")
        out[doc_id] = _parse(obj, task, where)


def _parse(obj: dict, task: str, where: str) -> Prediction:
    if task == "token":
        tags = obj.get("ner_tags")
        if not isinstance(tags, list):
            raise PredictionError(f"{where}: 'ner_tags' must be a list of tag names")
        tags = tuple(FUNSD_NER_TAGS[t] if type(t) is int and 0 <= t < len(FUNSD_NER_TAGS)
                     else t if isinstance(t, str) else repr(t) for t in tags)
        bad = sorted({str(t) for t in tags if t not in FUNSD_NER_TAGS and not _iob_name(t)})
        if bad:
            raise PredictionError(f"{where}: tags that are neither FUNSD's {list(FUNSD_NER_TAGS)} (names or ids) nor "
                                  f"IOB names (O, B-X, I-X) of another label set: {', '.join(bad)}")
        conf = obj.get("confidences")
        if conf is not None:
            if not isinstance(conf, list):
                raise PredictionError(f"{where}: 'confidences' must be a list of numbers, one per tag")
            conf = tuple(_probability(c, where) for c in conf)
            if len(conf) != len(tags):
                raise PredictionError(f"{where}: {len(conf)} confidences for {len(tags)} tags")
        return Prediction(obj["id"], tags=tags, confidences=conf)
    if task == "document":
        label = obj.get("label")
        if isinstance(label, int) and 0 <= label < len(RVL_CDIP_CLASSES):
            label = RVL_CDIP_CLASSES[label]
        if label not in RVL_CDIP_CLASSES:
            raise PredictionError(f"{where}: label {label!r} is not one of the 16 RVL-CDIP classes")
        conf = obj.get("confidence")
        return Prediction(obj["id"], label=label, confidence=None if conf is None else _probability(conf, where))
    if task == "ocr":
        return Prediction(obj["id"], words=_ocr_words(obj.get("words"), where))
    answers = obj.get("answers")
    if not isinstance(answers, dict) or not all(isinstance(v, str) for v in answers.values()):
        raise PredictionError(f"{where}: 'answers' must map question ids to answer strings")
    return Prediction(obj["id"], answers={str(k): v for k, v in answers.items()})


def _ocr_words(words, where: str) -> tuple:
    if not isinstance(words, list):
        raise PredictionError(f"{where}: 'words' must be a list of {{text, box[, confidence]}} objects")
    out = []
    for k, w in enumerate(words):
        box = w.get("box") if isinstance(w, dict) else None
        if (not isinstance(w, dict) or not isinstance(w.get("text"), str) or not isinstance(box, list) or len(box) != 4
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in box)):
            raise PredictionError(f"{where}: word {k} must be an object with a string 'text' and a 'box' of 4 numbers")
        x0, y0, x1, y1 = (int(round(v)) for v in box)
        if x1 < x0 or y1 < y0:
            raise PredictionError(f"{where}: word {k} has a negative size: box {box}")
        conf = w.get("confidence")
        out.append((w["text"], (x0, y0, x1, y1), None if conf is None else _probability(conf, where)))
    return tuple(out)


def _iob_name(tag) -> bool:
    """An IOB tag name of any label set (data with labels other than FUNSD's): ``O``, ``B-X`` or ``I-X``."""
    return isinstance(tag, str) and (tag == "O" or (tag[:2] in ("B-", "I-") and len(tag) > 2 and " " not in tag))


def _probability(value, where: str) -> float:
    if isinstance(value, bool):
        raise PredictionError(f"{where}: confidence {value!r} is not a number")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise PredictionError(f"{where}: confidence {_short(value)} is not a number") from None
    except OverflowError:  # an integer such as 10**400, too large for a float
        raise PredictionError(f"{where}: confidence {_short(value)} is outside [0, 1]") from None
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise PredictionError(f"{where}: confidence {_short(value)} is outside [0, 1]")
    return number


def _short(value, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def check_against(predictions: dict[str, Prediction], docs: Iterable[Document], task: str, *, source: str = "predictions") -> None:
    """Raise :class:`PredictionError` unless ``predictions`` cover exactly ``docs`` with the right lengths."""
    docs = list(docs)
    ids = {d.id for d in docs}
    unknown = sorted(set(predictions) - ids)
    if unknown:
        raise PredictionError(f"{source}: predictions for unknown document id(s): {', '.join(unknown[:5])}"
                              + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""))
    missing = [d.id for d in docs if d.id not in predictions]
    if missing:
        raise PredictionError(f"{source}: no prediction for document(s): {', '.join(missing[:5])}"
                              + (f" and {len(missing) - 5} more" if len(missing) > 5 else ""))
    if task == "token":
        for doc in docs:
            n_tokens = len(iob_tags(doc)[0])
            got = len(predictions[doc.id].tags or ())
            if got != n_tokens:
                raise PredictionError(f"{source}: document {doc.id!r} has {n_tokens} tokens but {got} predicted tags")
    if task == "qa":
        for doc in docs:
            asked = {q.id for q in doc.qa}
            extra = sorted(set(predictions[doc.id].answers or {}) - asked)
            if extra:
                raise PredictionError(f"{source}: document {doc.id!r} has no question(s) {', '.join(extra)}")
