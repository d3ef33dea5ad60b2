"""The document record: the one currency every source, shift and writer uses.

A :class:`Document` holds a page image (decoded lazily), its words with
absolute pixel boxes, entities (label, word ids, links), an optional document
label, optional question/answer pairs and the provenance of every shift
applied to it. Records are immutable; shifts return new ones through
:meth:`Document.replace`, which validates again.

Normalised 0-1000 boxes are never stored: writers compute them with
:func:`dogood.core.boxes.normalize_box`.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import io
import json
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageChops, UnidentifiedImageError

from dogood.core import fs
from dogood.core.boxes import Box, union_boxes
from dogood.core.errors import DocumentError

# Pillow refuses images above Image.MAX_IMAGE_PIXELS (decompression bombs). dogood keeps
# Pillow's default (about 89.5 Mpx; RVL-CDIP and FUNSD pages are ~0.8 Mpx) rather than
# raising it: every image dogood writes then loads with Pillow's defaults downstream
# (``datasets``, ``transformers``). Pillow itself only warns from 1x to 2x the limit;
# _refuse_bombs() makes that an error too, so a page over the limit is refused.
_BOMBS = (Image.DecompressionBombError, Image.DecompressionBombWarning)


@contextlib.contextmanager
def _refuse_bombs():
    """Pillow's decompression-bomb warning (1-2x the pixel limit) raised as an error inside this context."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        yield


# How new pixels (made by a shift) are encoded when written.
ENCODINGS = ("png", "jpeg")


class PageImage:
    """A page image that is read from its file or bytes only when pixels are needed.

    Construct it with :meth:`from_file`, :meth:`from_bytes` or :meth:`from_array`.
    ``width`` and ``height`` come from the image header, so a source can build
    and validate a document without decoding its pixels. An image that was
    never changed is written out as its original encoded bytes; one made from
    an array is encoded as PNG.
    """

    __slots__ = ("path", "_data", "_array", "_pil", "width", "height", "format", "encoding")

    def __init__(
        self,
        *,
        path: str | None = None,
        data: bytes | None = None,
        array: np.ndarray | None = None,
        pil: Image.Image | None = None,
        width: int,
        height: int,
        format: str | None = None,
        encoding: str = "png",
    ):
        if path is None and data is None and array is None and pil is None:
            raise ValueError("PageImage needs a path, bytes, an array or a PIL image")
        self.path = path
        self._data = data
        self._array = array
        self._pil = pil
        self.width = int(width)
        self.height = int(height)
        self.format = format
        self.encoding = encoding

    # -- construction -------------------------------------------------------
    @classmethod
    def from_file(cls, path: str | Path, *, verify: bool = True) -> PageImage:
        """Read the header of an image file (and check its integrity when ``verify``).

        Raises :class:`DocumentError` naming the file when it is missing,
        unreadable, truncated or not an image, or not a regular file of at most
        :attr:`dogood.core.fs.Limits.image_bytes` (:func:`dogood.core.fs.read_bytes`).
        """
        path = str(path)
        try:
            # read once: verified here, written later; without verify, only the header is read
            data = _image_bytes(path) if verify else None
            with (io.BytesIO(data) if verify else _image_file(path)) as source, _refuse_bombs(), \
                    Image.open(source) as im:
                width, height, fmt = im.width, im.height, im.format
                if verify:
                    im.verify()
        except FileNotFoundError:
            raise DocumentError("image file not found", path=path) from None
        except fs.FileRefused as exc:
            raise DocumentError(exc.reason, path=path) from None
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError, *_BOMBS) as exc:
            raise DocumentError(f"cannot read image ({exc})", path=path) from None
        return cls(path=path, data=data, width=width, height=height, format=fmt)

    @classmethod
    def from_bytes(cls, data: bytes, *, name: str | None = None, verify: bool = True) -> PageImage:
        """Wrap encoded image bytes (PNG, TIFF, JPEG, ...) without decoding them."""
        try:
            with _refuse_bombs(), Image.open(io.BytesIO(data)) as im:
                width, height, fmt = im.width, im.height, im.format
                if verify:
                    im.verify()
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError, *_BOMBS) as exc:
            raise DocumentError(f"cannot read image ({exc})", path=name) from None
        return cls(data=bytes(data), width=width, height=height, format=fmt)

    @classmethod
    def from_pil(cls, image: Image.Image) -> PageImage:
        """Wrap a loaded PIL image in mode ``L`` or ``RGB`` without converting it: its pixels are taken
        (:meth:`to_array`) only when a shift reads them, so a record whose pixels no shift touches costs no copy.

        An ``RGB`` image whose three channels are equal (a grayscale page that a loader decoded to RGB, as
        ``datasets`` does for FUNSD) gives grayscale pixels, the page as it was stored: what a build's shifts
        see, at a third of the work for image shifts. Training-time rows use this (:mod:`dogood.sources.rows`);
        the image must not be changed while the record holds it.
        """
        if image.mode not in ("L", "RGB"):
            raise ValueError(f"from_pil takes mode L or RGB images, got {image.mode}")
        return cls(pil=image, width=image.width, height=image.height, format=None)

    @classmethod
    def from_array(cls, array: np.ndarray, *, encoding: str = "png") -> PageImage:
        """Wrap decoded pixels: ``HxW`` (grayscale) or ``HxWx3`` (RGB) ``uint8``.

        ``encoding`` is how the pixels are written out: ``"png"`` (lossless, the
        default) or ``"jpeg"`` (quality 95, 4:4:4; what photographic shifts use:
        an RGB page on a photo encodes about 15x faster and 2x smaller than PNG).
        """
        if encoding not in ENCODINGS:
            raise ValueError(f"encoding must be one of {', '.join(ENCODINGS)}, got {encoding!r}")
        array = np.asarray(array)
        if array.dtype != np.uint8 or array.ndim not in (2, 3) or (array.ndim == 3 and array.shape[2] != 3):
            raise ValueError(f"expected HxW or HxWx3 uint8 pixels, got {array.dtype} {array.shape}")
        array = array.copy() if array.flags.writeable else array
        array.flags.writeable = False
        return cls(array=array, width=array.shape[1], height=array.shape[0], format=None, encoding=encoding)

    # -- access ---------------------------------------------------------------
    @property
    def modified(self) -> bool:
        """True when the pixels were made by a shift rather than read from a file."""
        return self.path is None and self._data is None

    def encoded_bytes(self) -> bytes:
        """The image as encoded bytes: the original file's bytes, or PNG for new pixels."""
        if self._data is not None:
            return self._data
        if self.path is not None:
            try:
                return _image_bytes(self.path)
            except fs.FileRefused as exc:
                raise DocumentError(exc.reason, path=self.path) from None
        buf = io.BytesIO()
        if self.encoding == "jpeg":
            Image.fromarray(self.to_array()).save(buf, format="JPEG", quality=95, subsampling=0)
        else:
            Image.fromarray(self.to_array()).save(buf, format="PNG")
        return buf.getvalue()

    def to_pil(self) -> Image.Image:
        """Decoded image in mode ``L`` (grayscale) or ``RGB``."""
        return Image.fromarray(self.to_array())

    def to_array(self) -> np.ndarray:
        """Decoded pixels, read-only: ``HxW`` for grayscale pages, ``HxWx3`` otherwise.

        Bilevel, 16-bit and palette/alpha/CMYK images are converted to 8-bit
        grayscale or RGB. The result is cached.
        """
        if self._array is None and self._pil is not None:
            arr = _pil_pixels(self._pil)
            arr.flags.writeable = False
            self._array, self._pil = arr, None
        if self._array is None:
            try:
                source = io.BytesIO(self._data) if self._data is not None else _image_file(self.path)
                with source, _refuse_bombs(), Image.open(source) as im:
                    im.load()
                    arr = standard_pixels(im)
            except fs.FileRefused as exc:
                raise DocumentError(f"cannot decode image ({exc.reason})", path=self.path) from None
            except (OSError, SyntaxError, ValueError, *_BOMBS) as exc:
                raise DocumentError(f"cannot decode image ({exc})", path=self.path) from None
            arr.flags.writeable = False
            self._array = arr
        return self._array

    def check_pixels(self) -> None:
        """Decode the pixels once (cached), so an image whose header is valid but whose pixel data is not
        fails here, naming the file, rather than being written undecodable; and refuse a page above
        Pillow's pixel limit (:data:`PIL.Image.MAX_IMAGE_PIXELS`), which readers with Pillow's defaults
        would refuse to open."""
        if self.width * self.height > (Image.MAX_IMAGE_PIXELS or float("inf")):
            raise DocumentError(f"the image has {self.width}x{self.height} pixels, above Pillow's limit of "
                                f"{Image.MAX_IMAGE_PIXELS} that readers of the dataset apply", path=self.path)
        self.to_array()

    def __getstate__(self):
        # Do not ship pixels or file bytes between processes when they can be re-read.
        array = self.to_array() if self.modified else None
        data = self._data if self.path is None else None
        return (self.path, data, array, self.width, self.height, self.format, self.encoding)

    def __setstate__(self, state):
        self.path, self._data, self._array, self.width, self.height, self.format, self.encoding = state
        self._pil = None

    def __eq__(self, other):
        if not isinstance(other, PageImage):
            return NotImplemented
        return (self.width, self.height) == (other.width, other.height) and np.array_equal(
            self.to_array(), other.to_array()
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        where = self.path or ("<bytes>" if self._data is not None else "<pixels>")  # a PIL image: pixels too
        return f"PageImage({where}, {self.width}x{self.height})"


def _image_bytes(path: str) -> bytes:
    """An image file's bytes, through the one reader: a regular file of at most ``Limits.image_bytes``."""
    return fs.read_bytes(path, limit="image_bytes", what="image file")


def _image_file(path: str):
    """An image file opened for Pillow through the one reader (Pillow closes it with the image)."""
    return fs.open_file(path, limit="image_bytes", what="image file")


def _pil_pixels(im: Image.Image) -> np.ndarray:
    """The pixels of a loaded ``L`` or ``RGB`` image, ``HxW`` when an RGB image's channels are all equal.

    The channels are compared inside Pillow (the bounding box of ``|red - green|`` and of ``|red - blue|`` is
    empty only where they are equal everywhere), and the red band is then the page: about half the work of
    packing each band to bytes (Pillow packs whole RGB pixels more slowly still)."""
    if im.mode == "RGB":
        red, green, blue = im.split()
        if (ImageChops.difference(red, green).getbbox() is None
                and ImageChops.difference(red, blue).getbbox() is None):
            return np.asarray(red)
    return np.array(im)


#: Pillow modes of one band of integers or floats: their white is :func:`pixel_scale`, not 255.
DEEP_MODES = ("I;16", "I;16B", "I;16L", "I;16N", "I", "F")
#: The Pillow modes a page may come in (converted to 8-bit L or RGB by :func:`standard_pixels`); the augmentation
#: API refuses the others by name and gives pages back in these modes at their own value scale.
PAGE_MODES = ("1", "L", "LA", "La", "P", "PA", "RGB", "RGBA", "RGBa", "RGBX", "CMYK", "YCbCr", *DEEP_MODES)


def pixel_scale(im: Image.Image) -> float:
    """The value white has in a page of one of :data:`DEEP_MODES`: 65535 for 16-bit modes; for ``I`` and ``F``
    the smallest of 1 (floats in 0-1), 255, 65535 that holds the page's largest value (or that value)."""
    if im.mode.startswith("I;16"):
        return 65535.0
    top = float(np.asarray(im, dtype=np.float64).max()) if im.width and im.height else 0.0
    if not np.isfinite(top):
        raise ValueError(f"the {im.mode} image holds non-finite values")
    if im.mode == "F" and top <= 1.0:
        return 1.0
    for scale in (255.0, 65535.0):
        if top <= scale:
            return scale
    return top


def standard_pixels(im: Image.Image, scale: float | None = None) -> np.ndarray:
    """8-bit L or RGB pixels from any Pillow mode; ``scale``: white of a :data:`DEEP_MODES` page (default
    :func:`pixel_scale`)."""
    if im.mode in ("L", "RGB"):
        return np.array(im)
    if im.mode == "1":
        return np.array(im.convert("L"))
    if im.mode in DEEP_MODES:
        arr = np.asarray(im, dtype=np.float64)
        top = pixel_scale(im) if scale is None else scale
        return np.clip(np.nan_to_num(arr) * (255.0 / top), 0, 255).astype(np.uint8)
    if im.mode in ("LA", "RGBA", "PA", "P") and ("A" in im.mode or "transparency" in im.info):
        rgba = im.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return np.array(Image.alpha_composite(white, rgba).convert("RGB"))
    return np.array(im.convert("RGB"))


@dataclass(frozen=True)
class Word:
    """One word: its text, absolute pixel box ``(x0, y0, x1, y1)`` and, after a geometric shift, its quad.

    ``quad`` is ``None`` when the word is the axis-aligned box itself (every source's words, and words a shift
    redraws upright); otherwise the word's four corners ``(x0, y0, x1, y1, x2, y2, x3, y3)`` in pixel-edge
    coordinates, in the order top-left, top-right, bottom-right, bottom-left *of the word as written* (so the
    first edge runs along its reading direction), rounded to 1/100 pixel: where a turn, a warp or a camera put
    the corners of its box (:mod:`dogood.page.quads`). The box stays the annotation's axis-aligned box.
    """

    text: str
    box: Box
    quad: tuple[float, ...] | None = None

    def __post_init__(self):
        b = self.box  # (the four checks written out: this runs for every word of every record)
        if not (type(b) is tuple and len(b) == 4 and type(b[0]) is int and type(b[1]) is int
                and type(b[2]) is int and type(b[3]) is int):
            object.__setattr__(self, "box", _as_box(self.box))
        if type(self.text) is not str:
            object.__setattr__(self, "text", str(self.text))
        if self.quad is not None:
            object.__setattr__(self, "quad", _as_quad(self.quad))

    def moved(self, box, *, pixels_moved: bool = False) -> Word:
        """This word with the box ``box``: its quad kept where the box is unchanged, shifted along where
        ``pixels_moved`` and the box kept its size (the word's pixels were translated), else dropped (the word
        redrawn upright in its new box)."""
        box = _as_box(box)
        if self.quad is None or box == self.box:
            return Word(self.text, box, self.quad)
        same_size = box[2] - box[0] == self.box[2] - self.box[0] and box[3] - box[1] == self.box[3] - self.box[1]
        if not (pixels_moved and same_size):
            return Word(self.text, box)
        dx, dy = box[0] - self.box[0], box[1] - self.box[1]
        return Word(self.text, box, tuple(v + (dx if k % 2 == 0 else dy) for k, v in enumerate(self.quad)))

    def corners(self) -> np.ndarray:
        """The word's four corners, ``(4, 2)`` float64 (pixel edges): its quad, or its box's corners."""
        if self.quad is not None:
            return np.asarray(self.quad, dtype=np.float64).reshape(4, 2)
        x0, y0, x1, y1 = self.box
        return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float64)


_INT = frozenset({int})


@dataclass(frozen=True)
class Entity:
    """A semantic entity: a label over some words, with links to other entities.

    ``links`` keeps FUNSD's ``linking`` pairs ``(from_id, to_id)`` as given.
    """

    id: int
    label: str
    word_ids: tuple[int, ...]
    links: tuple[tuple[int, int], ...] = ()

    def __post_init__(self):
        set_ = object.__setattr__
        if type(self.id) is not int:  # (each field converted only when it is not already of its type)
            set_(self, "id", int(self.id))
        if type(self.label) is not str:
            set_(self, "label", str(self.label))
        if not (type(self.word_ids) is tuple and set(map(type, self.word_ids)) <= _INT):
            set_(self, "word_ids", tuple(int(i) for i in self.word_ids))
        if not (type(self.links) is tuple and not self.links):
            set_(self, "links", tuple((int(a), int(b)) for a, b in self.links))


@dataclass(frozen=True)
class QAPair:
    """A question with its accepted answers (DocVQA)."""

    question: str
    answers: tuple[str, ...]
    id: str = ""


@dataclass(frozen=True)
class ShiftRecord:
    """One applied shift: its registered name, its parameters and the seed it drew from."""

    shift: str
    params: Mapping[str, Any]
    seed: int
    skipped: str | None = None  # why the shift left the document unchanged, if it did
    counts: Mapping[str, int] = field(default_factory=dict)  # what the shift did, e.g. {"changed": 9, "unchangeable": 1}
    tallies: Mapping[str, Mapping[str, int]] = field(default_factory=dict)  # values it used, e.g. {"photo": {"397133": 1}}

    def params_json(self) -> str:
        return json.dumps(dict(self.params), sort_keys=True, default=str)

    def counts_json(self) -> str:
        """Counts and tallies as one JSON object; a tally is stored as ``name=value`` keys (the layout of dogood 0.1)."""
        flat = {k: int(v) for k, v in self.counts.items()}
        flat.update({f"{name}={value}": int(n) for name, values in self.tallies.items() for value, n in values.items()})
        return json.dumps(flat, sort_keys=True)

    @staticmethod
    def counts_from_json(text: str | None) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
        """The inverse of :meth:`counts_json`: ``(counts, tallies)``."""
        counts: dict[str, int] = {}
        tallies: dict[str, dict[str, int]] = {}
        for key, n in json.loads(text or "{}").items():
            name, eq, value = key.partition("=")
            if eq:
                tallies.setdefault(name, {})[value] = n
            else:
                counts[key] = n
        return counts, tallies


@dataclass(frozen=True)
class Document:
    """A page with its words, entities, label, QA pairs and provenance.

    ``image`` is a :class:`PageImage`, or a PIL image or numpy array that is
    coerced into one (:func:`as_page_image`), as ``words`` may be
    ``(text, box)`` pairs. Validated on construction: word boxes inside the page with non-negative
    size, entity word ids that exist (each word in at most one entity), links
    between entities that exist, unique entity ids. Errors name the document
    and, when known, the file it came from (``source``).
    """

    id: str
    image: PageImage
    words: tuple[Word, ...] = ()
    entities: tuple[Entity, ...] = ()
    label: str | None = None
    qa: tuple[QAPair, ...] = ()
    provenance: tuple[ShiftRecord, ...] = ()
    source: str | None = field(default=None, compare=False)

    def __post_init__(self):
        set_ = object.__setattr__
        if not isinstance(self.image, PageImage):
            set_(self, "image", as_page_image(self.image, doc_id=self.id, source=self.source))
        words, entities = self.words, self.entities
        # Words and entities normalise themselves: a tuple of nothing else is kept as it is.
        if not (type(words) is tuple and (not words or set(map(type, words)) == {Word})):
            set_(self, "words", tuple(_as_word(w) for w in words))
        if not (type(entities) is tuple and (not entities or set(map(type, entities)) == {Entity})):
            set_(self, "entities", tuple(_as_entity(e) for e in entities))
        set_(self, "qa", tuple(self.qa))
        set_(self, "provenance", tuple(self.provenance))
        self._validate()

    @classmethod
    def from_checked_parts(cls, id: str, image: PageImage, words: tuple[Word, ...],
                           entities: tuple[Entity, ...] = (), label: str | None = None) -> Document:
        """A record from parts its maker has already checked, not validated again: ``image`` a
        :class:`PageImage`, ``words`` a tuple of :class:`Word` whose boxes lie inside the page with non-negative
        sizes, ``entities`` a tuple of :class:`Entity` with ids unique, labels non-empty, each word in at most
        one, links to existing entities, and every string valid UTF-8. What :mod:`dogood.sources.rows` uses
        for the rows it reads, having checked at once what each row could get wrong."""
        out = object.__new__(cls)
        set_ = object.__setattr__
        for name, value in (("id", id), ("image", image), ("words", words), ("entities", entities), ("label", label),
                            ("qa", ()), ("provenance", ()), ("source", None)):
            set_(out, name, value)
        return out

    # -- derived --------------------------------------------------------------
    @property
    def width(self) -> int:
        return self.image.width

    @property
    def height(self) -> int:
        return self.image.height

    @property
    def boxes(self) -> np.ndarray:
        """Word boxes as an ``(n, 4)`` int64 array."""
        return np.array([w.box for w in self.words], dtype=np.int64).reshape(-1, 4)

    @property
    def quads(self) -> np.ndarray:
        """Each word's four corners as an ``(n, 4, 2)`` float64 array: its quad, or its box's corners
        (:meth:`Word.corners`)."""
        return np.array([w.corners() for w in self.words], dtype=np.float64).reshape(-1, 4, 2)

    @property
    def has_quads(self) -> bool:
        """Whether some word carries a quad (a geometric shift moved its corners off its box's)."""
        return any(w.quad is not None for w in self.words)

    def with_quads(self) -> Document:
        """This document with every word carrying a quad (its box's corners where it has none), so that the
        geometric shifts after it carry each word's corners (:mod:`dogood.page.quads`); the same document when
        every word already has one. Quads are asked for with ``quads: true`` (``dogood build --quads``)."""
        if all(w.quad is not None for w in self.words):
            return self
        words = tuple(w if w.quad is not None else Word(w.text, w.box, tuple(w.corners().reshape(-1)))
                      for w in self.words)
        out = copy.copy(self)
        object.__setattr__(out, "words", words)  # boxes, texts and entities unchanged: no re-validation
        return out

    def word_entity(self) -> list[Entity | None]:
        """For each word, the entity it belongs to (or ``None``)."""
        owner: list[Entity | None] = [None] * len(self.words)
        for ent in self.entities:
            for wid in ent.word_ids:
                owner[wid] = ent
        return owner

    def entity_box(self, entity: Entity) -> Box | None:
        """Union of the boxes of an entity's words (``None`` for an entity with no words)."""
        if not entity.word_ids:
            return None
        return union_boxes(self.words[i].box for i in entity.word_ids)

    def entity_text(self, entity: Entity) -> str:
        return " ".join(self.words[i].text for i in entity.word_ids)

    def replace(self, **changes) -> Document:
        """A copy with ``changes`` applied, validated again."""
        return dataclasses.replace(self, **changes)

    def with_shift(self, record: ShiftRecord) -> Document:
        """A copy with ``record`` appended to the provenance (nothing else changes, so no re-validation)."""
        out = copy.copy(self)
        object.__setattr__(out, "provenance", self.provenance + (record,))
        return out

    # -- validation -------------------------------------------------------------
    def _error(self, message: str) -> DocumentError:
        return DocumentError(message, doc_id=self.id, path=self.source)

    def _validate_text(self) -> None:
        """Every string is encodable as UTF-8 (a lone surrogate, e.g. from a JSON ``\\ud800`` escape or an
        undecodable file name, would pass here and fail when the dataset is written)."""
        strings = [self.id, self.label or ""] + [w.text for w in self.words]
        strings += [x for q in self.qa for x in (q.question, q.id, *q.answers)]
        try:
            "".join(strings).encode("utf-8")
        except UnicodeEncodeError:
            pass
        else:
            return
        if not _utf8(self.id):
            raise DocumentError(f"document id {self.id!r} is not valid Unicode (a lone surrogate)", path=self.source)
        for i, word in enumerate(self.words):
            if not _utf8(word.text):
                raise self._error(f"word {i} ({word.text!r}) is not valid Unicode text (a lone surrogate)")
        raise self._error("the document label or a question/answer is not valid Unicode text (a lone surrogate)")

    def _validate(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise DocumentError("document id must be a non-empty string", path=self.source)
        self._validate_text()
        w, h = self.width, self.height
        if w <= 0 or h <= 0:
            raise self._error(f"page size must be positive, got {w}x{h}")
        n = len(self.words)
        if n:
            try:
                b = self.boxes
            except OverflowError:  # a coordinate beyond int64: far outside any page
                i = next(i for i, word in enumerate(self.words) if any(abs(v) >= 2**63 for v in word.box))
                raise self._error(
                    f"word {i} ({self.words[i].text!r}) box {list(self.words[i].box)} lies outside the {w}x{h} page"
                ) from None
            bad_size = (b[:, 2] < b[:, 0]) | (b[:, 3] < b[:, 1])
            if bad_size.any():
                i = int(np.flatnonzero(bad_size)[0])
                raise self._error(f"word {i} ({self.words[i].text!r}) has a negative size: box {b[i].tolist()}")
            outside = (b[:, 0] < 0) | (b[:, 1] < 0) | (b[:, 2] > w) | (b[:, 3] > h)
            if outside.any():
                i = int(np.flatnonzero(outside)[0])
                raise self._error(
                    f"word {i} ({self.words[i].text!r}) box {b[i].tolist()} lies outside the {w}x{h} page"
                )
        entities = self.entities
        if entities:  # the usual case checked at once; any fault is found (and named) by the loops below
            ent_ids = [e.id for e in entities]
            known = set(ent_ids)
            word_ids = [i for e in entities for i in e.word_ids]
            if (len(known) == len(ent_ids) and all(e.label for e in entities)
                    and all(ref in known for e in entities for link in e.links for ref in link)
                    and (not word_ids or (len(set(word_ids)) == len(word_ids)
                                          and min(word_ids) >= 0 and max(word_ids) < n))):
                return
        seen_ids: set[int] = set()
        owner: dict[int, int] = {}
        for ent in self.entities:
            if ent.id in seen_ids:
                raise self._error(f"duplicate entity id {ent.id}")
            seen_ids.add(ent.id)
            if not ent.label:
                raise self._error(f"entity {ent.id} has no label")
            for wid in ent.word_ids:
                if not 0 <= wid < n:
                    raise self._error(f"entity {ent.id} refers to word {wid}, which does not exist ({n} words)")
                if wid in owner:
                    raise self._error(f"word {wid} belongs to entities {owner[wid]} and {ent.id}")
                owner[wid] = ent.id
        for ent in self.entities:
            for a, b_ in ent.links:
                for ref in (a, b_):
                    if ref not in seen_ids:
                        raise self._error(f"entity {ent.id} links to entity {ref}, which does not exist")


def as_page_image(image: Any, *, doc_id: str | None = None, source: str | None = None) -> PageImage:
    """A :class:`PageImage` from a PIL image (any mode, converted by :func:`standard_pixels`) or a numpy array.

    Arrays are ``HxW``, ``HxWx1``, ``HxWx3`` or ``HxWx4`` (alpha over white), of ``uint8`` or ``bool``.
    Anything else (floats, other shapes, a file name, which dogood never opens on a row's say-so) is a
    :class:`DocumentError` naming the document, raised when the document is built, never later in a shift.
    """
    if isinstance(image, PageImage):
        return image
    if isinstance(image, Image.Image):
        try:
            image.load()
            pixels = standard_pixels(image)  # a fresh array: read-only, it is not copied again
            pixels.flags.writeable = False
            return PageImage.from_array(pixels)
        except (OSError, ValueError) as exc:
            raise DocumentError(f"cannot read the PIL image ({exc})", doc_id=doc_id, path=source) from None
    if isinstance(image, np.ndarray):
        arr = image
        if arr.dtype == np.bool_:
            arr = arr.astype(np.uint8) * 255
        if arr.ndim == 3 and arr.shape[2] == 1:
            arr = arr[:, :, 0]
        if arr.dtype == np.uint8 and arr.ndim == 3 and arr.shape[2] == 4:
            arr = standard_pixels(Image.fromarray(arr, "RGBA"))
        if arr.dtype == np.uint8 and (arr.ndim == 2 or (arr.ndim == 3 and arr.shape[2] == 3)) and arr.size:
            return PageImage.from_array(arr)
        raise DocumentError(f"the image array must be HxW, HxWx1, HxWx3 or HxWx4 of uint8 (or bool) pixels, got "
                            f"{image.dtype} {tuple(image.shape)}", doc_id=doc_id, path=source)
    what = type(image).__name__
    hint = " (dogood does not open files a record names: read it with PageImage.from_file)" \
        if isinstance(image, (str, Path)) else ""
    raise DocumentError(f"the image must be a PageImage, a PIL image or a numpy array, got {what}{hint}",
                        doc_id=doc_id, path=source)


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _as_box(box: Sequence[float]) -> Box:
    if len(box) != 4:
        raise ValueError(f"a box has 4 numbers, got {list(box)}")
    try:
        return tuple(int(round(float(v))) for v in box)  # type: ignore[return-value]
    except OverflowError:  # infinity, or an integer too large for a float
        raise ValueError(f"a box has 4 finite numbers, got {list(box)}") from None


def _as_quad(quad: Sequence[float]) -> tuple[float, ...]:
    """Eight finite numbers (or four ``(x, y)`` pairs), rounded to 1/100 pixel."""
    try:
        values = np.asarray(quad, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"a quad has 8 numbers (4 corners), got {quad!r}") from None
    if values.shape != (8,) or not np.isfinite(values).all():
        raise ValueError(f"a quad has 8 finite numbers (4 corners), got {list(values)}")
    return tuple(round(float(v), 2) + 0.0 for v in values)


def _as_word(word: Word | Mapping | Sequence) -> Word:
    if isinstance(word, Word):
        return word  # normalised by Word itself
    if isinstance(word, Mapping):
        return Word(str(word["text"]), _as_box(word["box"]), word.get("quad"))
    text, box = word
    return Word(str(text), _as_box(box))


def _as_entity(ent: Entity | Mapping) -> Entity:
    if isinstance(ent, Mapping):
        return Entity(ent["id"], ent["label"], ent.get("word_ids", ()), ent.get("links", ()))
    return ent  # normalised by Entity itself


def words_from_pairs(pairs: Iterable[tuple[str, Sequence[float]]]) -> tuple[Word, ...]:
    """Build words from ``(text, box)`` pairs."""
    return tuple(Word(str(t), _as_box(b)) for t, b in pairs)
