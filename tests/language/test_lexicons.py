"""The word lists text shifts read (dogood.language.lexicons)."""

from __future__ import annotations

import multiprocessing

import pytest

from dogood.language.lexicons import wordnet

pytest.importorskip("nltk")


def _offsets(reader, pos: str, count: int) -> list[tuple[int, str]]:
    return [(s.offset(), s.name()) for s in list(reader.all_synsets(pos))[:count]]


def _read_back(args) -> list[str]:
    pos, offsets = args
    reader = wordnet()  # the parent's reader, inherited through fork
    reader._synset_offset_cache[pos].clear()  # read each synset from the data file, not the parent's cache
    return [reader.synset_from_pos_and_offset(pos, o).name() for o, _ in offsets for _ in range(3)]


def test_forked_workers_read_wordnet_without_sharing_file_offsets():
    """Workers forked after the parent read WordNet (as a build's pool is) read the same synsets as the parent:
    they do not share the parent's open data files, whose offset moves under concurrent readers."""
    try:
        reader = wordnet()
    except Exception as exc:  # noqa: BLE001 - no WordNet data here
        pytest.skip(f"WordNet not available: {exc}")
    offsets = _offsets(reader, "n", 1500)
    reader.synset_from_pos_and_offset("n", offsets[-1][0])  # the parent's data file is open and has moved
    expected = [name for _, name in offsets for _ in range(3)]
    context = multiprocessing.get_context("fork")
    with context.Pool(4) as pool:
        results = pool.map(_read_back, [("n", offsets)] * 8)
    assert all(result == expected for result in results)
