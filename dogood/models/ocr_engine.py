"""OCR engines as models (``task == "ocr"``): they read the page's pixels and return words with boxes.

- :class:`TesseractEngine` (``--model tesseract``): Tesseract through
  :func:`dogood.page.ocr.ocr_records` (in-process or the binary, cached per
  image); a word's confidence is Tesseract's 0-100 confidence over 100.
- :class:`RapidOCREngine` (``--model rapidocr``): RapidOCR 3.x, PaddleOCR's
  PP-OCR detection and recognition networks on ONNX Runtime, whose weights
  install inside the ``rapidocr`` wheel (``pip install "dogood[ocr-neural]"``),
  so it runs offline. The bundled models are kept (choosing others would
  download them); the angle classifier is off (upright scans). Words are
  RapidOCR's own word boxes (``return_word_box=True``: a text line split at
  spaces, each word's box from the recogniser's character columns); the
  axis-aligned box of each word's quadrilateral, clipped to the page. A word's
  confidence is RapidOCR's word score. Results are cached like Tesseract's,
  keyed by the image's bytes, the rapidocr version and the settings.

An engine sees only the image; ablating text or layout changes nothing it is
given, so it declares the image ablation only. Options (``dogood eval --ocr-option KEY=VALUE``,
:func:`load_engine`) are recorded in the engine's ``options`` and ``description``, which the report prints.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dogood.core import fs
from dogood.core.document import Document, PageImage
from dogood.core.errors import ModelError
from dogood.core.paths import cache_dir, write_atomic
from dogood.models.predictions import Prediction

#: Names ``--model`` takes for an OCR engine.
ENGINES = ("tesseract", "rapidocr")

_RAPID_HINT = 'pip install "dogood[ocr-neural]"'


def _unique(docs: Sequence[Document]) -> None:
    seen: set[str] = set()
    for doc in docs:
        if doc.id in seen:
            raise ModelError(f"document id {doc.id!r} given twice: predictions are keyed by id")
        seen.add(doc.id)


class TesseractEngine:
    """Tesseract as an OCR model: the words it reads on each page (:func:`dogood.page.ocr.ocr_records`)."""

    task = "ocr"
    sees = frozenset({"image"})
    ablations = frozenset({"image"})

    def __init__(self, lang: str = "eng", config: str = "", options: dict[str, str] | None = None):
        from dogood.core.errors import SourceError
        from dogood.page.ocr import tesseract_version

        self.lang, self.config = lang, config
        self.options = dict(options or {})
        try:
            self.version = tesseract_version()
        except SourceError as exc:
            raise ModelError(str(exc)) from None
        self.name = "tesseract"
        self.description = f"Tesseract {self.version} (lang {lang}{', config ' + config if config else ''})"

    def read(self, image: PageImage) -> tuple[tuple[str, tuple[int, int, int, int], float], ...]:
        """The words on one page: ``(text, box, confidence in [0, 1])``."""
        from dogood.page.ocr import ocr_records

        return tuple((r["text"], tuple(int(v) for v in r["box"]), min(1.0, max(0.0, float(r["conf"]) / 100.0)))
                     for r in ocr_records(image, lang=self.lang, config=self.config))

    def predict(self, docs: Sequence[Document]) -> dict[str, Prediction]:
        docs = list(docs)
        _unique(docs)
        return {d.id: Prediction(d.id, words=self.read(d.image)) for d in docs}

    def __repr__(self) -> str:
        return f"TesseractEngine({self.description})"


class RapidOCREngine:
    """RapidOCR 3.x (PP-OCR on ONNX Runtime, weights inside the wheel) as an OCR model."""

    task = "ocr"
    sees = frozenset({"image"})
    ablations = frozenset({"image"})
    CACHE_FORMAT = 1

    def __init__(self, threads: int = 1, cache: bool | str | Path = True):
        self.options = {"threads": str(threads)} if threads != 1 else {}
        try:
            from importlib.metadata import version

            import rapidocr
        except ImportError:
            raise ModelError(f"the rapidocr OCR engine is not installed: {_RAPID_HINT}") from None
        self.version = version("rapidocr")
        if not self.version.startswith("3."):
            raise ModelError(f"dogood reads RapidOCR 3.x word boxes; rapidocr {self.version} is installed: {_RAPID_HINT}")
        self._module = rapidocr
        self.threads = int(threads)
        self.settings = {"use_cls": False, "return_word_box": True, "threads": self.threads}
        self.cache = cache
        self._engine = None
        self.name = "rapidocr"
        self.description = (f"RapidOCR {self.version} (its bundled PP-OCR det/rec ONNX models, angle classifier off"
                            f"{f', {self.threads} threads' if self.threads != 1 else ''})")

    def _ocr(self):
        if self._engine is None:
            params = {"Global.log_level": "error",
                      "EngineConfig.onnxruntime.intra_op_num_threads": self.threads,
                      "EngineConfig.onnxruntime.inter_op_num_threads": 1}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._engine = self._module.RapidOCR(params=params)
        return self._engine

    def __getstate__(self) -> dict[str, Any]:  # the engine itself is rebuilt in each process
        return {"threads": self.threads, "cache": self.cache}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)

    def _cache_path(self, image: PageImage) -> Path | None:
        if self.cache is False or self.cache is None:
            return None
        root = cache_dir() / "ocr-rapidocr" if self.cache is True else Path(self.cache)
        h = hashlib.sha256(hashlib.sha256(image.encoded_bytes()).digest())
        h.update(json.dumps([self.CACHE_FORMAT, self.version, self.settings], sort_keys=True).encode("utf-8"))
        key = h.hexdigest()
        return root / key[:2] / f"{key}.json"

    def read(self, image: PageImage) -> tuple[tuple[str, tuple[int, int, int, int], float], ...]:
        """The words on one page: ``(text, box, score)``, in RapidOCR's line order."""
        path = self._cache_path(image)
        if path is not None and path.is_file():
            try:
                entry = fs.read_json(path, what="OCR cache file")
                return tuple((w[0], tuple(w[1]), float(w[2])) for w in entry["words"])
            except (OSError, ValueError, KeyError, TypeError, IndexError, fs.FileRefused):
                pass  # an unreadable entry is recomputed
        pixels = image.to_array()
        if pixels.ndim == 3:
            pixels = np.ascontiguousarray(pixels[:, :, ::-1])  # RapidOCR reads 3-channel arrays as BGR (OpenCV's order)
        out = self._ocr()(pixels, use_cls=False, return_word_box=True)
        words = []
        w, h = image.width, image.height
        for line in getattr(out, "word_results", None) or ():
            for text, score, quad in line:
                if not str(text).strip():
                    continue
                q = np.asarray(quad, dtype=np.float64).reshape(-1, 2)
                x0, y0 = int(np.clip(np.floor(q[:, 0].min()), 0, w)), int(np.clip(np.floor(q[:, 1].min()), 0, h))
                x1, y1 = int(np.clip(np.ceil(q[:, 0].max()), 0, w)), int(np.clip(np.ceil(q[:, 1].max()), 0, h))
                words.append((str(text), (x0, y0, x1, y1), float(min(1.0, max(0.0, score)))))
        if path is not None:
            try:
                write_atomic(path, json.dumps({"format": self.CACHE_FORMAT, "rapidocr": self.version,
                                               "settings": self.settings, "words": words}, ensure_ascii=False))
            except OSError as exc:  # a read-only or full cache must not stop an evaluation
                warnings.warn(f"could not write the OCR cache file {path}: {exc}", stacklevel=2)
        return tuple(words)

    def predict(self, docs: Sequence[Document]) -> dict[str, Prediction]:
        docs = list(docs)
        _unique(docs)
        return {d.id: Prediction(d.id, words=self.read(d.image)) for d in docs}

    def __repr__(self) -> str:
        return f"RapidOCREngine({self.description})"


#: The options each engine takes (``--ocr-option KEY=VALUE``); Tesseract's other keys are its ``-c`` variables.
ENGINE_OPTIONS = {"tesseract": ("lang", "psm", "oem", "any -c variable (preserve_interword_spaces=1, ...)"),
                  "rapidocr": ("threads",)}


def parse_options(values) -> dict[str, str]:
    """``["psm=11", "lang=deu"]`` -> ``{"psm": "11", "lang": "deu"}``; a value without ``=`` is refused."""
    out: dict[str, str] = {}
    for value in values or ():
        key, sep, val = str(value).partition("=")
        key, val = key.strip(), val.strip()
        if not sep or not key or not val or any(c.isspace() for c in key + val):
            raise ModelError(f"--ocr-option {value!r}: write KEY=VALUE (e.g. psm=11), without spaces")
        out[key] = val
    return out


def load_engine(name: str, **options: str) -> TesseractEngine | RapidOCREngine:
    """The OCR engine ``name`` (:data:`ENGINES`) with its ``options`` (:data:`ENGINE_OPTIONS`): Tesseract's ``lang``,
    ``psm`` and ``oem`` become its language and ``--psm``/``--oem`` flags, any other key a ``-c KEY=VALUE``
    variable; RapidOCR takes ``threads``."""
    options = {str(k): str(v) for k, v in options.items()}
    bad = [k for k, v in options.items() if not v or any(c.isspace() or c in "\"'" for c in k + v)]
    if bad:
        raise ModelError(f"OCR option(s) {', '.join(bad)}: a key and a value without spaces or quotes")
    if name == "tesseract":
        import re

        for key in ("psm", "oem"):
            if key in options and not re.fullmatch(r"[0-9]{1,2}", options[key]):
                raise ModelError(f"OCR option {key}={options[key]}: Tesseract's --{key} takes a number")
        flags = [f"--{k} {options[k]}" for k in ("psm", "oem") if k in options]
        flags += [f"-c {k}={v}" for k, v in options.items() if k not in ("psm", "oem", "lang")]
        return TesseractEngine(lang=options.get("lang", "eng"), config=" ".join(flags), options=options)
    if name == "rapidocr":
        unknown = sorted(set(options) - {"threads"})
        if unknown:
            raise ModelError(f"RapidOCR takes no option {', '.join(unknown)} (it takes threads)")
        threads = options.get("threads", "1")
        if not threads.isdigit() or not 1 <= int(threads) <= 256:
            raise ModelError(f"OCR option threads={threads}: a whole number of threads, 1 to 256")
        return RapidOCREngine(threads=int(threads))
    raise ModelError(f"unknown OCR engine {name!r}; dogood knows {', '.join(ENGINES)}")
