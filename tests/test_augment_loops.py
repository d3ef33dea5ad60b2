"""dogood.transform in the loops people run (issue 37): the epoch reaches DataLoader workers (persistent or not, fork
or spawn), a training chain is saved and read back, the first epoch's fitting is paid ahead and kept on disk."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from datasets import load_dataset

import dogood
from dogood.augment import Compose, OneOf, Step, Transform, shift_spec
from dogood.core.errors import RecipeError
from dogood.page import render
from dogood.pipeline.build import build
from dogood.pipeline.recipe import list_recipes, load_recipe

HUB_FUNSD = ("id", "tokens", "bboxes", "ner_tags", "image")
N = 4


@pytest.fixture(scope="module")
def own_rows(funsd_dir, tmp_path_factory):
    """FUNSD test's first N forms as dogood writes them, word-level boxes."""
    out = tmp_path_factory.mktemp("loops") / "funsd"
    build(load_recipe("funsd"), out, source_path=funsd_dir, limit=N, progress=False, box_level="word")
    return load_dataset(str(out), "original", split="test")


@pytest.fixture(scope="module")
def rows(own_rows):
    """The same rows in the Hub's columns (nielsr/funsd's word boxes)."""
    return own_rows.remove_columns([c for c in own_rows.column_names if c not in HUB_FUNSD])


def digest(row) -> tuple:
    """What a row holds, comparable across processes."""
    return row["id"], tuple(row["tokens"]), tuple(map(tuple, row["bboxes"])), tuple(row["ner_tags"]), \
        np.asarray(row["image"]).tobytes()


def in_process(t: Transform, ds, epoch: int) -> list[tuple]:
    """The rows ``t`` gives for ``epoch`` in this process (a pickled copy: its epoch is its own)."""
    own = pickle.loads(pickle.dumps(t))
    own.set_epoch(epoch)
    return [digest(own(ds[i])) for i in range(len(ds))]


@pytest.mark.parametrize("context", ["fork", "spawn"])
@pytest.mark.parametrize("persistent", [False, True])
def test_each_epoch_reaches_the_workers(rows, context, persistent):
    """set_epoch in the loop's process: the workers draw for that epoch, persistent or forked anew, fork or spawn
    (with persistent workers every epoch used to draw epoch 0's)."""
    torch = pytest.importorskip("torch", reason="a torch DataLoader: install torch (the hf or text extra)")
    chain = [{"shift": "center_shift"}, dogood.Step({"shift": "distort", "kinds": ["perspective"]}, p=0.5)]
    t = dogood.transform(chain, seed=5, per_epoch=True)
    loader = torch.utils.data.DataLoader(rows.with_transform(t), batch_size=2, num_workers=2, collate_fn=list,
                                         persistent_workers=persistent, multiprocessing_context=context)
    got = []
    for epoch in range(3):
        t.set_epoch(epoch)
        got.append([digest(row) for batch in loader for row in batch])
    assert got == [in_process(t, rows, e) for e in range(3)]
    assert got[0] != got[1] != got[2] and got[0] != got[2]


def test_an_epoch_is_the_same_whatever_the_workers(rows):
    torch = pytest.importorskip("torch", reason="a torch DataLoader: install torch (the hf or text extra)")
    t = dogood.transform({"shift": "center_shift"}, seed=1, per_epoch=True)
    t.set_epoch(7)
    runs = []
    for workers in (0, 1, 2):
        loader = torch.utils.data.DataLoader(rows.with_transform(t), batch_size=3, num_workers=workers,
                                             collate_fn=list)
        runs.append([digest(row) for batch in loader for row in batch])
    assert runs[0] == runs[1] == runs[2] == in_process(t, rows, 7)


def test_copies_of_a_transform_follow_its_epoch_and_pickles_hold_a_value():
    t = dogood.transform({"shift": "center_shift"}, per_epoch=True)
    copied = copy.deepcopy(t)  # datasets deep-copies a dataset with its transform
    t.set_epoch(3)
    assert copied.epoch == 3
    pickled = pickle.loads(pickle.dumps(t))  # not while a process starts: a value of its own
    t.set_epoch(4)
    assert pickled.epoch == 3 and t.epoch == 4
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(RecipeError, match="epoch"):
            t.set_epoch(bad)


def _chain():
    return Compose([
        OneOf([{"shift": "char_deletion", "fraction": 0.2}, {"shift": "homoglyph_swap"}], weights=[1, 3]),
        Step({"shift": "center_shift", "delta": 0.2}, p=0.5),
        Compose([{"shift": "box_stretch"}], p=0.7),
        "funsd-c:distort@3",
    ])


def test_a_chain_written_and_read_back_gives_the_same_rows(rows, tmp_path):
    chain = _chain()
    data = chain.to_recipe()
    assert data[0] == {"one_of": [shift_spec(chain.steps[0].steps[0].shift), shift_spec(chain.steps[0].steps[1].shift)],
                       "weights": [1.0, 3.0]}
    assert data[1]["p"] == 0.5 and data[2]["compose"] and data[2]["p"] == 0.7
    assert data[3]["draw_key"] == load_recipe("funsd-c").chain("distort@3")[0].seed_key()
    t = dogood.transform(chain, seed=11, per_epoch=True)
    back = dogood.transform(Compose(data), seed=11, per_epoch=True)
    path = tmp_path / "train.yaml"
    t.to_recipe(path, config="augment")
    from_file = Transform.from_recipe(path, "augment", per_epoch=True)
    assert from_file.seed == 11
    for epoch in (0, 1):
        expected = in_process(t, rows, epoch)
        assert in_process(back, rows, epoch) == expected
        assert in_process(from_file, rows, epoch) == expected


def test_a_plain_chain_is_written_as_a_recipe_dogood_builds(own_rows, funsd_dir, tmp_path):
    """No p, no OneOf: the file is a recipe; its build and the transform read back from it give the same rows."""
    chain = Compose([{"shift": "char_deletion", "fraction": 0.3}, "funsd-l:merge"])
    path = tmp_path / "plain.yaml"
    dogood.transform(chain, seed=4).to_recipe(path, config="train", name="plain")
    built = tmp_path / "out"
    build(load_recipe(str(path)), built, source_path=funsd_dir, limit=N, progress=False, box_level="word")
    want = load_dataset(str(built), "train", split="test")
    t = Transform.from_recipe(path, "train", as_built=True)
    for i in range(N):
        got, expected = t(own_rows[i]), want[i]
        assert digest(got) == digest(expected)
        assert got["tokens"] != own_rows[i]["tokens"] and got["bboxes"] != own_rows[i]["bboxes"]


def test_every_shipped_step_is_written_as_it_draws():
    """Every step of every shipped config (severity levels included) made back from what to_recipe writes has the
    same seed key, so draws the same."""
    for recipe in list_recipes():
        for config in recipe.configs:
            for shift in recipe.chain(config):
                again = dogood.augment.as_node(Step(shift).to_recipe()).shift
                assert again.seed_key() == shift.seed_key(), (recipe.name, config, shift.name)


@pytest.mark.parametrize("bad", [{"one_of": []}, {"one_of": "x"}, {"compose": [], "weights": [1]},
                                 {"step": {"shift": "center_shift"}, "draw_key": 3}, {"step": "center_shift"},
                                 {"p": 0.5}, {"one_of": [{"shift": "center_shift"}], "step": {}}])
def test_chain_data_that_does_not_make_a_chain_is_refused(bad):
    with pytest.raises(RecipeError):
        dogood.transform([bad])


def test_prepare_pays_the_first_epoch_ahead_on_disk(rows, tmp_path, monkeypatch):
    """prepare(rows, num_proc=2) fits every page into the folder: an epoch in a new process state fits nothing."""
    chain = [{"shift": "char_deletion", "fraction": 0.2, "render": True}]
    monkeypatch.setattr(render, "FIT_CACHE", render.FitCache(max_words=0))  # no cache at all
    expected = [in_process(dogood.transform(chain, seed=2, per_epoch=True, fit_cache_dir=False), rows, e)
                for e in (0, 1)]
    monkeypatch.setattr(render, "FIT_CACHE", render.FitCache(max_words=10**6))
    t = dogood.transform(chain, seed=2, per_epoch=True, fit_cache_dir=tmp_path / "fits")
    assert t.prepare(rows, num_proc=2) == N
    files = len(list((tmp_path / "fits").glob("*/*.npz")))  # each page, and each vertical word turned upright
    assert files >= N
    cache = render.FitCache(max_words=10**6)
    monkeypatch.setattr(render, "FIT_CACHE", cache)  # a worker forked anew: nothing in memory
    assert [in_process(t, rows, e) for e in (0, 1)] == expected
    assert cache.misses == 0 and N <= cache.read <= files


def test_transforms_keep_fits_in_dogoods_cache_by_default(rows, tmp_path, monkeypatch):
    monkeypatch.setenv("DOGOOD_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("DOGOOD_FIT_CACHE_DIR", raising=False)
    monkeypatch.setattr(render, "FIT_CACHE", render.FitCache(max_words=10**6))
    chain = {"shift": "char_deletion", "render": True}
    dogood.transform(chain, fit_cache_dir=False)(rows[0])
    assert not (tmp_path / "cache" / "fits").exists()
    dogood.transform(chain)(rows[0])
    assert len(list((tmp_path / "cache" / "fits").glob("*/*.npz"))) == 1


def test_an_unwritable_cache_folder_keeps_fits_in_memory(rows, tmp_path, monkeypatch):
    """The default folder cannot be written (a read-only home): one warning, fits in memory, rows as ever."""
    import os

    monkeypatch.setenv("DOGOOD_FIT_CACHE_DIR", str(tmp_path / "fits"))
    monkeypatch.setattr(dogood.augment, "_warned_no_cache", [])
    monkeypatch.setattr(os, "access", lambda *args, **kwargs: False)  # as for a folder this user cannot write
    monkeypatch.setattr(render, "FIT_CACHE", render.FitCache(max_words=10**6))
    t = dogood.transform({"shift": "char_deletion", "render": True})
    with pytest.warns(UserWarning, match="fit cache folder"):
        out = t(rows[0])
    assert out["tokens"] != rows[0]["tokens"] and not list((tmp_path / "fits").glob("*/*.npz"))
    monkeypatch.setattr(render, "FIT_CACHE", render.FitCache(max_words=0))
    assert digest(dogood.transform({"shift": "char_deletion", "render": True}, fit_cache_dir=False)(rows[0])) == \
        digest(out)
