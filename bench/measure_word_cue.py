"""Can a classifier tell redrawn words from printed ones? The redrawn-word cue of funsd-t with ``render: true``.

    DOGOOD_DATA_DIR=../shared/data NLTK_DATA=../shared/data/nltk_data \
        python bench/measure_word_cue.py [--docs 50] [--configs char_deletion number_swap ...]
        [--save DIR] [--pages DIR] [--build-only] [--crops DIR] [--floor] [--json FILE]

Every config of ``recipes/funsd-t.yaml`` whose chain redraws words (a text shift with a ``render`` parameter that
draws new text; not ``bert_attack``, whose masked LM is not offline, nor the kinds that only erase) is applied to
the FUNSD test forms with ``render: true``, each step seeded as a build seeds it
(:func:`dogood.core.seeds.step_seed`, recipe seed 0). :func:`dogood.measures.word_style.redrawn_word_cue` then
scores, per config, how well a small classifier tells the redrawn words from untouched print on the same pages
(AUROC, 0.5 = no cue), against matched untouched words (the default) and against the same words as the source
printed them (``original``); ``placement`` is where the new text sits in its box and how it fills it (its
length more than its look), apart; ``redrawn (paired)`` counts the redrawn words and those the matching paired
with an untouched word; the words kept as printed are summed from the provenance (``kept: handwriting``...).

``--floor`` measures what the cue is when the drawing is perfect: every word of each FUNSD form, old text and
new, is printed by one process (:func:`printed_page`: one face, drawn at four times the size, each word a
seeded fraction of a pixel aside, resized by area averaging), the texts those the config writes with ``render:
true``, so the only difference between a changed word and an untouched one is its text: the cue the measure
finds there is the text's (a lower-case letter among capitals, a shorter word), not the drawing's.

``--save DIR`` keeps the shifted pages (one pickle per config) and ``--build-only`` stops there, so that pages
built by another checkout (the code before a change) are measured by this one's measure with ``--pages DIR``:
before and after, one yardstick. ``--crops DIR`` writes, per config, PNG sheets of the redrawn words before and
after (24 at random).
"""

from __future__ import annotations

import argparse
import json
import pickle
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
#: Shifts whose configs draw no new text with render (they erase), or need what is not offline.
SKIP = {"key_drop", "bert_attack"}


def redrawing_configs(names=None) -> dict[str, list[dict]]:
    """The funsd-t configs that redraw words, each chain with ``render: true``."""
    import yaml

    recipe = yaml.safe_load((ROOT / "recipes" / "funsd-t.yaml").read_text(encoding="utf-8"))
    out = {}
    for name, chain in recipe["configs"].items():
        if names and name not in names:
            continue
        if any(step["shift"] in SKIP or step.get("kind") == "deletion" and step["shift"] == "word_perturbation"
               for step in chain):
            continue
        out[name] = [dict(step, render=True) for step in chain]
    return out


def build(chain: list[dict], docs) -> tuple[list, Counter, float]:
    """Each doc shifted by ``chain`` (seeded as a build with recipe seed 0 seeds it), the kept tallies summed and
    the seconds it took."""
    import dogood
    from dogood.core.seeds import step_seed

    shifts = [dogood.make_shift(step) for step in chain]
    for shift in shifts:
        shift.prepare()
    kept: Counter = Counter()
    out = []
    start = time.perf_counter()
    for doc in docs:
        shifted = doc
        for k, shift in enumerate(shifts):
            shifted = shift(shifted, step_seed(0, doc.id, k, shift.seed_key()))
        for record in shifted.provenance[len(doc.provenance):]:
            kept.update((getattr(record, "tallies", None) or {}).get("kept", {}))
        out.append(shifted)
    return out, kept, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=50)
    parser.add_argument("--configs", nargs="*")
    parser.add_argument("--save", type=Path)
    parser.add_argument("--pages", type=Path)
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("--crops", type=Path)
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument("--floor", action="store_true", help="the cue of the texts alone, every word printed alike")
    args = parser.parse_args()

    from dogood.sources.funsd import FunsdSource

    source = FunsdSource(split="test")
    docs = [source.load(i) for i in source.ids()[:args.docs]]
    configs = redrawing_configs(args.configs)
    rows = {}
    printed: list = []
    print("config | cue (matched) | cue (original) | placement (matched) | redrawn (paired) | kept as printed | "
          "seconds")
    print("---|---:|---:|---:|---:|---|---:")
    for name, chain in configs.items():
        if args.pages:
            with open(args.pages / f"{name}.pkl", "rb") as f:
                shifted, kept, seconds = pickle.load(f)
            shifted = [s for s in shifted if s is not None]
        elif args.floor:  # the texts a render: true build writes (it keeps some words and prefers some texts)
            texts, kept, seconds = build(chain, docs)
            printed = printed or [printed_page(doc) for doc in docs]  # the forms as printed: once for all configs
            shifted = [printed_page(new, like=doc) for new, doc in zip(texts, docs)]
        else:
            shifted, kept, seconds = build(chain, docs)
        if args.save:
            args.save.mkdir(parents=True, exist_ok=True)
            with open(args.save / f"{name}.pkl", "wb") as f:
                pickle.dump((shifted, kept, seconds), f)
        if args.build_only:
            print(f"{name} | built | | | | {dict(kept)} | {seconds:.0f}", flush=True)
            continue
        from dogood.measures.word_style import FEATURES, redrawn_word_cue, redrawn_words

        pairs = list(zip(printed if args.floor else docs, shifted))
        matched = redrawn_word_cue(pairs)
        original = redrawn_word_cue(pairs, against="original")
        total = sum(len(redrawn_words(a, b)[0]) for a, b in pairs)
        rows[name] = {"matched": matched._asdict(), "original": original._asdict(), "kept": dict(kept),
                      "seconds": seconds, "redrawn": total}
        top = ", ".join(f"{k} {v:.2f}" for k, v in [kv for kv in matched.by_feature.items() if kv[0] in FEATURES][:3])
        kept_text = ", ".join(f"{k} {v}" for k, v in sorted(kept.items())) or "-"
        print(f"{name} | {matched.auroc:.3f} ({top}) | {original.auroc:.3f} | {matched.placement:.3f} | "
              f"{total} ({matched.redrawn}) | {kept_text} | {seconds:.0f}", flush=True)
        if args.crops:
            crops(args.crops / name, pairs)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=float), encoding="utf-8")


def printed_page(doc, like=None):
    """``doc`` with every word's text printed in its box on a blank page, all alike (``--floor``): LiberationSans at
    four times the size, at the size that fits ``like``'s text for the word in the same box (default: ``doc``'s
    own), a seeded fraction of a pixel aside, resized by area averaging. A new text wider than its box is squeezed
    to fit, as the renderer does (:data:`dogood.page.render.FIT_SQUEEZE` at most); one that needs more, or has a
    character the face lacks, is printed as the old text (the renderer keeps such words)."""
    from PIL import Image, ImageDraw, ImageFont

    from dogood.core.document import PageImage
    from dogood.page.render import FIT_SQUEEZE, drawable, font_paths

    like = like or doc
    old = {tuple(w.box): w.text for w in like.words if w.text.strip()}
    height, width = doc.image.to_array().shape[:2]
    page = np.full((height, width), 255, np.uint8)
    path = font_paths()["LiberationSans-Regular"]
    for word in doc.words:
        x0, y0, x1, y1 = (int(v) for v in word.box)
        if not word.text.strip() or x1 - x0 < 2 or y1 - y0 < 4 or tuple(word.box) not in old:
            continue
        fit = old[tuple(word.box)]
        size = 4 * (y1 - y0)
        font = ImageFont.truetype(path, size)
        while size > 8 and ((edges := font.getbbox(fit, anchor="ls"))[2] > 4 * (x1 - x0)
                            or -edges[1] > 3.4 * (y1 - y0)):
            size -= 2
            font = ImageFont.truetype(path, size)
        text = word.text
        squeeze = 4 * (x1 - x0) / max(1, font.getbbox(text, anchor="ls")[2])
        if not drawable(text) or squeeze < FIT_SQUEEZE:
            text, squeeze = fit, 1.0
        nudge = np.random.default_rng([x0, y0, x1, y1]).integers(0, 4, 2)
        pad = y1 - y0
        ink = Image.new("L", (4 * (x1 - x0 + 2 * pad), 4 * (y1 - y0 + 2 * pad)), 255)
        ImageDraw.Draw(ink).text((int(nudge[0]), 4 * (pad + y1 - y0) - int(0.22 * 4 * (y1 - y0)) + int(nudge[1])),
                                 text, fill=0, font=font, anchor="ls")
        if squeeze < 1.0:
            ink = ink.resize((max(1, int(ink.width * squeeze)), ink.height), Image.BOX)
        tile = Image.new("L", (4 * (x1 - x0 + 2 * pad), 4 * (y1 - y0 + 2 * pad)), 255)
        tile.paste(ink.crop((0, 0, tile.width - 4 * pad, tile.height)), (4 * pad, 0))
        small = np.array(tile.resize((tile.width // 4, tile.height // 4), Image.BOX))
        tx0, ty0 = x0 - pad, y0 - pad
        c0, r0 = max(0, -tx0), max(0, -ty0)
        c1, r1 = min(small.shape[1], width - tx0), min(small.shape[0], height - ty0)
        if c1 > c0 and r1 > r0:
            region = page[ty0 + r0:ty0 + r1, tx0 + c0:tx0 + c1]
            np.minimum(region, small[r0:r1, c0:c1], out=region)
    return doc.replace(image=PageImage.from_array(page))


def crops(folder: Path, pairs) -> None:
    """A PNG sheet of 24 redrawn words at random, before beside after."""
    from dogood.measures.word_style import redrawn_words

    folder.mkdir(parents=True, exist_ok=True)
    items = []
    for original, shifted in pairs:
        for i in redrawn_words(original, shifted)[0]:
            if i < len(original.words) and original.words[i].box == shifted.words[i].box:
                items.append((original, shifted, i))
    rng = np.random.default_rng(0)
    pick = [items[int(j)] for j in rng.choice(len(items), min(24, len(items)), replace=False)] if items else []
    sheet(pick, folder / "random.png")


def sheet(items, path: Path, pad: int = 6, scale: int = 4) -> None:
    from PIL import Image, ImageDraw

    tiles = []
    for original, shifted, i in items:
        x0, y0, x1, y1 = original.words[i].box
        pair = []
        for doc in (original, shifted):
            a = doc.image.to_array()
            h, w = a.shape[:2]
            tile = Image.fromarray(a[max(0, y0 - pad):min(h, y1 + pad), max(0, x0 - pad):min(w, x1 + pad)])
            pair.append(tile.resize((tile.width * scale, tile.height * scale), Image.NEAREST).convert("RGB"))
        tiles.append((pair, f"{original.words[i].text} -> {shifted.words[i].text}"))
    if not tiles:
        return
    width = max(a.width + b.width for (a, b), _ in tiles) + 30
    height = sum(max(a.height, b.height) + 16 for (a, b), _ in tiles)
    out = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(out)
    y = 0
    for (a, b), label in tiles:
        draw.text((2, y), label, fill=(200, 0, 0))
        out.paste(a, (0, y + 14))
        out.paste(b, (a.width + 20, y + 14))
        y += max(a.height, b.height) + 16
    out.save(path)


if __name__ == "__main__":
    main()
