"""Form-attack OCR-level and layout shifts on real FUNSD pages and hand-made forms: what moves, what never does."""

from __future__ import annotations

import numpy as np
from ocr_level_checks import boxes_inside, edge_form, run


def test_box_stretch_moves_each_coordinate_by_delta(funsd_test):
    delta, moves = 0.1, []
    for seed, doc in enumerate(funsd_test.load(i) for i in funsd_test.ids()[:20]):
        out, _ = run("box_stretch", doc, seed, delta=delta)
        old, new = doc.boxes, out.boxes
        assert ((new[:, 2] - new[:, 0] >= 1) | (old[:, 2] == old[:, 0])).all()
        assert ((new[:, 3] - new[:, 1] >= 1) | (old[:, 3] == old[:, 1])).all()
        assert [w.text for w in out.words] == [w.text for w in doc.words] and out.image is doc.image
        w, h = old[:, 2] - old[:, 0], old[:, 3] - old[:, 1]
        flush = (new[:, :2] == 0).any(axis=1) | (new[:, 2] == doc.width) | (new[:, 3] == doc.height)
        ok = (w >= 20) & (h >= 10) & ~flush
        moves.append(((new - old) / np.stack([w, h, w, h], axis=1))[ok])
    moves = np.concatenate(moves)
    assert len(moves) > 1000
    assert np.all(np.abs(moves.std(axis=0) - delta) <= 0.2 * delta)
    corr = np.corrcoef(moves[:, 0], moves[:, 2])[0, 1]
    assert abs(corr) < 0.1  # the four coordinates move on their own, not as one shift
    edges = edge_form()
    out, _ = run("box_stretch", edges, 0, delta=5.0)
    assert boxes_inside(out) and out.words[5].box[0] == out.words[5].box[2]  # zero-width box keeps no width
