"""The word lists and dictionaries text shifts read: NLTK's stopwords and WordNet, lemminflect, TextAttack.

Each is loaded once per process, on first use, through one NLTK loader
(:func:`nltk_module`: ``$NLTK_DATA``, NLTK's own folders, then
``$DOGOOD_DATA_DIR/nltk_data``). A shift checks what it needs in its
``prepare()`` with :func:`require`, which raises :class:`SourceError` naming
the missing resource and how to get it. The counter-fitted word vectors are
in :mod:`dogood.language.embeddings`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import warnings
from functools import lru_cache
from pathlib import Path

from dogood.core.errors import SourceError
from dogood.core.extras import EXTRA_OF, install_line

#: The NLTK data each resource name stands for, and the package that downloads it.
_NLTK_DATA = {"stopwords": "corpora/stopwords", "wordnet": "corpora/wordnet"}


def nltk_module():
    """``nltk``, with ``$NLTK_DATA`` and ``$DOGOOD_DATA_DIR/nltk_data`` on its data path; raises if not installed."""
    from dogood.core.paths import nltk_module as with_shared_data

    try:
        nltk = with_shared_data()
    except ImportError:
        raise SourceError(f"the text shifts need nltk: {install_line(None)}") from None
    folder = os.environ.get("NLTK_DATA")  # set after nltk was imported: NLTK read it too early
    if folder and Path(folder).is_dir() and folder not in nltk.data.path:
        nltk.data.path.append(folder)
    return nltk


def require(who: str, *resources: str) -> None:
    """Raise :class:`SourceError` unless every resource is there: ``stopwords``, ``wordnet`` (NLTK data),
    ``lemminflect``, ``textattack``, ``faker`` (packages), ``pos_tagger`` (:mod:`dogood.language.pos_tagger`). ``who`` names the shift in the message."""
    for resource in resources:
        if resource in _NLTK_DATA:
            nltk = nltk_module()
            path = _NLTK_DATA[resource]
            try:
                nltk.data.find(path)
            except LookupError:
                try:
                    nltk.data.find(path + ".zip")
                except LookupError:
                    raise SourceError(
                        f"{who} needs the NLTK data {path!r}: set NLTK_DATA (or DOGOOD_DATA_DIR, with an nltk_data "
                        f"folder) to a folder holding it, or run python -m nltk.downloader {resource}; searched "
                        + ", ".join(map(str, nltk.data.path))
                    ) from None
        elif resource == "textattack":
            import_textattack()
        elif resource == "pos_tagger":
            from dogood.language.pos_tagger import tagger

            try:
                tagger()
            except SourceError as exc:
                raise SourceError(f"{who}: {exc}") from None
        else:
            try:
                __import__(resource)
            except ImportError:
                raise SourceError(f"{who} needs {resource}: {install_line(EXTRA_OF.get(resource))}") from None


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    """NLTK's English stopwords, lower case."""
    require("stopwords", "stopwords")
    from nltk.corpus import stopwords as corpus

    return frozenset(w.strip().lower() for w in corpus.words("english") if w.strip())


@lru_cache(maxsize=1)
def wordnet():
    """NLTK's WordNet reader, loaded.

    The reader keeps its data files open and reads a synset by ``seek`` then ``readline``. A process forked after
    it opened them (a build's worker) shares each file's offset with its parent and siblings, so two of them
    reading at once read each other's lines: wrong synsets or none ("No WordNet synset found at offset"). A
    forked child therefore drops the inherited files and opens its own on first use."""
    require("wordnet", "wordnet")
    from nltk.corpus import wordnet as reader

    reader.synsets("form")  # loads the corpus
    os.register_at_fork(after_in_child=lambda: _forget_open_files(reader))
    return reader


def _forget_open_files(reader) -> None:
    """Make ``reader`` (WordNet) open its data files anew in this process instead of using its parent's."""
    files = getattr(reader, "_data_file_map", None)
    if isinstance(files, dict):
        reader._data_file_map = {}


#: Words that negate (a swap into or out of one reverses a statement).
NEGATIONS = frozenset({"no", "not", "never", "none", "nobody", "nothing", "nowhere", "neither", "nor", "without",
                       "cannot", "non", "nay", "n't"})
#: English modal verbs (a swap into or out of one changes what a statement commits to: may, must, will...).
MODALS = frozenset({"can", "could", "may", "might", "must", "shall", "should", "will", "would", "ought"})


@lru_cache(maxsize=65536)
def antonyms(word: str) -> frozenset[str]:
    """WordNet antonyms of a lower-case ``word`` in any sense, direct or of an adjective similar to it
    (``wet`` for ``damp``: WordNet's indirect antonyms); their own forms and base forms alike."""
    wn = wordnet()
    out = set()
    for synset in wn.synsets(word):
        for near in (synset, *synset.similar_tos()):
            for lemma in near.lemmas():
                out.update(a.name().lower() for a in lemma.antonyms())
    return frozenset(out)


def base_forms(word: str) -> frozenset[str]:
    """``word`` and its WordNet base forms in each part of speech (``morphy``)."""
    wn = wordnet()
    return frozenset({word} | {wn.morphy(word, pos) or word for pos in ("n", "v", "a", "r")})


@lru_cache(maxsize=65536)
def all_sense_synonyms(word: str) -> tuple[str, ...]:
    """WordNet synonyms of ``word`` (lower case), from every sense and part of speech, sorted.

    Multi-word lemmas, the word itself, its base forms and stopwords give
    none (``in`` is not replaced by ``inch``). Used by ``bg_synonym``.
    """
    wn = wordnet()
    w = word.lower()
    if len(w) < 2 or w in stopwords() or not w.isalpha():
        return ()
    bases = {w} | {wn.morphy(w, pos) or w for pos in ("n", "v", "a", "r")}
    found = set()
    for synset in wn.synsets(w):
        for lemma in synset.lemma_names():
            name = lemma.lower()
            if "_" not in name and name not in bases and name.replace("-", "").isalpha():
                found.add(name)
    return tuple(sorted(found))


@lru_cache(maxsize=None)
def first_sense_synonyms(word: str) -> tuple[str, ...]:
    """WordNet synonyms of a lower-case word from its most frequent sense per part of speech, inflected like it.

    Lower-case single words of letters only; stopwords and words under three letters give none.
    Without a tag, a sense of another part of speech can be taken (``results`` -> ``ensues``): what
    ``word_perturbation``'s ``synonym`` did before it was tagged (:func:`tagged_synonyms`; funsd-t 2.1.0).
    """
    import lemminflect

    wn = wordnet()
    if len(word) < 3 or not word.isalpha() or word in stopwords():
        return ()
    out: list[str] = []
    for pos, upos in ((wn.NOUN, "NOUN"), (wn.VERB, "VERB"), (wn.ADJ, "ADJ"), (wn.ADV, "ADV")):
        senses = wn.synsets(word, pos)
        if not senses:
            continue
        sense = senses[0]
        names = sense.lemma_names()
        base = next((b for b in wn._morphy(word, pos) if b in names), None)
        if base is None:
            continue
        tag = None
        if word != base:  # inflected: find the form, to inflect synonyms alike
            forms = lemminflect.getAllInflections(base, upos=upos)
            tag = next((t for t in sorted(forms) if word in forms[t]), None)
            if tag is None:
                continue
        for name in names:
            if name == base or not name.isalpha() or not name.islower():
                continue
            new = name
            if tag is not None:
                inflected = lemminflect.getInflection(name, tag=tag)
                if not inflected:
                    continue
                new = inflected[0]
            if new != word and new not in out:
                out.append(new)
    return tuple(out)


#: WordNet's part of speech for the first letter of a Penn tag (nouns, verbs, adjectives, adverbs).
_PENN_TO_WORDNET = {"N": "n", "V": "v", "J": "a", "R": "r"}
#: Penn tags of inflected forms lemminflect makes (a synonym is inflected like the word it replaces).
_INFLECTED_TAGS = frozenset({"NNS", "VBD", "VBG", "VBN", "VBZ", "JJR", "JJS", "RBR", "RBS"})


@lru_cache(maxsize=None)
def in_wordnet(word: str) -> bool:
    """Whether a lower-case word could have a synonym at all: three letters or more, not a stopword, in WordNet."""
    return len(word) >= 3 and word.isalpha() and word not in stopwords() and bool(wordnet().synsets(word))


@lru_cache(maxsize=None)
def tagged_synonyms(word: str, tag: str) -> tuple[str, ...]:
    """WordNet synonyms of a lower-case word used with the Penn ``tag`` (:mod:`dogood.language.pos_tagger`): the
    lemmas of its most frequent sense in the tag's part of speech, inflected as the tag says (lemminflect).

    Proper nouns (``NNP``, ``NNPS``), tags outside nouns, verbs, adjectives and adverbs, stopwords, words under
    three letters or with a non-letter give none. Used by ``word_perturbation``'s ``synonym`` kind; unlike
    :func:`first_sense_synonyms` it never takes a sense of another part of speech (``results`` the noun is not
    replaced by ``ensues``).
    """
    import lemminflect

    wn = wordnet()
    pos = _PENN_TO_WORDNET.get(tag[:1])
    if pos is None or tag in ("NNP", "NNPS") or len(word) < 3 or not word.isalpha() or word in stopwords():
        return ()
    senses = wn.synsets(word, pos)
    if not senses:
        return ()
    names = senses[0].lemma_names()
    base = next((b for b in wn._morphy(word, pos) if b in names), None)
    if base is None:
        return ()
    inflect = tag if word != base and tag in _INFLECTED_TAGS else None
    out: list[str] = []
    for name in names:
        if name == base or not name.isalpha() or not name.islower():
            continue
        new = name
        if inflect is not None:
            forms = lemminflect.getInflection(name, tag=inflect)
            if not forms:
                continue
            new = forms[0]
        if new != word and new not in out:
            out.append(new)
    return tuple(out)


@lru_cache(maxsize=None)
def verb_forms(word: str) -> tuple[str, frozenset[str]] | None:
    """``(lemma, tags)`` for a lower-case word WordNet knows only as a verb form, else ``None``.

    ``tags`` are the Penn tags (``VB``, ``VBZ``, ``VBD``, ``VBN``, ``VBG``)
    whose lemminflect forms of ``lemma`` include ``word``.
    """
    import lemminflect

    wn = wordnet()
    if len(word) < 3 or not word.isalpha() or word in stopwords():
        return None
    if any(wn.synsets(word, pos) for pos in (wn.NOUN, wn.ADJ, wn.ADV)):
        return None
    lemma = wn.morphy(word, wn.VERB)
    if lemma is None or not lemma.isalpha():
        return None
    # getAllInflections leaves out a participle equal to the past; ask for every tag
    tags = frozenset(tag for tag in ("VB", "VBZ", "VBD", "VBN", "VBG")
                     if word in lemminflect.getInflection(lemma, tag=tag) or (tag == "VB" and word == lemma))
    return (lemma, tags) if tags else None


def inflect_verb(lemma: str, tag: str) -> str | None:
    """``lemma`` inflected for the Penn ``tag`` (lemminflect's first form), or ``None``."""
    import lemminflect

    forms = lemminflect.getInflection(lemma, tag=tag)
    return forms[0] if forms else None


# -- TextAttack ---------------------------------------------------------------------------------------------------

_TEXTATTACK = None


def import_textattack():
    """``textattack``, imported once, without downloads or log lines; raises :class:`SourceError` if unusable.

    TextAttack (Morris et al. 2020) downloads six NLTK packages on first
    import (it needs only the ``stopwords`` corpus, without which it cannot
    be imported) and sets process-wide environment variables
    (``TOKENIZERS_PARALLELISM=True``...). This finds that corpus, skips the
    downloads and their log lines, restores the environment and leaves no
    trace in TextAttack's cache folder.
    """
    global _TEXTATTACK
    if _TEXTATTACK is not None:
        return _TEXTATTACK
    if "textattack" in sys.modules and hasattr(sys.modules["textattack"], "transformations"):
        _TEXTATTACK = sys.modules["textattack"]
        return _TEXTATTACK
    try:
        import nltk  # noqa: F401
    except ImportError:
        raise SourceError(f"the TextAttack word swaps need textattack: {install_line('text')}") from None
    require("TextAttack", "stopwords")
    nltk = nltk_module()
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
        raise SourceError(f"cannot import textattack ({exc}): {install_line('text')}") from None
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


class _Below(logging.Filter):
    def __init__(self, level: int):
        super().__init__()
        self.level = level

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= self.level
