"""Moradi & Samwald's reference verb rules: negation, singular/plural verb, verb tense, bugs fixed.

Written from a reading of the reference scripts (mmoradi-iut/NLP-perturbation:
``Word-Negation.py``, ``Word-SingularPluralVerb.py``, ``Word-VerbTense.py``),
not copied. Each walks a sample's tokens left to right with their Penn tags
(``nltk.pos_tag`` there; :mod:`dogood.language.pos_tagger` here) and rewrites
**every** verb its rules match, as the scripts do; no randomness. A rule
returns ``{token index: new text}`` (``""`` removes the token, a text with
spaces is several words) and how many rules fired.

Fixes of the scripts' bugs (each also said where it applies):

- an auxiliary as the last token (``"Where is"``) crashes the scripts
  (``IndexError`` on the next token): here it has no next token;
- the scripts' stemmer and suffixer truncate (``causes`` -> ``caus``,
  ``uses`` -> ``us``, ``play`` -> ``plaies``, ``am`` -> ``ams``) and their
  past tenses come from mlconjug3 (which fails to load today): base forms,
  ``-s`` forms and past tenses come from lemminflect;
- auxiliaries are matched case-insensitively and keep their case (the
  scripts match lower case only: ``Is`` became ``does not I``);
- contracted forms count as their full forms (``'s`` tagged as a verb is
  ``is``, ``'re`` ``are``, ``'m`` ``am``, ``'ve`` ``have``, ``'ll``
  ``will``, ``'d`` ``would`` or ``had``; ``wo`` and ``sha`` before ``n't``
  are ``will`` and ``shall``, as the script already did for ``ca``);
- while a negation waits for its verb (``does not ... like``), the tokens in
  between are kept (the scripts drop them, and the rest of the sample when
  no verb comes); ``does``/``do``/``did`` + ``not`` with no verb after them
  keep the auxiliary and lose only the ``not``;
- a token without a letter is never taken for a verb (the tagger, trained on
  Treebank text where brackets are ``-LRB-``, may tag ``(`` as one);
- verb tense: where the person decides (``was``, ``did not``, a past tense)
  and no subject is found, the verb is left as it is (the script drops it);
  a token tagged NNPS counts as a plural subject (the script's test for it
  compares the word, not the tag, and never matches); ``was`` becomes ``am``
  only after ``I`` (the script: after any non-third-person subject, ``you am``).
"""

from __future__ import annotations

from collections.abc import Sequence

VERB_KINDS = ("negation", "singular_plural_verb", "verb_tense")

_NOT = frozenset({"not", "n't"})
_BE = frozenset({"is", "are", "was", "were", "am"})
_CLITICS = {"'s": "is", "'re": "are", "'m": "am", "'ve": "have", "'ll": "will"}
_MODAL_STEMS = {"ca": "can", "wo": "will", "sha": "shall"}


def full_form(token: str, tag: str) -> str:
    """The token's full lower-case form: a contracted auxiliary written out (``'s`` -> ``is``, ``wo`` -> ``will``)."""
    low = token.lower().replace("\u2019", "'")
    if low in _CLITICS and (tag.startswith("VB") or tag == "MD"):
        return _CLITICS[low]
    if low == "'d":
        return "would" if tag == "MD" else "had"
    if tag == "MD" and low in _MODAL_STEMS:
        return _MODAL_STEMS[low]
    return low


def restyle(new: str, token: str) -> str:
    """``new`` (lower case) in the case of ``token``: ALL CAPS, Capitalised, or as it is."""
    letters = [c for c in token if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return new.upper()
    if letters and token[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


def base_form(word: str) -> str:
    """A verb's base form (lemminflect; the word itself when it knows none)."""
    import lemminflect

    found = lemminflect.getLemma(word.lower(), upos="VERB")
    return found[0] if found else word.lower()


def inflected(lemma: str, tag: str) -> str:
    """``lemma`` in the Penn ``tag``'s form (lemminflect's first; ``lemma`` + ``s``/``ed`` when it has none)."""
    import lemminflect

    found = lemminflect.getInflection(lemma, tag=tag)
    if found:
        return found[0]
    return lemma + ("s" if tag == "VBZ" else "ed")


def _wordlike(token: str) -> bool:
    return any(c.isalpha() for c in token)


def _is_not(tokens: Sequence[str], j: int) -> bool:
    return j < len(tokens) and tokens[j].lower().replace("\u2019", "'") in _NOT


def _verb_ahead(tags: Sequence[str], start: int, wanted: frozenset[str]) -> bool:
    return any(t in wanted for t in tags[start:])


def negation(tokens: Sequence[str], tags: Sequence[str]) -> tuple[dict[int, str], int]:
    """The negation script's rules (fixed as the module says), on every matching verb of the sample:

    ``has``/``have``/``had`` before a past participle get ``not``; ``does``/``do``/``did`` + ``not`` lose both,
    and their verb becomes the ``-s`` form, stays, or becomes the past; ``has``/``have``/``had``, a modal or a
    form of *be* + ``not`` lose the ``not``; a modal gets ``not`` (``can`` -> ``cannot``); a form of *be* gets
    ``not``; a verb tagged VBZ, VBP or VBD becomes ``does not``/``do not``/``did not`` + its base form.
    """
    out: dict[int, str] = {}
    made = 0
    waiting: frozenset[str] | None = None  # tags of the verb a negation removed earlier waits for
    change = None  # what to make of that verb
    n = len(tokens)
    j = 0
    while j < n:
        tok, tag = tokens[j], tags[j]
        w = full_form(tok, tag)
        nxt = tags[j + 1] if j + 1 < n else None
        if waiting is not None:
            if tag in waiting and _wordlike(tok):
                if change is not None:
                    out[j] = restyle(change(base_form(tok)), tok)
                waiting = change = None
            j += 1
            continue
        if not _wordlike(tok):
            j += 1
            continue
        if w in ("has", "have", "had") and nxt == "VBN":
            out[j] = restyle(w + " not", tok)
        elif w in ("does", "do", "did") and _is_not(tokens, j + 1):
            out[j + 1] = ""
            if _verb_ahead(tags, j + 2, frozenset({"VB"})):
                out[j] = ""
                waiting = frozenset({"VB"})
                change = {"does": lambda b: inflected(b, "VBZ"), "do": None,
                          "did": lambda b: inflected(b, "VBD")}[w]
            made += 1
            j += 2
            continue
        elif (w in ("has", "have", "had") or tag == "MD") and _is_not(tokens, j + 1):
            out[j] = restyle(w, tok) if w != tok.lower() else tok
            out[j + 1] = ""
            waiting, change = frozenset({"VBN", "VB"}), None
            made += 1
            j += 2
            continue
        elif w in _BE and _is_not(tokens, j + 1):
            if w != tok.lower():
                out[j] = restyle(w, tok)
            out[j + 1] = ""
            made += 1
            j += 2
            continue
        elif tag == "MD":
            out[j] = restyle("cannot" if w == "can" else w + " not", tok)
        elif w in _BE:
            out[j] = restyle(w + " not", tok)
        elif tag == "VBZ":
            out[j] = restyle("does not " + base_form(w), tok)
        elif tag == "VBP":
            out[j] = restyle("do not " + w, tok)
        elif tag == "VBD":
            out[j] = restyle("did not " + base_form(w), tok)
        else:
            j += 1
            continue
        made += 1
        j += 1
    return out, made


_NUMBER = {"does": "do", "do": "does", "is": "are", "are": "is", "was": "were", "were": "was", "am": "are"}
_SWAPS_WITH_NOT = frozenset({"has", "have", "does", "do"}) | _BE


def singular_plural_verb(tokens: Sequence[str], tags: Sequence[str]) -> tuple[dict[int, str], int]:
    """The singular/plural-verb script's rules (fixed as the module says), on every matching verb (no subject is
    looked for): ``has``/``have`` before a past participle or ``not`` swap; ``does``/``do``, ``is``/``are``,
    ``was``/``were`` swap (with or without ``not``; ``am`` becomes ``are``, the script made ``ams``); a verb
    tagged VBZ takes its base form, one tagged VBP its ``-s`` form."""
    out: dict[int, str] = {}
    made = 0
    n = len(tokens)
    j = 0
    while j < n:
        tok, tag = tokens[j], tags[j]
        w = full_form(tok, tag)
        nxt = tags[j + 1] if j + 1 < n else None
        step = 1
        if not _wordlike(tok):
            j += 1
            continue
        if w in ("has", "have") and nxt == "VBN":
            new = "have" if w == "has" else "has"
        elif w in _SWAPS_WITH_NOT and _is_not(tokens, j + 1):
            new = {"has": "have", "have": "has"}.get(w) or _NUMBER[w]
            new += " not"
            out[j + 1] = ""
            step = 2
        elif w in _NUMBER:
            new = _NUMBER[w]
        elif tag == "VBZ":
            new = base_form(w)
        elif tag == "VBP":
            new = inflected(base_form(w), "VBZ")
        else:
            j += 1
            continue
        out[j] = restyle(new, tok)
        made += 1
        j += step
    return out, made


_THIRD = frozenset({"it", "this", "that", "he", "she"})
_NOT_THIRD = frozenset({"i", "we", "you", "they", "these", "those"})
_TENSES_WITH_NOT = frozenset({"does", "do", "did"}) | _BE


def subject(tokens: Sequence[str], tags: Sequence[str]) -> str:
    """The verb-tense script's subject of the whole sample: the first token, from the left, that is ``it``,
    ``this``, ``that``, ``he``, ``she`` or tagged NN or NNP (the script's test ``tag in ('NNP')`` is a substring
    test, so NN counts) gives ``third``; ``i`` gives ``first``; ``we``, ``you``, ``they``, ``these``, ``those``
    give ``plural``, and so does a token tagged NNPS (the script meant to: its test compares the word with the tag);
    none of them: ``none``."""
    for tok, tag in zip(tokens, tags):
        low = tok.lower()
        if low in _THIRD or tag in ("NN", "NNP"):
            return "third"
        if low in _NOT_THIRD or tag == "NNPS":
            return "first" if low == "i" else "plural"
    return "none"


def verb_tense(tokens: Sequence[str], tags: Sequence[str]) -> tuple[dict[int, str], int]:
    """The verb-tense script's rules (fixed as the module says), on every matching verb: present <-> past.

    ``does``/``do`` + ``not`` -> ``did not``; ``did`` + ``not`` -> ``does not`` (third person) or ``do not``;
    ``is``/``am`` -> ``was``, ``are`` -> ``were``, ``were`` -> ``are``, ``was`` -> ``is`` (third person), ``am``
    (after ``I``) or ``are`` (with or without ``not``); a verb tagged VBZ or VBP takes its past; one tagged VBD
    its ``-s`` form (third person) or its base form. The person is :func:`subject`'s; without one (``none``) the
    rules that need it leave their verb alone.
    """
    person = subject(tokens, tags)
    third = person == "third"
    was_now = {"third": "is", "first": "am", "plural": "are"}.get(person)
    did_now = {"third": "does", "first": "do", "plural": "do"}.get(person)
    out: dict[int, str] = {}
    made = 0
    n = len(tokens)
    j = 0
    while j < n:
        tok, tag = tokens[j], tags[j]
        w = full_form(tok, tag)
        step = 1
        if not _wordlike(tok):
            j += 1
            continue
        if w in _TENSES_WITH_NOT and _is_not(tokens, j + 1):
            new = {"does": "did", "do": "did", "did": did_now, "is": "was", "am": "was",
                   "are": "were", "was": was_now, "were": "are"}[w]
            if new is None:  # no subject: left alone, the not too
                j += 2
                continue
            new += " not"
            out[j + 1] = ""
            step = 2
        elif w in _BE:
            new = {"is": "was", "am": "was", "are": "were", "was": was_now, "were": "are"}[w]
            if new is None:
                j += 1
                continue
        elif tag in ("VBZ", "VBP"):
            new = inflected(base_form(w), "VBD")
        elif tag == "VBD" and person != "none":
            new = inflected(base_form(w), "VBZ") if third else base_form(w)
        else:
            j += 1
            continue
        out[j] = restyle(new, tok)
        made += 1
        j += step
    return out, made


RULES = {"negation": negation, "singular_plural_verb": singular_plural_verb, "verb_tense": verb_tense}
