"""The COCO photo pool on the real shared COCO files (counts recomputed here with plain json)."""

from __future__ import annotations

import hashlib
import io
import json
import pickle
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pooch
import pytest
import requests
from PIL import Image

from dogood.core.errors import DocumentError, SourceError
from dogood.page import photos as coco
from dogood.page.photos import DEFAULT_LICENSES, CocoPool, coco_photos

INSTANCES = "instances_train2017_coco128.json"
PANOPTIC = "panoptic_val2017_subset.json"


@pytest.fixture(scope="module")
def coco_dir(data_dir) -> Path:
    folder = data_dir / "coco"
    if not (folder / INSTANCES).is_file() or not (folder / PANOPTIC).is_file():
        pytest.skip(f"shared COCO files not found in {folder}")
    return folder


@pytest.fixture(scope="module")
def raw(coco_dir):
    """The two annotation files as plain json."""
    return [json.loads((coco_dir / name).read_text()) for name in (INSTANCES, PANOPTIC)]


@pytest.fixture(autouse=True)
def _fresh_pools():
    coco_photos.cache_clear()
    yield
    coco_photos.cache_clear()


def _images(raw) -> dict[int, dict]:
    out: dict[int, dict] = {}
    for data in raw:
        for img in data["images"]:
            out.setdefault(img["id"], img)
    return out


def _category_ids(raw, name: str) -> set[int]:
    """Image ids with category ``name``, from instances annotations and panoptic segments."""
    ids = set()
    for data in raw:
        cat = {c["id"] for c in data["categories"] if c["name"] == name}
        for ann in data["annotations"]:
            if "segments_info" in ann:
                if any(s["category_id"] in cat for s in ann["segments_info"]):
                    ids.add(ann["image_id"])
            elif ann["category_id"] in cat:
                ids.add(ann["image_id"])
    return ids


def _write_annotations(path: Path, images: list[dict], **extra) -> Path:
    path.write_text(json.dumps({"images": images, "annotations": [], "categories": [], **extra}))
    return path


def _image(id_: int, file_name: str, width: int, height: int, license: int | None = 4, split: str = "val2017"):
    img = {
        "id": id_,
        "file_name": file_name,
        "width": width,
        "height": height,
        "coco_url": f"http://images.cocodataset.org/{split}/{file_name}",
        "flickr_url": "",
    }
    if license is not None:
        img["license"] = license
    return img


def _fake_http(served: dict[str, bytes], requested: list[str]):
    """A stand-in for ``pooch.HTTPDownloader.__call__`` that serves ``served`` and records each URL asked for."""

    def download(self, url, output_file, pooch_, check_only=False):
        requested.append(url)
        if url not in served:
            raise requests.ConnectionError("no network in tests")
        Path(output_file).write_bytes(served[url])

    return download


# -- pool contents ----------------------------------------------------------------


def test_pool_sizes_match_the_json(coco_dir, raw):
    images = _images(raw)
    assert len(images) == len(raw[0]["images"]) + len(raw[1]["images"])  # train and val ids are disjoint

    everything = coco_photos(root=coco_dir, licenses=None, min_size=0)
    assert [p.id for p in everything] == sorted(i for i, img in images.items() if img.get("license") is not None)

    expected = sorted(
        i
        for i, img in images.items()
        if img.get("license") in DEFAULT_LICENSES and min(img["width"], img["height"]) >= 256
    )
    pool = coco_photos(root=coco_dir)
    assert [p.id for p in pool] == expected
    assert 0 < len(pool) < len(everything)
    assert coco_photos() is pool  # default root is $DOGOOD_DATA_DIR/coco; cached per process

    big = coco_photos(root=coco_dir, licenses=None, min_size=500)
    assert len(big) == sum(min(img["width"], img["height"]) >= 500 for img in images.values())


def test_nd_licences_left_out_by_default(coco_dir, raw):
    nd = [img for img in _images(raw).values() if img["license"] in (3, 6)]
    assert nd, "the shared set should hold ND photos for this test to mean anything"
    pool = coco_photos(root=coco_dir)
    assert {p.license_id for p in pool} <= {1, 2, 4, 5, 7}
    assert not {img["id"] for img in nd} & {p.id for p in pool}
    card = pool.describe()
    counts = {row["id"]: row["photos"] for row in card["license_counts"]}
    assert sum(counts.values()) == len(pool) == card["photos"]
    assert 3 not in counts and 6 not in counts
    assert card["license_filter"] == list(DEFAULT_LICENSES)
    assert sum(card["licenses"].values()) == len(pool) and "Attribution-NoDerivs License" not in card["licenses"]
    assert [f["name"] for f in card["files"]] == [INSTANCES, PANOPTIC]
    for f in card["files"]:
        assert f["sha256"] == hashlib.sha256((coco_dir / f["name"]).read_bytes()).hexdigest()
    json.dumps(card)


def test_photo_records_carry_the_licence(coco_dir, raw):
    images = _images(raw)
    licences = {lic["id"]: lic for lic in raw[0]["licenses"]}
    for photo in coco_photos(root=coco_dir):
        img = images[photo.id]
        assert (photo.file_name, photo.width, photo.height) == (img["file_name"], img["width"], img["height"])
        assert photo.coco_url == img["coco_url"] and photo.flickr_url == img["flickr_url"]
        assert photo.split == img["coco_url"].split("/")[-2]
        assert photo.license_id == img["license"]
        assert photo.license_name == licences[img["license"]]["name"]
        assert photo.license_url == licences[img["license"]]["url"]


def test_images_without_licence_are_dropped(tmp_path):
    Image.new("RGB", (300, 300)).save(tmp_path / "a.jpg")
    ann = _write_annotations(
        tmp_path / "a.json",
        [_image(1, "a.jpg", 300, 300), _image(2, "b.jpg", 300, 300, license=None), _image(3, "c.jpg", 300, 300, 99)],
    )
    pool = coco_photos(root=tmp_path, annotations=ann, licenses=None)
    assert [p.id for p in pool] == [1]
    assert pool.describe()["dropped"]["no_license"] == 2


def test_category_filter(coco_dir, raw):
    images = _images(raw)
    dogs = _category_ids(raw, "dog")
    pool = coco_photos(root=coco_dir, categories=["dog"])
    expected = sorted(
        i
        for i in dogs
        if images[i]["license"] in DEFAULT_LICENSES and min(images[i]["width"], images[i]["height"]) >= 256
    )
    assert [p.id for p in pool] == expected and expected
    # both files contribute: instances (train2017) and panoptic (val2017)
    assert {p.split for p in coco_photos(root=coco_dir, categories="dog", licenses=None, min_size=0)} == {
        "train2017",
        "val2017",
    }

    both = coco_photos(root=coco_dir, categories=("dog", "person"), licenses=None, min_size=0)
    assert {p.id for p in both} == (dogs | _category_ids(raw, "person")) & set(images)
    # a panoptic-only "stuff" category works too
    sky = coco_photos(root=coco_dir, categories=["sky-other-merged"], licenses=None, min_size=0)
    assert {p.id for p in sky} == _category_ids(raw, "sky-other-merged") and len(sky)


def test_panoptic_file_is_indexed_by_pycocotools(coco_dir, raw):
    kind, index = coco._read_annotations(coco_dir / PANOPTIC)
    assert kind == "panoptic"
    segments = sum(len(a["segments_info"]) for a in raw[1]["annotations"])
    assert len(index.anns) == segments
    dog = index.getCatIds(catNms=["dog"])
    assert set(index.getImgIds(catIds=dog)) == _category_ids([raw[1]], "dog")
    ann = index.loadAnns(index.getAnnIds(imgIds=[raw[1]["annotations"][0]["image_id"]]))[0]
    assert {"id", "image_id", "category_id", "bbox", "area", "iscrowd"} <= set(ann)


def test_unknown_category_lists_valid_names(coco_dir):
    with pytest.raises(SourceError, match=r"'dgo'.*did you mean 'dog'.*e\.g\. 'airplane'"):
        coco_photos(root=coco_dir, categories=["dgo"])


def test_empty_pool_names_the_filter(coco_dir):
    with pytest.raises(SourceError, match=r"licence filter \(licenses=\[8\]\)"):
        coco_photos(root=coco_dir, licenses=[8])
    with pytest.raises(SourceError, match=r"size filter \(min_size=5000\)"):
        coco_photos(root=coco_dir, min_size=5000)
    with pytest.raises(SourceError, match="category filter"):
        coco_photos(root=coco_dir, licenses=[7], categories=["giraffe"])
    with pytest.raises(ValueError):
        coco_photos(root=coco_dir, min_size=-1)


def test_duplicate_images_across_files_kept_once(coco_dir, tmp_path, raw):
    copy = tmp_path / "again.json"
    shutil.copy(coco_dir / PANOPTIC, copy)
    pool = coco_photos(root=coco_dir, annotations=[coco_dir / INSTANCES, coco_dir / PANOPTIC, copy], licenses=None)
    ids = [p.id for p in pool]
    assert len(ids) == len(set(ids))
    assert pool.describe()["unique_images"] == len(_images(raw))


# -- choice ------------------------------------------------------------------------


def test_choice_is_deterministic(coco_dir):
    pool = coco_photos(root=coco_dir)
    first = [pool.choose(np.random.default_rng(7)).id for _ in range(3)]
    assert len(set(first)) == 1
    seq = [p.id for p in (pool.choose(r) for r in [np.random.default_rng(1)] * 50)]
    coco_photos.cache_clear()
    reordered = coco_photos(root=coco_dir, annotations=[coco_dir / PANOPTIC, coco_dir / INSTANCES])
    assert reordered is not pool
    assert [p.id for p in reordered] == [p.id for p in pool]
    rng = np.random.default_rng(1)
    assert [reordered.choose(rng).id for _ in range(50)] == seq
    assert len(set(seq)) > 10  # it does move around the pool
    again = pickle.loads(pickle.dumps(pool))
    assert isinstance(again, CocoPool) and again.photos == pool.photos
    rng = np.random.default_rng(1)
    assert [again.choose(rng).id for _ in range(50)] == seq


def test_choice_uses_one_draw(coco_dir):
    pool = coco_photos(root=coco_dir)
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    pool.choose(a)
    b.integers(len(pool))
    assert a.random() == b.random()


def test_a_fitting_photo_is_drawn_when_the_pool_has_one(coco_dir):
    """``choose_fitting``: among the photos that cover the page scaled by at most ``max_upscale`` (one draw), or
    among all of them when none does."""
    pool = coco_photos(root=coco_dir)
    small = [pool.choose_fitting(np.random.default_rng(k), 400, 300, 1.25) for k in range(30)]
    assert all(max(400 / p.width, 300 / p.height) <= 1.25 for p in small) and len({p.id for p in small}) > 5
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    pool.choose_fitting(a, 2000, 3000, 1.25)  # no COCO photo covers that: any photo, drawn as choose draws
    assert pool.choose(b) == pool.choose_fitting(np.random.default_rng(3), 2000, 3000, 1.25)
    assert a.random() == b.random()


def test_surfaces_filter_keeps_photos_of_tables_beds_and_floors(coco_dir, raw):
    """With ``surfaces``, a photo stays when a segment of a surface category covers a tenth of it; its surface is
    a rectangle inside that segment's box, clear of every other object's box, 160 pixels wide and tall at least."""
    pool = coco_photos(root=coco_dir, surfaces=coco.SURFACE_CATEGORIES)
    assert 3 <= len(pool) < 40 and set(pool.surfaces) == {p.id for p in pool}
    assert all(p.license_id in DEFAULT_LICENSES for p in pool)
    names = {c["id"]: c for data in raw for c in data["categories"]}
    for photo in pool:
        place = pool.surfaces[photo.id]
        assert place.category in coco.SURFACE_CATEGORIES
        assert min(place.width, place.height) >= coco.MIN_SURFACE_SIDE
        assert place.x >= 0 and place.y >= 0 and place.x + place.width <= photo.width + 1e-6
        assert place.y + place.height <= photo.height + 1e-6
        for data in raw[:1]:  # instances: the objects on the surface are left out of it
            for ann in data["annotations"]:
                if ann["image_id"] != photo.id or names[ann["category_id"]]["name"] in coco.SURFACE_CATEGORIES:
                    continue
                x, y, w, h = ann["bbox"]
                overlap_x = min(x + w, place.x + place.width) - max(x, place.x)
                overlap_y = min(y + h, place.y + place.height) - max(y, place.y)
                assert overlap_x <= 0 or overlap_y <= 0, (photo.id, ann["id"])
    assert pool.describe()["surfaces"] == sorted(coco.SURFACE_CATEGORIES)
    again = pickle.loads(pickle.dumps(pool))
    assert again.surfaces == pool.surfaces
    assert len(coco_photos(root=coco_dir, surfaces=["giraffe-on-a-desk"])) == 0  # may be empty: the caller decides


def test_largest_free_rectangle():
    grid = np.zeros((6, 8), np.uint8)
    grid[1:5, 2:7] = 1
    grid[2, 4] = 0  # an object on the table
    assert coco._largest_rectangle(grid) == (3, 2, 5, 7)  # rows 3-4, columns 2-6: 10 cells
    assert coco._largest_rectangle(np.zeros((3, 3), np.uint8)) == (0, 0, 0, 0)


# -- pixels ------------------------------------------------------------------------


def test_load_returns_rgb_of_the_annotated_size(coco_dir):
    pool = coco_photos(root=coco_dir)
    rng = np.random.default_rng(0)
    for photo in [pool[0], pool[-1], *(pool.choose(rng) for _ in range(6))]:
        pixels = pool.load(photo)
        assert pixels.dtype == np.uint8 and pixels.shape == (photo.height, photo.width, 3)
        assert not pixels.flags.writeable
        expected = np.asarray(Image.open(coco_dir / photo.split / photo.file_name).convert("RGB"))
        assert np.array_equal(pixels, expected)
    assert pool.load(pool[0]) is pool.load(pool[0])  # kept decoded


def test_grayscale_photos_become_rgb(coco_dir, raw):
    gray = []
    for img in _images(raw).values():
        path = coco_dir / img["coco_url"].split("/")[-2] / img["file_name"]
        with Image.open(path) as im:
            if im.mode == "L":
                gray.append(img["id"])
    if not gray:
        pytest.skip("no grayscale photo in the shared COCO set")
    pool = coco_photos(root=coco_dir, licenses=None, min_size=0)
    for image_id in gray:
        photo = pool.get(image_id)
        pixels = pool.load(photo)
        assert pixels.shape == (photo.height, photo.width, 3)
        luma = np.asarray(Image.open(coco_dir / photo.split / photo.file_name))
        for c in range(3):
            assert np.array_equal(pixels[..., c], luma)


def test_converted_modes(tmp_path):
    cyan = Image.new("CMYK", (300, 260), (255, 0, 0, 0))
    cyan.save(tmp_path / "cmyk.jpg", quality=95)
    ramp = (np.arange(300 * 260, dtype=np.uint32).reshape(260, 300) % 2 * 65535).astype(np.uint16)
    Image.fromarray(ramp).save(tmp_path / "sixteen.png")
    with Image.open(tmp_path / "sixteen.png") as im:
        assert im.mode.startswith("I")
    Image.new("RGB", (300, 260), (200, 30, 40)).convert("P", palette=Image.Palette.ADAPTIVE).save(tmp_path / "pal.png")
    Image.new("RGBA", (300, 260), (0, 0, 0, 0)).save(tmp_path / "alpha.png")
    names = ["cmyk.jpg", "sixteen.png", "pal.png", "alpha.png"]
    ann = _write_annotations(tmp_path / "a.json", [_image(i + 1, n, 300, 260) for i, n in enumerate(names)])
    pool = coco_photos(root=tmp_path, annotations=ann)
    out = {p.file_name: pool.load(p) for p in pool}
    for name in names:
        assert out[name].shape == (260, 300, 3) and out[name].dtype == np.uint8
    assert np.abs(out["cmyk.jpg"].astype(int) - [0, 255, 255]).max() <= 3
    assert set(np.unique(out["sixteen.png"])) == {0, 255}
    assert np.array_equal(out["sixteen.png"][..., 0] == 255, ramp == 65535)
    assert tuple(out["pal.png"][0, 0]) == (200, 30, 40)
    assert (out["alpha.png"] == 255).all()  # transparent -> white


def test_bad_photos_name_the_file(tmp_path, coco_dir):
    real = coco_dir / "val2017" / "000000000139.jpg"
    (tmp_path / "garbage.jpg").write_bytes(b"not a jpeg at all")
    data = real.read_bytes()
    (tmp_path / "truncated.jpg").write_bytes(data[: len(data) // 2])
    Image.new("RGB", (100, 100)).save(tmp_path / "tiny.jpg")
    shutil.copy(real, tmp_path / "wrongsize.jpg")
    ann = _write_annotations(
        tmp_path / "a.json",
        [
            _image(1, "garbage.jpg", 640, 426),
            _image(2, "truncated.jpg", 640, 426),
            _image(3, "tiny.jpg", 300, 300),
            _image(4, "wrongsize.jpg", 600, 400),
        ],
    )
    pool = coco_photos(root=tmp_path, annotations=ann)
    expected = {1: "cannot decode", 2: "cannot decode", 3: "smaller than min_size=256", 4: "annotated as 600x400"}
    for image_id, message in expected.items():
        photo = pool.get(image_id)
        with pytest.raises(DocumentError, match=message) as err:
            pool.load(photo)
        assert photo.file_name in str(err.value) and f"coco-{image_id}" in str(err.value)


def test_bad_annotation_files_name_the_file(tmp_path, coco_dir):
    broken = tmp_path / "broken.json"
    broken.write_text((coco_dir / INSTANCES).read_text()[:5000])
    with pytest.raises(SourceError, match="broken.json"):
        coco_photos(root=coco_dir, annotations=broken)
    with pytest.raises(SourceError, match="not found.*missing.json"):
        coco_photos(root=coco_dir, annotations=tmp_path / "missing.json")
    (tmp_path / "list.json").write_text("[]")
    with pytest.raises(SourceError, match="list.json.*no 'images'"):
        coco_photos(root=coco_dir, annotations=tmp_path / "list.json")
    (tmp_path / "noid.json").write_text(json.dumps({"images": [{"file_name": "x.jpg"}]}))
    with pytest.raises(SourceError, match=r"noid.json: images\[0\]"):
        coco_photos(root=coco_dir, annotations=tmp_path / "noid.json")
    evil = _write_annotations(tmp_path / "evil.json", [_image(1, "../../etc/passwd", 300, 300)])
    with pytest.raises(SourceError, match="unsafe"):
        coco_photos(root=tmp_path, annotations=evil)
    with pytest.raises(SourceError, match="root folder not found"):
        coco_photos(root=tmp_path / "nowhere")


# -- downloads (offline: pooch's HTTP downloader is faked) ---------------------------------------------


def test_missing_photo_is_downloaded_into_the_cache(tmp_path, coco_dir, monkeypatch):
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(coco_dir / PANOPTIC, root / PANOPTIC)  # annotations but no photos
    cache = tmp_path / "cache"
    monkeypatch.setenv("DOGOOD_CACHE", str(cache))
    pool = coco_photos(root=root)
    photo = pool.choose(np.random.default_rng(0))
    original = coco_dir / photo.split / photo.file_name
    requested: list[str] = []
    monkeypatch.setattr(pooch.HTTPDownloader, "__call__", _fake_http({photo.coco_url: original.read_bytes()}, requested))

    pixels = pool.load(photo)
    assert requested == [photo.coco_url]
    cached = cache / "coco" / photo.split / photo.file_name
    assert cached.read_bytes() == original.read_bytes()
    assert not list(cached.parent.glob("*.part"))
    assert np.array_equal(pixels, np.asarray(Image.open(original).convert("RGB")))

    coco_photos.cache_clear()
    again = coco_photos(root=root)
    assert again.path(photo) == cached and np.array_equal(again.load(photo), pixels)
    assert requested == [photo.coco_url]  # served from the cache the second time

    other = next(p for p in pool if p.id != photo.id)
    with pytest.raises(SourceError, match=other.coco_url):
        pool.load(other)
    assert not (cache / "coco" / other.split / other.file_name).exists()


def test_corrupt_download_is_removed(tmp_path, coco_dir, monkeypatch):
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(coco_dir / PANOPTIC, root / PANOPTIC)
    monkeypatch.setenv("DOGOOD_CACHE", str(tmp_path / "cache"))
    pool = coco_photos(root=root)
    photo = pool[0]
    requested: list[str] = []
    monkeypatch.setattr(pooch.HTTPDownloader, "__call__", _fake_http({photo.coco_url: b"<html>oops</html>"}, requested))
    with pytest.raises(DocumentError, match="removed from the cache"):
        pool.load(photo)
    assert not (tmp_path / "cache" / "coco" / photo.split / photo.file_name).exists()


def _annotations_zip(coco_dir) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("annotations/instances_val2017.json", (coco_dir / INSTANCES).read_bytes())
        zf.writestr("annotations/captions_val2017.json", "{}")
    return buf.getvalue()


def test_annotations_downloaded_without_local_data(tmp_path, coco_dir, raw, monkeypatch):
    monkeypatch.delenv("DOGOOD_DATA_DIR", raising=False)
    monkeypatch.setenv("DOGOOD_CACHE", str(tmp_path / "cache"))
    archive = _annotations_zip(coco_dir)
    monkeypatch.setattr(coco, "ANNOTATIONS_SHA256", hashlib.sha256(archive).hexdigest())
    requested: list[str] = []
    monkeypatch.setattr(pooch.HTTPDownloader, "__call__", _fake_http({coco.ANNOTATIONS_URL: archive}, requested))

    pool = coco_photos()
    assert requested == [coco.ANNOTATIONS_URL]
    expected = [
        img["id"]
        for img in raw[0]["images"]
        if img["license"] in DEFAULT_LICENSES and min(img["width"], img["height"]) >= 256
    ]
    assert [p.id for p in pool] == sorted(expected)
    assert pool.root is None
    card = pool.describe()
    assert card["download"]["url"] == coco.ANNOTATIONS_URL
    assert card["files"][0]["name"] == "instances_val2017.json"
    extracted = tmp_path / "cache" / "coco" / "annotations_trainval2017" / "annotations" / "instances_val2017.json"
    assert extracted.is_file()

    coco_photos.cache_clear()
    assert len(coco_photos()) == len(pool)
    assert requested == [coco.ANNOTATIONS_URL]  # downloaded once


def test_annotation_download_checks_the_sha256(tmp_path, coco_dir, monkeypatch):
    monkeypatch.delenv("DOGOOD_DATA_DIR", raising=False)
    monkeypatch.setenv("DOGOOD_CACHE", str(tmp_path / "cache"))
    assert coco.ANNOTATIONS_SHA256 == "113a836d90195ee1f884e704da6304dfaaecff1f023f49b6ca93c4aaae470268"
    served = {coco.ANNOTATIONS_URL: _annotations_zip(coco_dir)}
    monkeypatch.setattr(pooch.HTTPDownloader, "__call__", _fake_http(served, []))
    with pytest.raises(SourceError, match="checksum mismatch"):
        coco_photos()
    assert not list((tmp_path / "cache" / "coco").iterdir())
