"""Word vectors read from the cache through the one reader (issue 36): a ``.npz`` is a zip of ``.npy`` arrays,
each header checked before its array is allocated, never a pickle."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from dogood.core.errors import SourceError
from dogood.language.embeddings import WordVectors, load_word_vectors, save_word_vectors


def npz(path, members: dict[str, bytes]):
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def npy(array) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=True)
    return buf.getvalue()


def header(shape) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f4", "fortran_order": False, "shape": shape})
    return buf.getvalue()


def test_saved_vectors_read_back(tmp_path):
    vectors = WordVectors(("a", "b"), np.eye(2, dtype=np.float32), np.array([[0, 1], [1, 0]], dtype=np.int32))
    path = save_word_vectors(vectors, tmp_path / "v.npz")
    back = load_word_vectors(path)
    assert back.words == ("a", "b") and np.allclose(back.vectors, np.eye(2)) and back.neighbours.tolist() == [[0, 1], [1, 0]]


@pytest.mark.parametrize("members, message", [
    ({"words.npy": npy(np.array(["a"])), "vectors.npy": npy(np.array([{"x": 1}], dtype=object))}, "holds object"),
    ({"words.npy": npy(np.array(["a"])), "vectors.npy": header((1 << 40, 50))}, "declares shape"),
    ({"words.npy": npy(np.array(["a"])), "vectors.npy": b"\x93NUMPY\x01\x00F\x00{'descr': '<f4', ("},
     "not a valid .npy"),
    ({f"m{k}.npy": npy(np.zeros(1)) for k in range(100)}, "100 members, more than the 64"),
])
def test_hostile_vector_caches_are_refused_naming_the_file(tmp_path, members, message):
    path = npz(tmp_path / "bad.npz", members)
    with pytest.raises(SourceError, match=f"bad.npz.*{message}"):
        load_word_vectors(path)
