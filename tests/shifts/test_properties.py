"""Property-based tests: every registered shift on random but valid documents.

A hypothesis strategy draws small pages (60-400 px a side, grayscale or RGB,
each word drawn into its box or dark strokes there) with 0-30 words of random
short texts (form words, numbers, dates, digits, punctuation, other scripts,
emoji, empty and over-long strings), boxes anywhere inside the page
(zero-size, overlapping and identical ones included), FUNSD-labelled
entities (each word in at most one; entities without words; on "form" pages
linked question/answer pairs) and random links between them.

Every shift in :data:`dogood.shifts.SHIFTS` is run on them with its defaults
(the registry is iterated, so a new shift is covered as soon as it is
registered), plus a few :data:`VARIANTS` that add, remove or reorder words or
draw into the image, and must keep the invariants of ``DESIGN.md``:

- ``shift(doc, seed)`` never raises for a valid document; a skip leaves the
  document unchanged and says why in the provenance;
- the output is a valid :class:`~dogood.core.document.Document` (validated again
  here: boxes inside the page, entity word ids that exist) whose image has
  the size the document says;
- the word count is kept, unless the shift's docstring says it adds or
  removes words (and then it only adds, or only removes, as documented);
- entities keep their ids, labels and links (a shift that removes words may
  remove an entity left without words, with the links to it);
- text shifts keep boxes and the words' entities; layout shifts keep texts
  and labels; image shifts keep texts and labels;
- the same seed gives the same output;
- a page without words passes every shift: skipped with a reason, or with
  no words and the same entities (image shifts and margin padding may still
  change the page; other shifts leave it as it was).

Examples are derandomized (the same ones on every run) and few, so the file
stays under a minute on 2 cores; ``DOGOOD_PROPERTY_SCALE=50`` multiplies them
for a thorough run.

Shifts whose defaults need resources that are not available offline get
them here: ``bert_attack`` a tiny random masked language model,
``move`` the CRF baseline of ``conftest.py``, ``embedding_swap`` a small
GloVe vocabulary. ``natural_background`` reads COCO photos from
``$DOGOOD_DATA_DIR`` and ``reocr`` runs Tesseract: both are skipped with a
reason when those are missing, and get fewer examples.
"""

from __future__ import annotations

import collections
import functools
import os
import shutil
import string

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw, ImageFont

from dogood.core.document import Document, Entity, PageImage, Word
from dogood.shifts import SHIFTS, Shift

FUNSD_LABELS = ("header", "question", "answer", "other")

# Words the shifts know how to change: form words, stopwords, numbers, dates,
# money, auxiliaries and verbs, number words, misspellable words, other scripts.
FORM_WORDS = (
    "Date:", "DATE", "Name", "name:", "To:", "From", "Company:", "Address:", "City:", "the", "of", "and",
    "is", "are", "was", "were", "has", "have", "did", "does", "can", "can't", "isn't", "not", "n't",
    "requires", "wrote", "report", "tobacco", "research", "receive", "twenty", "one", "12/05/98",
    "1,234.56", "$1,000", "(212)", "403-", "1000", "05", "0", "2", "4", "A221", "No.", "#", "N/A", "X",
    "and/or", "Dаte", "日本", "Ünïcödé", "—", "...", "(see", "R&D", "e-mail", "a", "I",
)
TEXT_CHARS = string.ascii_letters + string.digits + string.punctuation + " \t\néÄßøñ€£日本語Привет\u0301\u200b\U0001f600"


@st.composite
def texts(draw) -> str:
    kind = draw(st.integers(0, 19))
    if kind < 12:
        return draw(st.sampled_from(FORM_WORDS))
    if kind < 14:
        return draw(st.sampled_from(["", " "]))
    if kind == 14:  # longer than the text shifts' 64-character limit
        return draw(st.text(alphabet=string.ascii_letters, min_size=60, max_size=90))
    return draw(st.text(alphabet=TEXT_CHARS, min_size=1, max_size=12))


@functools.lru_cache(maxsize=64)
def font(box_height: int) -> ImageFont.ImageFont:
    """Pillow's own scalable font, sized to fill a box of ``box_height`` pixels."""
    return ImageFont.load_default(size=max(6, min(40, box_height - 2)))


@st.composite
def boxes(draw, width: int, height: int, previous: list) -> tuple[int, int, int, int]:
    """A box inside the page: usually word-like, sometimes zero-size, sometimes an earlier box again."""
    kind = draw(st.integers(0, 9))
    if kind == 0 and previous:
        return draw(st.sampled_from(previous))  # identical boxes
    if kind == 1:  # zero width and/or zero height, possibly on the page edge
        x = draw(st.integers(0, width))
        y = draw(st.integers(0, height))
        return (x, y, x + draw(st.sampled_from([0, min(3, width - x)])), y)
    if kind == 2:  # anything inside the page (may be huge, may overlap everything)
        x0, x1 = sorted(draw(st.lists(st.integers(0, width), min_size=2, max_size=2)))
        y0, y1 = sorted(draw(st.lists(st.integers(0, height), min_size=2, max_size=2)))
        return (x0, y0, x1, y1)
    w = draw(st.integers(1, max(1, min(60, width // 3))))
    h = draw(st.integers(1, max(1, min(20, height // 4))))
    x0 = draw(st.integers(0, width - w))
    y0 = draw(st.integers(0, height - h))
    return (x0, y0, x0 + w, y0 + h)


@st.composite
def documents(draw, max_words: int = 30) -> Document:
    """A random valid document: a page, words with boxes, FUNSD entities and links."""
    width = draw(st.integers(60, 400))
    height = draw(st.integers(60, 400))
    rgb = draw(st.booleans())
    n = draw(st.integers(0, max_words))
    word_boxes: list = []
    for _ in range(n):
        word_boxes.append(draw(boxes(width, height, word_boxes)))
    words = [Word(draw(texts()), b) for b in word_boxes]

    # Pixels: paper with a little noise and, in each word box, the word drawn in its box (so Tesseract
    # and ink thresholds find real glyphs) or dark ink-like strokes.
    pixel_seed = draw(st.integers(0, 2**32 - 1))
    drawn = draw(st.booleans())
    rng = np.random.default_rng(pixel_seed)
    paper = rng.integers(215, 256, size=(height, width), dtype=np.uint8)
    for word in words:
        x0, y0, x1, y1 = word.box
        if x1 > x0 and y1 > y0:
            region = paper[y0:y1, x0:x1]
            if drawn and word.text.strip():
                crop = Image.fromarray(region.copy())
                ImageDraw.Draw(crop).text((0, 0), word.text, fill=int(rng.integers(0, 90)), font=font(y1 - y0))
                region[...] = np.asarray(crop)
            else:
                patch = rng.integers(0, 110, size=(y1 - y0, x1 - x0), dtype=np.uint8)
                keep = rng.random(patch.shape) < 0.6  # strokes with gaps, not solid blocks
                region[keep] = patch[keep]
    pixels = np.stack([paper] * 3, axis=2) if rgb else paper
    if rgb:
        tint = rng.integers(-20, 21, size=3)
        pixels = np.clip(pixels.astype(np.int16) + tint, 0, 255).astype(np.uint8)
    image = PageImage.from_array(pixels, encoding=draw(st.sampled_from(["png", "jpeg"])))

    # Entities: a random subset of the words, partitioned into groups; some entities have no words.
    # A "form" page has runs of 1-2 words as question/answer entities linked in pairs, as FUNSD's do
    # (so shifts that need key-value pairs find some); other pages draw any membership and links.
    form = draw(st.booleans())
    if form:
        run = draw(st.integers(1, 2))
        owner = [i // run if draw(st.integers(0, 5)) else -1 for i in range(n)]
    else:
        owner = draw(st.lists(st.integers(-1, 7), min_size=n, max_size=n))
    groups: dict[int, list[int]] = collections.defaultdict(list)
    for i, g in enumerate(owner):
        if g >= 0:
            groups[g].append(i)
    for k in range(draw(st.integers(0, 2))):
        groups[100 + k] = []
    ids = draw(st.lists(st.integers(0, 10_000), min_size=len(groups), max_size=len(groups), unique=True))
    entities = []
    for k, (ent_id, (g, members)) in enumerate(zip(ids, sorted(groups.items()))):
        if members and not form and draw(st.booleans()):
            members = draw(st.permutations(members))  # entity order need not be word order
        label = ("question", "answer")[g % 2] if form and g < 100 and draw(st.integers(0, 5)) else draw(
            st.sampled_from(FUNSD_LABELS))
        entities.append([ent_id, label, tuple(members), []])
    if form:
        for a, b in zip(entities[0::2], entities[1::2]):
            if draw(st.integers(0, 5)):
                a[3].append((a[0], b[0]))
                b[3].append((a[0], b[0]))
    if entities:
        for _ in range(draw(st.integers(0, len(entities)))):
            a = draw(st.sampled_from(entities))
            b = draw(st.sampled_from(entities))
            link = (a[0], b[0])
            a[3].append(link)
            if b is not a and draw(st.booleans()):
                b[3].append(link)  # FUNSD lists a link on both of its entities
    ents = tuple(Entity(i, label, members, tuple(links)) for i, label, members, links in entities)
    return Document(id=draw(st.sampled_from(["doc", "82092117", "a/b c"])), image=image, words=tuple(words),
                    entities=ents, label=draw(st.sampled_from([None, "letter"])))


# -- the shifts, as the registry has them ----------------------------------------------------------------

# What each shift's docstring says about its words: it adds, removes, adds or removes, or re-reads them.
WORD_CHANGES = {
    "word_perturbation:repetition": "add",
    "word_perturbation:negation": "add or remove",
    "word_perturbation:deletion": "remove",
    "key_drop": "remove",
    "bg_drop": "remove",
    "neighbor_bg_drop": "remove",
    "reocr": "replace",
}


def word_change(shift: Shift) -> str:
    """What ``shift`` may do to the word count: "keep" unless its docstring says otherwise."""
    kind = shift.params().get("kind")
    return WORD_CHANGES.get(f"{shift.name}:{kind}", WORD_CHANGES.get(shift.name, "keep"))


# Layout shifts that only reorder the word sequence.
REORDERS = {"global_shuffle", "neighbor_shuffle", "non_neighbor_shuffle"}
# Entities a shift may remove (a key or background entity left without words), by shift.
REMOVABLE_LABELS = {"key_drop": {"question"}, "bg_drop": {"other", "header"}, "neighbor_bg_drop": {"other", "header"}}

SLOW = {"bert_attack": 10, "move": 10, "natural_background": 10, "reocr": 10, "distort": 12}
DEFAULT_EXAMPLES = 25
# More examples for a thorough run (e.g. DOGOOD_PROPERTY_SCALE=25); the default keeps the file under a minute.
SCALE = float(os.environ.get("DOGOOD_PROPERTY_SCALE", "1"))

# Extra variants beyond the defaults: the kinds that add, remove or reorder words, and drawing into the image.
VARIANTS = {
    "word_perturbation:repetition": ("word_perturbation", {"kind": "repetition", "fraction": 0.5}),
    "word_perturbation:negation": ("word_perturbation", {"kind": "negation", "fraction": 0.5}),
    "word_perturbation:word_order": ("word_perturbation", {"kind": "word_order", "fraction": 0.5}),
    "char_perturbation:swap-render": ("char_perturbation", {"kind": "swap", "fraction": 0.5, "render": True}),
    "bg_drop:render": ("bg_drop", {"fraction": 0.5, "render": True}),
    "key_drop:render": ("key_drop", {"render": True}),
    "merge:entity": ("merge", {"level": "entity"}),
    "distort:grow-box": ("distort", {"canvas": "grow", "reproject": "box", "kinds": ["curl", "fold"]}),
}
#: dogood's own shifts (other test modules register shifts of their own, e.g. tests/pipeline/test_ray_data.py)
SHIPPED = {name: cls for name, cls in SHIFTS.items() if cls.__module__.startswith("dogood.")}
CASES = sorted(SHIPPED) + sorted(VARIANTS)


# Shifts whose defaults read the shared data folder (NLTK corpora, GloVe, COCO, FUNSD for the baseline).
NEEDS_DATA = {"bg_synonym", "word_perturbation", "bert_attack", "embedding_swap", "natural_background", "move"}


@pytest.fixture
def build_shift(request):
    """Build a case's shift: its defaults, plus what an offline test must supply where defaults need more."""

    def build(case: str) -> Shift:
        name, params = VARIANTS.get(case, (case, {}))
        params = dict(params)
        if name in NEEDS_DATA:
            request.getfixturevalue("data_dir")  # skips when the shared data is missing
        if name == "bert_attack":
            params["model"] = request.getfixturevalue("tiny_mlm")  # default: bert-base-uncased from the Hub
        if name == "embedding_swap":
            params["vocab_size"] = 2000  # the default 50k-word build takes a minute
        if name == "natural_background" and not (request.getfixturevalue("data_dir") / "coco").is_dir():
            pytest.skip("COCO photos missing from DOGOOD_DATA_DIR")
        if name == "reocr" and shutil.which("tesseract") is None:
            pytest.skip("Tesseract is not installed")
        shift = SHIFTS[name](**params)
        if name == "move":
            shift._model = request.getfixturevalue("trained_baseline")  # the default scorer, trained once per session
        shift.prepare()
        return shift

    return build


# -- invariants -----------------------------------------------------------------------------------------


def word_labels(doc: Document) -> list[str | None]:
    return [None if e is None else e.label for e in doc.word_entity()]


def word_owner_ids(doc: Document) -> list[int | None]:
    return [None if e is None else e.id for e in doc.word_entity()]


def keyed_words(doc: Document) -> list[tuple]:
    """Each word as (text, box, entity id): what a reordering or a deletion must keep."""
    return [(w.text, w.box, o) for w, o in zip(doc.words, word_owner_ids(doc))]


def is_subsequence(short: list, long: list) -> bool:
    it = iter(long)
    return all(any(x == y for y in it) for x in short)


def revalidate(doc: Document) -> Document:
    """Construct the document again from its fields: the constructor validates everything."""
    return Document(id=doc.id, image=doc.image, words=doc.words, entities=doc.entities, label=doc.label,
                    qa=doc.qa, provenance=doc.provenance, source=doc.source)


def check_entities(case: str, name: str, doc: Document, out: Document) -> None:
    before = {e.id: e for e in doc.entities}
    after = {e.id: e for e in out.entities}
    # every entity keeps its id and label, and its place among the entities
    assert [e.id for e in out.entities] == [e.id for e in doc.entities if e.id in after]
    for ent in out.entities:
        assert ent.label == before[ent.id].label, (case, ent)
    gone = set(before) - set(after)
    if gone:
        assert name in REMOVABLE_LABELS, (case, "removed entities", gone)
        for eid in gone:
            assert before[eid].word_ids, (case, "removed an entity that had no words", eid)
            if name in REMOVABLE_LABELS:
                assert before[eid].label in REMOVABLE_LABELS[name], (case, before[eid])
    # links are kept, except those to or from an entity that went
    for ent in out.entities:
        expected = tuple(link for link in before[ent.id].links if link[0] in after and link[1] in after)
        assert ent.links == expected, (case, ent.id, ent.links, before[ent.id].links)


def check_shift(case: str, shift: Shift, doc: Document, seed: int) -> None:
    name = shift.name
    family = type(shift).family
    params = shift.recorded_params()  # what records show (later parameters at their old value left out)
    out = shift(doc, seed)  # never raises for a valid document

    # provenance: one record, naming the shift, its parameters and seed
    assert out.provenance[:-1] == doc.provenance
    record = out.provenance[-1]
    assert (record.shift, record.seed, dict(record.params)) == (name, seed, params)
    assert all(isinstance(v, int) for v in record.counts.values())
    out = revalidate(out)
    pixels = out.image.to_array()
    assert pixels.shape[:2] == (out.height, out.width) and pixels.dtype == np.uint8
    assert out.label == doc.label and out.qa == doc.qa and out.id == doc.id

    if record.skipped is not None:
        assert record.skipped.strip(), case
        assert (out.words, out.entities, out.image) == (doc.words, doc.entities, doc.image)
        return

    check_entities(case, name, doc, out)
    n_in, n_out = len(doc.words), len(out.words)
    change = word_change(shift)
    if change == "add":
        assert n_out >= n_in and is_subsequence(keyed_words(doc), keyed_words(out)), case
    elif change == "remove":
        assert n_out <= n_in and is_subsequence(keyed_words(out), keyed_words(doc)), case
    elif change == "keep":
        assert n_out == n_in, (case, "word count changed", n_in, n_out)
    # "add or remove" (negation inserts or deletes a "not") and "replace" (reocr reads new words):
    # only the validity of the words and the entities are checked.

    same_count = change == "keep"
    if family == "text":
        if same_count:
            # text shifts keep boxes and the words' entities (and so their labels)
            assert [w.box for w in out.words] == [w.box for w in doc.words], case
            assert word_owner_ids(out) == word_owner_ids(doc), case
            if case.startswith("word_perturbation:word_order"):
                assert sorted(w.text for w in out.words) == sorted(w.text for w in doc.words)
        if not params.get("render", False):
            assert out.image == doc.image, (case, "the image changed without render")
        if out.width != doc.width or out.height != doc.height:
            raise AssertionError((case, "a text shift changed the page size"))
    elif family == "layout":
        if case in REORDERS:
            assert sorted(keyed_words(out), key=repr) == sorted(keyed_words(doc), key=repr), case
            for ent in doc.entities:  # each entity keeps its words, in its own order
                after = next(e for e in out.entities if e.id == ent.id)
                assert [(out.words[i].text, out.words[i].box) for i in after.word_ids] == [
                    (doc.words[i].text, doc.words[i].box) for i in ent.word_ids]
        elif same_count:
            # layout shifts keep texts, order and labels
            assert [w.text for w in out.words] == [w.text for w in doc.words], case
            assert word_owner_ids(out) == word_owner_ids(doc), case
        check_layout(case, name, doc, out)
    elif family == "image":
        if change != "replace":
            assert [w.text for w in out.words] == [w.text for w in doc.words], case
            assert word_owner_ids(out) == word_owner_ids(doc), case
            assert out.entities == doc.entities, case
        if name == "natural_background":
            assert [w.box for w in out.words] == [w.box for w in doc.words]
            assert pixels.ndim == 3 and (out.width, out.height) == (doc.width, doc.height)
    else:
        raise AssertionError(f"{name}: unknown family {family!r}")

    # determinism: the same seed gives the same document
    again = shift(doc, seed)
    assert again == out, (case, "not deterministic")
    assert again.provenance[-1].counts == record.counts


def check_layout(case: str, name: str, doc: Document, out: Document) -> None:
    old = [w.box for w in doc.words]
    new = [w.box for w in out.words]
    if name == "merge":
        for (a0, b0, a1, b1), (c0, d0, c1, d1) in zip(old, new):
            assert c0 <= a0 and d0 <= b0 and c1 >= a1 and d1 >= b1, (case, "a merged box must enclose the word")
        assert out.image == doc.image
    elif name == "center_shift":
        assert [(b[2] - b[0], b[3] - b[1]) for b in new] == [(b[2] - b[0], b[3] - b[1]) for b in old]
        assert out.image == doc.image
    elif name == "box_stretch":
        for a, b in zip(old, new):
            if a[2] > a[0] and a[3] > a[1]:
                assert b[2] > b[0] and b[3] > b[1], (case, "a box with a size keeps one", a, b)
        assert out.image == doc.image
    elif name == "margin_padding":
        counts = out.provenance[-1].counts
        left, top = counts["margin_left"], counts["margin_top"]
        assert out.width == doc.width + left + counts["margin_right"] and out.height == doc.height + top + counts["margin_bottom"]
        assert new == [(a + left, b + top, c + left, d + top) for a, b, c, d in old]
        crop = out.image.to_array()[top : top + doc.height, left : left + doc.width]
        assert np.array_equal(crop, doc.image.to_array())
    elif name == "move":
        assert [(b[2] - b[0], b[3] - b[1]) for b in new] == [(b[2] - b[0], b[3] - b[1]) for b in old]
    elif name == "value_location_augment":
        assert sorted(new) == sorted(old), (case, "value location augment trades boxes only")
    elif name in REORDERS or name in ("bg_drop", "neighbor_bg_drop"):
        if not out.provenance[-1].params.get("render"):
            assert out.image == doc.image


@pytest.mark.parametrize("case", CASES)
def test_shift_keeps_its_invariants(case, build_shift):
    shift = build_shift(case)
    name = case.split(":")[0]

    @settings(max_examples=max(1, round(SCALE * SLOW.get(name, DEFAULT_EXAMPLES))), deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(doc=documents(max_words=12 if name in SLOW else 30), seed=st.integers(0, 2**63 - 1))
    def run(doc, seed):
        check_shift(case, shift, doc, seed)

    run()


def test_registry_cases_cover_every_shift():
    assert set(SHIPPED) <= set(CASES) and len(SHIPPED) > len(SHIFTS) / 2
    for name, cls in SHIPPED.items():
        assert cls.family in ("image", "text", "layout"), name
        assert cls.__doc__ and cls.apply is not Shift.apply, name


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_empty_document_passes_every_shift(name, build_shift):
    """A page without words: unchanged or skipped with a reason (image shifts still change the pixels)."""
    shift = build_shift(name)
    blank = PageImage.from_array(np.full((90, 120), 255, np.uint8))
    for doc in (Document("empty", blank), Document("empty", blank, entities=(Entity(3, "header", ()),))):
        out = shift(doc, 7)
        record = out.provenance[-1]
        out = revalidate(out)
        assert out.words == () and out.entities == doc.entities, name
        if record.skipped is not None:
            assert record.skipped.strip() and out.image == doc.image
        elif shift.family == "text":
            assert out.image == doc.image
        elif name != "margin_padding" and shift.family == "layout":
            assert out.image == doc.image and (out.width, out.height) == (doc.width, doc.height)
