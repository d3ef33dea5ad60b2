"""The page fit cache (issue 31, part 2): a page's print is fitted once, and what is drawn stays the same bytes."""

from __future__ import annotations

import numpy as np
import pytest

import dogood
from dogood.page import render
from dogood.page.render import FitCache, choose_styles


@pytest.fixture
def page(funsd_test):
    return funsd_test.load(funsd_test.ids()[1])


@pytest.fixture
def fresh_cache(monkeypatch):
    """A cache of this test's own in place of the process's."""
    def use(**options):
        cache = FitCache(**{"max_words": 200_000, **options})
        monkeypatch.setattr(render, "FIT_CACHE", cache)
        return cache
    return use


def _word_sets(doc, n_sets=3, share=0.1, seed=0):
    rng = np.random.default_rng(seed)
    known = [i for i, w in enumerate(doc.words) if w.text.strip()]
    return [sorted(rng.choice(known, size=max(1, int(share * len(known))), replace=False).tolist())
            for _ in range(n_sets)]


@pytest.mark.parametrize("whole_pages", [False, True])
def test_styles_are_the_same_with_a_warm_cache_as_without_any(page, fresh_cache, whole_pages):
    sets = _word_sets(page)
    fresh_cache(max_words=0)  # nothing kept: every choice fits from scratch, as before the cache
    expected = [choose_styles(page, words, page) for words in sets]
    cache = fresh_cache()
    cache.whole_pages = whole_pages
    got = [choose_styles(page, words, page) for words in sets + sets[:1]]
    assert got == expected + expected[:1]  # Style is a dataclass of floats: equal means bit-equal here
    assert cache.hits > cache.misses  # the later choices found the page's fits
    if whole_pages:  # the first choice fitted every word with text; no later one fitted anything
        known = sum(1 for w in page.words if w.text.strip())
        assert cache.misses <= known


def test_a_redrawn_page_is_byte_identical_across_epochs_with_and_without_the_cache(page, fresh_cache):
    doc = page
    chain = [{"shift": "char_deletion", "fraction": 0.2, "render": True}]

    def epochs():
        t = dogood.transform(chain, seed=3, per_epoch=True)
        t.prepare()
        return [t.apply(doc, epoch=e).image.to_array().tobytes() for e in range(2)]

    fresh_cache(max_words=0)
    expected = epochs()
    cache = fresh_cache()
    assert epochs() == expected
    assert cache.page(doc.image.to_array()).whole  # the training-time API fits pages whole (the Redraw guard's
    # one-word pages of vertical print are fitted per word)...
    assert not cache.whole_pages  # ...while its steps run, not after
    assert len(set(expected)) == 2 and all(e != doc.image.to_array().tobytes() for e in expected)


def test_the_cache_forgets_the_oldest_pages_past_its_bound(funsd_test, fresh_cache):
    docs = [funsd_test.load(i) for i in funsd_test.ids()[:3]]
    cache = fresh_cache(max_words=60)
    for doc in docs:
        choose_styles(doc, _word_sets(doc, 1, 0.05)[0], doc)
    assert len(cache._pages) < 3
    kept = next(reversed(cache._pages.values()))
    assert kept.records and cache.words == sum(len(p.records) for p in cache._pages.values())
    other = fresh_cache(max_words=0)
    choose_styles(docs[0], [0, 1], docs[0])
    assert not other._pages and other.words == 0


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 12, 16])
def test_median_is_numpys(n):
    rng = np.random.default_rng(n)
    for values in (rng.normal(20, 5, n).tolist(), rng.integers(0, 3, n).astype(float).tolist(),
                   (rng.random(n) * 1e-3 + 0.1).tolist()):
        assert render._median(values) == float(np.median(values))
        assert isinstance(render._median(values), float)


def test_fits_kept_on_disk_give_the_same_styles_in_a_new_process_state(page, fresh_cache, tmp_path):
    sets = _word_sets(page, 2, seed=5)
    fresh_cache(max_words=0)
    expected = [choose_styles(page, words, page) for words in sets]
    first = fresh_cache(folder=tmp_path)
    first.whole_pages = True
    assert choose_styles(page, sets[0], page) == expected[0]
    files = list(tmp_path.glob("*/*.npz"))
    assert len(files) == 1 and not list(tmp_path.glob("*/.*"))  # one page, written whole (no temporary left)
    second = fresh_cache(folder=tmp_path)  # as another worker or a later run: nothing in memory
    second.whole_pages = True
    assert [choose_styles(page, words, page) for words in sets] == expected
    assert second.misses == 0 and second.hits > 0  # every fit read from the file


def test_a_damaged_fit_file_is_fitted_anew_and_rewritten(page, fresh_cache, tmp_path):
    words = _word_sets(page, 1)[0]
    fresh_cache(max_words=0)
    expected = choose_styles(page, words, page)
    fresh_cache(folder=tmp_path)
    choose_styles(page, words, page)
    (path,) = tmp_path.glob("*/*.npz")
    path.write_bytes(path.read_bytes()[:200])
    again = fresh_cache(folder=tmp_path)
    assert choose_styles(page, words, page) == expected
    assert again.misses > 0
    from dogood.page import fit_store
    assert fit_store.load(path, render._PageFits.schema()) is not None  # written anew, whole


def test_a_planted_link_in_the_fit_folder_is_refused(page, fresh_cache, tmp_path):
    from dogood.core.errors import DogoodError
    from dogood.page.render import _fit_signature

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / _fit_signature()).symlink_to(elsewhere)
    fresh_cache(folder=tmp_path / "cache")
    with pytest.raises(DogoodError, match="link"):
        choose_styles(page, [0, 1, 2], page)
    assert not list(elsewhere.iterdir())


@pytest.mark.parametrize("n", [1, 2, 3, 10, 49, 50, 51, 400, 3001])
def test_grey_level_statistics_are_numpys(n):
    rng = np.random.default_rng(n)
    cases = [rng.integers(0, 256, n), np.full(n, 200), rng.integers(100, 141, n), rng.integers(100, 142, n),
             np.where(rng.random(n) < 0.5, 30, 70), np.where(rng.random(n) < 0.97, 250, rng.integers(0, 256, n))]
    for values in (np.asarray(v, np.uint8) for v in cases):
        assert render._median_u8(values) == float(np.median(values))
        lo, hi = np.percentile(values, [2, 98])
        assert render._low_contrast(values) == bool(hi - lo < render.MIN_CONTRAST)


def test_ink_colour_is_the_median_of_the_darker_half(page):
    pixels = page.image.to_array()
    for word in page.words[:40]:
        x0, y0, x1, y1 = word.box
        crop = pixels[y0:y1, x0:x1]
        core = crop < 128
        if not core.any():
            continue
        gray = crop[core]
        assert render.ink_colour(crop, core) == int(np.median(gray[gray <= np.median(gray)]))
        rgb = np.ascontiguousarray(np.stack([crop, 255 - crop, crop // 2], axis=-1))
        grey = render._gray(rgb)[core]
        values = rgb[core][grey <= np.median(grey)]
        assert render.ink_colour(rgb, core) == tuple(int(v) for v in np.median(values, axis=0))


def test_a_transform_keeps_fits_in_its_folder_for_other_workers(page, fresh_cache, tmp_path):
    chain = [{"shift": "char_deletion", "fraction": 0.1, "render": True}]
    first = fresh_cache()
    out = dogood.transform(chain, seed=1, fit_cache_dir=tmp_path).apply(page)
    assert len(list(tmp_path.glob("*/*.npz"))) == 1 and first.folder is None  # the folder is the transform's
    other = fresh_cache()  # another worker: nothing in memory
    again = dogood.transform(chain, seed=1, fit_cache_dir=tmp_path).apply(page)
    assert other.misses == 0 and other.hits > 0
    assert again.image.to_array().tobytes() == out.image.to_array().tobytes()


def test_a_bad_word_bound_is_one_error_at_use_not_at_import(monkeypatch):
    from dogood.core.errors import DogoodError

    monkeypatch.setenv("DOGOOD_FIT_CACHE_WORDS", "lots")
    cache = FitCache()  # what importing dogood.page.render makes
    with pytest.raises(DogoodError, match="DOGOOD_FIT_CACHE_WORDS.*'lots'"):
        cache.page(np.zeros((4, 4), np.uint8))
    monkeypatch.setenv("DOGOOD_FIT_CACHE_WORDS", "7")
    assert FitCache().max_words == 7
