"""Does `move` take all of an entity's ink? Dark pixels left at the places moved entities vacate (FUNSD test).

    DOGOOD_DATA_DIR=../shared/data python bench/measure_move_vacated.py [--docs 50] [--max-moves 5]
        [--scorer all-strong|baseline|PATH] [--threshold 1.0] [--ink-margin 2] [--before REV] [--previews DIR [--show DOC:ENTITY ...]]

Every page is moved with seed = its index. With the default scorer
``all-strong`` (a token model that tags every word ``O``, so every entity is
strong) many entities move; ``--scorer baseline --threshold 0.5`` uses the CRF.

For each moved entity (its words' boxes shifted by one offset), on the
original page (ink: grey < 128; rules: ink in horizontal or vertical runs at
least twice the median word height long; components: 8-connected ink
that is not rule):

- the entity's own ink is the ink inside its word boxes plus each component
  that comes within ``ink-margin`` pixels of one of its boxes, but not within
  ``ink-margin`` of another word's box, and does not reach further than
  ``max(ink-margin, h/2)`` beyond the entity's box (h: median word height);
  none when more than ``2 + 2 * words`` of these lie wholly outside the
  boxes (specks of a shaded background: texture);
  all other ink is *other content* (kept in place: rules, shared glyphs, large marks);
- the *vacated region* is the entity's boxes and own components, grown by
  ``ink-margin``.

Reported: **left** = dark pixels of the shifted page in vacated regions
that are not other content (ink of the entity left behind), and how many
vacated regions keep any; **raw** = every dark pixel within ``ink-margin`` of
the old boxes, other content included (no rule of ours involved); **missing**
= own-ink pixels that do not arrive at the new place equal to the original.
``--before REV`` (default: the commit before whole-ink moves) also runs
`move` as it was at that commit, from git, for the same figures.
``--previews DIR`` writes PNG crops, 3x (around the old place: original |
before | after; around the new place: after | before) of the entities that
left the most ink behind in the ``before`` run, of "FAX NUMBER:" when it
moves, and of those named with ``--show DOC:ENTITY``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np

from dogood.models.predictions import Prediction
from dogood.sources.funsd import FunsdSource

REPO = Path(__file__).resolve().parents[1]
#: The last commit whose `move` pasted word boxes only.
BEFORE = "ea1026f"
INK = 128


class AllStrong:
    """A token model that tags every word ``O``: layout never changes its labels, so every entity is strong."""

    name = "all-strong"
    task = "token"

    def predict(self, docs):
        return {d.id: Prediction(d.id, tags=tuple("O" for w in d.words if w.text.strip())) for d in docs}


def load_before(rev: str):
    """The move shift's module as it was at ``rev`` (from git), or None when git cannot show it."""
    for path in ("dogood/shifts/layout/move.py", "dogood/shifts/move.py"):  # where it lived before issue 16
        try:
            source = subprocess.run(["git", "-C", str(REPO), "show", f"{rev}:{path}"],
                                    capture_output=True, text=True, check=True).stdout
            break
        except (OSError, subprocess.CalledProcessError):
            continue
    else:
        return None
    spec = importlib.util.spec_from_loader(f"move_at_{rev}", loader=None)
    module = importlib.util.module_from_spec(spec)
    from dogood.shifts.base import SHIFTS

    current = SHIFTS.pop("move", None)  # the registry allows one class per name: the old one is not registered
    try:
        exec(compile(source, f"move.py@{rev}", "exec"), module.__dict__)
    finally:
        if current is not None:
            SHIFTS["move"] = current
    return module


def gray(pixels: np.ndarray) -> np.ndarray:
    return pixels if pixels.ndim == 2 else pixels[..., :3].mean(axis=2)


def grow(mask: np.ndarray, by: int) -> np.ndarray:
    if by <= 0:
        return mask.copy()
    return cv2.dilate(mask.astype(np.uint8), np.ones((2 * by + 1, 2 * by + 1), np.uint8)).astype(bool)


def box_mask(shape, boxes) -> np.ndarray:
    out = np.zeros(shape, bool)
    for x0, y0, x1, y1 in boxes:
        out[y0:y1, x0:x1] = True
    return out


def own_ink(doc, members, labels, stats, ink_margin):
    """The entity's own ink components (as a mask) on the original page, by the rule of the module docstring."""
    shape = labels.shape
    own = set(members)
    boxes = [doc.words[i].box for i in members]
    near_own, near_other = set(), set()
    for i, w in enumerate(doc.words):
        x0, y0, x1, y1 = w.box
        found = np.unique(labels[max(0, y0 - ink_margin) : y1 + ink_margin, max(0, x0 - ink_margin) : x1 + ink_margin])
        (near_own if i in own else near_other).update(int(c) for c in found if c)
    ex0, ey0 = min(b[0] for b in boxes), min(b[1] for b in boxes)
    ex1, ey1 = max(b[2] for b in boxes), max(b[3] for b in boxes)
    reach = max(ink_margin, int(np.ceil(np.median([b[3] - b[1] for b in boxes]) / 2)))
    comps = []
    for c in near_own - near_other:
        x, y, w, h, _ = stats[c]
        if x >= ex0 - reach and y >= ey0 - reach and x + w <= ex1 + reach and y + h <= ey1 + reach:
            comps.append(c)
    in_boxes = set(np.unique(labels[box_mask(shape, boxes)]).tolist())
    if sum(c not in in_boxes for c in comps) > 2 + 2 * len(boxes):  # texture: the boxes only
        comps = []
    return np.isin(labels, comps) if comps else np.zeros(shape, bool)


def moved_entities(doc, out):
    """``(entity, dx, dy)`` for each entity whose words' boxes moved."""
    found = []
    for ent in doc.entities:
        shifts = {(b.box[0] - a.box[0], b.box[1] - a.box[1]) for a, b in
                  ((doc.words[i], out.words[i]) for i in ent.word_ids)}
        if ent.word_ids and shifts != {(0, 0)}:
            assert len(shifts) == 1, "an entity's words move by one offset"
            found.append((ent, *shifts.pop()))
    return found


def measure(doc, out, ink_margin):
    """Per moved entity: (entity, dx, dy, left, raw, missing, own_outside, vacated mask)."""
    before, after = doc.image.to_array(), out.image.to_array()
    dark0, dark1 = gray(before) < INK, gray(after) < INK
    heights = [w.box[3] - w.box[1] for w in doc.words if w.box[3] > w.box[1]]
    length = (max(8, int(round(2 * float(np.median(heights))))) if heights else 24) | 1  # odd
    rules = np.zeros_like(dark0)
    for kernel in (np.ones((1, length), np.uint8), np.ones((length, 1), np.uint8)):
        rules |= cv2.morphologyEx(dark0.astype(np.uint8), cv2.MORPH_OPEN, kernel).astype(bool)
    _, labels, stats, _ = cv2.connectedComponentsWithStats((dark0 & ~rules).astype(np.uint8), connectivity=8)
    rows = []
    for ent, dx, dy in moved_entities(doc, out):
        boxes = box_mask(dark0.shape, [doc.words[i].box for i in ent.word_ids])
        comps = own_ink(doc, ent.word_ids, labels, stats, ink_margin)
        own = (dark0 & boxes) | comps
        vacated = grow(boxes | comps, ink_margin)
        other = dark0 & ~own
        left = int((dark1 & vacated & ~other).sum())
        raw = int((dark1 & grow(boxes, ink_margin)).sum())
        ys, xs = np.nonzero(own)
        ny, nx = ys + dy, xs + dx
        inside = (ny >= 0) & (ny < after.shape[0]) & (nx >= 0) & (nx < after.shape[1])
        same = np.zeros(len(ys), bool)
        same[inside] = np.all((after[ny[inside], nx[inside]] == before[ys[inside], xs[inside]]).reshape(inside.sum(), -1), axis=1)
        rows.append((ent, dx, dy, left, raw, int((~same).sum()), int((comps & ~boxes & dark0).sum()), vacated))
    return rows


def run(shift_cls, docs, args, scorer):
    shift = shift_cls(scorer="-", threshold=args.threshold, max_moves=args.max_moves, cache=False,
                      **({"ink_margin": args.ink_margin} if "ink_margin" in shift_cls.__init__.__code__.co_varnames else {}))
    shift._model = scorer
    results = {}
    for k, doc in enumerate(docs):
        out = shift(doc, k)
        results[doc.id] = (out, measure(doc, out, args.ink_margin))
    return results


def report(name, results):
    rows = [r for _, rs in results.values() for r in rs]
    n = len(rows)
    left = sum(r[3] for r in rows)
    keep = sum(1 for r in rows if r[3])
    raw = sum(r[4] for r in rows)
    missing = sum(r[5] for r in rows)
    outside = sum(r[6] for r in rows)
    print(f"{name:>7}: {n} moved entities; own ink outside the word boxes: {outside} px; "
          f"left behind: {left} px in {keep} of {n} vacated regions; "
          f"raw dark px within the margin of old boxes: {raw}; own-ink px not arriving equal: {missing}")
    totals = {}
    for out, _ in results.values():
        for key, value in out.provenance[-1].counts.items():
            if key.startswith("ink_components"):
                totals[key] = totals.get(key, 0) + value
    if totals:
        print(" " * 9 + ", ".join(f"{k}: {v}" for k, v in totals.items()))


def crop(pixels, box, pad):
    x0, y0, x1, y1 = box
    h, w = pixels.shape[:2]
    x0, y0, x1, y1 = max(0, x0 - pad), max(0, y0 - pad), min(w, x1 + pad), min(h, y1 + pad)
    c = pixels[y0:y1, x0:x1]
    c = c if c.ndim == 3 else np.repeat(c[..., None], 3, axis=2)
    return cv2.resize(np.ascontiguousarray(c[..., :3]), None, fx=3, fy=3, interpolation=cv2.INTER_NEAREST)


def save_previews(folder, docs, before, after, show=()):
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    picks = []
    for doc in docs:
        for row in before.get(doc.id, (None, []))[1]:
            ent = row[0]
            text = doc.entity_text(ent)
            wanted = f"{doc.id}:{ent.id}" in show
            picks.append((wanted * 10**7 + ("FAX NUMBER" in text.upper()) * 10**6 + row[3], doc, ent))
    picks.sort(key=lambda p: -p[0])
    written = []
    for score, doc, ent in picks[: 6 + len(show)]:
        new_rows = {r[0].id: r for r in after[doc.id][1]}
        old_rows = {r[0].id: r for r in before[doc.id][1]}
        box = doc.entity_box(ent)
        panels = [crop(doc.image.to_array(), box, 12), crop(before[doc.id][0].image.to_array(), box, 12),
                  crop(after[doc.id][0].image.to_array(), box, 12)]
        if ent.id in new_rows:
            _, dx, dy, *_ = new_rows[ent.id]
            panels.append(crop(after[doc.id][0].image.to_array(), (box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy), 12))
        if ent.id in old_rows:
            _, dx, dy, *_ = old_rows[ent.id]
            panels.append(crop(before[doc.id][0].image.to_array(), (box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy), 12))
        height = max(p.shape[0] for p in panels)
        sep = np.full((height, 6, 3), (255, 0, 0), np.uint8)
        row = []
        for p in panels:
            row += [np.pad(p, ((0, height - p.shape[0]), (0, 0), (0, 0)), constant_values=255), sep]
        slug = "".join(ch if ch.isalnum() else "_" for ch in doc.entity_text(ent))[:30]
        path = folder / f"{doc.id}_e{ent.id}_{slug}.png"
        Image.fromarray(np.concatenate(row[:-1], axis=1)).save(path)
        written.append(path)
    print("previews (old place: original | before | after; new place: after | before):")
    for p in written:
        print(" ", p)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=50)
    parser.add_argument("--max-moves", type=int, default=5)
    parser.add_argument("--scorer", default="all-strong")
    parser.add_argument("--threshold", type=float, default=1.0)
    parser.add_argument("--ink-margin", type=int, default=2)
    parser.add_argument("--before", default=BEFORE, help="git revision of the old `move` ('' to skip)")
    parser.add_argument("--previews", type=Path)
    parser.add_argument("--show", action="append", default=[], metavar="DOC:ENTITY",
                        help="also preview this entity (when it moves in the before run)")
    args = parser.parse_args(argv)

    root = Path(os.environ.get("DOGOOD_DATA_DIR", REPO.parent / "shared" / "data")) / "funsd" / "dataset"
    src = FunsdSource(root=root, split="test")
    docs = [src.load(i) for i in src.ids()[: args.docs]]
    if args.scorer == "all-strong":
        scorer = AllStrong()
    else:
        from dogood.models import load_model
        from dogood.models.baseline import default_baseline

        scorer = default_baseline() if args.scorer == "baseline" else load_model(args.scorer, task="token")
    from dogood.shifts.layout.move import MoveEntities

    print(f"FUNSD test, {len(docs)} pages, scorer {scorer.name}, threshold {args.threshold}, "
          f"max_moves {args.max_moves}, ink margin {args.ink_margin}")
    before = {}
    old = load_before(args.before) if args.before else None
    if args.before and old is None:
        print(f"(cannot read move.py at {args.before} from git: before-figures skipped)", file=sys.stderr)
    if old is not None:
        before = run(old.MoveEntities, docs, args, scorer)
        report("before", before)
    after = run(MoveEntities, docs, args, scorer)
    report("after", after)
    if args.previews and before:
        save_previews(args.previews, docs, before, after, set(args.show))


if __name__ == "__main__":
    main()
