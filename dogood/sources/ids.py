"""Document ids as sequences that are never copied: a view of a range of them, and their streamed hash.

A source's ``ids()`` may be any :class:`~collections.abc.Sequence` of strings (a list, or a lazy sequence
such as :class:`dogood.sources.synthetic.PageIds` or the Parquet source's :class:`~dogood.sources.rvl_cdip.ParquetIds`).
A build walks them; it never copies them into a list nor joins them into one string. :class:`PositionIds`
and :class:`ArrowIds` are the ``hf`` source's: positions, or an ``id`` column held as Arrow strings. (``collections.abc``
has no slice view of a sequence, and ``itertools.islice`` gives an iterator, not a sequence: hence :class:`IdsView`.)
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence


class IdsView(Sequence):
    """Positions ``indices`` (a ``range``) of the sequence ``base``, without copying it."""

    def __init__(self, base: Sequence[str], indices: range):
        self.base, self.indices = base, indices

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, item):
        if isinstance(item, slice):
            return IdsView(self.base, self.indices[item])
        return self.base[self.indices[item]]

    def __iter__(self) -> Iterator[str]:
        base = self.base
        for i in self.indices:
            yield base[i]

    def __repr__(self) -> str:
        return f"IdsView({type(self.base).__name__} of {len(self.base)}, {self.indices!r})"


class IdTuple(tuple):
    """A source's ids held once (a tuple), equal to a list of the same ids as well (sources returned lists)."""

    def __eq__(self, other) -> bool:
        return tuple.__eq__(self, tuple(other) if isinstance(other, list) else other)

    def __ne__(self, other) -> bool:
        return not self == other

    __hash__ = tuple.__hash__


class PositionIds(Sequence):
    """The ids ``"0".."n-1"`` of a dataset without an ``id`` column, made as they are asked for."""

    def __init__(self, n: int):
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, item):
        if isinstance(item, slice):
            return IdsView(self, range(self.n)[item])
        n = item + self.n if item < 0 else item
        if not 0 <= n < self.n:
            raise IndexError("id index out of range")
        return str(n)

    def position(self, doc_id: str) -> int | None:
        text = str(doc_id)
        if not text.isdigit() or (text != "0" and text.startswith("0")) or int(text) >= self.n:
            return None
        return int(text)

    def __contains__(self, doc_id) -> bool:
        return self.position(doc_id) is not None

    def index(self, doc_id, start: int = 0, stop: int | None = None) -> int:
        pos = self.position(doc_id)
        if pos is None or pos < start or (stop is not None and pos >= stop):
            raise ValueError(f"{doc_id!r} is not in the ids")
        return pos

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and not isinstance(other, str) and len(self) == len(other) \
            and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]


class ArrowIds(Sequence):
    """The ``id`` column's values as strings, held as one Arrow array (no Python string per row). Looking an id
    up tries the position after the last one found first (documents are read in order), then scans the array
    in Arrow."""

    def __init__(self, values):
        self.values = values
        self._last = -1

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, item):
        if isinstance(item, slice):
            return IdsView(self, range(len(self))[item])
        n = item + len(self) if item < 0 else item
        if not 0 <= n < len(self):
            raise IndexError("id index out of range")
        return self.values[n].as_py()

    def __iter__(self):
        for chunk in self.values.chunks:
            yield from chunk.to_pylist()

    def position(self, doc_id: str) -> int | None:
        import pyarrow.compute as pc

        doc_id = str(doc_id)
        nxt = self._last + 1
        if nxt < len(self) and self.values[nxt].as_py() == doc_id:
            self._last = nxt
            return nxt
        found = pc.index(self.values, doc_id).as_py()
        if found is None or found < 0:
            return None
        self._last = found
        return found

    def __contains__(self, doc_id) -> bool:
        return self.position(doc_id) is not None

    def index(self, doc_id, start: int = 0, stop: int | None = None) -> int:
        pos = self.position(doc_id)
        if pos is None or pos < start or (stop is not None and pos >= stop):
            raise ValueError(f"{doc_id!r} is not in the ids")
        return pos

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and not isinstance(other, str) and len(self) == len(other) \
            and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]


def ids_range(ids: Sequence[str], start: int, stop: int) -> Sequence[str]:
    """``ids[start:stop]`` without copying: the sequence's own slice when it is lazy (a ``range``-backed view),
    else an :class:`IdsView`. ``ids`` itself when the range covers it."""
    start, stop = max(0, start), min(len(ids), stop)
    if start == 0 and stop == len(ids):
        return ids
    if isinstance(ids, (list, tuple, str)):  # their slices copy
        return IdsView(ids, range(start, max(start, stop)))
    return ids[start:stop]


def first_ids(ids: Sequence[str], limit: int | None) -> Sequence[str]:
    """The first ``limit`` ids (all when ``limit`` is ``None``), as a view: ``--limit`` copies nothing."""
    return ids if limit is None else ids_range(ids, 0, limit)


def ids_sha256(ids: Sequence[str]) -> str:
    """sha256 of the ids joined by newlines, fed one id at a time (the same digest as hashing the joined string)."""
    digest = hashlib.sha256()
    for n, doc_id in enumerate(ids):
        digest.update((f"\n{doc_id}" if n else doc_id).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()
