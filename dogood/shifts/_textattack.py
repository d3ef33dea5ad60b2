"""What the TextAttack word swaps share: a quiet, offline-safe import and the one-word frame.

TextAttack (Morris et al. 2020) is imported only when a swap first runs,
because its import takes seconds and touches the network: on first use it
downloads six NLTK packages (it needs only the ``stopwords`` corpus, which
it cannot even be imported without), and it sets process-wide environment
variables (``TOKENIZERS_PARALLELISM=True``...). :func:`import_textattack`
finds that corpus (``NLTK_DATA`` or ``$DOGOOD_DATA_DIR/nltk_data``), skips
the downloads and their log lines, restores the environment and leaves no
trace in TextAttack's cache folder.

TextAttack's transformations act on a whole ``AttackedText`` and draw
randomness from Python's ``random`` and numpy's global state. dogood asks each
transformation for *all* candidates of one word (``_get_replacement_words``,
deterministic) and picks one with the shift's ``numpy.random.Generator``, so
output depends only on the seed. :class:`WordSwapShift` does the rest: it
splits a word into leading punctuation, core and trailing punctuation
(``"Date:"`` -> ``"Date"`` + ``":"``), swaps the core only, keeps one word in
and one word out (boxes and labels stay), and leaves unchanged, and counts,
words it cannot change: blank, no letter or digit, a non-Latin script, longer
than :data:`MAX_WORD_LENGTH`, or no candidate.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import unicodedata
import warnings
from collections.abc import Collection
from pathlib import Path

import numpy as np
from pydantic import Field

from dogood.document import Document
from dogood.errors import SourceError
from dogood.shifts import params
from dogood.shifts.base import Shift
from dogood.shifts.selection import change_fraction
from dogood.shifts.words import replace_texts

#: Words longer than this (characters) are left unchanged: they are OCR noise, not words.
MAX_WORD_LENGTH = 64

_TEXTATTACK = None


def import_textattack():
    """``textattack``, imported once, without downloads or log lines; raises :class:`SourceError` if unusable."""
    global _TEXTATTACK
    if _TEXTATTACK is not None:
        return _TEXTATTACK
    if "textattack" in sys.modules and hasattr(sys.modules["textattack"], "transformations"):
        _TEXTATTACK = sys.modules["textattack"]
        return _TEXTATTACK
    try:
        import nltk
    except ImportError:
        raise SourceError("the TextAttack word swaps need textattack: pip install textattack") from None
    _add_nltk_data(nltk)
    marker = Path(os.environ.get("TA_CACHE_DIR") or Path.home() / ".cache" / "textattack") / "post_install_check_3"
    made = [p for p in (marker, Path(str(marker) + ".lock")) if not p.exists()]
    loggers = {name: lg.disabled for name, lg in logging.root.manager.loggerDict.items() if isinstance(lg, logging.Logger)}
    install_log = logging.getLogger("textattack.shared.utils.install")
    quiet = _Below(logging.WARNING)
    install_log.addFilter(quiet)
    environ = dict(os.environ)  # TextAttack sets TOKENIZERS_PARALLELISM, KMP_* and others on import
    download = nltk.download
    nltk.download = lambda *args, **kwargs: True  # TextAttack's post-install step; we need none of it
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import textattack
    except ImportError as exc:
        raise SourceError(f"cannot import textattack ({exc}): pip install textattack") from None
    except LookupError as exc:  # an NLTK resource
        raise SourceError(f"textattack needs NLTK data: set NLTK_DATA ({exc})") from None
    finally:
        nltk.download = download
        for key in set(os.environ) - set(environ):
            del os.environ[key]
        os.environ.update(environ)
        install_log.removeFilter(quiet)
        for name, disabled in loggers.items():
            lg = logging.root.manager.loggerDict.get(name)
            if isinstance(lg, logging.Logger):
                lg.disabled = disabled
        for path in made:  # leave TextAttack's own post-install to a later, online, use of TextAttack
            with contextlib.suppress(OSError):
                path.unlink()
    _TEXTATTACK = textattack
    return textattack


def _add_nltk_data(nltk) -> None:
    """Make NLTK's ``stopwords`` corpus findable (``NLTK_DATA``, ``$DOGOOD_DATA_DIR/nltk_data``), or fail clearly."""
    from dogood.paths import nltk_module

    nltk_module()
    folder = os.environ.get("NLTK_DATA")  # set after nltk was imported: NLTK read it too early
    if folder and Path(folder).is_dir() and folder not in nltk.data.path:
        nltk.data.path.append(folder)
    try:
        nltk.data.find("corpora/stopwords")
    except LookupError:
        if not nltk.download("stopwords", quiet=True):
            raise SourceError(
                "TextAttack needs NLTK's stopwords corpus: set NLTK_DATA to a folder holding "
                "corpora/stopwords, or run `python -m nltk.downloader stopwords`"
            ) from None


class _Below(logging.Filter):
    def __init__(self, level: int):
        super().__init__()
        self.level = level

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= self.level


def split_word(text: str) -> tuple[str, str, str]:
    """``(leading punctuation, core, trailing punctuation)``; the core starts and ends with a letter or digit."""
    start = next((i for i, ch in enumerate(text) if ch.isalnum()), len(text))
    end = next((i for i in range(len(text), start, -1) if text[i - 1].isalnum()), start)
    return text[:start], text[start:end], text[end:]


def is_latin(core: str) -> bool:
    """True when every letter of ``core`` is Latin and every digit is ASCII (punctuation is allowed)."""
    for ch in core:
        if ch.isascii() or not ch.isalnum():
            continue
        if not (ch.isalpha() and unicodedata.name(ch, "").startswith("LATIN")):
            return False
    return True


class WordSwapShift(Shift):
    """Base of the TextAttack word swaps: change ``fraction`` of the eligible words, one word at a time.

    Subclasses set ``name``, extend :class:`WordSwapShift.Params` with their
    own parameters and implement :meth:`swap`.
    """

    family = "text"

    class Params(params.Params):
        fraction: params.Real = Field(0.1, ge=0, le=1, description="share of the eligible words changed (paper: 0.1)")
        labels: params.OptionalNames = Field(None, description="entity labels whose words are eligible (null: all words)")
        render: params.Flag = Field(False, description="redraw the changed words in the page image (false: text only)")

    def _common(self, fraction: float, labels: Collection[str] | None, render: bool) -> None:
        """Store the shared parameters of a shift not yet declared (to go when every swap declares ``Params``)."""
        values = WordSwapShift.Params(fraction=fraction, labels=labels, render=render)
        self.fraction, self.labels, self.render = values.fraction, values.labels, values.render

    def swap(self, core: str, rng: np.random.Generator) -> str | None:
        """The new text of a word core (Latin, non-empty), or ``None`` when it cannot change."""
        raise NotImplementedError

    def change_word(self, text: str, rng: np.random.Generator) -> str | None:
        """The new text of a whole word (punctuation kept), or ``None`` when it cannot change."""
        if len(text) > MAX_WORD_LENGTH:
            return None
        lead, core, trail = split_word(text)
        if not core or not is_latin(core):
            return None
        new = self.swap(core, rng)
        if not new or new == core:
            return None
        return lead + new + trail

    def apply(self, doc: Document, rng: np.random.Generator) -> tuple[Document, dict[str, int]]:
        changes, counts = change_fraction(
            doc, rng, self.fraction, lambda i, r: self.change_word(doc.words[i].text, r), self.labels
        )
        out = replace_texts(doc, changes)
        if self.render and changes:
            from dogood.render import render_words

            out = render_words(out, sorted(changes), original=doc)
        return out, counts


def pick(candidates, rng: np.random.Generator):
    """One of ``candidates`` (a sequence), uniformly, or ``None`` when there is none."""
    if not candidates:
        return None
    return candidates[int(rng.integers(len(candidates)))]
