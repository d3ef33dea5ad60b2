"""Tesseract OCR with an on-disk cache, so each image is read once.

:func:`ocr_words` returns the words Tesseract finds on a page, with absolute
pixel boxes clipped to the page, in Tesseract's reading order (block,
paragraph, line, word: the row order of ``image_to_data``).

Tesseract runs in this process through its C API (``tesserocr``): one engine
per worker process and per (lang, config), made on first use (never pickled:
a forked or spawned worker makes its own) and ended at exit. That engine gives
the same TSV rows as the ``tesseract`` binary that ``pytesseract`` runs once per
page, without the binary's 0.1-0.2 s of start-up and model loading per page.
It is used only where it is the same Tesseract: ``tesserocr`` importable and
its library's version equal to the binary's (a ``tesserocr`` built against the
system's libtesseract: ``pip install --no-binary tesserocr tesserocr`` with
Debian's ``libtesseract-dev``). The PyPI wheel bundles another Tesseract (5.5.4
beside Debian 12's 5.3.0) that reads other words on most pages, so with it, or
without ``tesserocr``, or with a config the engine does not mirror (anything
but ``--psm``, ``--oem``, ``--dpi`` and ``-c VAR=VALUE``), each page goes to the
binary through ``pytesseract`` as before. :func:`ocr_engine` says which.
Both give the same words, boxes, confidences and numbering (``tests/page/test_ocr.py``).

Results are cached as JSON under ``<cache>/ocr/<first 2 hex>/<key>.json``
where ``key`` is the sha256 of the image's encoded bytes, the Tesseract
version, the language and the config string (the same key for both engines).
A cache file holds every word with its confidence and its block/paragraph/line/word numbers; the
:class:`~dogood.core.document.Word` records returned keep only text and box.
Files are written atomically (temporary file + ``os.replace``), so parallel
workers never read a half-written entry; an unreadable entry is recomputed.

Tesseract runs single-threaded unless the user set ``OMP_THREAD_LIMIT``
(``OMP_THREAD_LIMIT=1`` in the environment pytesseract gives its subprocesses;
in-process, OpenMP's ``max-active-levels`` at 0 while a page is read: see
:func:`_openmp`): with OpenMP threads a page took 3-4x longer on a 2-core
machine, with identical output.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shlex
import threading
import time
import warnings
from collections import ChainMap
from pathlib import Path
from typing import Any

from dogood.core import fs
from dogood.core.boxes import clip_box
from dogood.core.document import PageImage, Word
from dogood.core.errors import DocumentError, SourceError
from dogood.core.extras import install_line
from dogood.core.paths import cache_dir, write_atomic

CACHE_FORMAT = 1
#: Pages Tesseract read in this process (cache misses) and the seconds it took: :func:`tesseract_runs`.
_RUNS = {"pages": 0, "seconds": 0.0}
#: The header Tesseract's TSV renderer writes before the rows of ``GetTSVText`` (what the binary writes for
#: ``image_to_data``): the column names of the dict both engines' rows are parsed into.
_TSV_HEADER = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n"
#: This process's decision (:func:`_tesserocr`): ``{"module": tesserocr or None, "why": reason when None,
#: "openmp": the libgomp its pages run on one thread of (:func:`_openmp`)}``.
_TESSEROCR: dict[str, Any] = {}
#: This process's in-process engines, one per (lang, init arguments): :func:`_engine`.
_ENGINES: dict[tuple, _Engine] = {}
#: Engines a forked child inherited from its parent: never used nor ended there (the parent owns them).
_INHERITED: list[_Engine] = []

_INSTALL_HINT = (
    "install it with `sudo apt-get install tesseract-ocr` (Debian/Ubuntu; "
    "add tesseract-ocr-<lang> for languages other than English), "
    "or turn OCR off for this source (ocr: false)"
)


def _pytesseract():
    try:
        import pytesseract
    except ImportError:  # pragma: no cover - a declared dependency
        raise SourceError(f"OCR needs the pytesseract package: {install_line(None)}") from None
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


def ocr_engine(config: str = "") -> str:
    """Which engine reads pages with ``config`` in this process: ``"tesserocr"`` (in-process) or
    ``"pytesseract"`` (the ``tesseract`` binary, one process per page), with the reason for the latter."""
    if _tesserocr() is None:
        return f"pytesseract ({_TESSEROCR['why']})"
    if _engine_args(config) is None:
        return f"pytesseract (config {config!r} has options the in-process engine does not mirror)"
    return "tesserocr"


def release_engines() -> None:
    """End this process's in-process Tesseract engines (their models' memory); the next page makes a new one."""
    engines = list(_ENGINES.values())
    _ENGINES.clear()
    for engine in engines:
        with engine.lock:
            engine.api.End()


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
        cached = _read_cache(path, key, image.width, image.height)
        if cached is not None:
            return cached
    start = time.perf_counter()
    records = _run_tesseract(image, lang=lang, config=config)
    _RUNS["pages"] += 1
    _RUNS["seconds"] += time.perf_counter() - start
    try:
        fs.check_words([r["text"] for r in records])
    except fs.FileRefused as exc:
        raise DocumentError(f"Tesseract read {exc.reason.removeprefix('the page has ')}", path=image.path) from None
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
            "sha256": _records_sha256(records),  # checked on every read: a damaged entry is read again
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
        from dogood.core.progress import say

        total = f" of {of}" if of is not None else ""
        say(f"OCR: Tesseract read {pages}{total} page(s) not yet in the cache in {seconds:.1f} s "
            f"(once; cached in {ocr_cache_folder()}; engine: {ocr_engine()})")


# -- internals ------------------------------------------------------------------


def _cache_root(cache: bool | str | Path) -> Path | None:
    if cache is False or cache is None:
        return None
    if cache is True:
        return cache_dir() / "ocr"
    return Path(cache)


def _run_tesseract(image: PageImage, *, lang: str, config: str) -> list[dict[str, Any]]:
    """The page's word records from the in-process engine where :func:`ocr_engine` says so, else the binary's."""
    if _tesserocr() is not None:
        args = _engine_args(config)
        if args is not None:
            return _run_tesserocr(image, lang=lang, args=args)
    return _run_pytesseract(image, lang=lang, config=config)


def _run_pytesseract(image: PageImage, *, lang: str, config: str) -> list[dict[str, Any]]:
    """The binary through pytesseract: ``image_to_data`` of the page saved as PNG (pytesseract's format)."""
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


def _tesserocr():
    """The ``tesserocr`` module where it runs the binary's Tesseract in-process, else ``None`` (decided once)."""
    if not _TESSEROCR:
        _TESSEROCR.update(_load_tesserocr())
    return _TESSEROCR["module"]


def _load_tesserocr() -> dict[str, Any]:
    """:data:`_TESSEROCR`'s entries: tesserocr where its Tesseract's version is the binary's, else the reason."""
    try:
        import tesserocr
    except ImportError as exc:
        return {"module": None, "why": f"tesserocr cannot be imported: {exc}"}
    library = (tesserocr.tesseract_version().split() + ["?", "?"])[1]  # "tesseract 5.3.0\n leptonica-1.82.0 ..."
    binary = tesseract_version()
    if library != binary:
        return {"module": None, "why": f"tesserocr's Tesseract is {library}, the tesseract binary's {binary}: "
                                       f"build tesserocr on the system's with `pip install --no-binary tesserocr tesserocr`"}
    _quiet_leptonica()
    return {"module": tesserocr, "why": None, "openmp": _openmp()}


def _openmp():
    """The OpenMP runtime libtesseract runs its loops on, unless the user set ``OMP_THREAD_LIMIT`` (then it is
    theirs to keep), or ``None``.

    The binary runs single-threaded through ``OMP_THREAD_LIMIT=1`` in its environment. In-process, that variable
    counts only if it was set before the runtime loaded, and torch loads the same ``libgomp.so.1`` first in any
    process that imported it, and then a page starts 4 OpenMP threads (Tesseract's loops name their thread
    count, which only the thread limit or ``max-active-levels`` caps). So each page runs with
    ``omp_set_max_active_levels(0)`` (every parallel region on one thread: no thread started) and the previous
    value back after it. No Python library sets that (threadpoolctl sets ``omp_set_num_threads``, which a loop's
    own count overrides), hence ctypes.
    """
    import ctypes

    if "OMP_THREAD_LIMIT" in os.environ:
        return None
    try:
        return ctypes.CDLL("libgomp.so.1", mode=os.RTLD_NOLOAD)  # only the one already loaded (by libtesseract)
    except OSError:  # a libtesseract without OpenMP
        return None


def _quiet_leptonica() -> None:
    """Silence Leptonica's messages in this process, as the binary does (pytesseract drops its stderr).

    Tesseract's own go to ``debug_file`` (``/dev/null``, set by tesserocr); Leptonica prints "Error in
    boxClipToRectangle" and the like on pages Tesseract reads fine. No Python library exposes Leptonica's
    ``setMsgSeverity``, hence ctypes on the Leptonica libtesseract loaded (found in ``/proc/self/maps``).
    """
    import ctypes

    try:
        with open("/proc/self/maps", encoding="utf-8") as fh:
            paths = {line.split()[-1] for line in fh if "/liblept" in line}
        for path in paths:
            ctypes.CDLL(path).setMsgSeverity(6)  # L_SEVERITY_NONE
    except (OSError, AttributeError):  # not Linux, or another Leptonica: its messages stay on stderr
        pass


def _engine_args(config: str) -> tuple | None:
    """The in-process engine's arguments for a command-line ``config``, as the binary reads it: ``(psm, oem,
    dpi, variables)``; ``None`` for options it does not mirror (config files, ``--tessdata-dir``, ``-l``...),
    ``--psm 0`` and ``2`` (no TSV output) and values the binary would refuse (then the binary runs)."""
    psm, oem, dpi, variables = 3, 3, 0, []
    try:
        words = shlex.split(config)
    except ValueError:
        return None
    i = 0
    while i < len(words):
        option, value = words[i], words[i + 1] if i + 1 < len(words) else None
        if value is None:
            return None
        if option == "--psm" and value.isdigit() and int(value) in range(14) and int(value) not in (0, 2):
            psm = int(value)
        elif option == "--oem" and value.isdigit() and int(value) in range(4):
            oem = int(value)
        elif option == "--dpi" and value.isdigit():
            dpi = int(value)
        elif option == "-c" and "=" in value:
            variables.append(tuple(value.split("=", 1)))
        else:
            return None
        i += 2
    mode = dict(variables).get("tessedit_pageseg_mode")
    if mode is not None:
        # The binary keeps a page segmentation mode set by -c unless it is the library's default (6).
        if not mode.isdigit() or int(mode) in (0, 2) or int(mode) >= 14:
            return None
        psm = psm if int(mode) == 6 else int(mode)
    return psm, oem, dpi, tuple(variables)


class _Engine:
    """One in-process Tesseract (``tesserocr.PyTessBaseAPI``) for a lang and arguments, and a lock: a
    TessBaseAPI reads one page at a time."""

    def __init__(self, lang: str, args: tuple):
        tesserocr = _tesserocr()
        psm, oem, dpi, variables = args
        path, available = tesserocr.get_languages()
        missing = [part for part in lang.split("+") if part not in available]
        if missing:
            raise SourceError(
                f"Tesseract has no data for language {lang!r} (no {missing[0]}.traineddata in {path}): "
                f"install tesseract-ocr-{missing[0]} (apt) or choose another lang"
            )
        try:
            self.api = tesserocr.PyTessBaseAPI(path=path, lang=lang, psm=psm, oem=oem, variables=dict(variables))
        except RuntimeError as exc:
            raise SourceError(f"Tesseract could not start with lang {lang!r} and {variables!r} ({exc})") from None
        if dpi:
            self.api.SetVariable("user_defined_dpi", str(dpi))
        self.lock = threading.Lock()

    def __reduce__(self):
        raise TypeError("an in-process Tesseract engine is never pickled: each process makes its own")


_ENGINES_LOCK = threading.Lock()


def _engine(lang: str, args: tuple) -> _Engine:
    """This process's engine for ``lang`` and ``args``, made on first use."""
    key = (lang, args)
    engine = _ENGINES.get(key)
    if engine is None:
        with _ENGINES_LOCK:
            engine = _ENGINES.get(key)
            if engine is None:
                engine = _ENGINES[key] = _Engine(lang, args)
    return engine


def _after_fork_in_child() -> None:
    """A forked worker makes its own engines: its parent's stay untouched (neither used nor ended here)."""
    global _ENGINES_LOCK
    _INHERITED.extend(_ENGINES.values())
    _ENGINES.clear()
    _ENGINES_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(release_engines)


def _run_tesserocr(image: PageImage, *, lang: str, args: tuple) -> list[dict[str, Any]]:
    """The page through this process's engine: the binary's TSV rows for the same pixels.

    The pixels go in raw, as the binary's PNG decodes to them (8-bit grey or RGB, no resolution: Tesseract
    estimates it, as for pytesseract's PNG). The adaptive classifier and document dictionary are reset after
    each page, so a page's words never depend on the pages read before it.
    """
    pil = image.to_pil()
    channels = {"L": 1, "RGB": 3}[pil.mode]
    engine = _engine(lang, args)
    openmp = _TESSEROCR.get("openmp")
    with engine.lock:
        levels = openmp.omp_get_max_active_levels() if openmp is not None else None
        try:
            if openmp is not None:
                openmp.omp_set_max_active_levels(0)
            engine.api.SetImageBytes(pil.tobytes(), pil.width, pil.height, channels, channels * pil.width)
            tsv = engine.api.GetTSVText(0)
        except RuntimeError as exc:
            raise DocumentError(f"Tesseract failed ({exc})", path=image.path) from None
        finally:
            if openmp is not None:
                openmp.omp_set_max_active_levels(levels)
            engine.api.Clear()
            engine.api.ClearAdaptiveClassifier()
    data = _pytesseract().pytesseract.file_to_dict(_TSV_HEADER + tsv, "\t", -1)
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


def _records_sha256(records: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(records, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
                          .encode("utf-8")).hexdigest()


def _read_cache(path: Path, key: str, width: int | None = None, height: int | None = None
                ) -> list[dict[str, Any]] | None:
    """The cached records, or ``None`` when missing, unreadable, or damaged (then OCR runs again and rewrites it).

    An entry is damaged when its sha256 (recorded when it was written) does not match its words, or a word is
    not a text with a box of four whole numbers on the page; that is said with the cache file's name (the page
    itself is not to blame)."""
    try:
        entry = fs.read_json(path, what="OCR cache file")
    except FileNotFoundError:
        return None
    except fs.FileRefused as exc:
        _damaged(path, f"not readable JSON ({exc.reason})")
        return None
    except OSError as exc:
        _damaged(path, f"not readable JSON ({exc})")
        return None
    if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT or entry.get("key") != key:
        return None  # another format or key: an entry of another page or version, not damage
    words = entry.get("words")
    if isinstance(words, list) and len(words) > fs.limits().page_words:  # never written so: planted or damaged
        _damaged(path, f"it holds {len(words)} words, more than the {fs.limits().page_words} of a page")
        return None
    if "sha256" in entry and (not isinstance(words, list) or entry["sha256"] != _records_sha256(words)):
        _damaged(path, "its words do not match the sha256 recorded when it was written")
        return None
    if not isinstance(words, list) or not all(_good_record(r, width, height) for r in words):
        _damaged(path, "a word is not a text with a box of four whole numbers on the page")
        return None
    try:
        fs.check_words([r["text"] for r in words])  # never written so: planted or damaged
    except fs.FileRefused as exc:
        _damaged(path, exc.reason)
        return None
    return words


def _good_record(r: Any, width: int | None, height: int | None) -> bool:
    if not isinstance(r, dict) or not isinstance(r.get("text"), str) or not isinstance(r.get("box"), list):
        return False
    box = r["box"]
    if len(box) != 4 or not all(type(v) is int for v in box):
        return False
    x0, y0, x1, y1 = box
    return (0 <= x0 <= x1 and 0 <= y0 <= y1 and (width is None or x1 <= width) and (height is None or y1 <= height))


def _damaged(path: Path, why: str) -> None:
    warnings.warn(f"OCR cache file {path} is damaged ({why}); the page is read again and the entry rewritten",
                  stacklevel=3)
