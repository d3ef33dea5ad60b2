"""Hostile and broken input: a clear error naming what is wrong and where, or a recorded skip, never a crash.

- decompression bombs (Pillow's pixel limit) in PageImage, the FUNSD source and
  ``dogood build --on-error skip``;
- zip members with ``..`` or absolute paths, refused before anything is written;
- FUNSD boxes that are huge, negative, NaN, infinite, not numbers or off the page;
- annotation bytes that are not UTF-8, invalid JSON escapes and lone surrogates;
- recipes that try to run code (YAML is read with ``safe_load`` only) and shift
  parameters of the wrong type.

Empty documents through every shift are covered by ``test_properties.py``.
"""

from __future__ import annotations

import io
import json
import shutil
import struct
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from dogood.core.document import Document, PageImage, QAPair, Word
from dogood.core.downloads import extract_zip
from dogood.core.errors import DocumentError, RecipeError, SourceError
from dogood.pipeline.recipe import load_recipe, parse_recipe
from dogood.shifts import SHIFTS, make_shift
from dogood.sources.funsd import FunsdSource, parse_funsd

# -- helpers ------------------------------------------------------------------------------------------


def png_bytes(width: int = 8, height: int = 8) -> bytes:
    buf = io.BytesIO()
    Image.new("L", (width, height), 255).save(buf, format="PNG")
    return buf.getvalue()


def bomb_png(width: int = 30_000, height: int = 30_000) -> bytes:
    """A ~70-byte PNG whose header declares ``width`` x ``height`` pixels (its IHDR patched, CRC fixed)."""
    data = bytearray(png_bytes())
    assert data[12:16] == b"IHDR"
    data[16:24] = struct.pack(">II", width, height)
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])))
    return bytes(data)


@pytest.fixture
def funsd_copy(copy_funsd_forms, tmp_path):
    root = copy_funsd_forms(tmp_path / "funsd")
    test = root / "testing_data"
    ids = sorted(p.stem for p in (test / "annotations").glob("*.json"))
    return root, test, ids


def blank(width: int = 200, height: int = 100) -> PageImage:
    return PageImage.from_array(np.full((height, width), 255, np.uint8))


# -- (a) decompression bombs --------------------------------------------------------------------------


def test_bomb_png_is_tiny_but_declares_900_megapixels():
    data = bomb_png()
    assert len(data) < 200 and struct.unpack(">II", data[16:24]) == (30_000, 30_000)
    with pytest.raises(Image.DecompressionBombError):  # Pillow itself refuses it (over twice its limit)
        Image.open(io.BytesIO(data))


def test_bomb_from_bytes_and_from_file_is_a_document_error_naming_the_file(tmp_path):
    with pytest.raises(DocumentError) as err:
        PageImage.from_bytes(bomb_png(), name="scan-0001.png")
    assert "scan-0001.png" in str(err.value) and "decompression bomb" in str(err.value)
    path = tmp_path / "bomb.png"
    path.write_bytes(bomb_png())
    for verify in (True, False):
        with pytest.raises(DocumentError) as err:
            PageImage.from_file(path, verify=verify)
        assert str(path) in str(err.value) and "decompression bomb" in str(err.value)


def test_between_one_and_two_times_the_limit_is_refused_too(tmp_path, monkeypatch):
    """Pillow only warns from 1x to 2x its limit; dogood refuses there as well (no pages of 200-400 Mpx)."""
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)
    data = png_bytes(40, 40)  # 1600 px: 1.6x the limit, a real decodable image
    path = tmp_path / "big.png"
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning escapes either
        with pytest.raises(DocumentError, match="big.png.*decompression bomb"):
            PageImage.from_file(path)
        with pytest.raises(DocumentError, match="decompression bomb"):
            PageImage.from_bytes(data, name="big.png")
        lazy = PageImage(path=str(path), width=40, height=40)  # header never checked: decoding still refuses
        with pytest.raises(DocumentError, match="big.png.*decompression bomb"):
            lazy.to_array()
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 2000)
    assert PageImage.from_file(path).to_array().shape == (40, 40)


def test_bomb_in_the_funsd_source_names_the_document_and_the_png(funsd_copy):
    root, test, ids = funsd_copy
    png = test / "images" / f"{ids[0]}.png"
    png.write_bytes(bomb_png())
    with pytest.raises(DocumentError) as err:
        FunsdSource(root=root, split="test").load(ids[0])
    assert err.value.doc_id == ids[0] and err.value.path == str(png)
    assert "decompression bomb" in str(err.value)


def test_build_on_error_skip_records_every_broken_form(funsd_copy, tmp_path):
    """`dogood build --on-error skip` over a bomb, a huge box, latin-1 bytes and a lone surrogate: four recorded skips."""
    from dogood.cli import main

    root, test, ids = funsd_copy
    # four more test forms: copies of the first under new ids, so each can break in its own way
    ann0 = test / "annotations" / f"{ids[0]}.json"
    png0 = test / "images" / f"{ids[0]}.png"
    broken = ["zz0", "zz1", "zz2", "zz3"]
    for doc_id in broken:
        shutil.copy(ann0, test / "annotations" / f"{doc_id}.json")
        shutil.copy(png0, test / "images" / f"{doc_id}.png")
    (test / "images" / "zz0.png").write_bytes(bomb_png())
    data = json.loads(ann0.read_text())
    data["form"][0]["words"][0]["box"] = [0, 0, 1e12, 10]
    (test / "annotations" / "zz1.json").write_text(json.dumps(data))
    (test / "annotations" / "zz2.json").write_bytes(json.dumps({"form": [
        {"id": 0, "label": "other", "words": [{"text": "Caf\u00e9", "box": [1, 1, 9, 9]}], "linking": []}
    ]}, ensure_ascii=False).encode("latin-1"))
    data = json.loads(ann0.read_text())
    data["form"][0]["words"][0]["text"] = "bad\ud800"
    (test / "annotations" / "zz3.json").write_text(json.dumps(data))  # ASCII: "\ud800" as an escape

    out = tmp_path / "out"
    code = main(["build", "funsd-l", "--source", str(root), "--out", str(out), "--on-error", "skip",
                 "--config", "merge", "--quiet"])
    assert code == 0
    manifest = json.loads((out / "dogood_build.json").read_text())
    reasons = {s["id"]: s["reason"] for s in manifest["skipped"]}
    assert sorted(reasons) == ["zz0", "zz1", "zz2", "zz3"]
    assert "zz0.png" in reasons["zz0"] and "decompression bomb" in reasons["zz0"]
    assert "zz1.json" in reasons["zz1"] and "1000000000000" in reasons["zz1"] and "outside" in reasons["zz1"]
    assert "zz2.json" in reasons["zz2"] and "malformed JSON" in reasons["zz2"] and "utf-8" in reasons["zz2"]
    assert "zz3.json" in reasons["zz3"] and "not valid Unicode" in reasons["zz3"]
    card = (out / "README.md").read_text(encoding="utf-8")
    assert all(f"`{doc_id}`" in card for doc_id in broken)
    import datasets

    assert datasets.load_dataset(str(out), "merge", split="test")["id"] == ids


def test_build_on_error_raise_names_the_bomb(funsd_copy, tmp_path, capsys):
    from dogood.cli import main

    root, test, ids = funsd_copy
    png = test / "images" / f"{ids[1]}.png"
    png.write_bytes(bomb_png())
    out = tmp_path / "out"
    assert main(["build", "funsd-l", "--source", str(root), "--out", str(out), "--config", "merge", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert str(png) in err and ids[1] in err and "decompression bomb" in err and "Traceback" not in err
    assert not out.exists()


# -- (b) archive members that escape the destination --------------------------------------------------


def make_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)  # ZipInfo keeps the name as given ("../x", "/x")
            zf.writestr(info, data)
    return path


@pytest.mark.parametrize("evil", ["../evil.txt", "dataset/../../evil.txt", "/tmp/dogood-evil.txt", "//evil.txt",
                                  "\\evil.txt", "dataset/..", ".."])
def test_zip_with_an_escaping_member_is_refused_and_writes_nothing(tmp_path, evil):
    work = tmp_path / "work"
    work.mkdir()
    archive = make_zip(tmp_path / "funsd.zip", {"dataset/ok.txt": b"fine", evil: b"pwned", "dataset/late.txt": b"x"})
    with zipfile.ZipFile(archive) as zf:
        assert evil in zf.namelist()  # the name really is in the archive
    dest = work / "cache" / "funsd"
    before = set(tmp_path.rglob("*"))
    with pytest.raises(SourceError) as err:
        extract_zip(archive, dest)
    assert str(archive) in str(err.value) and repr(evil) in str(err.value)
    assert set(tmp_path.rglob("*")) - before <= {work / "cache"}  # at most dest's (empty) parent folder
    assert not dest.exists() and not Path("/tmp/dogood-evil.txt").exists()


def test_a_safe_zip_extracts(tmp_path):
    archive = make_zip(tmp_path / "ok.zip", {"dataset/a.txt": b"a", "dataset/sub/b.txt": b"b"})
    dest = extract_zip(archive, tmp_path / "out")
    assert (dest / "dataset" / "a.txt").read_bytes() == b"a" and (dest / "dataset/sub/b.txt").read_bytes() == b"b"


def test_a_corrupt_zip_is_a_source_error(tmp_path):
    archive = tmp_path / "bad.zip"
    archive.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(SourceError, match="bad.zip: not a valid zip file"):
        extract_zip(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob("out.*"))


# -- (c) FUNSD boxes ------------------------------------------------------------------------------------


def form(box, text="Date:") -> dict:
    return {"form": [
        {"id": 0, "label": "question", "words": [{"text": "ok", "box": [1, 1, 5, 5]}], "linking": [[0, 7]]},
        {"id": 7, "label": "answer", "words": [{"text": "fine", "box": [6, 1, 9, 5]}, {"text": text, "box": box}],
         "linking": [[0, 7]]},
    ]}


@pytest.mark.parametrize("box, what", [
    ([0, 0, 1e12, 10], "lies outside the 200x100 page"),
    ([0, 0, 10**30, 10], "lies outside the 200x100 page"),
    ([0, 0, 1e300, 10], "lies outside the 200x100 page"),
    ([-5, 0, 10, 10], "lies outside the 200x100 page"),
    ([0, -1e12, 10, 10], "lies outside the 200x100 page"),
    ([150, 50, 201, 60], "lies outside the 200x100 page"),
    ([20, 10, 10, 20], "has a negative size"),
    ([float("nan"), 0, 1, 1], "box must be a list of 4 finite numbers"),
    ([0, 0, float("inf"), 1], "box must be a list of 4 finite numbers"),
    ([0, 0, float("-inf"), 1], "box must be a list of 4 finite numbers"),
    (["1", 0, 5, 5], "box must be a list of 4 finite numbers"),
    ([None, 0, 5, 5], "box must be a list of 4 finite numbers"),
    ([True, 0, 5, 5], "box must be a list of 4 finite numbers"),
    ("1234", "box must be a list of 4 finite numbers"),
    ({"x0": 1}, "box must be a list of 4 finite numbers"),
    (None, "box must be a list of 4 finite numbers"),
])
def test_bad_box_is_a_document_error_naming_the_file_and_the_word(box, what):
    with pytest.raises(DocumentError) as err:
        parse_funsd("f1", form(box), blank(), source="ann/f1.json")
    message = str(err.value)
    assert message.startswith("document 'f1', file ann/f1.json: ") and what in message
    assert "'Date:'" in message  # the word, by its text


def test_bad_boxes_through_the_json_file(funsd_copy):
    """Values only a JSON file can hold (NaN, Infinity, 1e400) reach the same clear errors."""
    root, test, ids = funsd_copy
    source = FunsdSource(root=root, split="test")
    ann = test / "annotations" / f"{ids[0]}.json"
    original = ann.read_text()
    word = json.loads(original)["form"][0]["words"][0]
    for raw, what in [("NaN", "finite numbers"), ("Infinity", "finite numbers"), ("-Infinity", "finite numbers"),
                      ("1e400", "finite numbers"), ("1" + "0" * 40, "outside"), ("-3", "outside")]:
        data = json.loads(original)
        data["form"][0]["words"][0]["box"] = ["__X__", 0, 5, 5]
        ann.write_text(json.dumps(data).replace('"__X__"', raw))
        with pytest.raises(DocumentError) as err:
            source.load(ids[0])
        assert err.value.path == str(ann) and err.value.doc_id == ids[0], raw
        assert what in str(err.value) and repr(word["text"]) in str(err.value), raw


@pytest.mark.parametrize("change, what", [
    (lambda f: f["form"][1].update(id=float("inf")), "entity 1 is malformed"),
    (lambda f: f["form"][1].update(linking=[[0, float("inf")]]), "entity 1 is malformed"),
    (lambda f: f["form"][1].update(words=5), "entity 1 is malformed"),
    (lambda f: f["form"][1].update(words=[5]), "entity 7 has a malformed word"),
    (lambda f: f["form"][1]["words"][1].update(text=None), "entity 7 word 1: text must be a string, got None"),
    (lambda f: f["form"][1]["words"][1].update(text=12), "entity 7 word 1: text must be a string, got 12"),
    (lambda f: f["form"].append("not an entity"), "entity 2 is malformed"),
])
def test_malformed_entities_are_document_errors(change, what):
    data = form([10, 10, 20, 20])
    change(data)
    with pytest.raises(DocumentError, match=f"^document 'f1', file f1.json: {what}"):
        parse_funsd("f1", data, blank(), source="f1.json")


def test_huge_and_non_finite_boxes_in_documents_directly():
    """The record itself: huge integers lie outside the page, non-finite numbers are no box (ValueError)."""
    for box in [(0, 0, 10**30, 1), (0, 0, 2**63, 1), (-(10**19), 0, 1, 1)]:
        with pytest.raises(DocumentError, match="lies outside the 200x100 page"):
            Document("d", blank(), (Word("w", box),))
    for box in [(float("inf"), 0, 1, 1), (0, 0, float("nan"), 1), (0.5, 0, 1, 10**400)]:
        with pytest.raises(ValueError, match="NaN|finite"):
            Word("w", box)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)
numbers = st.one_of(st.integers(-(10**20), 10**20), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([0, 1, 10, 199, 200, 99, 100]))
words_json = st.fixed_dictionaries(
    {"text": st.one_of(st.text(max_size=6), json_values), "box": st.one_of(st.lists(numbers, min_size=0, max_size=5),
                                                                           json_values)})
entities_json = st.fixed_dictionaries(
    {"id": st.one_of(st.integers(0, 5), json_values), "label": st.sampled_from(["question", "answer", "other", "x"]),
     "words": st.one_of(st.lists(words_json, max_size=3), json_values),
     "linking": st.one_of(st.lists(st.lists(st.integers(0, 5), min_size=2, max_size=2), max_size=2), json_values)})


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(annotation=st.one_of(st.fixed_dictionaries({"form": st.lists(entities_json, max_size=4)}), json_values))
def test_any_json_gives_a_document_or_a_document_error(annotation):
    """Fuzzed FUNSD annotations: parse_funsd returns a valid document or raises DocumentError, nothing else."""
    try:
        doc = parse_funsd("f", annotation, blank(), source="f.json")
    except DocumentError as exc:
        assert str(exc).startswith("document 'f', file f.json: ")
    else:
        assert all(0 <= x0 <= x1 <= 200 and 0 <= y0 <= y1 <= 100 for x0, y0, x1, y1 in (w.box for w in doc.words))


# -- (d) text that is not UTF-8 ----------------------------------------------------------------------------


@pytest.mark.parametrize("raw, what", [
    (json.dumps(form([1, 1, 5, 5], "Caf\u00e9"), ensure_ascii=False).encode("latin-1"), "utf-8"),
    (json.dumps(form([1, 1, 5, 5], "x")).replace('"x"', '"bad \\q escape"').encode(), "Invalid \\escape"),
    (json.dumps(form([1, 1, 5, 5], "x")).replace('"x"', '"\\u12"').encode(), "Invalid \\uXXXX escape"),
    (b"\xef\xbb\xbf" + json.dumps(form([1, 1, 5, 5])).encode(), "BOM"),
    (json.dumps(form([1, 1, 5, 5])).encode("utf-16"), "malformed JSON"),
    (b"", "malformed JSON"),
])
def test_annotation_bytes_that_are_not_utf8_json(funsd_copy, raw, what):
    root, test, ids = funsd_copy
    ann = test / "annotations" / f"{ids[0]}.json"
    ann.write_bytes(raw)
    with pytest.raises(DocumentError) as err:
        FunsdSource(root=root, split="test").load(ids[0])
    assert err.value.path == str(ann) and err.value.doc_id == ids[0]
    assert "malformed JSON" in str(err.value) and what in str(err.value)


def test_lone_surrogates_are_refused_by_the_record():
    """Valid JSON (``"\\ud800"``) but not Unicode text: refused when the document is made, not when it is written."""
    data = json.loads(json.dumps(form([1, 1, 5, 5], "bad\ud800")))
    with pytest.raises(DocumentError, match=r"^document 'f1', file f1.json: word 2 \('bad\\ud800'\) is not valid Unicode"):
        parse_funsd("f1", data, blank(), source="f1.json")
    with pytest.raises(DocumentError, match="document id .* is not valid Unicode"):
        Document("id\udcff", blank())
    with pytest.raises(DocumentError, match="question/answer is not valid Unicode"):
        Document("q", blank(), qa=(QAPair("what\ud800?", ("x",)),))
    ok = Document("d", blank(), (Word("\U0001f600 Caf\u00e9 \u65e5\u672c", (1, 1, 5, 5)),))  # astral and CJK are fine
    assert ok.words[0].text.encode("utf-8")


# -- (f) recipes ---------------------------------------------------------------------------------------------

RECIPE = """\
name: evil
version: 1.0.0
source: {{kind: funsd}}
configs:
  merge: [{{shift: merge, lambda_x: {value}}}]
"""


@pytest.mark.parametrize("payload", [
    '!!python/object/apply:os.system ["touch {marker}"]',
    '!!python/object/apply:subprocess.check_output [["touch", "{marker}"]]',
    '!!python/object/new:os.system ["touch {marker}"]',
    '!!python/name:os.system',
])
def test_recipe_with_python_tags_is_refused_and_runs_nothing(tmp_path, payload):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.yaml"
    path.write_text(RECIPE.format(value=payload.format(marker=marker)))
    with pytest.raises(RecipeError) as err:
        load_recipe(path)
    assert str(path) in str(err.value) and "not valid YAML" in str(err.value)
    assert not marker.exists()
    # a whole document that is a tag, too
    path.write_text(f'!!python/object/apply:os.system ["touch {marker}"]\n')
    with pytest.raises(RecipeError):
        load_recipe(path)
    assert not marker.exists()


def test_dogood_build_refuses_a_code_running_recipe(tmp_path, capsys):
    from dogood.cli import main

    marker = tmp_path / "pwned"
    path = tmp_path / "evil.yaml"
    path.write_text(RECIPE.format(value=f'!!python/object/apply:os.system ["touch {marker}"]'))
    assert main(["build", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    assert not marker.exists() and not (tmp_path / "out").exists()
    assert "not valid YAML" in capsys.readouterr().err


def test_recipe_file_that_is_not_utf8_or_not_a_mapping(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_bytes("name: caf\u00e9\n".encode("latin-1"))
    with pytest.raises(RecipeError, match="not valid YAML"):
        load_recipe(path)
    path.write_text("- just\n- a list\n")
    with pytest.raises(RecipeError, match="expected a mapping"):
        load_recipe(path)


def recipe_with(spec: dict) -> dict:
    return {"name": "r", "version": "1.0.0", "source": {"kind": "funsd"}, "configs": {"c": [spec]}}


@pytest.mark.parametrize("spec, what", [
    ({"shift": "merge", "lambda_x": "ten"}, "parameter lambda_x must be a number, got 'ten'"),
    ({"shift": "merge", "lambda_x": [1, 2]}, "parameter lambda_x must be a number"),
    ({"shift": "merge", "lambda_y": None}, "parameter lambda_y must be a number, got None"),
    ({"shift": "merge", "until_stable": "false"}, "parameter until_stable must be true or false, got 'false'"),
    ({"shift": "char_deletion", "fraction": {"a": 1}}, "parameter fraction must be a number"),
    ({"shift": "char_deletion", "render": "no"}, "parameter render must be true or false"),
    ({"shift": "char_deletion", "labels": [1, 2]}, "parameter labels must be null, a string or a list of strings"),
    ({"shift": "key_drop", "labels": {"question": 1}}, "parameter labels must be a string or a list of strings"),
    ({"shift": "reocr", "lang": ["eng"]}, "parameter lang must be a string"),
    ({"shift": "distort", "kinds": 3}, "parameter kinds must be a string or a list of strings"),
    ({"shift": "natural_background", "licenses": ["cc-by"]}, "parameter licenses must be a list of integers"),
    ({"shift": "move", "shuffles": True}, "parameter shuffles must be an integer, got True"),
    ({"shift": "merge", "lambda_x": -1}, "lambda"),  # right type, wrong value: the shift's own check
    ({"shift": "merge", "level": "page"}, "level"),
])
def test_shift_parameter_of_the_wrong_type_is_a_recipe_error_naming_the_shift(spec, what):
    with pytest.raises(RecipeError) as err:
        parse_recipe(recipe_with(spec))
    assert f"config 'c': shift {spec['shift']!r}" in str(err.value) and what in str(err.value)


def test_a_single_label_is_one_label_not_its_letters():
    assert make_shift({"shift": "key_drop", "labels": "question"}).labels == ("question",)
    assert make_shift({"shift": "bg_drop", "labels": "other"}).labels == ("other",)
    assert make_shift({"shift": "char_deletion", "labels": "answer"}).labels == ("answer",)
    assert make_shift({"shift": "distort", "kinds": "curl"}).kinds == ("curl",)


def test_every_shift_accepts_its_own_defaults_through_a_recipe():
    """The type check never refuses a shift's defaults, given as YAML gives them (tuples as lists)."""
    import yaml

    for name, cls in SHIFTS.items():
        params = cls.defaults()
        spec = yaml.safe_load(yaml.safe_dump({"shift": name, **params}))
        assert make_shift(spec).params() == params, name


def docvqa_folder(root: Path, qa: bytes, ocr: bytes | None = None) -> Path:
    split = root / "val"
    (split / "documents").mkdir(parents=True)
    (split / "documents" / "p1.png").write_bytes(png_bytes(50, 40))
    (split / "val_v1.0.json").write_bytes(qa)
    if ocr is not None:
        (split / "ocr_results").mkdir()
        (split / "ocr_results" / "p1.json").write_bytes(ocr)
    return root


def test_docvqa_files_that_are_not_utf8_or_have_non_finite_boxes(tmp_path):
    from dogood.sources.docvqa import DocVQASource

    entry = {"questionId": 1, "question": "Caf\u00e9?", "image": "documents/p1.png", "answers": ["x"]}
    qa = json.dumps({"data": [entry]}, ensure_ascii=False)
    root = docvqa_folder(tmp_path / "latin1", qa.encode("latin-1"))
    with pytest.raises(SourceError, match=r"val_v1\.0\.json: not valid JSON \(.*utf-8"):
        DocVQASource(root=root, split="val")

    def ocr(words) -> bytes:
        return json.dumps({"recognitionResults": [{"lines": [{"words": words}]}]}).encode()

    root = docvqa_folder(tmp_path / "utf16", qa.encode("utf-8"),
                         ocr([{"text": "Caf\u00e9", "boundingBox": [1, 1, 9, 1, 9, 5, 1, 5]}]).decode().encode("utf-16"))
    with pytest.raises(DocumentError) as err:
        DocVQASource(root=root, split="val", ocr=False).load("p1")
    assert err.value.doc_id == "p1" and err.value.path.endswith("ocr_results/p1.json")
    assert "not valid JSON" in str(err.value)
    # non-finite coordinates: clipped to the page (the source clips every box), or a clear error; never a crash
    for k, value in enumerate([1e400, -1e400, float("nan")]):
        root = docvqa_folder(tmp_path / f"ocr{k}", qa.encode("utf-8"),
                             ocr([{"text": "w", "boundingBox": [1, 1, value, 1, 9, 5, 1, 5]}]))
        try:
            doc = DocVQASource(root=root, split="val", ocr=False).load("p1")
        except DocumentError as exc:
            assert exc.doc_id == "p1" and exc.path.endswith("p1.json")
        else:
            assert all(0 <= x0 <= x1 <= 50 and 0 <= y0 <= y1 <= 40 for x0, y0, x1, y1 in (w.box for w in doc.words))


def test_a_shift_declares_its_parameters_and_cannot_take_its_own_constructor():
    from dogood.shifts import Shift

    with pytest.raises(TypeError, match="defines __init__: declare its parameters in a nested Params"):
        class OwnInit(Shift):  # noqa: F841
            name = "own_init_probe"
            family = "text"

            def __init__(self, rate=0.1):
                self.rate = rate
    assert "own_init_probe" not in SHIFTS
    with pytest.raises(ValueError, match="has no parameter rate"):
        SHIFTS["merge"](rate=0.1)
