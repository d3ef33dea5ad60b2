"""The Document record and PageImage: validation errors, lazy decoding, pixel modes, pickling."""

from __future__ import annotations

import io
import os
import pickle
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from dogood.core.document import Document, Entity, PageImage, QAPair, ShiftRecord, Word, words_from_pairs
from dogood.core.errors import DocumentError, DogoodError

DATA = Path(os.environ.get("DOGOOD_DATA_DIR") or Path(__file__).resolve().parents[2].parent / "shared" / "data")
FUNSD_PNG = DATA / "funsd" / "dataset" / "testing_data" / "images" / "82092117.png"
needs_funsd = pytest.mark.skipif(not FUNSD_PNG.is_file(), reason=f"FUNSD image {FUNSD_PNG} not found")


def blank_page(width: int = 200, height: int = 100) -> PageImage:
    return PageImage.from_array(np.full((height, width), 255, dtype=np.uint8))


def form_doc(**changes) -> Document:
    """A hand-made form: a question, its answer over two words, a wordless 'other', a stray word."""
    fields = dict(
        id="form-1",
        image=blank_page(),
        words=(
            Word("Name:", (10, 10, 50, 20)),
            Word("John", (60, 12, 90, 22)),
            Word("Smith", (95, 8, 140, 21)),
            Word("stray", (10, 80, 40, 90)),
        ),
        entities=(
            Entity(0, "question", (0,), ((0, 1),)),
            Entity(1, "answer", (1, 2), ((0, 1),)),
            Entity(2, "other", ()),
        ),
        source="/data/form-1.json",
    )
    fields.update(changes)
    return Document(**fields)


# -- validation -----------------------------------------------------------------


def _raises(match: str, **changes) -> DocumentError:
    with pytest.raises(DocumentError) as info:
        form_doc(**changes)
    err = info.value
    assert isinstance(err, DogoodError)
    assert err.doc_id == changes.get("id", "form-1")
    assert "document 'form-1'" in str(err) or "id" in changes
    assert match in str(err), str(err)
    return err


def test_valid_form_builds():
    doc = form_doc()
    assert (doc.width, doc.height) == (200, 100)
    assert len(doc.words) == 4 and len(doc.entities) == 3
    assert doc.boxes.dtype == np.int64
    assert doc.boxes.tolist() == [[10, 10, 50, 20], [60, 12, 90, 22], [95, 8, 140, 21], [10, 80, 40, 90]]


def test_word_box_outside_the_page_names_document_and_file():
    words = (Word("ok", (0, 0, 200, 100)), Word("far", (190, 10, 201, 20)))
    err = _raises("lies outside the 200x100 page", words=words, entities=())
    assert str(err).startswith("document 'form-1', file /data/form-1.json: word 1 ('far') box")
    assert err.path == "/data/form-1.json"
    assert err.reason.startswith("word 1 ('far')")


@pytest.mark.parametrize("box", [(-1, 0, 5, 5), (0, -1, 5, 5), (0, 0, 5, 101)])
def test_word_box_past_any_edge_is_refused(box):
    _raises("lies outside the 200x100 page", words=(Word("w", box),), entities=())


def test_without_source_the_error_names_only_the_document():
    with pytest.raises(DocumentError) as info:
        Document(id="loose", image=blank_page(), words=(Word("w", (0, 0, 300, 5)),))
    assert str(info.value).startswith("document 'loose': word 0 ('w')")
    assert "file" not in str(info.value)
    assert info.value.path is None


def test_negative_size_names_document_and_file():
    err = _raises("has a negative size", words=(Word("back", (50, 10, 40, 20)),), entities=())
    assert str(err).startswith("document 'form-1', file /data/form-1.json: word 0 ('back') has a negative size")


def test_box_in_error_message_is_plain_numbers():
    err = _raises("has a negative size", words=(Word("back", (50, 10, 40, 20)),), entities=())
    assert "box [50, 10, 40, 20]" in str(err)
    err = _raises("lies outside", words=(Word("far", (190, 10, 201, 20)),), entities=())
    assert "box [190, 10, 201, 20] lies outside the 200x100 page" in str(err)


def test_entity_with_missing_word():
    err = _raises(
        "entity 7 refers to word 4, which does not exist (4 words)",
        entities=(Entity(7, "question", (3, 4)),),
    )
    assert "file /data/form-1.json" in str(err)
    _raises("entity 7 refers to word -1, which does not exist", entities=(Entity(7, "question", (-1,)),))


def test_word_in_two_entities():
    _raises(
        "word 1 belongs to entities 0 and 1",
        entities=(Entity(0, "question", (0, 1)), Entity(1, "answer", (1, 2))),
    )


def test_link_to_missing_entity():
    _raises(
        "entity 0 links to entity 9, which does not exist",
        entities=(Entity(0, "question", (0,), ((0, 9),)), Entity(1, "answer", (1,))),
    )


def test_duplicate_entity_id():
    _raises("duplicate entity id 3", entities=(Entity(3, "question", (0,)), Entity(3, "answer", (1,))))


def test_entity_without_label():
    _raises("entity 0 has no label", entities=(Entity(0, "", (0,)),))


@pytest.mark.parametrize("bad_id", ["", None, 17])
def test_empty_or_non_string_id(bad_id):
    with pytest.raises(DocumentError) as info:
        form_doc(id=bad_id)
    assert str(info.value) == "file /data/form-1.json: document id must be a non-empty string"
    assert info.value.path == "/data/form-1.json"


def test_zero_size_page_is_refused():
    image = PageImage(array=np.zeros((0, 0), np.uint8), width=0, height=0)
    with pytest.raises(DocumentError, match=r"document 'z': page size must be positive, got 0x0"):
        Document(id="z", image=image)


def test_inputs_are_coerced_to_records():
    doc = Document(
        id="c",
        image=blank_page(),
        words=[("a", (1.4, 2.6, 3, 4)), {"text": 5, "box": [0, 0, 1, 1]}],
        entities=[{"id": "1", "label": "answer", "word_ids": [0, 1], "links": [["1", "1"]]}],
        qa=[QAPair("who?", ("a",))],
    )
    assert doc.words == (Word("a", (1, 3, 3, 4)), Word("5", (0, 0, 1, 1)))
    assert all(type(v) is int for w in doc.words for v in w.box)
    assert doc.entities == (Entity(1, "answer", (0, 1), ((1, 1),)),)
    assert isinstance(doc.qa, tuple) and doc.qa[0].answers == ("a",)
    assert words_from_pairs([("x", (0.6, 0, 2, 2))]) == (Word("x", (1, 0, 2, 2)),)


def test_word_box_needs_four_numbers():
    with pytest.raises(ValueError, match="a box has 4 numbers"):
        Document(id="c", image=blank_page(), words=[("a", (1, 2, 3))])


# -- replace / derived ------------------------------------------------------------------


def test_replace_validates_again_and_leaves_the_original():
    doc = form_doc()
    moved = doc.replace(words=doc.words[:3] + (Word("stray", (0, 0, 5, 5)),))
    assert moved.words[3].box == (0, 0, 5, 5)
    assert doc.words[3].box == (10, 80, 40, 90)
    assert moved.entities == doc.entities
    with pytest.raises(DocumentError, match=r"document 'form-1', file /data/form-1.json: word 3 \('stray'\) box"):
        doc.replace(words=doc.words[:3] + (Word("stray", (0, 0, 500, 5)),))
    # removing a word that an entity uses is caught too
    with pytest.raises(DocumentError, match="entity 1 refers to word 2, which does not exist \\(2 words\\)"):
        doc.replace(words=doc.words[:2])
    with pytest.raises(DocumentError, match="duplicate entity id 0"):
        doc.replace(entities=doc.entities + (Entity(0, "other", (3,)),))


def test_with_shift_appends_provenance():
    doc = form_doc()
    rec = ShiftRecord("blur", {"sigma": 1.5}, seed=3)
    out = doc.with_shift(rec)
    assert out.provenance == (rec,) and out.words == doc.words and out.image is doc.image
    assert doc.provenance == ()
    assert rec.params_json() == '{"sigma": 1.5}'


def test_word_entity_entity_box_entity_text():
    doc = form_doc()
    q, a, other = doc.entities
    assert doc.word_entity() == [q, a, a, None]
    assert doc.entity_box(q) == (10, 10, 50, 20)
    assert doc.entity_box(a) == (60, 8, 140, 22)
    assert doc.entity_box(other) is None
    assert doc.entity_text(q) == "Name:"
    assert doc.entity_text(a) == "John Smith"
    assert doc.entity_text(other) == ""


def test_document_is_frozen():
    doc = form_doc()
    with pytest.raises(AttributeError):
        doc.id = "other"  # type: ignore[misc]


# -- PageImage: files --------------------------------------------------------------------


@needs_funsd
def test_from_file_reads_only_the_header():
    page = PageImage.from_file(FUNSD_PNG)
    assert page._array is None
    assert (page.width, page.height, page.format) == (754, 1000, "PNG")
    assert page.path == str(FUNSD_PNG)
    assert not page.modified
    assert page._array is None
    arr = page.to_array()
    assert page._array is arr
    assert arr.shape == (1000, 754) and arr.dtype == np.uint8
    assert page.to_array() is arr  # cached
    with Image.open(FUNSD_PNG) as im:
        assert np.array_equal(arr, np.array(im.convert("L")))
    assert page.encoded_bytes() == FUNSD_PNG.read_bytes()


@needs_funsd
def test_to_array_is_read_only():
    page = PageImage.from_file(FUNSD_PNG)
    arr = page.to_array()
    assert not arr.flags.writeable
    with pytest.raises(ValueError):
        arr[0, 0] = 0


def test_from_array_copies_and_freezes():
    src = np.zeros((4, 5), dtype=np.uint8)
    page = PageImage.from_array(src)
    src[0, 0] = 99
    assert page.to_array()[0, 0] == 0
    assert not page.to_array().flags.writeable
    assert page.modified
    assert (page.width, page.height) == (5, 4)


@pytest.mark.parametrize(
    "array",
    [np.zeros((4, 4), np.float32), np.zeros((4, 4, 4), np.uint8), np.zeros((4,), np.uint8), np.zeros((2, 2, 2, 3), np.uint8)],
)
def test_from_array_rejects_other_shapes_and_dtypes(array):
    with pytest.raises(ValueError, match="expected HxW or HxWx3 uint8 pixels"):
        PageImage.from_array(array)


@needs_funsd
def test_truncated_png_raises_naming_the_file(tmp_path):
    raw = FUNSD_PNG.read_bytes()
    half = tmp_path / "half.png"
    half.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(DocumentError) as info:
        PageImage.from_file(half)
    assert str(info.value).startswith(f"file {half}: cannot read image")
    assert info.value.path == str(half)
    # without the integrity check the header is read, and decoding fails naming the file
    lazy = PageImage.from_file(half, verify=False)
    assert (lazy.width, lazy.height) == (754, 1000)
    with pytest.raises(DocumentError) as info:
        lazy.to_array()
    assert str(info.value).startswith(f"file {half}: cannot decode image")


def test_missing_and_non_image_files(tmp_path):
    missing = tmp_path / "nope.png"
    with pytest.raises(DocumentError) as info:
        PageImage.from_file(missing)
    assert str(info.value) == f"file {missing}: image file not found"
    text = tmp_path / "notes.png"
    text.write_text("this is not a picture")
    with pytest.raises(DocumentError) as info:
        PageImage.from_file(text)
    assert str(info.value).startswith(f"file {text}: cannot read image")
    with pytest.raises(DocumentError, match=r"^file page\.png: cannot read image"):
        PageImage.from_bytes(b"garbage", name="page.png")


def test_page_image_needs_some_pixels():
    with pytest.raises(ValueError, match="needs a path, bytes, an array or a PIL image"):
        PageImage(width=1, height=1)


# -- PageImage: pixel modes -----------------------------------------------------------------


def _decode(tmp_path, im: Image.Image, fmt: str = "PNG", **save) -> np.ndarray:
    path = tmp_path / f"page.{fmt.lower()}"
    im.save(path, fmt, **save)
    with Image.open(path) as check:
        assert check.mode == im.mode  # the file really has that mode
    page = PageImage.from_file(path)
    assert page._array is None
    arr = page.to_array()
    assert arr.dtype == np.uint8 and not arr.flags.writeable
    return arr


def test_mode_1_becomes_L(tmp_path):
    im = Image.new("1", (3, 2))
    im.putpixel((1, 0), 1)
    im.putpixel((2, 1), 1)
    arr = _decode(tmp_path, im)
    assert arr.tolist() == [[0, 255, 0], [0, 0, 255]]


def _palette_image() -> Image.Image:
    im = Image.new("P", (3, 1))
    im.putpalette([0, 0, 0, 255, 0, 0, 0, 0, 255] + [0] * (256 * 3 - 9))
    im.putdata([0, 1, 2])
    return im


def test_mode_P_becomes_RGB(tmp_path):
    arr = _decode(tmp_path, _palette_image())
    assert arr.shape == (1, 3, 3)
    assert arr.tolist() == [[[0, 0, 0], [255, 0, 0], [0, 0, 255]]]


def test_mode_P_with_transparent_index_becomes_white(tmp_path):
    arr = _decode(tmp_path, _palette_image(), transparency=1)
    assert arr.tolist() == [[[0, 0, 0], [255, 255, 255], [0, 0, 255]]]


def test_mode_RGBA_composites_on_white(tmp_path):
    im = Image.new("RGBA", (3, 1))
    im.putdata([(10, 20, 30, 255), (10, 20, 30, 0), (0, 0, 0, 128)])
    arr = _decode(tmp_path, im)
    assert arr.shape == (1, 3, 3)
    # opaque kept, transparent -> white, half-transparent black -> mid grey (255 * 127/255)
    assert arr[0, 0].tolist() == [10, 20, 30]
    assert arr[0, 1].tolist() == [255, 255, 255]
    assert arr[0, 2].tolist() == [127, 127, 127]


def test_mode_LA_composites_on_white(tmp_path):
    im = Image.new("LA", (2, 1))
    im.putdata([(100, 255), (0, 0)])
    arr = _decode(tmp_path, im)
    # LA comes out as RGB: grey where opaque, white where transparent
    assert arr.tolist() == [[[100, 100, 100], [255, 255, 255]]]


def test_mode_I16_is_scaled_to_8_bit(tmp_path):
    im = Image.fromarray(np.array([[0, 65535], [257, 32896]], dtype=np.uint16))
    assert im.mode == "I;16"
    arr = _decode(tmp_path, im)
    assert arr.shape == (2, 2)
    # value * 255 / 65535: 65535 -> 255, 257 -> 1, 32896 -> 128
    assert arr.tolist() == [[0, 255], [1, 128]]


def test_mode_CMYK_becomes_RGB(tmp_path):
    im = Image.new("CMYK", (3, 1))
    im.putdata([(0, 0, 0, 0), (0, 0, 0, 255), (255, 0, 0, 0)])
    arr = _decode(tmp_path, im, "TIFF")
    assert arr.tolist() == [[[255, 255, 255], [0, 0, 0], [0, 255, 255]]]


def test_L_and_RGB_are_kept(tmp_path):
    gray = np.arange(12, dtype=np.uint8).reshape(3, 4) * 20
    assert np.array_equal(_decode(tmp_path, Image.fromarray(gray)), gray)
    rgb = np.arange(36, dtype=np.uint8).reshape(3, 4, 3) * 7
    assert np.array_equal(_decode(tmp_path, Image.fromarray(rgb)), rgb)


# -- PageImage: encoding, equality, pickling ---------------------------------------------------


@pytest.mark.parametrize("shape", [(37, 53), (37, 53, 3)])
def test_from_array_round_trips_through_png(shape):
    pixels = np.random.default_rng(0).integers(0, 256, size=shape, dtype=np.uint8)
    page = PageImage.from_array(pixels)
    data = page.encoded_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    again = PageImage.from_bytes(data)
    assert (again.width, again.height, again.format) == (53, 37, "PNG")
    assert not again.modified and again.encoded_bytes() is data
    assert np.array_equal(again.to_array(), pixels)
    assert again == page
    assert again != PageImage.from_array(np.zeros(shape, np.uint8))


@needs_funsd
def test_pickling_a_file_backed_page_drops_the_decoded_pixels():
    page = PageImage.from_file(FUNSD_PNG)
    pixels = page.to_array()
    blob = pickle.dumps(page)
    assert len(blob) < 10_000  # 754 x 1000 decoded pixels would be 754,000 bytes
    copy = pickle.loads(blob)
    assert copy._array is None
    assert (copy.path, copy.width, copy.height, copy.format) == (str(FUNSD_PNG), 754, 1000, "PNG")
    assert np.array_equal(copy.to_array(), pixels)
    assert page._array is pixels  # the original keeps its cache


def test_pickling_a_modified_page_keeps_its_pixels():
    pixels = np.random.default_rng(1).integers(0, 256, size=(20, 30), dtype=np.uint8)
    copy = pickle.loads(pickle.dumps(PageImage.from_array(pixels)))
    assert copy.modified
    assert np.array_equal(copy._array, pixels)


def test_pickling_a_document_round_trips():
    doc = form_doc()
    copy = pickle.loads(pickle.dumps(doc))
    assert copy == doc
    assert copy.source == "/data/form-1.json"


def test_repr_of_page_image():
    assert repr(blank_page(7, 3)) == "PageImage(<pixels>, 7x3)"
    buf = io.BytesIO()
    Image.new("L", (2, 2)).save(buf, "PNG")
    assert repr(PageImage.from_bytes(buf.getvalue())) == "PageImage(<bytes>, 2x2)"
