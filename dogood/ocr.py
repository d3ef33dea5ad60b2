"""Tesseract OCR (through pytesseract) with an on-disk cache, so each image is read once.

:func:`ocr_words` returns the words Tesseract finds on a page, with absolute
pixel boxes clipped to the page, in Tesseract's reading order (block,
paragraph, line, word: the row order of ``image_to_data``).

Results are cached as JSON under ``<cache>/ocr/<first 2 hex>/<key>.json``
where ``key`` is the sha256 of the image's encoded bytes, the Tesseract
version, the language and the config string. A cache file holds every word
with its confidence and its block/paragraph/line/word numbers; the
:class:`~dogood.document.Word` records returned keep only text and box.
Files are written atomically (temporary file + ``os.replace``), so parallel
workers never read a half-written entry; an unreadable entry is recomputed.

Tesseract runs single-threaded (``OMP_THREAD_LIMIT=1`` in the environment
pytesseract gives its subprocesses, unless the user set it): with OpenMP
threads a page took 3-4x longer on a 2-core machine, with identical output.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import warnings
from collections import ChainMap
from pathlib import Path
from typing import Any

from dogood.boxes import clip_box
from dogood.document import PageImage, Word
from dogood.errors import DocumentError, SourceError
from dogood.paths import cache_dir, write_atomic

CACHE_FORMAT = 1
#: Pages Tesseract read in this process (cache misses) and the seconds it took: :func:`tesseract_runs`.
_RUNS = {"pages": 0, "seconds": 0.0}

_INSTALL_HINT = (
    "install it with `sudo apt-get install tesseract-ocr` (Debian/Ubuntu; "
    "add tesseract-ocr-<lang> for languages other than English), "
    "or turn OCR off for this source (ocr: false)"
)


def _pytesseract():
    try:
        import pytesseract
    except ImportError:  # pragma: no cover - a declared dependency
        raise SourceError("OCR needs the pytesseract package: pip install pytesseract") from None
    module = pytesseract.pytesseract
    if getattr(module, "environ", None) is os.environ:
        # Tesseract's OpenMP threads make one page 3-4x slower on a busy or
        # small machine and fight each other across worker processes; run it
        # single-threaded unless the user set OMP_THREAD_LIMIT. Only the
        # environment pytesseract hands to its tesseract subprocesses changes
        # (a live view of os.environ with this one default).
        module.environ = ChainMap(os.environ, {"OMP_THREAD_LIMIT": "1"})
    return pytesseract


def tesseract_version() -> str:
    """The installed Tesseract's version (e.g. ``"5.3.0"``).

    Raises :class:`SourceError` with installation advice when the
    ``tesseract`` binary cannot be found.
    """
    pytesseract = _pytesseract()
    try:
        return str(pytesseract.get_tesseract_version(cached=True))
    except pytesseract.TesseractNotFoundError:
        cmd = pytesseract.pytesseract.tesseract_cmd
        raise SourceError(f"Tesseract OCR is not installed (no {cmd!r} on PATH): {_INSTALL_HINT}") from None


def ocr_cache_key(image: PageImage, *, lang: str = "eng", config: str = "", version: str | None = None) -> str:
    """The cache key of an OCR run: sha256 over the image bytes, Tesseract version, lang and config."""
    version = tesseract_version() if version is None else version
    h = hashlib.sha256()
    h.update(hashlib.sha256(image.encoded_bytes()).digest())
    h.update(json.dumps([CACHE_FORMAT, version, lang, config]).encode("utf-8"))
    return h.hexdigest()


def ocr_cache_path(
    image: PageImage, *, lang: str = "eng", config: str = "", cache: bool | str | Path = True
) -> Path | None:
    """Where :func:`ocr_words` keeps (or would keep) this image's result; ``None`` when ``cache`` is False."""
    root = _cache_root(cache)
    if root is None:
        return None
    key = ocr_cache_key(image, lang=lang, config=config)
    return root / key[:2] / f"{key}.json"


def ocr_words(
    image: PageImage, *, lang: str = "eng", config: str = "", cache: bool | str | Path = True
) -> tuple[Word, ...]:
    """OCR a page with Tesseract: words with non-empty (stripped) text and absolute pixel boxes.

    Parameters
    ----------
    image : the page; it is decoded with :meth:`PageImage.to_pil`.
    lang : Tesseract language(s), e.g. ``"eng"`` or ``"eng+fra"``.
    config : extra Tesseract command-line options, e.g. ``"--psm 6"``.
    cache : ``True`` for ``<cache_dir()>/ocr``, a folder to use instead, or ``False`` for none.

    Boxes are ``(x0, y0, x1, y1)`` clipped to the page, in Tesseract's
    reading order. Raises :class:`SourceError` when Tesseract or the language
    data is missing, :class:`DocumentError` when Tesseract fails on the image.
    """
    return tuple(Word(r["text"], tuple(r["box"])) for r in ocr_records(image, lang=lang, config=config, cache=cache))


def ocr_records(
    image: PageImage, *, lang: str = "eng", config: str = "", cache: bool | str | Path = True
) -> list[dict[str, Any]]:
    """What :func:`ocr_words` returns, as the cached dicts.

    Keys: ``text``, ``box`` (list), ``conf`` (Tesseract's 0-100 confidence),
    ``block``, ``par``, ``line``, ``word`` (Tesseract's numbering).
    """
    version = tesseract_version()
    root = _cache_root(cache)
    path = None
    if root is not None:
        key = ocr_cache_key(image, lang=lang, config=config, version=version)
        path = root / key[:2] / f"{key}.json"
        cached = _read_cache(path, key)
        if cached is not None:
            return cached
    start = time.perf_counter()
    records = _run_tesseract(image, lang=lang, config=config)
    _RUNS["pages"] += 1
    _RUNS["seconds"] += time.perf_counter() - start
    if path is not None:
        entry = {
            "format": CACHE_FORMAT,
            "key": key,
            "tesseract": version,
            "lang": lang,
            "config": config,
            "width": image.width,
            "height": image.height,
            "words": records,
        }
        try:
            write_atomic(path, json.dumps(entry, ensure_ascii=False, separators=(",", ":")))
        except OSError as exc:  # a read-only or full cache must not stop a build
            warnings.warn(f"could not write the OCR cache file {path}: {exc}", stacklevel=2)
    return records


def tesseract_runs() -> tuple[int, float]:
    """(pages Tesseract read, seconds it took) in this process so far: OCR results not found in the cache."""
    return _RUNS["pages"], _RUNS["seconds"]


def ocr_cache_folder(cache: bool | str | Path = True) -> Path | None:
    """The folder :func:`ocr_words` caches results in (``None`` when ``cache`` is False)."""
    return _cache_root(cache)


def report_tesseract_runs(pages: int, seconds: float, of: int | None = None) -> None:
    """The one progress line after OCR: how many pages Tesseract read (not from the cache) and how long it took."""
    if pages:
        from dogood.progress import say

        total = f" of {of}" if of is not None else ""
        say(f"OCR: Tesseract read {pages}{total} page(s) not yet in the cache in {seconds:.1f} s "
            f"(once; cached in {ocr_cache_folder()})")


# -- internals ------------------------------------------------------------------


def _cache_root(cache: bool | str | Path) -> Path | None:
    if cache is False or cache is None:
        return None
    if cache is True:
        return cache_dir() / "ocr"
    return Path(cache)


def _run_tesseract(image: PageImage, *, lang: str, config: str) -> list[dict[str, Any]]:
    pytesseract = _pytesseract()
    pil = image.to_pil()
    try:
        data = pytesseract.image_to_data(pil, lang=lang, config=config, output_type=pytesseract.Output.DICT)
    except pytesseract.TesseractNotFoundError:
        cmd = pytesseract.pytesseract.tesseract_cmd
        raise SourceError(f"Tesseract OCR is not installed (no {cmd!r} on PATH): {_INSTALL_HINT}") from None
    except pytesseract.TesseractError as exc:
        message = str(exc.message) if hasattr(exc, "message") else str(exc)
        if "Failed loading language" in message or "Could not initialize tesseract" in message:
            raise SourceError(
                f"Tesseract has no data for language {lang!r} ({message.strip()}): "
                f"install tesseract-ocr-{lang.split('+')[0]} (apt) or choose another lang"
            ) from None
        raise DocumentError(f"Tesseract failed ({message.strip()})", path=image.path) from None
    return _parse_data(data, image.width, image.height)


def _parse_data(data: dict[str, list], width: int, height: int) -> list[dict[str, Any]]:
    """Word rows (level 5) of ``image_to_data``'s dict, in its order, with clipped boxes."""
    records = []
    for i, level in enumerate(data["level"]):
        if int(level) != 5:
            continue
        text = str(data["text"][i]).strip()
        if not text:
            continue
        left, top = int(data["left"][i]), int(data["top"][i])
        box = clip_box((left, top, left + int(data["width"][i]), top + int(data["height"][i])), width, height)
        try:
            conf = round(float(data["conf"][i]), 3)
        except (TypeError, ValueError):
            conf = -1.0
        records.append(
            {
                "text": text,
                "box": list(box),
                "conf": conf,
                "block": int(data["block_num"][i]),
                "par": int(data["par_num"][i]),
                "line": int(data["line_num"][i]),
                "word": int(data["word_num"][i]),
            }
        )
    return records


def _read_cache(path: Path, key: str) -> list[dict[str, Any]] | None:
    """The cached records, or ``None`` when missing or unreadable (then OCR runs again)."""
    try:
        with open(path, encoding="utf-8") as fh:
            entry = json.load(fh)
        if entry.get("format") != CACHE_FORMAT or entry.get("key") != key:
            return None
        words = entry["words"]
        for r in words:
            if not isinstance(r["text"], str) or len(r["box"]) != 4:
                return None
        return words
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
