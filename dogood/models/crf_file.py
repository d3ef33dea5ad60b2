"""Check a CRFsuite model file (``model.crfsuite``) before CRFsuite's C code reads it.

``python-crfsuite`` hands the bytes to CRFsuite, which reads every offset, count and index of the file as given,
without bounds checks: a truncated or crafted file makes it read outside the buffer or loop forever (a
segmentation fault, or a hang). No maintained library validates the format, so :func:`check_crf_model` does,
from the layout CRFsuite writes and reads (``lib/crf/src/crf1d_model.c`` and ``lib/cqdb/src/cqdb.c`` of
chokkan/crfsuite): the 48-byte header (``lCRF``, size, ``FOMC``, version 100, counts and chunk offsets), the
label and attribute dictionaries (CQDB chunks: 256 hash tables of (hash, offset) buckets, records of id, size and
NUL-terminated string, a backward array id -> record), the feature chunk (``FEAT``: 20-byte records of type,
source, destination and weight) and the label and attribute reference chunks (``LFRF``, ``AFRF``: per label or
attribute, a list of feature ids). Every offset must fall inside the file, every string end there, every id and
index be below its count, and every hash table keep an empty bucket (CRFsuite's look-up stops only at one).
"""

from __future__ import annotations

import struct

import numpy as np

HEADER = struct.Struct("<4sI4sIIIIIIIII")  # magic, size, type, version, #features (0), #labels, #attrs, 5 offsets
CQDB_HEADER = struct.Struct("<4sIIIII")  # chunk id, size, flag, byte order, backward size, backward offset
CQDB_TABLES = 256
CQDB_DATA = CQDB_HEADER.size + 8 * CQDB_TABLES  # where the records start
BYTEORDER = 0x62445371
FEATURE = np.dtype([("type", "<u4"), ("src", "<u4"), ("dst", "<u4"), ("weight", "<f8")])  # 20 bytes


class CrfFileError(ValueError):
    """A CRFsuite model file that CRFsuite would read out of bounds."""


def _u32(buf: bytes, offset: int) -> int:
    if offset < 0 or offset + 4 > len(buf):
        raise CrfFileError(f"a 4-byte value at {offset} lies outside the {len(buf)}-byte file")
    return struct.unpack_from("<I", buf, offset)[0]


def check_crf_model(buf: bytes, *, max_labels: int | None = None,
                    max_attributes: int | None = None) -> tuple[int, int, int]:
    """``(features, labels, attributes)`` of a CRFsuite model, or :class:`CrfFileError` saying what is wrong.

    ``max_labels``, ``max_attributes`` (default :attr:`dogood.core.fs.Limits.crf_labels` and ``crf_attributes``):
    the counts the header may declare, checked before anything else. CRFsuite's tagger allocates labels x labels
    transition scores (twice) when it opens a model: a file of a few hundred kilobytes naming 20,000 labels passed
    every other check and then took 3.3 GB."""
    from dogood.core import fs

    current = fs.limits()
    max_labels = current.crf_labels if max_labels is None else max_labels
    max_attributes = current.crf_attributes if max_attributes is None else max_attributes
    if len(buf) <= HEADER.size:
        raise CrfFileError(f"{len(buf)} bytes: shorter than the {HEADER.size}-byte header")
    (magic, size, kind, version, n_features, n_labels, n_attrs, off_features, off_labels, off_attrs,
     off_labelrefs, off_attrrefs) = HEADER.unpack_from(buf, 0)
    if magic != b"lCRF" or kind != b"FOMC" or version != 100:
        raise CrfFileError(f"not a CRFsuite 1st-order model (magic {magic!r}, type {kind!r}, version {version})")
    if size != len(buf):
        raise CrfFileError(f"the header gives {size} bytes, the file has {len(buf)} (truncated or padded)")
    if n_labels > max_labels or n_attrs > max_attributes:
        raise CrfFileError(f"the model declares {n_labels} labels and {n_attrs} attributes, more than the "
                           f"{max_labels} and {max_attributes} dogood opens (a limit of dogood's: set "
                           "DOGOOD_LIMIT_CRF_LABELS or DOGOOD_LIMIT_CRF_ATTRIBUTES to raise it)")
    _check_dictionary(buf, off_labels, n_labels, "labels")
    _check_dictionary(buf, off_attrs, n_attrs, "attributes")
    features = _features(buf, off_features)  # CRFsuite leaves the header's feature count at 0: the chunk's
    n_features = len(features)
    state, transition = features["type"] == 0, features["type"] == 1
    if not (state | transition).all():
        raise CrfFileError("a feature is neither a state nor a transition feature")
    if (features["dst"] >= n_labels).any() or (features["src"][transition] >= n_labels).any() \
            or (features["src"][state] >= n_attrs).any():
        raise CrfFileError("a feature names a label or an attribute beyond their counts")
    if not np.isfinite(features["weight"]).all():
        raise CrfFileError("a feature weight is not a finite number")
    _check_references(buf, off_labelrefs, n_labels, n_features, b"LFRF", "label")
    _check_references(buf, off_attrrefs, n_attrs, n_features, b"AFRF", "attribute")
    return n_features, n_labels, n_attrs


def _features(buf: bytes, offset: int) -> np.ndarray:
    if offset + 12 > len(buf) or buf[offset:offset + 4] != b"FEAT":
        raise CrfFileError(f"no feature chunk at {offset}")
    count = _u32(buf, offset + 8)
    if offset + 12 + FEATURE.itemsize * count > len(buf):
        raise CrfFileError(f"{count} features do not fit in the file")
    return np.frombuffer(buf, dtype=FEATURE, count=count, offset=offset + 12)


def _check_references(buf: bytes, offset: int, count: int, n_features: int, chunk: bytes, what: str) -> None:
    """The first ``count`` feature lists of a reference chunk: inside the file, every feature id below
    ``n_features`` (all at once, with numpy)."""
    if offset + 12 > len(buf) or buf[offset:offset + 4] != chunk or _u32(buf, offset + 8) < count \
            or offset + 12 + 4 * _u32(buf, offset + 8) > len(buf):
        raise CrfFileError(f"no {what} reference chunk of {count} entries at {offset}")
    if not count:
        return
    whole = np.frombuffer(buf, dtype=np.uint8)
    starts = np.frombuffer(buf, dtype="<u4", count=count, offset=offset + 12).astype(np.int64)
    if int(starts.max()) + 4 > len(buf):
        raise CrfFileError(f"a feature list of a {what} lies outside the file")
    sizes = _u32s(whole, starts)
    if int((starts + 4 + 4 * sizes).max()) > len(buf):
        raise CrfFileError(f"the feature list of a {what} runs past the end of the file")
    total = int(sizes.sum())
    if total:
        first = np.repeat(starts + 4, sizes)
        within = np.arange(total) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        if int(_u32s(whole, first + 4 * within).max()) >= n_features:
            raise CrfFileError(f"a {what} refers to a feature beyond the {n_features} of the file")


def _u32s(data: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Little-endian 4-byte values of ``data`` (bytes) at positions ``at``, as int64."""
    return (data[at].astype(np.int64) | data[at + 1].astype(np.int64) << 8
            | data[at + 2].astype(np.int64) << 16 | data[at + 3].astype(np.int64) << 24)


def _check_dictionary(buf: bytes, start: int, count: int, what: str) -> None:
    """A CQDB chunk at ``start`` whose ids ``0..count-1`` all name a string, read as CRFsuite reads it."""
    size = len(buf) - start  # what CRFsuite gives the CQDB reader
    if start <= 0 or size < CQDB_DATA:
        raise CrfFileError(f"the {what} dictionary at {start} does not fit in the file")
    chunk, chunk_size, _flag, order, bwd_size, bwd_offset = CQDB_HEADER.unpack_from(buf, start)
    if chunk != b"CQDB" or order != BYTEORDER or chunk_size > size:
        raise CrfFileError(f"the {what} dictionary at {start} is damaged")
    records, referenced = 0, []
    for t in range(CQDB_TABLES):
        offset, num = struct.unpack_from("<II", buf, start + CQDB_HEADER.size + 8 * t)
        records += num // 2
        if not offset:
            continue
        if offset + 8 * num > size or num == 0:
            raise CrfFileError(f"hash table {t} of the {what} dictionary does not fit in the file")
        buckets = np.frombuffer(buf, dtype="<u4", count=2 * num, offset=start + offset).reshape(num, 2)
        if (buckets[:, 1] != 0).all():
            raise CrfFileError(f"hash table {t} of the {what} dictionary has no empty bucket (a look-up would "
                               "never end)")
        referenced.append(buckets[:, 1][buckets[:, 1] != 0])
    if bwd_offset:
        if bwd_size > records or bwd_offset + 4 * records > size:
            raise CrfFileError(f"the id table of the {what} dictionary does not fit in the file")
        backward = np.frombuffer(buf, dtype="<u4", count=records, offset=start + bwd_offset)
    else:
        backward = np.zeros(0, dtype="<u4")
    if count > min(bwd_size, len(backward)) or (count and (backward[:count] == 0).any()):
        raise CrfFileError(f"the {what} dictionary does not name all {count} {what}")
    referenced.append(backward[:bwd_size][backward[:bwd_size] != 0])
    _check_records(buf, start, size, np.unique(np.concatenate(referenced)).astype(np.int64), count, what)


def _check_records(buf: bytes, start: int, size: int, offsets: np.ndarray, count: int, what: str) -> None:
    """Records (id, string size, NUL-terminated string) at ``offsets`` inside the chunk, their ids below
    ``count``, each string ending at its first NUL (all at once, with numpy)."""
    if not len(offsets):
        return
    if int(offsets.max()) + 8 > size:
        raise CrfFileError(f"a record of the {what} dictionary lies outside the file")
    chunk = np.frombuffer(buf, dtype=np.uint8, count=size, offset=start)
    ids, lengths = _u32s(chunk, offsets), _u32s(chunk, offsets + 4)
    ends = offsets + 8 + lengths  # one past the string's NUL
    if (ids >= count).any() or (lengths == 0).any() or int(ends.max()) > size:
        bad = int(np.flatnonzero((ids >= count) | (lengths == 0) | (ends > size))[0])
        raise CrfFileError(f"a record of the {what} dictionary is damaged (id {int(ids[bad])}, "
                           f"{int(lengths[bad])} bytes)")
    nuls = np.flatnonzero(chunk == 0)
    if not len(nuls):
        raise CrfFileError(f"no string of the {what} dictionary ends")
    first = nuls[np.minimum(np.searchsorted(nuls, offsets + 8), len(nuls) - 1)]
    if (first != ends - 1).any():
        raise CrfFileError(f"a string of the {what} dictionary does not end where its record says")
