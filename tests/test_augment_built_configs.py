"""``dogood.transform`` of any built config is the build (issue 37): every config of every shipped recipe, severity
levels included, on a few real pages; the transform of the unshifted rows gives the built rows byte for byte.

The rows in are dogood's own (with the ``dogood`` column, whose pixel boxes, blank words and entities the Hub's
columns do not hold); the pages come back as the build stores them (``as_built=True``: a page a step stores as
JPEG, encoded and decoded again; without it the page is the one before that encoding)."""

from __future__ import annotations

import io

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml
from datasets import load_dataset
from PIL import Image

from dogood.augment import Transform
from dogood.pipeline.build import build
from dogood.pipeline.recipe import list_recipes, load_recipe, parse_recipe, recipe_dirs

N = 2
RECIPES = sorted(r.name for r in list_recipes())


@pytest.fixture(scope="module")
def sources(funsd_dir, data_dir, docvqa_root):
    return {"funsd": funsd_dir, "rvl_cdip": data_dir / "rvl_cdip", "docvqa": docvqa_root, "funsd_mix": funsd_dir}


@pytest.fixture(scope="module")
def unshifted(sources, tmp_path_factory):
    """``rows(kind, split, box_level)``: the first N documents of a source kind's split as an unshifted build writes
    them."""
    root = tmp_path_factory.mktemp("unshifted")
    made = {}

    def rows(kind: str, split: str, box_level: str | None):
        key = (kind, split, box_level)
        if key not in made:
            recipe = parse_recipe({"name": f"id-{kind}", "version": "1.0.0", "source": {"kind": kind},
                                   "splits": [split], "configs": {"original": []}}, None)
            out = root / f"{kind}-{split}-{box_level}"
            build(recipe, out, source_path=sources[kind], limit=N, progress=False, box_level=box_level)
            ds = load_dataset(str(out), "original", split=recipe.splits[0])
            made[key] = [ds[i] for i in range(len(ds))]
        return made[key]

    return rows


def _recipe_file(name: str, folder, mlm: str):
    """The shipped recipe ``name``, its ``bert_attack`` steps on the tiny local masked LM (no weights offline)."""
    (path,) = [d / f"{name}.yaml" for d in recipe_dirs() if (d / f"{name}.yaml").is_file()][:1]
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for chain in data["configs"].values():
        for step in chain or []:
            if step.get("shift") == "bert_attack":
                step["model"] = mlm
    out = folder / f"{name}.yaml"
    out.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return out


@pytest.mark.parametrize("name", RECIPES)
def test_the_transform_of_every_built_config_is_the_build(name, sources, unshifted, tiny_mlm, tmp_path):
    path = _recipe_file(name, tmp_path, tiny_mlm)
    recipe = load_recipe(path)
    kind = recipe.source["kind"]
    out = tmp_path / "out"
    build(recipe, out, source_path=sources[kind], limit=N, progress=False, num_proc=1)
    (split,) = recipe.splits
    rows_in = unshifted(kind, split, recipe.box_level)
    compared = 0
    for config in recipe.configs:
        built = pq.read_table(sorted((out / "data" / config).glob("*.parquet"))).to_pylist()
        assert [r["id"] for r in built] == [r["id"] for r in rows_in]
        t = Transform.from_recipe(path, config, as_built=True)
        for source, want in zip(rows_in, built):
            got = t(source)
            assert set(got) == set(want), (config, source["id"])
            for column in want:
                if column != "image":
                    assert got[column] == want[column], (config, source["id"], column)
            stored = Image.open(io.BytesIO(want["image"]["bytes"]))
            assert np.array_equal(np.asarray(got["image"]), np.asarray(stored.convert(got["image"].mode))), \
                (config, source["id"])
            compared += 1
    assert compared == N * len(recipe.configs) and compared > 0
