"""Word-level perturbations of Moradi & Samwald (2021), section 4.2 (text shift).

The paper's seven word-level kinds (Table 2), on the samples of a document
(one entity's words, or one text line for words in no entity: see
:mod:`dogood.shifts.text._samples`, which also defines ``fraction``,
``per_sample`` and the counts shared with ``char_perturbation``).
``deletion`` and ``repetition`` follow the paper's description; the other
kinds are inspired by it, as each entry says:

- ``deletion``: a word is removed, with its box and its place in its entity.
  A sample always keeps at least one word, so an entity (and its links) never
  disappears; a one-word sample cannot be changed.
- ``repetition``: a copy of a word is inserted right after it, in its entity
  (so it is tagged ``I-``), with a box of its twin's size just right of the
  twin on the same line (left of it at the page edge:
  :func:`dogood.language.edits.box_beside`). The copy may overlap the next word.
- ``synonym``: a word is replaced by a WordNet synonym (Miller 1995, through
  NLTK), inflected like the word (lemminflect). The sample is tagged with
  Penn tags (:mod:`dogood.language.pos_tagger`, the ``pos`` extra); the
  synonyms come from the word's most frequent sense in its tag's part of
  speech only (WordNet lists senses by frequency), single words of letters
  only; proper nouns (``NNP``), stop words (NLTK's English list) and words
  tagged other than noun, verb, adjective or adverb are left alone. Without
  sense disambiguation beyond the tag, a rare sense can still be picked.
- ``negation``: an auxiliary (``is``, ``are``, ``was``, ``were``, ``am``,
  ``do``, ``does``, ``did``, ``has``, ``have``, ``had``, ``can``, ``could``,
  ``would``, ``should``, ``must``) gets a ``not`` inserted after it (a new
  word, boxed like a repetition with a width in proportion to its three
  letters); a contraction loses its ``n't`` (``isn't`` -> ``is``, ``can't``
  and ``cannot`` -> ``can``, ``won't`` -> ``will``); a ``not`` (or a
  separate ``n't`` token) is deleted.
  ``will`` and ``may`` are not negated: on forms they are too often a noun
  or the month.
- ``singular_plural_verb``: third-person singular and plural verb forms
  swapped: ``is``/``are``, ``was``/``were``, ``has``/``have``,
  ``does``/``do`` (and their ``n't`` forms); a lexical verb in ``-s`` form
  loses it and a base form gains it (``requires`` <-> ``require``).
- ``verb_tense``: present <-> past: ``is``/``am`` -> ``was``, ``are`` ->
  ``were``, ``has``/``have`` -> ``had``, ``do``/``does`` -> ``did``,
  ``can`` <-> ``could`` and back (``was`` -> ``is``, ``were`` -> ``are``,
  ``had`` -> ``has``, ``did`` -> ``does``: without a parser the subject is
  taken to be third-person singular), with their ``n't`` forms; a lexical
  verb's ``-s`` form becomes its past (``requires`` -> ``required``) and an
  irregular past that differs from the participle becomes the ``-s`` form
  (``wrote`` -> ``writes``). Continuous tenses change through their
  auxiliary (``is going`` -> ``was going``).
- ``word_order``: the texts of a window of ``span`` consecutive words of the
  sample are shuffled (re-drawn until the order differs) over the same boxes:
  the paper perturbs the order of the text, so the boxes stay in their
  reading positions and the texts move between them; every word stays in its
  entity. ``per_sample=k`` shuffles ``k`` non-overlapping windows. Words of
  any text may move (numbers too: they move unchanged).

``style: paper`` runs the paper's reference scripts' rules instead
(:mod:`dogood.shifts.text._paper_style`, docs/moradi-samwald.md): tokens as
``nltk.word_tokenize`` makes them, Penn tags from the packaged tagger, every
verb of a sample for the three verb kinds, the first three words with a
synonym (``per_sample``) among all WordNet senses, a prefix or suffix block
of words deranged for ``word_order``.

In style ``dogood`` the verb kinds use no tagger: verbs are recognised by
rule. A lexical verb is a word that WordNet knows only as a verb form (no
noun, adjective or adverb reading: ``requires`` yes, ``forms`` no) and whose
form lemminflect identifies. The paper's own rules use POS tags and subjects
(and ``mlconjug3`` for tenses), so our verb kinds change fewer words, and
more safely.

Layout and labels: replaced words keep their boxes; added words join the
entity of the word they follow; deleted words leave with their boxes; links
between entities are kept (no entity loses all its words). Extra counts:
``added`` and ``deleted`` words. ``render=True`` redraws the words with new
text (:func:`dogood.page.render.render_words`) and erases deleted words from the
page; a repeated word or an added ``not`` is drawn in its new box, over
whatever ink is there (the box may overlap the next word).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Literal

import numpy as np
from pydantic import Field

from dogood.core.document import Document, Word
from dogood.core.papers import Cites
from dogood.language.edits import Edits, box_beside
from dogood.language.lexicons import in_wordnet, inflect_verb, require, tagged_synonyms, verb_forms
from dogood.language.sample_tokens import tokenize_words
from dogood.language.words import case_like, split_word
from dogood.shifts import params
from dogood.shifts.text import _paper_style
from dogood.shifts.text._samples import STYLE, SamplePerturbation, Style, perturb_words

WORD_KINDS = ("deletion", "repetition", "synonym", "negation", "singular_plural_verb", "verb_tense", "word_order")
_NEEDS_WORDNET = ("synonym", "singular_plural_verb", "verb_tense")

_NEGATABLE = frozenset("is are was were am do does did has have had can could would should must".split())
_POSITIVE = {
    "isn't": "is", "aren't": "are", "wasn't": "was", "weren't": "were", "don't": "do", "doesn't": "does",
    "didn't": "did", "hasn't": "has", "haven't": "have", "hadn't": "had", "can't": "can", "cannot": "can",
    "couldn't": "could", "won't": "will", "wouldn't": "would", "shouldn't": "should", "mustn't": "must",
}
_NUMBER = {
    "is": "are", "are": "is", "was": "were", "were": "was", "has": "have", "have": "has", "does": "do", "do": "does",
    "isn't": "aren't", "aren't": "isn't", "wasn't": "weren't", "weren't": "wasn't", "hasn't": "haven't",
    "haven't": "hasn't", "doesn't": "don't", "don't": "doesn't",
}
_TENSE = {
    "is": "was", "am": "was", "are": "were", "has": "had", "have": "had", "does": "did", "do": "did",
    "can": "could", "was": "is", "were": "are", "had": "has", "did": "does", "could": "can",
    "isn't": "wasn't", "aren't": "weren't", "hasn't": "hadn't", "haven't": "hadn't", "doesn't": "didn't",
    "don't": "didn't", "can't": "couldn't", "wasn't": "isn't", "weren't": "aren't", "hadn't": "hasn't",
    "didn't": "doesn't", "couldn't": "can't",
}


def _lookup(core: str) -> tuple[str, bool]:
    """Lower-case core with straight apostrophes, and whether it had a curly one."""
    curly = "\u2019" in core
    return core.replace("\u2019", "'").lower(), curly


def _restyle(template: str, new: str, curly: bool) -> str:
    new = case_like(new, template)
    return new.replace("'", "\u2019") if curly else new


def swap_verb(core: str, kind: str) -> str | None:
    """The core with its verb's number (``singular_plural_verb``) or tense (``verb_tense``) swapped, or ``None``."""
    key, curly = _lookup(core)
    table = _NUMBER if kind == "singular_plural_verb" else _TENSE
    if key in table:
        return _restyle(core, table[key], curly)
    found = verb_forms(key)
    if found is None:
        return None
    lemma, tags = found
    if kind == "singular_plural_verb":
        if "VBZ" in tags:
            new = lemma
        elif "VB" in tags and not tags & {"VBD", "VBN"}:
            new = inflect_verb(lemma, "VBZ")
        else:
            return None
    else:
        if "VBZ" in tags:
            new = inflect_verb(lemma, "VBD")
        elif "VBD" in tags and "VBN" not in tags:
            new = inflect_verb(lemma, "VBZ")
        else:
            return None
    if not new or new == key:
        return None
    return _restyle(core, new, curly)


def core_tags(doc: Document, sample: Sequence[int]) -> dict[int, str]:
    """The Penn tag of each sample word's core, tagged in the sample's context (words whose core is not one token,
    such as ``don't``, have none). ALL-CAPS tokens are tagged in lower case: the tagger, trained on newswire, takes
    capitals for proper nouns, and forms write many keys and headers in capitals (``ACCOUNT``, ``SUBJECT:``)."""
    from dogood.language.pos_tagger import pos_tags

    texts = [doc.words[i].text for i in sample]
    tokens = tokenize_words(texts)
    tags = pos_tags([t.text.lower() if t.text.isupper() and len(t.text) > 1 else t.text for t in tokens])
    out: dict[int, str] = {}
    for tok, tag in zip(tokens, tags):
        prefix, core, _ = split_word(texts[tok.word])
        if core and tok.start == len(prefix) and tok.end == len(prefix) + len(core):
            out[sample[tok.word]] = tag
    return out


# -- the shift ---------------------------------------------------------------------------------
class WordPerturbation(SamplePerturbation):
    """Word-level perturbations of Moradi & Samwald (2021), section 4.2 and Table 2; the verb, synonym and
    word-order kinds are inspired by the paper, not its code.

    Entities, IOB tags and links stay consistent with the words: see the
    module docstring for each kind and how it differs from the paper, and
    :mod:`dogood.shifts.text._samples` for what a sample is and what is counted.

    Parameters: :class:`WordPerturbation.Params`.
    """

    name = "word_perturbation"
    #: What each kind may change (:meth:`declared_factors`): a deleted or inserted word changes the word set, a
    #: word whose form changes its text; ``word_order`` trades texts over boxes that stay in their places, so the
    #: texts at those places change.
    factors = frozenset({"text", "word_set"})
    kind_factors: ClassVar[dict[str, frozenset[str]]] = {
        "deletion": frozenset({"word_set"}), "repetition": frozenset({"word_set"}),
        "synonym": frozenset({"text"}), "negation": frozenset({"text", "word_set"}),
        "singular_plural_verb": frozenset({"text"}), "verb_tense": frozenset({"text"}),
        "word_order": frozenset({"text"}),
    }
    #: In style paper the reference scripts edit tokens, not words (:mod:`dogood.shifts.text._paper_style`): a
    #: deleted token may leave its word with the rest of its text, and a word whose new text is several words keeps
    #: its box for the first and puts the others in boxes beside it (which of the parts is the source word is not
    #: recorded: its text, or its box, changed). What each kind may change then:
    paper_kind_factors: ClassVar[dict[str, frozenset[str]]] = {
        "deletion": frozenset({"text", "word_set"}),
        "repetition": frozenset({"text", "word_set", "box_position"}),
        "synonym": frozenset({"text", "word_set", "box_position"}),
        "negation": frozenset({"text", "word_set", "box_position"}),
        "singular_plural_verb": frozenset({"text", "word_set", "box_position"}),
        "verb_tense": frozenset({"text", "word_set", "box_position"}),
        "word_order": frozenset({"text"}),
    }
    factor_notes = ("in style paper (tokens edited, a word split into words beside it): deletion adds text; "
                    "repetition, synonym, negation, singular_plural_verb and verb_tense: text, word_set, "
                    "box_position",)
    reported_counts = ("eligible", "changed", "unchangeable", "samples", "perturbed_samples", "perturbations", "short", "empty", "number", "non_latin", "symbol", "too_long",
                       "added", "deleted")
    papers = (Cites("moradi", "4.2, Table 2", inspired_by=(
        "in style dogood (style paper runs the reference scripts' rules), synonym takes WordNet synonyms of the "
        "tagged part of speech's most frequent sense only, inflected with lemminflect; negation, "
        "singular_plural_verb and verb_tense find verbs by rule (no POS tagger, no subject, no mlconjug3) and "
        "negate by inserting 'not' after an auxiliary; word_order shuffles the texts of a window of span words over "
        "their boxes. Deletion and repetition follow the paper")),)

    class Params(SamplePerturbation.Params):
        kind: Literal[WORD_KINDS] = Field("deletion", description="the word perturbation (the paper's Table 2)")
        span: params.Integer = Field(3, ge=2, description=(
            "word_order in style dogood only: words per shuffled window (a shorter sample shuffles all its words)"))
        style: Style = STYLE

    def declared_factors(self) -> frozenset[str]:
        table = self.paper_kind_factors if self.style == "paper" else self.kind_factors
        return table[self.kind] | (self.render_factors if self.render else frozenset())

    def declared_cues(self) -> frozenset[str]:
        """A deletion draws no new word (it erases): no redrawn word to test."""
        cues = super().declared_cues()
        return cues - {"word_style"} if self.kind == "deletion" else cues

    def requirements(self) -> tuple[str, ...]:
        """What :meth:`prepare` checks, for ``dogood plan``."""
        if self.style == "paper":
            if self.kind == "synonym":
                return ("nltk:wordnet", "pos:tagger")
            return ("pos:tagger",) if self.kind in _paper_style.RULES else ()
        needs = ("nltk:wordnet", "nltk:stopwords") if self.kind in _NEEDS_WORDNET else ()
        return needs + (("pos:tagger",) if self.kind == "synonym" else ())

    def prepare(self) -> None:
        who = f"kind {self.kind!r}" + (" in style 'paper'" if self.style == "paper" else "")
        if self.style == "paper":
            if self.kind == "synonym":
                require(who, "wordnet", "pos_tagger")
            elif self.kind in _paper_style.RULES:
                require(who, "lemminflect", "pos_tagger")
            else:
                require(who, "nltk")
            return
        if self.kind in _NEEDS_WORDNET:
            require(who, "lemminflect", "wordnet", "stopwords")
        if self.kind == "synonym":
            require(who, "pos_tagger")

    def card_notes(self, schema: str = "funsd") -> list[str]:
        return [_paper_style.style_note(self.style, self.kind, self.per_sample)]

    def perturb(self, doc: Document, sample: Sequence[int], k: int, rng: np.random.Generator, edits: Edits) -> int:
        if self.style == "paper":
            return _paper_style.perturb_words(self.kind, doc, sample, k, rng, edits)
        return getattr(self, f"_{self.kind}")(doc, sample, k, rng, edits)

    def extra_counts(self, edits: Edits) -> dict[str, int]:
        return {"added": sum(len(v) for v in edits.insert.values()), "deleted": len(edits.delete)}

    def draws(self) -> bool:
        return self.kind != "deletion"

    # -- kinds: each records at most k perturbations of one sample and returns how many ------
    def _deletion(self, doc: Document, sample: Sequence[int], k: int, rng: np.random.Generator, edits: Edits) -> int:
        k = min(k, len(sample) - 1)  # keep one word: the entity and its links stay
        if k <= 0:
            return 0

        def attempt(i):
            if self.plain(doc, i) is None:
                return False
            edits.delete.add(i)
            return True

        return perturb_words(sample, k, rng, attempt)

    def _repetition(self, doc: Document, sample: Sequence[int], k: int, rng: np.random.Generator, edits: Edits) -> int:
        def attempt(i):
            if self.plain(doc, i) is None:
                return False
            twin = doc.words[i]
            box = box_beside(twin.box, twin.box[2] - twin.box[0], doc.width)
            edits.insert[i] = [Word(twin.text, box)]
            return True

        return perturb_words(sample, k, rng, attempt)

    def _synonym(self, doc: Document, sample: Sequence[int], k: int, rng: np.random.Generator, edits: Edits) -> int:
        tags: dict[int, str] = {}

        def attempt(i: int) -> bool:
            parts = self.plain(doc, i)
            if parts is None or not in_wordnet(parts[1].lower()):
                return False
            if not tags:  # tagged once, when a word of the sample first may have a synonym
                tags.update(core_tags(doc, sample) or {-1: ""})
            if tags.get(i) is None:
                return False
            prefix, core, suffix = parts
            options = tagged_synonyms(core.lower(), tags[i])
            if not options:
                return False
            new = case_like(options[int(rng.integers(len(options)))], core)
            if new == core:
                return False
            edits.replace[i] = prefix + new + suffix
            return True

        return perturb_words(sample, k, rng, attempt)

    def _negation(self, doc: Document, sample: Sequence[int], k: int, rng: np.random.Generator, edits: Edits) -> int:
        words = doc.words
        keys = [_lookup(split_word(words[i].text)[1])[0] for i in sample]
        position = {i: j for j, i in enumerate(sample)}

        def attempt(i):
            parts = self.plain(doc, i)
            if parts is None:
                return False
            prefix, core, suffix = parts
            key, curly = _lookup(core)
            j = position[i]
            if key in _POSITIVE:
                edits.replace[i] = prefix + _restyle(core, _POSITIVE[key], curly) + suffix
                return True
            if key in ("not", "n't"):
                if len(sample) - len(edits.delete & set(sample)) <= 1:
                    return False
                edits.delete.add(i)
                return True
            if key in _NEGATABLE and not suffix and (j + 1 == len(sample) or keys[j + 1] not in ("not", "n't")):
                twin = words[i]
                width = max(1, round((twin.box[2] - twin.box[0]) * 3 / max(len(twin.text), 1)))
                text = "NOT" if core.isupper() and len(core) > 1 else "not"
                edits.insert[i] = [Word(text, box_beside(twin.box, width, doc.width))]
                return True
            return False

        return perturb_words(sample, k, rng, attempt)

    def _verb(self, doc: Document, sample: Sequence[int], k: int, rng: np.random.Generator, edits: Edits) -> int:
        return self.replace_cores(doc, sample, k, rng, edits, lambda core: swap_verb(core, self.kind))

    _singular_plural_verb = _verb
    _verb_tense = _verb

    def _word_order(self, doc: Document, sample: Sequence[int], k: int, rng: np.random.Generator, edits: Edits) -> int:
        n = len(sample)
        if n < 2:
            return 0
        m = min(self.span, n)
        k = min(k, n // m)
        free = n - k * m
        picks = np.sort(rng.choice(free + k, size=k, replace=False))
        made = 0
        for j, c in enumerate(picks):
            start = int(c) + j * (m - 1)
            window = sample[start:start + m]
            texts = [doc.words[i].text for i in window]
            if len(set(texts)) < 2:
                continue
            while True:
                order = rng.permutation(m)
                new = [texts[int(o)] for o in order]
                if new != texts:
                    break
            for i, old, text in zip(window, texts, new):
                if text != old:
                    edits.replace[i] = text
            made += 1
        return made
