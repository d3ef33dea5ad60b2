"""RVL-CDIP source and Tesseract OCR, on the real pages in the shared data folder.

OCR runs on at most four real pages in this file (the three RVL-CDIP pages and
one FUNSD form); every test points ``DOGOOD_CACHE`` at a temporary folder.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from dogood.core.document import PageImage
from dogood.core.errors import DocumentError, SourceError
from dogood.page import ocr
from dogood.sources.rvl_cdip import RVL_CDIP_CLASSES, RvlCdipSource, read_labels

DATA = Path(os.environ.get("DOGOOD_DATA_DIR", Path(__file__).resolve().parents[3] / "shared" / "data"))
RVL = DATA / "rvl_cdip"
FUNSD_TEST = DATA / "funsd" / "dataset" / "testing_data"
FUNSD_PAGE = "82573104"  # a clean FUNSD test form

EXPECTED = {
    "images/80035521": "memo",
    "images/2024525661": "invoice",
    "images/503210033+-0034": "handwritten",
}

needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None, reason="the tesseract binary is not installed")


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory) -> Path:
    """One temporary OCR cache for the module, so each real page is OCR'd once."""
    return tmp_path_factory.mktemp("dogood-cache")


@pytest.fixture(autouse=True)
def _env(monkeypatch, shared_cache):
    monkeypatch.setenv("DOGOOD_CACHE", str(shared_cache))
    monkeypatch.setenv("DOGOOD_DATA_DIR", str(DATA))


def norm(text: str) -> str:
    """Case-folded text without leading/trailing punctuation."""
    return re.sub(r"^\W+|\W+$", "", text).casefold()


def iou(a, b) -> float:
    ix = max(0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union else 0.0


def assert_boxes_inside(doc_or_words, width, height):
    for w in doc_or_words:
        x0, y0, x1, y1 = w.box
        assert 0 <= x0 <= x1 <= width and 0 <= y0 <= y1 <= height, (w, width, height)
        assert w.text and w.text == w.text.strip()


# -- labels and listing (no OCR) ------------------------------------------------------


def test_shared_pages_have_their_labels():
    source = RvlCdipSource(RVL, ocr=False)
    assert source.labels_path == RVL / "labels.txt"
    assert source.ids() == list(EXPECTED)
    for doc_id, label in EXPECTED.items():
        doc = source.load(doc_id)
        assert doc.label == label
        assert doc.words == ()
        assert Path(doc.source) == RVL / f"{doc_id}.tif"
        assert doc.height == 1000 and 700 < doc.width < 800
    assert source.kind == source.schema == "rvl_cdip"


def test_root_defaults_to_data_dir_and_is_explained_when_missing(monkeypatch, tmp_path):
    source = RvlCdipSource(ocr=False)
    assert Path(source.root) == RVL
    assert source.ids() == list(EXPECTED)

    monkeypatch.delenv("DOGOOD_DATA_DIR")
    with pytest.raises(SourceError, match=r"https://adamharley\.com/rvl-cdip/.*--source"):
        RvlCdipSource(ocr=False)
    with pytest.raises(SourceError, match="not an RVL-CDIP folder"):
        RvlCdipSource(tmp_path, ocr=False)


def test_classes_in_official_order():
    assert len(RVL_CDIP_CLASSES) == 16
    assert RVL_CDIP_CLASSES[0] == "letter" and RVL_CDIP_CLASSES[1] == "form"
    assert RVL_CDIP_CLASSES[3] == "handwritten" and RVL_CDIP_CLASSES[11] == "invoice"
    assert RVL_CDIP_CLASSES[15] == "memo"


def test_official_layout_with_split_files_relative_to_images(tmp_path):
    # labels/<split>.txt with paths relative to images/, as in the official release
    (tmp_path / "images" / "imagesa" / "x").mkdir(parents=True)
    (tmp_path / "labels").mkdir()
    lines = {"test": [], "train": []}
    for k, doc_id in enumerate(EXPECTED):
        name = Path(doc_id).name + ".tif"
        shutil.copy(RVL / f"{doc_id}.tif", tmp_path / "images" / "imagesa" / "x" / name)
        split = "test" if k < 2 else "train"
        lines[split].append(f"imagesa/x/{name} {RVL_CDIP_CLASSES.index(EXPECTED[doc_id])}")
    for split, rows in lines.items():
        (tmp_path / "labels" / f"{split}.txt").write_text("\n".join(rows) + "\n")
    (tmp_path / "labels" / "val.txt").write_text("")

    test = RvlCdipSource(tmp_path, split="test", ocr=False)
    assert test.ids() == ["imagesa/x/80035521", "imagesa/x/2024525661"]
    assert [test.load(i).label for i in test.ids()] == ["memo", "invoice"]
    assert test.image_path("imagesa/x/80035521") == tmp_path / "images" / "imagesa" / "x" / "80035521.tif"
    train = RvlCdipSource(tmp_path, split="train", ocr=False)
    assert [train.load(i).label for i in train.ids()] == ["handwritten"]
    assert RvlCdipSource(tmp_path, split="validation", ocr=False).ids() == []
    with pytest.raises(SourceError, match="splits"):
        RvlCdipSource(tmp_path, split="dev2", ocr=False)

    # an explicit labels file, relative to the root
    (tmp_path / "mine.txt").write_text("images/imagesa/x/80035521.tif 0\n")
    mine = RvlCdipSource(tmp_path, labels="mine.txt", ocr=False)
    assert mine.labels_path == tmp_path / "mine.txt"
    assert mine.load("images/imagesa/x/80035521").label == "letter"
    with pytest.raises(SourceError, match="not found"):
        RvlCdipSource(tmp_path, labels="nope.txt", ocr=False)


def test_funsd_images_listed_as_class_1_are_forms(tmp_path):
    images = sorted((FUNSD_TEST / "images").glob("*.png"))
    assert len(images) == 50
    labels = tmp_path / "funsd-as-rvl.txt"
    labels.write_text("".join(f"images/{p.name} 1\n" for p in images))
    source = RvlCdipSource(FUNSD_TEST, labels=str(labels), split="funsd", ocr=False)
    assert source.ids() == [f"images/{p.stem}" for p in images]
    docs = [source.load(i) for i in source.ids()]
    assert {d.label for d in docs} == {"form"}
    assert all(d.width > 0 and d.height > 0 for d in docs)
    assert source.describe()["split"] == "funsd"


@pytest.mark.parametrize(
    "content, line, what",
    [
        ("images/80035521.tif 15\nimages/2024525661.tif\n", 2, "expected 'path label'"),
        ("images/80035521.tif 15\n\nimages/2024525661.tif 16\n", 3, "outside 0-15"),
        ("images/80035521.tif -1\n", 1, "outside 0-15"),
        ("images/80035521.tif memo\n", 1, "not an integer"),
        ("images/80035521.tif 15\nimages/80035521.tif 15\n", 2, "repeats"),
    ],
)
def test_bad_labels_file_names_file_and_line(tmp_path, content, line, what):
    labels = tmp_path / "bad-labels.txt"
    labels.write_text(content)
    source = RvlCdipSource(RVL, labels=labels, ocr=False)  # parsing is lazy
    with pytest.raises(SourceError) as info:
        source.ids()
    message = str(info.value)
    assert str(labels) in message and f"line {line}" in message and what in message
    with pytest.raises(SourceError, match=re.escape(str(labels))):
        read_labels(labels)


def test_missing_image_is_a_document_error_naming_file_and_line(tmp_path):
    labels = tmp_path / "labels.txt"
    labels.write_text("images/80035521.tif 15\nimages/does-not-exist.tif 4\n")
    source = RvlCdipSource(RVL, labels=labels, ocr=False)
    assert source.ids() == ["images/80035521", "images/does-not-exist"]  # listing never touches images
    assert source.load("images/80035521").label == "memo"
    with pytest.raises(DocumentError) as info:
        source.load("images/does-not-exist")
    message = str(info.value)
    assert "does-not-exist.tif" in message and str(labels) in message and "line 2" in message
    assert info.value.doc_id == "images/does-not-exist"
    with pytest.raises(DocumentError, match="not listed"):
        source.load("images/unknown")


def test_source_pickles_and_describes():
    source = RvlCdipSource(RVL, ocr=False)
    clone = pickle.loads(pickle.dumps(source))
    assert clone.ids() == source.ids()
    assert clone.load("images/80035521").label == "memo"
    info = source.describe()
    assert info["kind"] == "rvl_cdip" and info["name"] == "RVL-CDIP" and info["split"] == "test"
    assert info["url"] == "https://adamharley.com/rvl-cdip/"
    assert "Harley" in info["citation"] and "ICDAR 2015" in info["citation"]
    assert info["license"]


# -- OCR on real pages ------------------------------------------------------------------


@needs_tesseract
def test_rvl_pages_with_ocr():
    source = RvlCdipSource(RVL)  # ocr=True by default
    docs = {i: source.load(i) for i in source.ids()}
    assert {i: d.label for i, d in docs.items()} == EXPECTED
    for doc in docs.values():
        assert_boxes_inside(doc.words, doc.width, doc.height)

    memo = [norm(w.text) for w in docs["images/80035521"].words]
    assert len(memo) > 40
    assert {"memorandum", "subject", "solubility", "deaton"} <= set(memo)
    # reading order: the heading comes before the subject line, which comes before the body
    assert memo.index("memorandum") < memo.index("subject") < memo.index("according")

    invoice = [norm(w.text) for w in docs["images/2024525661"].words]
    assert len(invoice) > 40
    assert {"covington", "statement", "payment"} <= set(invoice)

    assert source.describe()["ocr"]["engine"] == "tesseract"


@needs_tesseract
def test_ocr_finds_funsd_words_where_they_are_annotated():
    image = PageImage.from_file(FUNSD_TEST / "images" / f"{FUNSD_PAGE}.png")
    annotation = json.loads((FUNSD_TEST / "annotations" / f"{FUNSD_PAGE}.json").read_text())
    gold = [
        (norm(w["text"]), w["box"]) for e in annotation["form"] for w in e["words"] if len(norm(w["text"])) >= 4
    ]
    assert len(gold) > 50

    words = ocr.ocr_words(image)
    assert_boxes_inside(words, image.width, image.height)
    found_at = defaultdict(list)
    for w in words:
        found_at[norm(w.text)].append(w.box)
    found = [(text, box) for text, box in gold if text in found_at]
    assert len(found) >= 0.5 * len(gold), (len(found), len(gold))
    overlaps = [max(iou(box, other) for other in found_at[text]) for text, box in found]
    assert sum(o > 0.5 for o in overlaps) >= 0.6 * len(overlaps)

    # the same page read through the RVL-CDIP source (as class 1) gets the same words, from the cache
    labels_file = Path(os.environ["DOGOOD_CACHE"]) / "one-form.txt"
    labels_file.write_text(f"images/{FUNSD_PAGE}.png 1\n")
    doc = RvlCdipSource(FUNSD_TEST, labels=labels_file).load(f"images/{FUNSD_PAGE}")
    assert doc.label == "form" and doc.words == words


@needs_tesseract
def test_second_ocr_call_hits_the_cache(monkeypatch):
    image = PageImage.from_file(RVL / "images" / "80035521.tif")
    first = ocr.ocr_words(image)
    path = ocr.ocr_cache_path(image)
    assert path.is_file()
    assert path.parent.parent == Path(os.environ["DOGOOD_CACHE"]) / "ocr"
    assert path.parent.name == path.stem[:2]
    entry = json.loads(path.read_text())
    assert entry["lang"] == "eng" and entry["tesseract"] == ocr.tesseract_version()
    assert [(r["text"], tuple(r["box"])) for r in entry["words"]] == [(w.text, w.box) for w in first]
    assert all("conf" in r for r in entry["words"])

    import pytesseract

    def boom(*args, **kwargs):
        raise AssertionError("tesseract ran although the result is cached")

    monkeypatch.setattr(pytesseract, "image_to_data", boom)
    monkeypatch.setattr(ocr, "_run_tesserocr", boom)  # the in-process engine, where tesserocr runs
    again = ocr.ocr_words(PageImage.from_file(RVL / "images" / "80035521.tif"))
    assert again == first
    # another lang or config is another key, so it is not served from this entry
    assert ocr.ocr_cache_path(image, config="--psm 6") != path
    assert ocr.ocr_cache_path(image, lang="osd") != path
    with pytest.raises(AssertionError, match="tesseract ran"):
        ocr.ocr_words(image, config="--psm 6")


# -- OCR logic with a stand-in for tesseract ------------------------------------------------


def fake_data(rows):
    keys = "level page_num block_num par_num line_num word_num left top width height conf text".split()
    return {k: [r[i] for r in rows] for i, k in enumerate(keys)}


def test_parse_keeps_word_rows_in_order_stripped_and_clipped(monkeypatch, tmp_path):
    import numpy as np
    import pytesseract

    rows = [
        (1, 1, 0, 0, 0, 0, 0, 0, 100, 50, -1, ""),
        (2, 1, 1, 0, 0, 0, 5, 5, 90, 40, -1, ""),
        (5, 1, 1, 1, 1, 1, 10, 10, 20, 10, 95.5, " Hello "),
        (5, 1, 1, 1, 1, 2, 40, 10, 20, 10, 90, "   "),
        (5, 1, 1, 1, 1, 3, 90, 45, 30, 20, 50, "edge"),
        (5, 1, 2, 1, 1, 1, 0, 30, 10, 5, 80, "next"),
    ]
    calls = []

    def fake(image, lang=None, config="", output_type=None, **kw):
        calls.append((image.size, lang, config))
        return fake_data(rows)

    monkeypatch.setattr(pytesseract, "image_to_data", fake)
    monkeypatch.setattr(ocr, "_TESSEROCR", {"module": None, "why": "the stand-in is pytesseract's"})
    image = PageImage.from_array(np.full((50, 100), 255, np.uint8))
    words = ocr.ocr_words(image, cache=tmp_path / "c", config="--psm 6")
    assert [(w.text, w.box) for w in words] == [
        ("Hello", (10, 10, 30, 20)),
        ("edge", (90, 45, 100, 50)),
        ("next", (0, 30, 10, 35)),
    ]
    assert calls == [((100, 50), "eng", "--psm 6")]
    assert ocr.ocr_words(image, cache=tmp_path / "c", config="--psm 6") == words
    assert len(calls) == 1  # served from the folder given as cache
    assert len(list((tmp_path / "c").rglob("*.json"))) == 1

    # cache=False never reads or writes a cache
    monkeypatch.setenv("DOGOOD_CACHE", str(tmp_path / "none"))
    assert ocr.ocr_words(image, cache=False, config="--psm 6") == words
    assert len(calls) == 2
    assert not (tmp_path / "none" / "ocr").exists()

    # a damaged cache entry is recomputed and rewritten
    entry = next((tmp_path / "c").rglob("*.json"))
    entry.write_text("{not json")
    assert ocr.ocr_words(image, cache=tmp_path / "c", config="--psm 6") == words
    assert len(calls) == 3
    assert json.loads(entry.read_text())["words"][0]["text"] == "Hello"
    assert not [p for p in entry.parent.iterdir() if p.suffix == ".tmp"]


def test_missing_tesseract_is_a_source_error(monkeypatch):
    import pytesseract

    def missing(*args, **kwargs):
        raise pytesseract.TesseractNotFoundError()

    monkeypatch.setattr(pytesseract, "get_tesseract_version", missing)
    image = PageImage.from_file(RVL / "images" / "80035521.tif")
    with pytest.raises(SourceError, match="tesseract-ocr"):
        ocr.ocr_words(image)
    with pytest.raises(SourceError, match="apt"):
        RvlCdipSource(RVL).load("images/80035521")
    assert RvlCdipSource(RVL, ocr=False).load("images/80035521").label == "memo"


def test_rvl_cdip_t_keeps_labels_and_changes_a_tenth_of_the_ocr_words(data_dir, tmp_path):
    from dogood.pipeline.build import build
    from dogood.pipeline.recipe import load_recipe
    from dogood.sources.hf_dataset import HFDatasetSource
    from dogood.sources.rvl_cdip import RvlCdipSource

    out = tmp_path / "rvl-cdip-t"
    build(load_recipe("rvl-cdip-t"), out, source_path=data_dir / "rvl_cdip", configs=["char_deletion"], progress=False)
    source = RvlCdipSource(root=data_dir / "rvl_cdip", split="test")
    shifted = HFDatasetSource(name=out, split="test", config="char_deletion")
    changed = tokens = 0
    for doc_id in source.ids():
        a, b = source.load(doc_id), shifted.load(doc_id)
        assert b.label == a.label and [w.box for w in b.words] == [w.box for w in a.words]
        for x, y in zip(a.words, b.words):
            if x.text != y.text:
                assert len(y.text) == len(x.text) - 1
                changed += 1
        tokens += sum(1 for w in a.words if w.text.strip())
    assert abs(changed / tokens - 0.1) < 0.02


# -- hostile folders and caches (issue 36) ---------------------------------------------------------------------
@pytest.mark.parametrize("line, message", [
    ("/etc/hostname 1", "is an absolute name"),
    ("../secret.tif 1", "leaves the RVL-CDIP folder"),
    ("images/../../secret.tif 1", "leaves the RVL-CDIP folder"),
])
def test_labels_naming_files_outside_the_folder_are_refused(tmp_path, line, message):
    root = tmp_path / "rvl"
    (root / "images").mkdir(parents=True)
    shutil.copy(RVL / "images" / "80035521.tif", root / "images")
    (root / "labels.txt").write_text(f"images/80035521.tif 11\n{line}\n")
    with pytest.raises(SourceError, match=f"labels.txt, line 2: image path .*{message}"):
        RvlCdipSource(root, ocr=False).ids()


def test_an_image_linked_out_of_the_folder_or_a_fifo_is_refused(tmp_path):
    root = tmp_path / "rvl"
    (root / "images").mkdir(parents=True)
    shutil.copy(RVL / "images" / "80035521.tif", tmp_path / "private.tif")
    (root / "images" / "a.tif").symlink_to(tmp_path / "private.tif")
    os.mkfifo(root / "images" / "b.tif")
    (root / "labels.txt").write_text("images/a.tif 11\nimages/b.tif 2\n")
    source = RvlCdipSource(root, ocr=False)
    with pytest.raises(DocumentError, match=r"document 'images/a'.*outside .*labels.txt, line 1"):
        source.load("images/a")
    with pytest.raises(DocumentError, match="document 'images/b'.*is a FIFO"):
        source.load("images/b")


def test_an_ocr_cache_entry_of_600k_words_is_read_again_within_a_memory_bound(tmp_path, bounded_run):
    """A planted cache entry of 600,000 words took 3.6 GB; it is now damaged on sight and the page read again."""
    import numpy as np
    from PIL import Image

    Image.fromarray(np.full((40, 60), 255, np.uint8)).save(tmp_path / "page.png")
    word = {"text": "w", "box": [0, 0, 1, 1], "conf": 90.0, "block": 1, "par": 1, "line": 1, "word": 1}
    run = bounded_run(
        "import json, warnings\n"
        "from dogood.page import ocr\n"
        "from dogood.core.document import PageImage\n"
        "image = PageImage.from_file('page.png')\n"
        "path = ocr.ocr_cache_path(image)\n"
        "path.parent.mkdir(parents=True, exist_ok=True)\n"
        f"path.write_text(json.dumps({{'format': ocr.CACHE_FORMAT, 'key': path.stem, 'words': [{word!r}] * 600_000}}))\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    assert ocr.ocr_words(image) == ()\n"
        "assert any('600000 words, more than the 10000' in str(w.message) for w in caught), caught\n"
        "assert len(json.loads(path.read_text())['words']) == 0\n",
        address_space_mib=6144)
    assert run.code == 0, run.err
    assert run.peak_mib < 1024, run.peak_mib
