"""Seeds come from (recipe seed, document id, step position and content), never from the config's name.

Configs whose chains share a prefix then produce identical pixels up to the
first step where they differ: `natural` and `natural_kept_words` composite the
same ink on the same photo, `distort` and `distort_kept_words` warp through the
same map, so re-OCR is the only difference between them.
"""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from datasets import load_dataset

from dogood.core.schema import FULL_COLUMN
from dogood.core.seeds import derive_seed, shared_prefixes, step_key, step_seed
from dogood.pipeline.build import build
from dogood.pipeline.recipe import load_recipe, parse_recipe
from dogood.pipeline.worker import apply_chain
from dogood.shifts import make_shift


def _images(folder, config):
    table = pq.read_table(next((folder / "data" / config).glob("*.parquet")))
    return [cell["bytes"] for cell in table.column("image").to_pylist()]


@pytest.fixture(scope="module")
def rvl_builds(data_dir, tmp_path_factory):
    base = tmp_path_factory.mktemp("paired")
    out = {}
    for name in ("rvl-cdip-i1", "rvl-cdip-i2"):
        build(load_recipe(name), base / name, source_path=data_dir / "rvl_cdip", progress=False)
        out[name] = base / name
    return out


@pytest.mark.parametrize("recipe, paired, other", [
    ("rvl-cdip-i1", ("natural", "natural_kept_words"), "natural_page"),
    ("rvl-cdip-i2", ("distort", "distort_kept_words"), "perspective"),
])
def test_configs_that_share_a_chain_prefix_share_its_pixels(rvl_builds, recipe, paired, other):
    folder = rvl_builds[recipe]
    a, b = (_images(folder, c) for c in paired)
    assert len(a) == 3 and a == b  # every page: the same photo / the same warp, byte for byte
    assert all(x != y for x, y in zip(a, _images(folder, other)))  # another first step draws anew
    ds_a = load_dataset(str(folder), paired[0], split="test")
    ds_b = load_dataset(str(folder), paired[1], split="test")
    for ra, rb in zip(ds_a, ds_b):
        pa, pb = ra[FULL_COLUMN]["provenance"], rb[FULL_COLUMN]["provenance"]
        assert pa[0] == pb[0]  # same shift, parameters, seed and counts
        assert [p["shift"] for p in pa] == [pb[0]["shift"], "reocr"]
    # re-OCR's words differ from the kept ones (the handwritten page has none either way): the one difference
    assert sum(ra["tokens"] != rb["tokens"] for ra, rb in zip(ds_a, ds_b)) >= 2


def test_the_card_names_the_configs_that_share_draws(rvl_builds):
    card = (rvl_builds["rvl-cdip-i1"] / "README.md").read_text()
    assert "Shares its random draws with `natural_kept_words` (first 1 step)" in card
    manifest = json.loads((rvl_builds["rvl-cdip-i1"] / "dogood_build.json").read_text())
    assert manifest["shared_draws"]["natural"] == {"natural_kept_words": 1}
    assert manifest["shared_draws"]["natural_page"] == {}


def test_renaming_a_config_changes_no_byte(funsd_dir, tmp_path):
    chain = [{"shift": "center_shift", "delta": 0.2}, {"shift": "global_shuffle"}]
    for name in ("a", "zz"):
        recipe = parse_recipe({"name": "r", "version": "1.0.0", "source": {"kind": "funsd"}, "box_level": "word",
                               "configs": {name: chain}})
        build(recipe, tmp_path / name, source_path=funsd_dir, limit=3, progress=False)
    assert (tmp_path / "a/data/a/test-00000-of-00001.parquet").read_bytes() == \
        (tmp_path / "zz/data/zz/test-00000-of-00001.parquet").read_bytes()


def test_step_seeds_depend_on_seed_document_position_and_content(funsd_test):
    doc = funsd_test.load(funsd_test.ids()[0])
    shift = make_shift({"shift": "center_shift", "delta": 0.2})
    key = shift.step_key()
    assert key == step_key("center_shift", {"delta": 0.2})
    seeds = {step_seed(0, doc.id, 0, key), step_seed(1, doc.id, 0, key), step_seed(0, "other", 0, key),
             step_seed(0, doc.id, 1, key), step_seed(0, doc.id, 0, step_key("center_shift", {"delta": 0.3}))}
    assert len(seeds) == 5
    shifted = apply_chain(doc, [shift, make_shift({"shift": "global_shuffle"})], 7)
    assert shifted.provenance[0].seed == step_seed(7, doc.id, 0, key)
    assert shifted.provenance[1].seed == step_seed(7, doc.id, 1, make_shift({"shift": "global_shuffle"}).step_key())
    # defaults written out or left implicit are the same step
    assert make_shift({"shift": "merge"}).step_key() == make_shift({"shift": "merge", "lambda_x": 10}).step_key()


def test_shared_prefixes():
    chains = {"a": ["x", "y"], "b": ["x"], "c": ["y", "x"], "d": ["x", "y", "z"]}
    assert shared_prefixes(chains) == {"a": {"b": 1, "d": 2}, "b": {"a": 1, "d": 1}, "c": {}, "d": {"a": 2, "b": 1}}
    assert derive_seed(1, "a") == derive_seed(1, "a") != derive_seed("1", "b")
