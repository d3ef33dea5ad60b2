"""Random values of a data type, as the form-attack paper generates them, and the data type of a value's text.

The paper's parameter paragraph (Implementation Details): dates between 2001
and 2021 in ``mm/dd/yy``, ``yy-mm-dd``, ``dd/month/yy`` or ``dd/mon/yy``
(Faker); numbers of 3 to 12 digits; money amounts from 1 to 10,000,000 with
two decimals, a comma every three digits and, at random, a leading ``$``.
For SROIE it draws Faker names, companies and addresses with as many words as
the value had (:func:`faker_text`). All randomness comes from the shift's
numpy generator; Faker is seeded from it.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import math
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
#: The paper's date formats, as names (the year is two digits in all four).
DATE_FORMATS = ("mm/dd/yy", "yy-mm-dd", "dd/month/yy", "dd/mon/yy")
FIRST_DATE = _dt.date(2001, 1, 1)
LAST_DATE = _dt.date(2021, 12, 31)
NUMBER_DIGITS = (3, 12)
MONEY_RANGE = (1, 10_000_000)


def separated_number(text: str) -> bool:
    """True for numbers with separators between digits (``1,234.56``, ``10/12/95``, ``614-466``)."""
    return re.search(r"\d[.,/:\-]\d", text) is not None



# -- data types ---------------------------------------------------------------------------------------------------------

_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?" \
         r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_DAY = r"(?:[0-2]?\d|3[01])(?:st|nd|rd|th)?"
_YEAR = r"(?:\d{4}|'?\d{2})"
_DATE_RES = [
    re.compile(rf"^{_MONTH}[\s/.,-]*{_DAY}(?:,?[\s/.,-]*{_YEAR})?$", re.I),  # March 17, 1995 / Oct 16
    re.compile(rf"^{_DAY}[\s/.,-]*{_MONTH}[\s/.,-]*{_YEAR}$", re.I),  # 17 March 1995 / 05/Mar/09
    re.compile(rf"^{_MONTH}[\s/.,-]*{_YEAR}$", re.I),  # June 1995
]
_NUMERIC_DATE = re.compile(r"^(\d{1,4})([/.-])(\d{1,2})\2(\d{1,4})$")
_MONEY_RES = [
    re.compile(r"^(?:\$|usd)\s*\d{1,3}(?:,\d{3})*(?:\.\d{1,2})?$", re.I),
    re.compile(r"^(?:\$|usd)\s*\d+(?:\.\d{1,2})?$", re.I),
    re.compile(r"^\d{1,3}(?:,\d{3})*\.\d{2}$"),
    re.compile(r"^\d+\.\d{2}$"),
]
_NUMBER = re.compile(r"^(#|no\.?\s*|n°\s*)?(\d+)$", re.I)
_DIGITS = re.compile(r"^[\d\s()/.,:+#x-]*$", re.I)


def _compact(text: str) -> str:
    """Text with OCR's spaces around ``/ - .`` removed (``8/ 7/ 87`` -> ``8/7/87``) and edge punctuation trimmed."""
    text = " ".join(text.split())
    text = re.sub(r"\s*([/\-.])\s*", r"\1", text)
    return text.strip(" ,;:")


def number_prefix(text: str) -> str:
    """The ``#`` / ``No.`` prefix of a ``number``-typed text (``""`` when it has none)."""
    return _NUMBER.match(_compact(text)).group(1) or ""


def data_type(text: str) -> str:
    """``date``, ``money``, ``number``, ``digits`` (phone numbers, codes: digits and separators) or ``other``."""
    t = _compact(text)
    if not t:
        return "other"
    m = _NUMERIC_DATE.match(t)
    if m and _plausible_numeric_date(m.group(1), m.group(3), m.group(4)):
        return "date"
    if any(r.match(t) for r in _DATE_RES):
        return "date"
    if any(r.match(t) for r in _MONEY_RES):
        return "money"
    if _NUMBER.match(t):
        return "number"
    if _DIGITS.match(t) and sum(c.isdigit() for c in t) >= 2:
        return "digits"
    return "other"


def _plausible_numeric_date(a: str, b: str, c: str) -> bool:
    """Whether ``a/b/c`` can be mm/dd/yy, dd/mm/yy, yy-mm-dd or yyyy-mm-dd."""
    x, y, z = int(a), int(b), int(c)
    if len(a) == 4:  # yyyy-mm-dd
        return len(c) <= 2 and 1 <= y <= 12 and 1 <= z <= 31
    if len(a) > 2 or len(c) not in (2, 4):
        return False
    if x > 31:  # yy-mm-dd with a year above 31
        return len(c) == 2 and 1 <= y <= 12 and 1 <= z <= 31
    return 1 <= x <= 31 and 1 <= y <= 31 and (x <= 12 or y <= 12)


# -- value generators (the paper's procedure) -------------------------------------------------------------------------

def faker_for(rng: np.random.Generator):
    """The process's ``Faker('en_US')``, re-seeded with an integer drawn from ``rng``.

    Building a Faker costs milliseconds (it loads its providers), more than
    a page's shift; one instance per process, re-seeded for every document,
    gives the same values as a fresh one with that seed.
    """
    fake = _faker()
    fake.seed_instance(int(rng.integers(0, 2**31 - 1)))
    return fake


@lru_cache(maxsize=1)
def _faker():
    from faker import Faker

    return Faker("en_US")


def faker_note(shift: str) -> str:
    """The card line naming the Faker version whose random values a shift wrote (they change between versions)."""
    from importlib.metadata import version

    return f"`{shift}`: random values from Faker {version('faker')} (en_US), seeded per document."


def random_date(rng: np.random.Generator, fake, fmt: str | None = None) -> str:
    """A Faker date from 2001 to 2021 in one of :data:`DATE_FORMATS` (drawn from ``rng`` unless ``fmt``)."""
    day = fake.date_between(start_date=FIRST_DATE, end_date=LAST_DATE)
    fmt = fmt or DATE_FORMATS[int(rng.integers(len(DATE_FORMATS)))]
    yy, mm, dd = f"{day.year % 100:02d}", f"{day.month:02d}", f"{day.day:02d}"
    if fmt == "mm/dd/yy":
        return f"{mm}/{dd}/{yy}"
    if fmt == "yy-mm-dd":
        return f"{yy}-{mm}-{dd}"
    month = MONTHS[day.month - 1]
    if fmt == "dd/month/yy":
        return f"{dd}/{month}/{yy}"
    if fmt == "dd/mon/yy":
        return f"{dd}/{month[:3]}/{yy}"
    raise ValueError(f"unknown date format {fmt!r}; known: {', '.join(DATE_FORMATS)}")


def random_number(rng: np.random.Generator) -> str:
    """A number of 3 to 12 digits (length drawn first, then the digits; no leading zero)."""
    length = int(rng.integers(NUMBER_DIGITS[0], NUMBER_DIGITS[1] + 1))
    digits = [int(rng.integers(1, 10))] + [int(d) for d in rng.integers(0, 10, size=length - 1)]
    return "".join(str(d) for d in digits)


def random_money(rng: np.random.Generator, dollar: bool | None = None) -> str:
    """An amount from 1 to 10,000,000 as ``1,234,567.89``, with a leading ``$`` at random (or as ``dollar`` says)."""
    lo, hi = MONEY_RANGE
    cents = int(rng.integers(lo * 100, hi * 100 + 1))
    if dollar is None:
        dollar = bool(rng.integers(2))
    return ("$" if dollar else "") + f"{cents // 100:,}.{cents % 100:02d}"


def random_value(rng: np.random.Generator, fake, kind: str | None = None) -> str:
    """A random ``date``, ``number`` or ``money`` value (the kind drawn uniformly unless given)."""
    kind = kind or ("date", "number", "money")[int(rng.integers(3))]
    if kind == "date":
        return random_date(rng, fake)
    if kind == "number":
        return random_number(rng)
    if kind == "money":
        return random_money(rng)
    raise ValueError(f"unknown value kind {kind!r}")


def split_into(value: str, lengths: Sequence[int]) -> list[str] | None:
    """``value`` cut into ``len(lengths)`` non-empty pieces whose sizes follow ``lengths`` (the old words').

    Cuts fall right after separators (``/``, ``-``, ``,``, ``$`` ...) when
    there are enough of them, as OCR splits ``8/ 7/ 87``, else anywhere; of
    those, the cuts nearest the proportional places win. ``None`` when
    ``value`` is shorter than the number of pieces.
    """
    k = len(lengths)
    size = len(value)
    if k == 0 or size < k:
        return None
    if k == 1:
        return [value]
    total = sum(max(1, n) for n in lengths)
    targets = np.cumsum([max(1, n) for n in lengths[:-1]]) * size / total
    separators = [j for j in range(1, size) if not value[j - 1].isalnum()]
    pool = separators if len(separators) >= k - 1 else list(range(1, size))
    if math.comb(len(pool), k - 1) <= 5000:
        cuts = min(itertools.combinations(pool, k - 1),
                   key=lambda cs: (float(np.abs(np.array(cs) - targets).sum()), cs))
    else:  # many pieces: evenly, in characters
        cuts = tuple(int(j) for j in np.linspace(0, size, k + 1)[1:-1].round())
        if len(set(cuts)) < k - 1 or 0 in cuts:
            return None
    bounds = [0, *cuts, size]
    return [value[a:b] for a, b in zip(bounds, bounds[1:])]


#: Key words that say which Faker provider fits an ``other``-typed value (checked in this order).
KEY_HINTS = (
    ("company", r"\b(company|firm|vendor|supplier|manufacturer|agency|client|customer|corp|corporation|brand"
                r"|organi[sz]ation|institution|advertiser|distributor|publisher|laborator(y|ies)|lab|account)\b"),
    ("address", r"\b(address|street|location)\b"),
    ("city", r"\b(city|town)\b"),
    ("name", r"\b(name|to|from|attn|attention|by|signature|signed|contact|person|manager|representative|author"
             r"|cc|requested|approved|submitted|prepared|sender|recipient|director|buyer|salesman|rep)\b"),
)


def key_hint(key_text: str) -> str | None:
    """The Faker kind (``company``, ``address``, ``city``, ``name``) a key's text suggests, or ``None``."""
    low = key_text.lower()
    for kind, pattern in KEY_HINTS:
        if re.search(pattern, low):
            return kind
    return None


def upper_like(value: str, original: str) -> str:
    """``value`` in capitals when ``original`` is all capitals."""
    return value.upper() if original.isupper() else value


def redraw_digits(word: str, rng: np.random.Generator) -> str:
    """``word`` with every digit redrawn uniformly, separators and spacing kept."""
    out = []
    for c in word:
        out.append(str(int(rng.integers(10))) if c.isdigit() else c)
    return "".join(out)


def faker_text(fake, kind: str) -> str:
    """A Faker ``name``, ``company``, ``address`` (one line) or ``city``."""
    if kind == "name":
        return fake.name()
    if kind == "company":
        return fake.company()
    if kind == "address":
        return fake.address().replace("\n", ", ")
    return fake.city()
