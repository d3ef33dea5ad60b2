"""FUNSD: the real release, malformed copies of it, the lookup order and the (local) download path."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import os
import shutil
import threading
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from dogood.core.document import PageImage
from dogood.core.downloads import download, extract_zip, sha256_file
from dogood.core.errors import DocumentError, SourceError
from dogood.sources.funsd import (
    FUNSD_LABELS,
    FUNSD_SHA256,
    FunsdSource,
    document_to_funsd_json,
    find_funsd_root,
    parse_funsd,
)

DATA = Path(os.environ.get("DOGOOD_DATA_DIR") or Path(__file__).resolve().parents[2].parent / "shared" / "data")
FUNSD = DATA / "funsd" / "dataset"
SPLIT_DIRS = {"train": "training_data", "test": "testing_data"}

pytestmark = pytest.mark.skipif(
    not (FUNSD / "testing_data" / "annotations").is_dir(), reason=f"FUNSD not found under {FUNSD}"
)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Every test gets its own cache and no shared-data folder, so nothing can reach a real cache."""
    monkeypatch.setenv("DOGOOD_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("DOGOOD_DATA_DIR", raising=False)
    monkeypatch.setenv("no_proxy", "*")
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)


def _json_files(split: str) -> list[Path]:
    return sorted((FUNSD / SPLIT_DIRS[split] / "annotations").glob("*.json"))


# -- the real release --------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_docs():
    out = {}
    for split in SPLIT_DIRS:
        source = FunsdSource(root=FUNSD, split=split)
        out[split] = {doc_id: source.load(doc_id) for doc_id in source.ids()}
    return out


def test_test_split_counts(real_docs):
    docs = list(real_docs["test"].values())
    assert len(docs) == 50
    words = [w for d in docs for w in d.words]
    assert len(words) == 8973
    assert sum(1 for w in words if w.text.strip() == "") == 266
    assert sum(1 for w in words if w.text == "") == 266
    entities = [e for d in docs for e in d.entities]
    assert len(entities) == 2332
    assert Counter(e.label for e in entities) == {"header": 122, "question": 1077, "answer": 821, "other": 312}


def test_train_split_counts(real_docs):
    docs = list(real_docs["train"].values())
    assert len(docs) == 149
    assert sum(len(d.words) for d in docs) == 22512
    assert sum(len(d.entities) for d in docs) == 7411
    assert {e.label for d in docs for e in d.entities} == set(FUNSD_LABELS)


@pytest.mark.parametrize(("split", "expected"), [("test", 2152), ("train", 8472)])
def test_links_are_kept(real_docs, split, expected):
    in_json = sum(len(e["linking"]) for f in _json_files(split) for e in json.loads(f.read_text())["form"])
    kept = sum(len(e.links) for d in real_docs[split].values() for e in d.entities)
    assert kept == in_json == expected


@pytest.mark.parametrize("split", ["train", "test"])
def test_ids_are_sorted_file_stems(real_docs, split):
    source = FunsdSource(root=FUNSD, split=split)
    stems = [p.stem for p in _json_files(split)]
    assert source.ids() == sorted(stems)
    assert source.ids() == sorted(source.ids())
    assert list(real_docs[split]) == source.ids()
    assert all(d.id == k for k, d in real_docs[split].items())
    doc_id = source.ids()[0]
    doc = real_docs[split][doc_id]
    assert doc.source == str(source.annotation_path(doc_id))
    assert doc.image.path == str(FUNSD / SPLIT_DIRS[split] / "images" / f"{doc_id}.png")
    assert doc.image._array is None  # loading does not decode pixels


def test_first_test_form_in_detail(real_docs):
    doc = real_docs["test"]["82092117"]
    raw = json.loads((FUNSD / "testing_data" / "annotations" / "82092117.json").read_text())
    assert (doc.width, doc.height) == (754, 1000)
    first = raw["form"][0]
    ent = doc.entities[0]
    assert (ent.id, ent.label) == (first["id"], first["label"])
    assert [doc.words[i].text for i in ent.word_ids] == [w["text"] for w in first["words"]]
    assert [list(doc.words[i].box) for i in ent.word_ids] == [w["box"] for w in first["words"]]
    # words are numbered in JSON order, entity by entity
    assert [w.text for w in doc.words] == [w["text"] for e in raw["form"] for w in e["words"]]


def _without(form: list[dict], *keys: str) -> list[dict]:
    return [{k: v for k, v in ent.items() if k not in keys} for ent in form]


def test_document_to_funsd_json_round_trips_all_199_forms(real_docs):
    checked = 0
    for split in SPLIT_DIRS:
        for path in _json_files(split):
            raw = json.loads(path.read_text(encoding="utf-8"))
            out = document_to_funsd_json(real_docs[split][path.stem])
            assert list(out) == ["form"]
            assert len(out["form"]) == len(raw["form"]), path
            # words (text + box), labels, ids and linking exactly; entity box and text are derived
            assert _without(out["form"], "box", "text") == _without(raw["form"], "box", "text"), path
            assert [set(e) for e in out["form"]] == [set(e) for e in raw["form"]], path
            checked += 1
    assert checked == 199


def test_entity_box_of_round_trip_is_the_union_of_word_boxes(real_docs):
    doc = real_docs["test"]["82092117"]
    for ent, out in zip(doc.entities, document_to_funsd_json(doc)["form"]):
        if ent.word_ids:
            boxes = [doc.words[i].box for i in ent.word_ids]
            assert out["box"] == [min(b[0] for b in boxes), min(b[1] for b in boxes),
                                  max(b[2] for b in boxes), max(b[3] for b in boxes)]
        else:
            assert out["box"] == [0, 0, 0, 0]


def test_document_to_funsd_json_reproduces_entity_text(real_docs):
    """Entity text is derived from the words.

    FUNSD's own entity text differs from its words joined by spaces in 264 of
    9,743 entities: all but 6 only in spacing; in 6 the annotators' text has
    words in another order (3) or other words than the word list (3).
    """
    differ = []
    for split in SPLIT_DIRS:
        for path in _json_files(split):
            raw = json.loads(path.read_text(encoding="utf-8"))
            out = document_to_funsd_json(real_docs[split][path.stem])
            for a, b in zip(out["form"], raw["form"]):
                if a["text"].split() != b["text"].split():
                    differ.append((path.stem, b["id"], b["text"], a["text"]))
    assert len(differ) == 6
    assert sum(sorted(t.split()) == sorted(u.split()) for _, _, t, u in differ) == 3


def test_describe_and_unknown_split():
    source = FunsdSource(root=FUNSD, split="train")
    info = source.describe()
    assert (info["kind"], info["split"], info["sha256"]) == ("funsd", "train", FUNSD_SHA256)
    assert (source.kind, source.schema) == ("funsd", "funsd")
    with pytest.raises(SourceError, match=r"FUNSD has splits \['test', 'train'\], not 'validation'"):
        FunsdSource(root=FUNSD, split="validation")


# -- malformed copies ------------------------------------------------------------------------


def _copy_forms(dest: Path, n: int = 2) -> dict[str, list[str]]:
    """Copy the first ``n`` forms of each split into ``dest`` in the official layout."""
    chosen = {}
    for split, sub in SPLIT_DIRS.items():
        ids = [p.stem for p in _json_files(split)[:n]]
        chosen[split] = ids
        for kind in ("images", "annotations"):
            (dest / sub / kind).mkdir(parents=True, exist_ok=True)
        for doc_id in ids:
            shutil.copy(FUNSD / sub / "annotations" / f"{doc_id}.json", dest / sub / "annotations")
            shutil.copy(FUNSD / sub / "images" / f"{doc_id}.png", dest / sub / "images")
    return chosen


@pytest.fixture
def funsd_copy(tmp_path):
    root = tmp_path / "copy" / "dataset"
    ids = _copy_forms(root, n=3)
    return root, ids


def test_copy_loads(funsd_copy):
    root, ids = funsd_copy
    for split in SPLIT_DIRS:
        source = FunsdSource(root=root, split=split)
        assert source.ids() == ids[split]
        for doc_id in ids[split]:
            raw = json.loads(source.annotation_path(doc_id).read_text())
            assert len(source.load(doc_id).words) == sum(len(e["words"]) for e in raw["form"])


def _edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_truncated_json(funsd_copy):
    root, ids = funsd_copy
    source = FunsdSource(root=root, split="test")
    doc_id = ids["test"][1]
    ann = source.annotation_path(doc_id)
    text = ann.read_text()
    ann.write_text(text[: len(text) // 2])
    with pytest.raises(DocumentError) as info:
        source.load(doc_id)
    assert str(info.value).startswith(f"document {doc_id!r}, file {ann}: malformed JSON (")
    assert (info.value.doc_id, info.value.path) == (doc_id, str(ann))
    # the other forms still load
    assert source.load(ids["test"][0]).id == ids["test"][0]


def test_unknown_label(funsd_copy):
    """With declared labels, a label outside them names the document; without, the data's labels are the list."""
    root, ids = funsd_copy
    source = FunsdSource(root=root, split="train", labels=list(FUNSD_LABELS))
    doc_id = ids["train"][0]
    ann = source.annotation_path(doc_id)
    ent_id = json.loads(ann.read_text())["form"][2]["id"]
    _edit(ann, lambda d: d["form"][2].update(label="signature"))
    with pytest.raises(DocumentError) as info:
        source.load(doc_id)
    assert str(info.value) == (
        f"document {doc_id!r}, file {ann}: entity {ent_id} has unknown label 'signature'; "
        "the source's labels are header, question, answer, other"
    )
    found = FunsdSource(root=root, split="train")
    assert found.load(doc_id).entities[2].label == "signature"
    labels = found.entity_labels()  # labels beyond FUNSD's: sorted
    assert "signature" in labels and labels == tuple(sorted(labels)) and set(labels) - {"signature"} <= set(FUNSD_LABELS)
    assert FunsdSource(root=root, split="test").entity_labels() == FUNSD_LABELS  # FUNSD's own: FUNSD's order


@pytest.mark.parametrize("label", ["", "two words", "O", 7])
def test_a_label_that_cannot_name_a_tag(funsd_copy, label):
    root, ids = funsd_copy
    source = FunsdSource(root=root, split="train")
    doc_id = ids["train"][0]
    _edit(source.annotation_path(doc_id), lambda d: d["form"][0].update(label=label))
    with pytest.raises(DocumentError, match="a label is a non-empty name without spaces, not 'O'"):
        source.load(doc_id)


def test_word_box_outside_its_image(funsd_copy):
    root, ids = funsd_copy
    source = FunsdSource(root=root, split="test")
    doc_id = ids["test"][0]
    ann = source.annotation_path(doc_id)
    page = PageImage.from_file(source.image_path(doc_id))
    width, height = page.width, page.height

    def push_out(d):
        d["form"][0]["words"][0]["box"] = [width - 10, 5, width + 5, 15]

    _edit(ann, push_out)
    with pytest.raises(DocumentError) as info:
        source.load(doc_id)
    msg = str(info.value)
    assert msg.startswith(f"document {doc_id!r}, file {ann}: word 0 (")
    assert f"lies outside the {width}x{height} page" in msg
    assert info.value.doc_id == doc_id


def test_malformed_entity_and_form(funsd_copy):
    root, ids = funsd_copy
    source = FunsdSource(root=root, split="test")
    doc_id = ids["test"][2]
    ann = source.annotation_path(doc_id)
    _edit(ann, lambda d: d["form"][1].pop("label"))
    with pytest.raises(DocumentError, match=rf"^document '{doc_id}', file .*{doc_id}\.json: entity 1 is malformed \(KeyError\('label'\)\)"):
        source.load(doc_id)
    ann.write_text(json.dumps({"form": {"not": "a list"}}))
    with pytest.raises(DocumentError, match="expected a JSON object with a 'form' list"):
        source.load(doc_id)
    ann.unlink()
    with pytest.raises(DocumentError) as info:
        source.load(doc_id)
    assert str(info.value) == f"document {doc_id!r}, file {ann}: annotation file not found"


def test_corrupt_png(funsd_copy):
    root, ids = funsd_copy
    source = FunsdSource(root=root, split="train")
    doc_id = ids["train"][1]
    png = source.image_path(doc_id)
    raw = png.read_bytes()
    png.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(DocumentError) as info:
        source.load(doc_id)
    assert str(info.value).startswith(f"document '{doc_id}', file {png}: cannot read image")
    assert info.value.path == str(png) and info.value.doc_id == doc_id


def test_missing_image(funsd_copy):
    root, ids = funsd_copy
    source = FunsdSource(root=root, split="test")
    doc_id = ids["test"][0]
    png = source.image_path(doc_id)
    png.unlink()
    with pytest.raises(DocumentError) as info:
        source.load(doc_id)
    assert str(info.value) == f"document '{doc_id}', file {png}: image file not found"


def test_parse_funsd_directly():
    image = PageImage.from_file(FUNSD / "testing_data" / "images" / "82092117.png")
    ann = {
        "form": [
            {"id": 0, "label": "question", "words": [{"text": "Date:", "box": [1, 2, 30, 12]}], "linking": [[0, 1]]},
            {"id": 1, "label": "answer", "words": [{"text": "3/4", "box": [40, 2, 60, 12]}, {"text": "", "box": [61, 2, 62, 12]}],
             "linking": [[0, 1]]},
        ]
    }
    doc = parse_funsd("x", ann, image, source="x.json")
    assert [(w.text, w.box) for w in doc.words] == [("Date:", (1, 2, 30, 12)), ("3/4", (40, 2, 60, 12)), ("", (61, 2, 62, 12))]
    assert [(e.id, e.label, e.word_ids, e.links) for e in doc.entities] == [
        (0, "question", (0,), ((0, 1),)),
        (1, "answer", (1, 2), ((0, 1),)),
    ]
    ann["form"][1]["words"][0]["box"] = [40, 2, 60]
    with pytest.raises(DocumentError, match="^document 'x', file x.json: entity 1 has a word box of 3 numbers$"):
        parse_funsd("x", ann, image, source="x.json")
    with pytest.raises(DocumentError, match="entity 1 has a malformed word"):
        parse_funsd("x", {"form": [{"id": 1, "label": "other", "words": [{"box": [0, 0, 1, 1]}]}]}, image)


# -- lookup order -----------------------------------------------------------------------------


def _fake_layout(dataset: Path) -> Path:
    for sub in SPLIT_DIRS.values():
        (dataset / sub / "annotations").mkdir(parents=True)
        (dataset / sub / "images").mkdir(parents=True)
    return dataset


def test_explicit_dataset_folder_or_its_parent(funsd_copy):
    root, _ = funsd_copy
    assert find_funsd_root(root) == root
    assert find_funsd_root(str(root)) == root
    assert find_funsd_root(root.parent) == root


def test_explicit_path_wins_over_data_dir_and_cache(funsd_copy, tmp_path, monkeypatch):
    root, _ = funsd_copy
    monkeypatch.setenv("DOGOOD_DATA_DIR", str(DATA))
    _fake_layout(tmp_path / "cache" / "funsd" / "dataset")
    assert find_funsd_root(root) == root


@pytest.mark.parametrize("make", ["empty", "file"])
def test_not_a_funsd_folder(tmp_path, make, funsd_copy):
    bad = tmp_path / "bad"
    if make == "empty":
        bad.mkdir()
    else:
        bad.write_text("x")
    with pytest.raises(SourceError) as info:
        find_funsd_root(bad)
    assert str(info.value) == (
        f"{bad} is not a FUNSD folder: expected training_data/annotations or testing_data/annotations "
        "(the official dataset.zip layout)"
    )
    with pytest.raises(SourceError, match="is not a FUNSD folder"):
        FunsdSource(root=bad)


def test_data_dir_comes_before_the_cache(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    _fake_layout(shared / "funsd" / "dataset")
    cached = _fake_layout(tmp_path / "cache" / "funsd" / "dataset")
    monkeypatch.setenv("DOGOOD_DATA_DIR", str(shared))
    assert find_funsd_root() == shared / "funsd" / "dataset"
    monkeypatch.delenv("DOGOOD_DATA_DIR")
    assert find_funsd_root() == cached


def test_real_data_dir_is_found(monkeypatch):
    monkeypatch.setenv("DOGOOD_DATA_DIR", str(DATA))
    assert find_funsd_root() == DATA / "funsd" / "dataset"
    source = FunsdSource(split="test")
    assert Path(source.root) == DATA / "funsd" / "dataset"
    assert len(source.ids()) == 50


def test_data_dir_without_funsd_falls_back_to_the_cache(tmp_path, monkeypatch):
    (tmp_path / "shared" / "funsd").mkdir(parents=True)
    cached = _fake_layout(tmp_path / "cache" / "funsd" / "dataset")
    monkeypatch.setenv("DOGOOD_DATA_DIR", str(tmp_path / "shared"))
    assert find_funsd_root() == cached
    monkeypatch.setenv("DOGOOD_DATA_DIR", str(tmp_path / "does-not-exist"))
    assert find_funsd_root() == cached


# -- download, served locally ---------------------------------------------------------------------


class _Server:
    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.requests: Counter = Counter()
        files, requests = self.files, self.requests

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                requests[self.path] += 1
                body = files.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/zip")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture(scope="module")
def server(request):
    srv = _Server()
    request.addfinalizer(srv.close)
    return srv


@pytest.fixture(scope="module")
def funsd_zip(tmp_path_factory) -> tuple[bytes, dict[str, list[str]]]:
    """A small zip in the official layout: 2 forms per split, plus macOS junk like the real one."""
    stage = tmp_path_factory.mktemp("zip-stage")
    ids = _copy_forms(stage / "dataset", n=2)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted((stage / "dataset").rglob("*")):
            arc = path.relative_to(stage).as_posix()
            if path.is_dir():
                zf.writestr(arc + "/", b"")
            else:
                zf.write(path, arc)
        zf.writestr("__MACOSX/", b"")
        zf.writestr("__MACOSX/dataset/._training_data", b"\x00\x05\x16\x07junk")
        zf.writestr(f"__MACOSX/dataset/training_data/images/._{ids['train'][0]}.png", b"\x00\x05\x16\x07junk")
    return buf.getvalue(), ids


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _all_files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")) if folder.exists() else []


def test_download_extracts_and_loads(server, funsd_zip, tmp_path):
    data, ids = funsd_zip
    server.files["/ok/dataset.zip"] = data
    url = server.url("/ok/dataset.zip")
    cache = tmp_path / "cache"

    root = find_funsd_root(None, url=url, sha256=_sha(data))
    assert root == cache / "funsd" / "dataset"
    assert server.requests["/ok/dataset.zip"] == 1
    archive = cache / "downloads" / "funsd-dataset.zip"
    assert sha256_file(archive) == _sha(data)
    assert not any(p.endswith(".part") for p in _all_files(cache))
    for split, sub in SPLIT_DIRS.items():
        source = FunsdSource(root=root, split=split)
        assert source.ids() == ids[split]
        for doc_id in ids[split]:
            doc = source.load(doc_id)
            original = FunsdSource(root=FUNSD, split=split).load(doc_id)
            assert doc.words == original.words and doc.entities == original.entities
            assert doc.image.encoded_bytes() == original.image.encoded_bytes()

    # a second call, and a source with no root, use the extracted copy without downloading again
    assert find_funsd_root(None, url=url, sha256=_sha(data)) == root
    assert Path(FunsdSource(split="train").root) == root
    assert server.requests["/ok/dataset.zip"] == 1


def test_wrong_checksum_leaves_nothing(server, funsd_zip, tmp_path):
    data, _ = funsd_zip
    server.files["/bad-sha/dataset.zip"] = data
    url = server.url("/bad-sha/dataset.zip")
    cache = tmp_path / "cache"
    with pytest.raises(SourceError) as info:
        find_funsd_root(None, url=url, sha256="0" * 64)
    msg = str(info.value)
    assert f"checksum mismatch for {url}: expected sha256 {'0' * 64}, got {_sha(data)}" in msg
    assert "checksum" in msg
    assert server.requests["/bad-sha/dataset.zip"] == 1
    assert not (cache / "funsd" / "dataset").exists()
    assert not (cache / "funsd" / ".extracted").exists()
    assert _all_files(cache / "downloads") == []  # no partial or unverified download
    assert not any("funsd" in p and p != "funsd" for p in _all_files(cache))


def test_http_error_is_a_source_error(server, tmp_path):
    url = server.url("/missing/dataset.zip")
    with pytest.raises(SourceError, match=rf"could not be downloaded: cannot download {url}: HTTP Error 404.*--source PATH"):
        find_funsd_root(None, url=url, sha256="0" * 64)
    assert _all_files(tmp_path / "cache" / "downloads") == []


def test_download_reuses_a_verified_file_and_replaces_a_stale_one(server, tmp_path):
    body = b"hello dogood"
    server.files["/small.bin"] = body
    url = server.url("/small.bin")
    dest = tmp_path / "dl" / "small.bin"
    assert download(url, dest, _sha(body)) == dest
    assert dest.read_bytes() == body
    assert download(url, dest, _sha(body)) == dest
    assert server.requests["/small.bin"] == 1
    dest.write_bytes(b"stale")
    download(url, dest, _sha(body))
    assert dest.read_bytes() == body
    assert server.requests["/small.bin"] == 2
    assert _all_files(dest.parent) == ["small.bin"]


def test_archive_without_the_layout(server, tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("something/else.txt", "hi")
    data = buf.getvalue()
    server.files["/other.zip"] = data
    with pytest.raises(SourceError, match="the archive has no dataset/training_data and dataset/testing_data folders"):
        find_funsd_root(None, url=server.url("/other.zip"), sha256=_sha(data))
    assert not (tmp_path / "cache" / "funsd" / "dataset").exists()


def test_not_a_zip(server, tmp_path):
    data = b"<html>not a zip</html>"
    server.files["/html.zip"] = data
    with pytest.raises(SourceError, match=r"funsd-dataset\.zip: not a valid zip file"):
        find_funsd_root(None, url=server.url("/html.zip"), sha256=_sha(data))
    funsd = tmp_path / "cache" / "funsd"
    assert _all_files(funsd) == []


def test_cache_is_rebuilt_after_the_extracted_folder_is_removed(server, funsd_zip, tmp_path):
    data, ids = funsd_zip
    server.files["/again/dataset.zip"] = data
    url = server.url("/again/dataset.zip")
    root = find_funsd_root(None, url=url, sha256=_sha(data))
    shutil.rmtree(root)
    assert find_funsd_root(None, url=url, sha256=_sha(data)) == root
    assert FunsdSource(root=root, split="test").ids() == ids["test"]
    assert server.requests["/again/dataset.zip"] == 1


# -- extract_zip safety -------------------------------------------------------------------------


@pytest.mark.parametrize("member", ["../evil.txt", "ok/../../evil.txt", "/abs-evil.txt"])
def test_extract_zip_refuses_unsafe_members(tmp_path, member):
    work = tmp_path / "work"
    work.mkdir()
    archive = work / "archive.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("ok/a.txt", "fine")
        zf.writestr(zipfile.ZipInfo(member), "evil")
    dest = work / "out" / "dest"
    with pytest.raises(SourceError) as info:
        extract_zip(archive, dest)
    assert str(info.value) == f"{archive}: refusing archive member with an unsafe path {member!r}"
    assert not dest.exists()
    assert _all_files(work / "out") == []  # no temporary folder left
    assert _all_files(tmp_path) == ["work", "work/archive.zip", "work/out"]
    assert not Path("/abs-evil.txt").exists()


def test_extract_zip_extracts_and_keeps_an_existing_destination(tmp_path):
    archive = tmp_path / "a.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("d/x.txt", "one")
    dest = tmp_path / "out"
    assert extract_zip(archive, dest) == dest
    assert (dest / "d" / "x.txt").read_text() == "one"
    assert _all_files(tmp_path) == ["a.zip", "out", "out/d", "out/d/x.txt"]


def test_a_folder_with_one_split_reads_that_split_and_names_the_missing_one(funsd_copy):
    """A test-only folder needs no training_data/ (and a train-only one no testing_data/)."""
    root, ids = funsd_copy
    shutil.rmtree(root / "training_data")
    assert find_funsd_root(root) == root
    assert FunsdSource(root=root, split="test").ids() == ids["test"]
    with pytest.raises(SourceError) as info:
        FunsdSource(root=root, split="train")
    assert str(info.value) == (f"{root} has no training_data/annotations folder, so it has no 'train' split "
                               "(FUNSD's layout: training_data/ for train, testing_data/ for test)")


# -- hostile folders (issue 36): every file through the one reader, pages bounded ------------------------------
def _eval_line(run) -> str:
    assert "Traceback" not in run.err, run.err
    return run.last_line


def test_a_fifo_as_an_annotation_is_an_error_naming_it_not_a_hang(funsd_copy):
    root, ids = funsd_copy
    source = FunsdSource(root=root, split="test")
    ann = source.annotation_path(ids["test"][0])
    ann.unlink()
    os.mkfifo(ann)  # nobody writes: reading it would wait forever
    with pytest.raises(DocumentError, match="is a FIFO; dogood reads regular files only") as err:
        source.load(ids["test"][0])
    assert err.value.path == str(ann)
    assert source.entity_labels()  # the labels are read from the other forms
    assert source.content_sha256()


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/urandom"])
def test_a_device_as_an_annotation_or_image_is_refused(funsd_copy, target):
    root, ids = funsd_copy
    source = FunsdSource(root=root, split="test")
    for path in (source.annotation_path(ids["test"][0]), source.image_path(ids["test"][1])):
        path.unlink()
        path.symlink_to(target)
    with pytest.raises(DocumentError, match="is a device"):
        source.load(ids["test"][0])
    with pytest.raises(DocumentError, match="is a device"):
        source.load(ids["test"][1])


def _form_of(n_words: int, text: str = "w") -> dict:
    return {"form": [{"id": 0, "label": "other", "linking": [],
                      "words": [{"text": text, "box": [k % 500, k // 500 % 500, k % 500 + 1, k // 500 % 500 + 1]}
                                for k in range(n_words)]}]}


def test_a_form_of_too_many_or_too_long_words_is_refused_naming_it(funsd_copy):
    root, ids = funsd_copy
    source = FunsdSource(root=root, split="test")
    ann = source.annotation_path(ids["test"][0])
    ann.write_text(json.dumps(_form_of(50_000)))
    with pytest.raises(DocumentError, match="the page has 50000 words, more than the 10000 of a page") as err:
        source.load(ids["test"][0])
    assert err.value.path == str(ann) and "DOGOOD_LIMIT_PAGE_WORDS" in str(err.value)
    ann.write_text(json.dumps(_form_of(3, "x" * 100_000)))
    with pytest.raises(DocumentError, match="word 0 has 100000 characters, more than the 1000"):
        source.load(ids["test"][0])


def test_a_50k_word_form_in_an_ood_folder_is_refused_within_a_memory_bound(funsd_copy, trained_baseline,
                                                                              bounded_run, tmp_path):
    """Before, ``dogood eval`` allocated 18.7 GiB (the baseline's n x n word comparisons); now the source refuses
    the form, and with the limit raised the comparisons are made a block of rows at a time."""
    root, ids = funsd_copy
    ood = tmp_path / "ood"
    shutil.copytree(root, ood)
    (ood / "testing_data" / "annotations" / f"{ids['test'][0]}.json").write_text(json.dumps(_form_of(50_000)))
    run = bounded_run(f"from dogood.cli import main\nsys.exit(main(['eval', '--model', {trained_baseline.source!r}, "
                      f"'--id', {str(root)!r}, '--ood', {str(ood)!r}, '--out', 'rep', '--quiet', "
                      "'--bootstrap', '0']))", address_space_mib=6144)
    line = _eval_line(run)
    assert run.code == 1 and line.startswith("dogood: error: ") and "50000 words" in line and ids["test"][0] in line
    assert run.peak_mib < 1024, run.peak_mib


def test_word_features_of_a_dense_page_stay_within_a_memory_bound(bounded_run):
    """10,000 words (``Limits.page_words``): the n x n comparisons, whole, took 5 GB; in blocks of rows, a few
    hundred megabytes."""
    run = bounded_run(
        "import numpy as np\n"
        "from dogood.core.document import Document, Entity, PageImage, Word\n"
        "from dogood.models.baseline import word_features\n"
        "n = 10_000\n"
        "words = tuple(Word('w', (k % 100 * 10, k // 100 * 10, k % 100 * 10 + 8, k // 100 * 10 + 8)) for k in range(n))\n"
        "doc = Document('dense', PageImage.from_array(np.full((1000, 1000), 255, np.uint8)), words,\n"
        "               (Entity(0, 'other', tuple(range(n))),))\n"
        "f = word_features(doc)\n"
        "assert len(f) == n and f[0]['R.gap'] and f[101]['A.gap'] and f[0]['L.none'], f[101]\n",
        address_space_mib=4096)
    assert run.code == 0, run.err
    assert run.peak_mib < 1024, run.peak_mib
