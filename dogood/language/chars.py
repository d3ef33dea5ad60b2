"""Character edits of one word: typos, keyboard slips, common misspellings, deletions, case changes.

The form-attack paper's BG Typo (:func:`typo`: swap, delete, add or replace a
character, the replacement half the time an OCR confusion) and the seven
character-level perturbations of Moradi & Samwald (2021), section 4.1 and
Table 2 (:func:`perturb_core`). One character is deleted in one way
(:func:`deletions` lists every deletion, TextAttack's
``WordSwapRandomCharacterDeletion`` candidates). Randomness comes only from
the caller's generator.

The misspelling table is written here by hand. The paper draws on
Wikipedia's "Lists of common misspellings/For machines"; each entry below is
a well-known misspelling of the kind that list holds (not copied from it).
Misspellings that dictionaries also accept as variants or as other words
(``calender``, ``miniscule``, ``supercede``) are left out; ``florescent``
stays because it is the paper's own example (Table 2).
"""

from __future__ import annotations

import numpy as np

from dogood.language.words import case_like


def deletions(word: str, start: int = 0, stop: int | None = None) -> list[str]:
    """``word`` with one character deleted, for each position in ``start..stop-1`` (default: all), in order.

    A word of one character or less has none (as TextAttack's ``WordSwapRandomCharacterDeletion``).
    """
    stop = len(word) if stop is None else stop
    if len(word) <= 1:
        return []
    return [word[:i] + word[i + 1:] for i in range(start, stop)]


def pick(candidates, rng: np.random.Generator):
    """One of ``candidates`` (a sequence), uniformly, or ``None`` when there is none."""
    if not candidates:
        return None
    return candidates[int(rng.integers(len(candidates)))]


# -- BG Typo (form-attack paper) --------------------------------------------------------------------------------------

#: OCR's common confusions: the "specific character" of the paper's typos.
OCR_CONFUSIONS = {
    "0": "O", "O": "0", "o": "0", "1": "l", "l": "1", "I": "1", "i": "l", "5": "S", "S": "5", "s": "5",
    "8": "B", "B": "8", "2": "Z", "Z": "2", "6": "G", "G": "6", "e": "c", "c": "e", "m": "n", "n": "m",
    "u": "v", "v": "u", "h": "b", "b": "h", "a": "o", "g": "q", "q": "g", "t": "f", "f": "t", "E": "F", "F": "E",
}
TYPO_KINDS = ("swap", "delete", "add", "replace")
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_UPPER = _LOWER.upper()
_DIGIT = "0123456789"


def _same_class_char(c: str, rng: np.random.Generator, avoid: str | None = None) -> str:
    pool = _DIGIT if c.isdigit() else _UPPER if c.isupper() else _LOWER
    if avoid is not None:
        pool = pool.replace(avoid, "")
    return pool[int(rng.integers(len(pool)))]


def typo(word: str, rng: np.random.Generator) -> tuple[str, str] | None:
    """One typo in ``word``: ``(new word, kind)``, or ``None`` when no typo applies.

    The kind is drawn from :data:`TYPO_KINDS` (the next one is tried when it
    does not apply): swap two different adjacent letters/digits, delete one
    (only from a word with two or more, so one is left), add one beside a
    letter/digit, or replace one, half the time by its OCR confusion
    (:data:`OCR_CONFUSIONS`), else by another character of its class.
    Punctuation is never edited, so ``DATE:`` keeps its colon.
    """
    spots = [j for j, c in enumerate(word) if c.isalnum()]
    if not spots:
        return None
    for k in rng.permutation(len(TYPO_KINDS)):
        kind = TYPO_KINDS[int(k)]
        if kind == "swap":
            pairs = [j for j in spots if j + 1 < len(word) and word[j + 1].isalnum() and word[j] != word[j + 1]]
            if pairs:
                j = pairs[int(rng.integers(len(pairs)))]
                return word[:j] + word[j + 1] + word[j] + word[j + 2:], kind
        elif kind == "delete":
            if len(spots) >= 2:
                j = spots[int(rng.integers(len(spots)))]
                return word[:j] + word[j + 1:], kind
        elif kind == "add":
            j = spots[int(rng.integers(len(spots)))]
            at = j + int(rng.integers(2))  # before or after it
            return word[:at] + _same_class_char(word[j], rng) + word[at:], kind
        else:
            j = spots[int(rng.integers(len(spots)))]
            c = word[j]
            new = OCR_CONFUSIONS.get(c) if rng.random() < 0.5 else None
            if new is None or not new.isascii():
                new = _same_class_char(c, rng, avoid=c) if c.isascii() else _same_class_char("a", rng)
            return word[:j] + new + word[j + 1:], kind
    return None


# -- Moradi & Samwald, section 4.1 --------------------------------------------------------------------------------

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
        return pick(deletions(core, 1, n - 1), rng) if n >= 3 else None
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
        return case_like(options[int(rng.integers(len(options)))], core)
    if kind == "letter_case":
        first = core[:1].swapcase() + core[1:]
        whole = core.swapcase()
        choices = [c for c in ((first, whole) if rng.integers(2) == 0 else (whole, first))
                   if c != core and c.casefold() == core.casefold() and len(c) == n]
        return choices[0] if choices else None
    raise ValueError(f"unknown character perturbation {kind!r}")
