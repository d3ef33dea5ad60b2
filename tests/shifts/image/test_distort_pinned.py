"""`distort`'s outputs pinned byte for byte (issue 31: its speed-ups must not change one bit).

Each case warps a real page (FUNSD test forms; RVL-CDIP pages with word boxes found by connected components)
with one parameter set and seed; the sha256 of the warped pixels, the boxes, the quads and the counts was
computed with the code before the speed-ups. Regenerate (only for an intended change of output) with
``python tests/shifts/image/test_distort_pinned.py``.
"""

from __future__ import annotations

import hashlib
import json

import cv2
import numpy as np
import pytest

from dogood.core.document import Document, PageImage, Word
from dogood.shifts import make_shift
from dogood.shifts.image.distort import DistortPage  # noqa: F401  (registers the shift)

#: (source, page index, parameters, seed, quads): 20 FUNSD forms at the defaults, then parameter sets.
CASES = [("funsd", i, {}, i, False) for i in range(20)] + [
    ("funsd", 0, {"kinds": ["fold", "curve"], "folds": 2}, 1, False),
    ("funsd", 1, {"kinds": ["curl"], "strength": 1.0}, 2, False),
    ("funsd", 2, {"kinds": ["perspective"], "strength": 0.05}, 3, False),
    ("funsd", 3, {"kinds": ["fold", "curve", "curl", "perspective"], "strength": 1.0, "reproject": "ink"}, 4, False),
    ("funsd", 4, {"reproject": "box"}, 5, False),
    ("funsd", 5, {"reproject": "ink", "strength": 0.3}, 6, False),
    ("funsd", 6, {"canvas": "grow", "strength": 0.6}, 7, False),
    ("funsd", 7, {"interpolation": "linear", "border_value": 150}, 8, False),
    ("funsd", 8, {"interpolation": "lanczos", "strength": 0.15}, 9, False),
    ("funsd", 9, {}, 10, True),
    ("funsd", 10, {"kinds": ["curl", "perspective"], "strength": 0.6}, 11, True),
    ("funsd", 11, {"strength": 0.0}, 12, False),
    ("funsd", 12, {"kinds": ["fold"], "strength": 1.0, "margin": 0.1, "canvas": "grow", "reproject": "box"}, 13, True),
    ("funsd", 13, {"encoding": "png", "strength": 0.05}, 14, False),
    ("funsd", 0, {"rgb": True}, 15, False),
    ("funsd", 1, {"rgb": True, "reproject": "ink", "kinds": ["curve", "fold"]}, 16, False),
    ("rvl", 0, {}, 0, False),
    ("rvl", 1, {"strength": 1.0, "kinds": ["fold", "curve", "curl", "perspective"]}, 1, False),
    ("rvl", 2, {"reproject": "ink"}, 2, True),
    ("rvl", 0, {"reproject": "box", "canvas": "grow"}, 3, False),
    ("rvl", 1, {"rgb": True, "strength": 0.3}, 4, False),
]

#: sha256 of each case's outcome (:func:`digest`), computed before issue 31's speed-ups.
PINNED: list[str] = [
    "c70335ed10dc0d76d9bab475c7f0e198a961c131b952aa7bb3f4bc9388b93ebe",
    "97855907824092185e3936eaf9dac8e54e71d4b274a4ae2a920ba1ceafdf3d7d",
    "b69a3fd136af9832c94ed5e1c01d41a74c329a99e3a77fe9acaa9de66c4924d4",
    "2ea94e31acf1b2736ddc22db01b2c6c8ddfd01607224edba8f52ef96569ac666",
    "96f0dbcb855844cbfa74aa70298b7a0f6a08a5585f8379a6dd1c34898a80f0c5",
    "771d816999e3c4d716fcd9bd2547a872a8a47ccc9443f076fb4724f5d037a1d2",
    "7d66149343e972507697f462c02d9180d2a7da13580e50ffbb2168def845c4fb",
    "5e336c9602427760052fadc3d3212472059cc2b23e3ef6cc1610145f2334ddb4",
    "508f5d68348b3eb68c822d825ad2f4539d9e3939488264ca39e858fd42738194",
    "9826317df261737f3e532b476741381c54a77cf71b39f014acbffe3a1a1be614",
    "e0ac1ba06f2fe06c2408b5323abe4daa9e4322266a88fb2e34f81c8f2eaee577",
    "32d43c165536d50ec3684aa57fe81b1a72db723923c545d89798b4533164668c",
    "a1a18b5e0f20dd1088fd46390eddbb1f2a04b0649136356d38495dd449077bd8",
    "64acb2551022d96ee3b727d7cbe807e5620b4804e5ff481fe8c995d6f6259163",
    "5c9ac81d977be15e1437523779c0f5a0d1bd114ff5ad97bcbd137b4e440b1f29",
    "5bcd05c9eef237b4ab3ed99f1305f9d14e4571ebdb98edd93ad02da644736288",
    "8d8a2526a6db84eda09090af5d4ac463130ce93d6d4443b07b70bce31f217e1e",
    "2748cc312314f6a1779ac7a58067bf7157ca2918c287dabbbf1604dd9f12b599",
    "67b2f4edee56dfdfcb7b424266c95b6210485bbb8bb5c40f68265407c51dd746",
    "bc34c7ab37ae5502b0940a03e54bca0aac4c97255ad25aa91ae5d8be91ba6424",
    "b7bec896dcea3ccab1f5030478142f683cd1b66f32fce06d222b1084a93e8d0c",
    "7a8a6f645961c9f9f0e96881b7273f80c09b19d1f7c1060b835c3ea1639ba2d2",
    "f74197be2f8c6b34ea7237c927313b095e14b235f2a3d3a58bec294295c80189",
    "4379f44b1b8884fcd700a14e0a903a39a804a98e05fbf77d2fda3729ab504aeb",
    "cc97e3a5c5fae41af6110b833ac644616cfddcf97643d1ea51c7ce59e7097d8d",
    "b154ffe0b68f02027b791a7aac15d94d842a26e2717635b4b4db9a9707e90bb5",
    "56065a2112f1107f4c1fa75926086cfa9abce53ffd497f466230c76077681e69",
    "42f9b64f2cc0b64bd56036ba4a25d1ec29f8e02047956435cf7ae40c9128d85d",
    "607bb7173908a7d458641f94c680eebe44fbf694a7628d8548f70437e5548e2f",
    "e28ff6c28831ad202050f21ce802b4673a803202183ce4f92745d9e69e8bc868",
    "2a17ac02bea1240cf6264828c1b7ef76893ff81c6848b9452b6f376c56537a08",
    "c8b2fff415588e0983c25c2ad66cc750c2885d696453102f14b04929591f39eb",
    "1a352b6ef9fb4595dc8d60a51cd417fec7b2474e669d65717f216d7e7791a13f",
    "3a54c3d50be24baf9bc5a789c83a5aa8b3a4f96e31b753febebf587126e1cef7",
    "c65d28eeb1bf601acecf36b0683d8224e78b45d266ccb3ac28a496ef27af4137",
    "b6e318945e984a43f97101fed166fa62502f2126bd7002ca0449fcbc4426d645",
    "5e21fabc42d669800de1d8a5f0f040499a879bdaa5567950e1d30e9e2ba79333",
    "6ea0c53810c406d7100f381449b7f12b4083f9a1f6e36fc6d99cb2b0a3d5b38c",
    "52079a22a8d23a29ad1dec8e700109770e88306c02af5830696180b2dfccacb2",
    "c4c0e6584f0fd31b1258776dec7f65a8912dd258a163caa936dac9b6005b4016",
    "0a03f8ada6a383e284578d3f37b9d03f37cce3ed5befc6045fe9f67492786fd7",
]


def rvl_doc(path, index: int) -> Document:
    """An RVL-CDIP page with one box per connected blob of ink (letters joined into words)."""
    image = PageImage.from_file(path)
    pixels = image.to_array()
    dark = (pixels < 128).astype(np.uint8)
    joined = cv2.dilate(dark, np.ones((3, 9), np.uint8))
    stats = cv2.connectedComponentsWithStats(joined, connectivity=8)[2]
    words = [Word(f"w{k}", (int(x), int(y), int(x + w), int(y + h)))
             for k, (x, y, w, h, area) in enumerate(stats[1:].tolist()) if area >= 12 and w < 400 and h < 80]
    return Document(id=f"rvl{index}", image=image, words=tuple(words))


def as_rgb(doc: Document) -> Document:
    """The page as RGB, its channels unequal (a tint), so the RGB paths run."""
    g = doc.image.to_array()
    rgb = np.dstack([g, (g.astype(np.uint16) * 7 // 8).astype(np.uint8), np.maximum(g, 40)])
    return doc.replace(image=PageImage.from_array(rgb))


def digest(doc: Document, params: dict, seed: int, quads: bool) -> str:
    params = dict(params)
    if params.pop("rgb", False):
        doc = as_rgb(doc)
    if quads:
        doc = doc.with_quads()
    out = make_shift({"shift": "distort", **params})(doc, seed)
    h = hashlib.sha256()
    pixels = np.ascontiguousarray(out.image.to_array())
    h.update(repr((pixels.shape, str(pixels.dtype))).encode())
    h.update(pixels.tobytes())
    h.update(np.array([w.box for w in out.words], dtype=np.int64).tobytes())
    h.update(json.dumps([w.quad for w in out.words]).encode())
    h.update(json.dumps(out.provenance[-1].counts, sort_keys=True).encode())
    return h.hexdigest()


def load_docs(funsd_root, rvl_root):
    from dogood.sources.funsd import FunsdSource

    funsd = FunsdSource(root=funsd_root, split="test")
    ids = funsd.ids()
    rvl = sorted((rvl_root / "images").glob("*.tif"))
    return {"funsd": lambda i: funsd.load(ids[i]), "rvl": lambda i: rvl_doc(rvl[i], i)}


@pytest.fixture(scope="module")
def pages(funsd_dir, data_dir):
    if not (data_dir / "rvl_cdip" / "images").is_dir():
        pytest.skip("the RVL-CDIP pages are not in the shared data")
    return load_docs(funsd_dir, data_dir / "rvl_cdip")


@pytest.mark.parametrize("k", range(len(CASES)))
def test_distort_output_is_pinned(pages, k):
    source, index, params, seed, quads = CASES[k]
    assert digest(pages[source](index), params, seed, quads) == PINNED[k]


def test_source_cache_gives_what_a_cold_start_gives(pages, monkeypatch):
    """The source side of carry_boxes (ink mask, label images), cached by page content, changes no box; a page
    seen again is served from the cache, and the cache keeps within its byte budget."""
    from dogood.page import warp

    docs = [pages["funsd"](0), pages["funsd"](1), pages["rvl"](0)]
    maps = [warp.distortion_map((d.width, d.height), np.random.default_rng(k), strength=0.6) for k, d in enumerate(docs)]
    warp._SOURCE_CACHE.clear()
    cold = [warp.carry_boxes(d.boxes, m, d.image.to_array(), mode) for d, m in zip(docs, maps)
            for mode in warp.REPROJECT]
    assert len(warp._SOURCE_CACHE) == 2 * len(docs)  # with ink (margins and ink share it) and without (box)
    warm = [warp.carry_boxes(d.boxes, m, d.image.to_array(), mode) for d, m in zip(docs, maps)
            for mode in warp.REPROJECT]
    for (a, ca), (b, cb) in zip(cold, warm):
        assert np.array_equal(a, b) and ca == cb
    one = max(entry[0].nbytes() for entry in warp._SOURCE_CACHE.values())
    monkeypatch.setattr(warp, "SOURCE_CACHE_BYTES", one)
    warp._SOURCE_CACHE.clear()
    again = [warp.carry_boxes(d.boxes, m, d.image.to_array(), mode) for d, m in zip(docs, maps)
             for mode in warp.REPROJECT]
    assert len(warp._SOURCE_CACHE) == 1
    for (a, ca), (b, cb) in zip(cold, again):
        assert np.array_equal(a, b) and ca == cb


if __name__ == "__main__":  # regenerate PINNED in this file
    import os
    import re
    from pathlib import Path

    data = Path(os.environ["DOGOOD_DATA_DIR"])
    docs = load_docs(data / "funsd" / "dataset", data / "rvl_cdip")
    pinned = [digest(docs[source](index), params, seed, quads) for source, index, params, seed, quads in CASES]
    here = Path(__file__)
    body = "".join(f'    "{d}",\n' for d in pinned)
    here.write_text(re.sub(r"PINNED: list\[str\] = \[.*?\]\n", lambda _: f"PINNED: list[str] = [\n{body}]\n",
                           here.read_text(), count=1, flags=re.DOTALL))
