"""Character-level perturbations of Moradi & Samwald (2021), section 4.1 (text shift).

"Evaluating the Robustness of Neural Language Models to Input Perturbations"
(EMNLP 2021) perturbs the characters of randomly selected words of a sample;
their hyperparameter PPS ("perturbations per sample", 1 to 4) caps how many
perturbations one sample gets. The seven kinds (paper's Table 2):

- ``insertion``: a random letter inserted at a random inner position (never
  first or last), in a word of at least three characters.
- ``deletion``: one inner character deleted (never the first or last), in a
  word of at least three characters.
- ``replacement``: one letter replaced by a neighbouring key on a QWERTY
  keyboard (same row left/right, and the two touching keys of the rows above
  and below), keeping its case.
- ``swap``: one character swapped with its left or right neighbour (a pair of
  two different characters, so the word changes).
- ``repetition``: one inner character (not first or last) doubled.
- ``misspelling``: a word found in :data:`MISSPELLINGS` replaced by one of its
  common misspellings, keeping its case pattern.
- ``letter_case``: the case of the first character, or of all characters,
  toggled (``swapcase``), each with probability 1/2.

What the paper leaves open for documents, and what we chose:

- *Sample.* The paper perturbs sentences. Here a sample is the text of one
  entity (FUNSD: a header, question, answer or other field), made of its
  eligible token words; for words in no entity (RVL-CDIP OCR, or documents
  without entities) a sample is one text line: consecutive words in reading
  order that share a line (vertical overlap of at least half the smaller
  height, no step back to the left).
- *Fraction.* ``fraction`` is the share of a document's eligible words
  that are changed, the knob every text shift of this package shares (the
  Do-GOOD paper changes 10% of the words). Samples are drawn in random
  order and each gets up to ``per_sample`` perturbations until
  ``round(fraction * eligible words)`` words are changed (the last sample
  gets only as many as are missing); a drawn sample none of whose words can
  be perturbed is counted ``unchangeable`` and the next one takes its
  place. So the measured ``changed / eligible`` of the counts equals
  ``fraction`` (up to rounding per document) whenever enough words can
  change; ``word_order`` may pass it by up to ``span - 1`` words per
  document, since a shuffle moves a whole window.
- *Per sample.* ``per_sample=k`` perturbs up to ``k`` distinct words of each
  drawn sample, one perturbation each (the paper's PPS); a sample with
  fewer perturbable words gets as many as it has and the missing ones are
  counted ``short``.
- *What a word is.* Punctuation around a word (``"Date:"``, ``"(see"``) is
  kept and only the core between it is perturbed. Words whose core has a
  digit (``number``), a letter outside the Latin script (``non_latin``),
  another symbol (``symbol``, e.g. ``"and/or"``), no letter at all
  (``empty``) or more than :data:`MAX_WORD_LENGTH` characters
  (``too_long``) are never changed; the words of drawn samples left alone
  for these reasons are counted under those names.
- *Layout.* Text shifts keep boxes and labels: the perturbed word keeps its
  box, entity and links. The page image still shows the original text unless
  ``render=True``, which redraws the changed words
  (:func:`dogood.render.render_words`).

Counts returned with the document: ``eligible`` (token words),
``changed`` (words changed: new text, deleted, repeated or moved),
``samples`` and ``perturbed_samples``, ``unchangeable`` (drawn samples with
no perturbable word), ``perturbations``, ``short`` (perturbations missing to
reach ``k`` in perturbed samples), and the word reasons above.

The misspelling table is written here by hand. The paper draws on
Wikipedia's "Lists of common misspellings/For machines"; each entry below is
a well-known misspelling of the kind that list holds (not copied from it).
Misspellings that dictionaries also accept as variants or as other words
(``calender``, ``miniscule``, ``supercede``) are left out; ``florescent``
stays because it is the paper's own example (Table 2).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

import numpy as np

from dogood.document import Document, Word
from dogood.shifts.base import Shift
from dogood.shifts.selection import eligible_words
from dogood.shifts.words import delete_words, insert_words, replace_texts

#: Words whose core is longer than this are left alone (URLs, run-together OCR, codes).
MAX_WORD_LENGTH = 25

CHAR_KINDS = ("insertion", "deletion", "replacement", "swap", "repetition", "misspelling", "letter_case")

_QWERTY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _keyboard_neighbours() -> dict[str, str]:
    """Each letter's touching keys on a QWERTY keyboard (rows staggered to the right going down)."""
    out: dict[str, str] = {}
    for r, row in enumerate(_QWERTY_ROWS):
        for i, ch in enumerate(row):
            near = []
            if i > 0:
                near.append(row[i - 1])
            if i + 1 < len(row):
                near.append(row[i + 1])
            if r > 0:  # the row above is shifted left by half a key: indices i and i+1 touch
                above = _QWERTY_ROWS[r - 1]
                near += [above[j] for j in (i, i + 1) if j < len(above)]
            if r + 1 < len(_QWERTY_ROWS):  # the row below: indices i-1 and i touch
                below = _QWERTY_ROWS[r + 1]
                near += [below[j] for j in (i - 1, i) if 0 <= j < len(below)]
            out[ch] = "".join(sorted(near))
    return out


#: ``KEYBOARD_NEIGHBOURS["s"] == "adewxz"``: the keys touching each letter on QWERTY.
KEYBOARD_NEIGHBOURS = _keyboard_neighbours()

# Correct spelling -> common misspellings (see the module docstring for the source).
_MISSPELLINGS_TABLE = """
accommodate accomodate acommodate
accommodation accomodation
achieve acheive
acquire aquire
across accross
address adress
addressed adressed
advertisement advertisment
apparent apparant aparent
approximately aproximately
argument arguement
athlete athelete
attendance attendence
available availible avaliable
basically basicly
beautiful beatiful
because becuase
beginning begining
believe beleive belive
business buisness bussiness
category catagory
cemetery cemetary
changeable changable
colleague collegue
column colum
commission comission
commitment committment
committed commited
committee commitee comittee
completely completly
conscious concious
consensus concensus
correspondence correspondance
definitely definately definatly
description discription
desperate desparate
develop develope
development developement
different diffrent
dilemma dilema
disappear dissapear
embarrass embarass
embarrassment embarassment
environment enviroment
equipment equiptment
exercise excercise
existence existance
experience experiance
familiar familar
february febuary
finally finaly
fiery firey
fluorescent florescent
foreign foriegn
forty fourty
friend freind
gauge guage
government goverment
grammar grammer
grateful greatful
guarantee garantee guarentee
harass harrass
height heighth
hierarchy heirarchy
immediate imediate
immediately immediatly
incidentally incidently
independent independant
indispensable indispensible
information infomation
inoculate innoculate
intelligence inteligence
interrupt interupt
knowledge knowlege
leisure liesure
liaison liason
library libary
license lisence
maintenance maintainance maintenence
management managment
millennium millenium
mischievous mischievious
misspell mispell
necessarily neccessarily
necessary neccessary necessery
noticeable noticable
occasion ocassion occassion
occasionally occasionaly
occurred occured
occurrence occurence occurance
original orginal
parliament parliment
pastime passtime
perseverance perseverence
personnel personel
piece peice
playwright playwrite
possess posess
possession posession
precede preceed
preferred prefered
privilege priviledge
procedure proceedure
proceed procede
professional proffesional
pronunciation pronounciation
pursue persue
questionnaire questionaire
really realy
receipt reciept
receive recieve
received recieved
receiving recieving
recommend recomend reccommend
recommendation recomendation
reference refrence
referred refered
relevant relevent
religious religous
responsibility responsability
restaurant restaraunt
rhythm rythm
ridiculous rediculous
sentence sentance
separate seperate
separately seperately
siege seige
similar similiar
sincerely sincerly
speech speach
successful succesful sucessful
surprise suprise
temperature temprature
tendency tendancy
their thier
threshold threshhold
tomorrow tommorow tommorrow
tongue tounge
transferred transfered
truly truely
twelfth twelth
tyranny tyrany
unfortunately unfortunatly
until untill
vehicle vehical
weird wierd
withhold withold
writing writting
written writen
"""

#: Correct (lower-case) word -> its common misspellings.
MISSPELLINGS: dict[str, tuple[str, ...]] = {
    line.split()[0]: tuple(line.split()[1:]) for line in _MISSPELLINGS_TABLE.strip().splitlines()
}

_INNER_MARKS = "'\u2019-"  # apostrophes and hyphens allowed inside a word's core


# -- words ----------------------------------------------------------------------------
def split_word(text: str) -> tuple[str, str, str]:
    """``(prefix, core, suffix)``: punctuation before and after the word and the core between."""
    start, end = 0, len(text)
    while start < end and not text[start].isalnum():
        start += 1
    while end > start and not text[end - 1].isalnum():
        end -= 1
    return text[:start], text[start:end], text[end:]


def core_problem(core: str) -> str | None:
    """Why a word core must be left alone (``empty``, ``number``, ``non_latin``, ``symbol``, ``too_long``), or ``None``."""
    if not core or not any(c.isalpha() for c in core):
        return "number" if any(c.isdigit() for c in core) else "empty"
    if any(c.isdigit() for c in core):
        return "number"
    for c in core:
        if c.isalpha():
            if not unicodedata.name(c, "").startswith("LATIN"):
                return "non_latin"
        elif c not in _INNER_MARKS:
            return "symbol"
    if len(core) > MAX_WORD_LENGTH:
        return "too_long"
    return None


def match_case(template: str, word: str) -> str:
    """``word`` in the case pattern of ``template``: ALL CAPS, Capitalised, or lower case."""
    letters = [c for c in template if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return word.upper()
    if letters and letters[0].isupper():
        return word[:1].upper() + word[1:]
    return word


# -- samples ----------------------------------------------------------------------------
def text_samples(doc: Document, labels: Collection[str] | None = None) -> list[list[int]]:
    """The document's samples: lists of eligible token word indices, in reading order.

    One sample per entity with eligible words (its words in entity order);
    eligible words in no entity form one sample per text line.
    """
    eligible = eligible_words(doc, labels)
    allowed = set(eligible)
    samples: list[list[int]] = []
    in_entity: set[int] = set()
    for ent in doc.entities:
        ids = [i for i in ent.word_ids if i in allowed]
        in_entity.update(ent.word_ids)
        if ids:
            samples.append(ids)
    line: list[int] = []
    for i in eligible:
        if i in in_entity:
            continue
        if line and not _same_line(doc.words[line[-1]].box, doc.words[i].box):
            samples.append(line)
            line = []
        line.append(i)
    if line:
        samples.append(line)
    return samples


def _same_line(a, b) -> bool:
    overlap = min(a[3], b[3]) - max(a[1], b[1])
    smaller = min(a[3] - a[1], b[3] - b[1])
    return b[0] >= a[0] and overlap >= 0.5 * max(smaller, 1)


# -- edits --------------------------------------------------------------------------------
@dataclass
class Edits:
    """Word edits collected over a document, applied at once by :func:`apply_edits`.

    ``replace``: new text per word index; ``insert``: new words placed right
    after a word (in its entity); ``delete``: word indices removed.
    """

    replace: dict[int, str] = field(default_factory=dict)
    insert: dict[int, list[Word]] = field(default_factory=dict)
    delete: set[int] = field(default_factory=set)

    def touched(self) -> set[int]:
        return set(self.replace) | set(self.insert) | self.delete


def apply_edits(doc: Document, edits: Edits) -> tuple[Document, list[int]]:
    """``doc`` with ``edits`` applied, and the indices (in the new document) of words with new text."""
    out = replace_texts(doc, edits.replace)
    out = insert_words(out, edits.insert)
    position = []  # index of each old word after the insertions
    new_words: list[int] = []
    pos = len(edits.insert.get(-1, ()))
    for i in range(len(doc.words)):
        position.append(pos)
        extra = len(edits.insert.get(i, ()))
        new_words.extend(range(pos + 1, pos + 1 + extra))
        pos += 1 + extra
    gone = sorted(position[i] for i in edits.delete)
    out = delete_words(out, gone)
    changed = sorted([position[i] for i in edits.replace if i not in edits.delete] + new_words)
    shift = np.searchsorted(np.array(gone, dtype=np.int64), np.array(changed, dtype=np.int64))
    return out, [int(c - s) for c, s in zip(changed, shift)]


def perturb_samples(
    doc: Document,
    rng: np.random.Generator,
    *,
    fraction: float,
    per_sample: int,
    labels: Collection[str] | None,
    perturb: Callable[[Sequence[int], int, np.random.Generator, Edits], int],
) -> tuple[Edits, dict[str, int]]:
    """Perturb samples, drawn in random order, until ``round(fraction * eligible words)`` words are changed.

    ``perturb(sample, k, rng, edits)`` records at most ``k`` perturbations of
    the words of ``sample`` in ``edits`` and returns how many it made; ``k``
    is ``per_sample``, or fewer for the last sample so as not to pass the
    target. A sample with no perturbation is counted ``unchangeable`` and
    the next one takes its place. A word counts as changed once, whatever
    happened to it (new text, deleted, repeated, moved).
    """
    samples = text_samples(doc, labels)
    eligible = sum(len(s) for s in samples)
    target = int(round(fraction * eligible))
    edits = Edits()
    counts = Counter(eligible=eligible, changed=0, samples=len(samples), perturbed_samples=0,
                     unchangeable=0, perturbations=0, short=0)
    if target:
        for s in rng.permutation(len(samples)):
            sample = samples[int(s)]
            for i in sample:
                problem = core_problem(split_word(doc.words[i].text)[1])
                if problem:
                    counts[problem] += 1
            k = min(per_sample, target - len(edits.touched()))
            made = perturb(sample, k, rng, edits)
            if not made:
                counts["unchangeable"] += 1
                continue
            counts["perturbed_samples"] += 1
            counts["perturbations"] += made
            counts["short"] += k - made
            if len(edits.touched()) >= target:
                break
    counts["changed"] = len(edits.touched())
    return edits, dict(counts)


def perturb_words(
    candidates: Sequence[int], k: int, rng: np.random.Generator, attempt: Callable[[int], bool]
) -> int:
    """Try ``attempt(i)`` on the candidates in random order until ``k`` succeed; the number that did."""
    made = 0
    for j in rng.permutation(len(candidates)):
        if made == k:
            break
        if attempt(candidates[int(j)]):
            made += 1
    return made


def validate_common(fraction: float, per_sample: int, labels) -> tuple[str, ...] | None:
    """Check the shared knobs; ``labels`` as a tuple (or ``None``)."""
    if not 0.0 <= float(fraction) <= 1.0:
        raise ValueError(f"fraction must be in [0, 1], got {fraction}")
    if int(per_sample) != per_sample or per_sample < 1:
        raise ValueError(f"per_sample must be a positive integer (the paper uses 1 to 4), got {per_sample}")
    if labels is None:
        return None
    if isinstance(labels, str):
        labels = (labels,)
    return tuple(str(x) for x in labels)


def finish(out: Document, original: Document, edits: Edits, changed: list[int], render: bool) -> Document:
    """Make the page image agree with the words when ``render`` (:mod:`dogood.render`, imported lazily).

    Deleted words are erased from the page (rendered as blank text in the
    original document), then the words with new text (``changed``, indices
    in ``out``) are drawn in their boxes.
    """
    if not render or not (changed or edits.delete):
        return out
    from dogood.render import render_words

    if edits.delete:
        blanked = replace_texts(original, {i: "" for i in edits.delete})
        out = out.replace(image=render_words(blanked, sorted(edits.delete)).image)
    if not changed:
        return out
    same_words = len(out.words) == len(original.words)  # render_words compares with original word by word
    return render_words(out, changed, original=original if same_words else None)


# -- character perturbations ------------------------------------------------------------------
def _random_letter(rng: np.random.Generator, upper: bool) -> str:
    ch = chr(ord("a") + int(rng.integers(26)))
    return ch.upper() if upper else ch


def perturb_core(core: str, kind: str, rng: np.random.Generator) -> str | None:
    """One ``kind`` perturbation of a word core, or ``None`` when the core does not allow it."""
    n = len(core)
    if kind == "insertion":
        if n < 3:
            return None
        pos = int(rng.integers(1, n))  # before core[pos]: the new letter is never first or last
        return core[:pos] + _random_letter(rng, core.isupper()) + core[pos:]
    if kind == "deletion":
        if n < 3:
            return None
        pos = int(rng.integers(1, n - 1))
        return core[:pos] + core[pos + 1:]
    if kind == "repetition":
        if n < 3:
            return None
        pos = int(rng.integers(1, n - 1))
        return core[: pos + 1] + core[pos] + core[pos + 1:]
    if kind == "replacement":
        spots = [j for j, c in enumerate(core) if c.lower() in KEYBOARD_NEIGHBOURS]
        if not spots:
            return None
        pos = spots[int(rng.integers(len(spots)))]
        near = KEYBOARD_NEIGHBOURS[core[pos].lower()]
        new = near[int(rng.integers(len(near)))]
        return core[:pos] + (new.upper() if core[pos].isupper() else new) + core[pos + 1:]
    if kind == "swap":
        pairs = [j for j in range(n - 1) if core[j] != core[j + 1]]
        if not pairs:
            return None
        pos = pairs[int(rng.integers(len(pairs)))]
        return core[:pos] + core[pos + 1] + core[pos] + core[pos + 2:]
    if kind == "misspelling":
        options = MISSPELLINGS.get(core.lower())
        if not options:
            return None
        return match_case(core, options[int(rng.integers(len(options)))])
    if kind == "letter_case":
        first = core[:1].swapcase() + core[1:]
        whole = core.swapcase()
        choices = [c for c in ((first, whole) if rng.integers(2) == 0 else (whole, first))
                   if c != core and c.casefold() == core.casefold() and len(c) == n]
        return choices[0] if choices else None
    raise ValueError(f"unknown character perturbation {kind!r}")


class CharPerturbation(Shift):
    """Character-level perturbations of Moradi & Samwald (2021), section 4.1 and Table 2.

    Keeps boxes, labels, entities and links; changes the text of up to
    ``per_sample`` words in each drawn sample (see the module docstring for
    the kinds, what a sample is, and the counts).

    Parameters
    ----------
    kind : ``insertion``, ``deletion``, ``replacement`` (QWERTY neighbour),
        ``swap``, ``repetition``, ``misspelling`` or ``letter_case``.
    per_sample : perturbations per sample, at most (the paper's PPS: 1 to 4).
    fraction : share of the eligible words changed (Do-GOOD: 0.1), reached
        sample by sample; the counts' ``changed / eligible`` measures it.
    labels : entity labels whose words are eligible (default: all words).
    render : redraw the changed words into the page image (default: the
        image keeps the original text).
    """

    name = "char_perturbation"
    family = "text"

    def __init__(
        self,
        kind: str = "insertion",
        per_sample: int = 1,
        fraction: float = 0.1,
        labels: tuple[str, ...] | None = None,
        render: bool = False,
    ):
        if kind not in CHAR_KINDS:
            raise ValueError(f"kind must be one of {', '.join(CHAR_KINDS)}, got {kind!r}")
        self.kind = kind
        self.labels = validate_common(fraction, per_sample, labels)
        self.per_sample = int(per_sample)
        self.fraction = float(fraction)
        self.render = bool(render)

    def apply(self, doc: Document, rng: np.random.Generator) -> tuple[Document, dict[str, int]]:
        words = doc.words

        def perturb(sample: Sequence[int], k: int, rng: np.random.Generator, edits: Edits) -> int:
            def attempt(i: int) -> bool:
                prefix, core, suffix = split_word(words[i].text)
                if core_problem(core):
                    return False
                new = perturb_core(core, self.kind, rng)
                if new is None or new == core:
                    return False
                edits.replace[i] = prefix + new + suffix
                return True

            return perturb_words(sample, k, rng, attempt)

        edits, counts = perturb_samples(
            doc, rng, fraction=self.fraction, per_sample=self.per_sample, labels=self.labels, perturb=perturb
        )
        out, changed = apply_edits(doc, edits)
        return finish(out, doc, edits, changed, self.render), counts
