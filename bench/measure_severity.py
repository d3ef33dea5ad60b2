"""Measure what each severity level does, per shift family, on FUNSD test; print a Markdown table.

For each representative shift and level 1-5 (:attr:`Shift.severities`), every form is shifted with the seed a
build of ``seed: 0`` gives it (:func:`dogood.core.seeds.step_seed`) and measured as the card measures a severity
config (:func:`dogood.measures.effects.effects`): the share of words whose text changed (text), the mean box
displacement in page widths (layout; the words' boxes under a warp), the ink's contrast against the photo under
it and how much of the page's contrast that loses (natural background), the share of words dropped (drop
shifts) or reordered (shuffle shifts). For ``distort`` the warp's own mean
displacement in page widths is measured too: the mean distance, over the output page, between each pixel and the
source pixel the backward map reads, over the page width. The last column says whether the effect grows (or, for
the ink's contrast, falls) strictly from level to level::

    python bench/measure_severity.py            # all 50 FUNSD test forms
    python bench/measure_severity.py --limit 5
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dogood.core.seeds import step_seed  # noqa: E402
from dogood.measures.effects import effects, measured  # noqa: E402
from dogood.pipeline.stats import add, word_changes  # noqa: E402
from dogood.shifts import SHIFTS, make_shift  # noqa: E402

#: config -> (its chain step without the swept values, the measure that defines its levels)
REPRESENTATIVES = {
    "char_deletion": ({"shift": "char_deletion"}, "text_changed"),
    "homoglyph_swap": ({"shift": "homoglyph_swap"}, "text_changed"),
    "ms_char_swap": ({"shift": "char_perturbation", "kind": "swap"}, "text_changed"),
    "bg_typo": ({"shift": "bg_typo"}, "text_changed"),
    "merge": ({"shift": "merge", "level": "entity"}, "box_shift"),
    "center_shift": ({"shift": "center_shift"}, "box_shift"),
    "box_stretch": ({"shift": "box_stretch"}, "box_shift"),
    "margin_padding": ({"shift": "margin_padding"}, "box_shift"),
    "distort": ({"shift": "distort"}, "warp_shift"),
    "natural_background": ({"shift": "natural_background"}, "contrast_lost"),
    "move": ({"shift": "move"}, "box_shift"),
    "neighbor_shuffle": ({"shift": "neighbor_shuffle"}, "words_reordered"),
    "non_neighbor_shuffle": ({"shift": "non_neighbor_shuffle"}, "words_reordered"),
    "bg_drop": ({"shift": "bg_drop"}, "words_dropped"),
    "neighbor_bg_drop": ({"shift": "neighbor_bg_drop"}, "words_dropped"),
    "key_drop": ({"shift": "key_drop"}, "words_dropped"),
}
COLUMNS = {
    "text_changed": "words changed",
    "box_shift": "mean box displacement (page widths)",
    "warp_shift": "warp's mean displacement (page widths)",
    "contrast_lost": "ink contrast lost (grey levels)",
    "ink_contrast": "ink contrast against the photo (grey levels)",
    "words_dropped": "words dropped",
    "words_reordered": "words reordered",
    "entities_moved": "entities moved",
}


def warp_shift(shift, doc, seed: int) -> float:
    """The mean displacement of ``shift``'s backward map on ``doc`` (drawn with ``seed``), in page widths."""
    backward = shift.backward_map(doc, doc.image.to_array(), np.random.default_rng(seed))
    h, w = backward.shape[:2]
    ys, xs = np.mgrid[0:h, 0:w]
    inside = ((backward[..., 0] >= 0) & (backward[..., 0] <= doc.width - 1)
              & (backward[..., 1] >= 0) & (backward[..., 1] <= doc.height - 1))
    d = np.hypot(backward[..., 0] - xs, backward[..., 1] - ys)[inside]
    return float(d.mean()) / doc.width if d.size else 0.0


def measure(step: dict, level: int, docs: list) -> dict[str, float]:
    """The measured effects of ``step`` at ``level`` over ``docs`` (means over words, or over pages for the warp)."""
    cls = SHIFTS[step["shift"]]
    shift = make_shift({**step, **cls.severities[level]})
    shift.prepare()
    total: dict = {"words": 0, "text_changed": 0, "effects": {}}
    counts: dict = {}
    warp = 0.0
    for doc in docs:
        seed = step_seed(0, doc.id, 0, shift.step_key())
        shifted = shift(doc, seed)
        _, texts, _ = word_changes(doc.words, shifted.words)
        add(total, {"words": len(shifted.words), "text_changed": texts, "effects": effects(doc, shifted, texts)})
        add(counts, dict(shifted.provenance[-1].counts))
        if step["shift"] == "distort":
            warp += warp_shift(shift, doc, seed)
    moved = counts.get("moved", 0) / counts["entities"] if counts.get("entities") else None  # move's own counts
    return {**measured(total), "warp_shift": warp / len(docs), "entities_moved": moved}


def shown(key: str, value: float) -> str:
    return f"{100 * value:.1f}%" if key.startswith(("text_", "words_", "entities_")) else f"{value:.4f}" if "shift" in key else f"{value:.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="the first N forms only (default: all 50)")
    parser.add_argument("--config", action="append", choices=list(REPRESENTATIVES), help="measure these only")
    args = parser.parse_args(argv)
    from dogood.sources.funsd import FunsdSource

    data = Path(os.environ.get("DOGOOD_DATA_DIR") or ROOT.parent / "shared" / "data")
    source = FunsdSource(root=data / "funsd" / "dataset", split="test")
    ids = source.ids()[: args.limit]
    docs = [source.load(i) for i in ids]
    print(f"FUNSD test, {len(docs)} forms, seed 0\n")
    print("| config | family | measure | " + " | ".join(f"level {s}" for s in range(1, 6)) + " | monotone |")
    print("|---|---|---|" + "---|" * 6)
    for config in args.config or REPRESENTATIVES:
        step, key = REPRESENTATIVES[config]
        cls = SHIFTS[step["shift"]]
        results = [measure(step, level, docs) for level in sorted(cls.severities)]
        keys = [key] + (["box_shift"] if key == "warp_shift" else ["ink_contrast"] if key == "contrast_lost" else
                        ["entities_moved"] if config == "move" else [])
        for k in keys:
            values = [r[k] for r in results]
            falls = k == "ink_contrast"
            ok = all((b < a) if falls else (b > a) for a, b in zip(values, values[1:]))
            print(f"| `{config}` | {cls.family} | {COLUMNS[k]} | " + " | ".join(shown(k, v) for v in values)
                  + f" | {'yes' if ok else 'NO'}{' (falls)' if falls else ''} |", flush=True)
    print("\nLevels: " + "; ".join(
        f"`{step['shift']}` " + ", ".join(f"{s}: " + " ".join(f"{k}={v}" for k, v in values.items())
                                        for s, values in sorted(SHIFTS[step['shift']].severities.items()))
        for step, _ in {v[0]["shift"]: v for v in REPRESENTATIVES.values()}.values()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
