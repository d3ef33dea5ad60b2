"""The generated pages of the documentation site: one page per shift with a before/after picture, the shift index,
the recipe table and the references, written at docs build time (``docs/gen_pages.py``, mkdocs-gen-files).

Every picture and figure comes from synthetic pages (:mod:`dogood.sources.synthetic`, FUNSD-style entities), so
the site builds without any dataset: the COCO-photo shifts draw from a generated photo (a small COCO annotation file
and one JPEG in a temporary data folder, :func:`docs_data`), ``move`` scores with a CRF trained on synthetic pages,
``bert_attack`` with a tiny random masked LM made from the page's words. A shift whose picture cannot be made here
(a missing extra, no Tesseract) gets a page that says why instead of a picture.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from dogood.core.document import Document
from dogood.core.papers import CITATIONS
from dogood.measures.effects import effects, measured
from dogood.shifts.base import Outcome, Shift
from dogood.shifts.describe import shift_table_markdown, shipped_shifts, short_name, summary
from dogood.shifts.levels import level_rows

#: The synthetic pages the pictures and measured effects are made from.
PAGES = 2
#: What each measured effect means, in the page's words.
EFFECT_WORDS = {
    "text_changed": ("words with new text", "{:.1%}"),
    "box_shift": ("mean box displacement (page widths)", "{:.4f}"),
    "contrast_lost": ("ink contrast lost (grey levels)", "{:.1f}"),
    "words_dropped": ("words dropped", "{:.1%}"),
    "words_reordered": ("words reordered", "{:.1%}"),
}


def synthetic_documents(n: int = PAGES) -> list[Document]:
    """``n`` synthetic FUNSD-style pages (entities: header, question, answer, other; linked key-value pairs)."""
    from dogood.sources.synthetic import SyntheticSource

    source = SyntheticSource(pages=n, schema="funsd", entities=True, seed=7, encoding="png")
    return [source.load(i) for i in source.ids()]


@contextlib.contextmanager
def docs_data() -> Iterator[Path]:
    """A temporary data folder for the docs build: ``coco/`` with one generated photo (a CC BY licence) and its
    annotation file, and links to everything else the real ``$DOGOOD_DATA_DIR`` holds (GloVe, NLTK data)."""
    from PIL import Image

    from dogood.page.photos import clear_cache

    with tempfile.TemporaryDirectory(prefix="dogood-docs-") as tmp:
        root = Path(tmp)
        real = os.environ.get("DOGOOD_DATA_DIR")
        if real and Path(real).is_dir():
            for entry in Path(real).iterdir():
                if entry.name != "coco":
                    (root / entry.name).symlink_to(entry.resolve())
        coco = root / "coco"
        coco.mkdir()
        rng = np.random.default_rng(0)
        h, w = 480, 640
        yy, xx = np.mgrid[0:h, 0:w] / max(h, w)
        photo = np.stack([120 + 90 * np.sin(6 * xx + 2 * yy), 110 + 80 * np.cos(5 * yy - 3 * xx),
                          90 + 70 * np.sin(4 * (xx + yy))], axis=-1)
        for _ in range(40):  # blobs: something for the ink to lie on
            cy, cx, r = rng.integers(0, h), rng.integers(0, w), rng.integers(15, 70)
            photo[(yy * max(h, w) - cy) ** 2 + (xx * max(h, w) - cx) ** 2 < r * r] = rng.integers(20, 235, 3)
        photo += rng.normal(0, 6, photo.shape)
        Image.fromarray(np.clip(photo, 0, 255).astype(np.uint8)).save(coco / "000000000001.jpg",
                                                                     quality=92)
        annotations = {"licenses": [{"id": 4, "name": "Attribution License",
                                     "url": "http://creativecommons.org/licenses/by/2.0/"}],
                       "images": [{"id": 1, "file_name": "000000000001.jpg", "width": w, "height": h, "license": 4,
                                   "coco_url": "", "flickr_url": ""}],
                       "annotations": [], "categories": []}
        (coco / "instances_docs.json").write_text(json.dumps(annotations), encoding="utf-8")
        saved = os.environ.get("DOGOOD_DATA_DIR")
        os.environ["DOGOOD_DATA_DIR"] = str(root)
        clear_cache()
        try:
            yield root
        finally:
            clear_cache()
            if saved is None:
                os.environ.pop("DOGOOD_DATA_DIR", None)
            else:
                os.environ["DOGOOD_DATA_DIR"] = saved


def tiny_masked_lm(docs: list[Document], folder: Path) -> Path:
    """A tiny random BERT masked LM whose vocabulary is the pages' words (for ``bert_attack``'s picture only: its
    proposals are random words of the page, not BERT's)."""
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    words = folder / "words.txt"
    words.write_text("\n".join(w.text for d in docs for w in d.words), encoding="utf-8")
    trainer = BertWordPieceTokenizer(lowercase=True)
    trainer.train([str(words)], vocab_size=2000, min_frequency=1, show_progress=False)
    trainer.save_model(str(folder))
    tokenizer = BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True)
    import torch

    torch.manual_seed(0)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=512)
    BertForMaskedLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def picture_params(cls: type[Shift], work: Path, docs: list[Document]) -> dict[str, Any]:
    """The parameters a shift's picture is made with: level 4 where it has levels (a visible change), else its
    defaults; what a shift needs from outside made here (a scorer, a masked LM, a drawn desk)."""
    params: dict[str, Any] = dict(cls.severities.get(4, {}))
    if cls.name == "move":
        from dogood.models.baseline import train_baseline

        path = work / "scorer.dogood-model"
        if not path.is_file():
            train_baseline(synthetic_documents(12)[3:], max_iterations=30).save(path)
        params.update(scorer=str(path), cache=False, threshold=0.5)
    if cls.name == "bert_attack":
        params.update(model=str(tiny_masked_lm(docs, work / "tiny-bert")), fraction=0.2)
    if cls.name == "natural_background":
        params.update(min_contrast=60)
    return params


def apply_shift(cls: type[Shift], params: dict[str, Any], doc: Document, seed: int) -> tuple[Document, dict]:
    """The shifted document and the counts it reported."""
    shift = cls(**params)
    shift.prepare()
    out = shift.apply(doc, np.random.default_rng(seed))
    if isinstance(out, Outcome):
        return out.doc, dict(out.counts)
    if isinstance(out, tuple):
        return out[0], dict(out[1])
    return out, {}


def measure(cls: type[Shift], params: dict[str, Any], docs: list[Document]) -> dict[str, float | None]:
    """The shift's measured effects (:func:`dogood.measures.effects.measured`) on ``docs`` with ``params``."""
    from dogood.pipeline.stats import word_changes

    stats: dict[str, Any] = {"words": 0, "text_changed": 0, "effects": {}}
    for k, doc in enumerate(docs):
        shifted, _ = apply_shift(cls, params, doc, k)
        _, text_changed, _ = word_changes(doc.words, shifted.words)
        stats["words"] += len(shifted.words)
        stats["text_changed"] += text_changed
        for key, value in effects(doc, shifted, text_changed).items():
            stats["effects"][key] = stats["effects"].get(key, 0) + value
    return measured(stats)


def shift_figures(cls: type[Shift], work: Path, images: Path) -> dict[str, Any]:
    """The picture (``images/<name>.png``) and measured effects of one shift, or why there are none."""
    from dogood.measures.preview import save_preview

    docs = synthetic_documents()
    out: dict[str, Any] = {"picture": None, "params": {}, "effects": {}, "levels": {}, "why": None}
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            params = picture_params(cls, work, docs)
            shifted, counts = apply_shift(cls, params, docs[0], 0)
            shown = ", ".join(f"{k}={v}" for k, v in params.items() if k not in ("scorer", "model")) or "defaults"
            save_preview(docs[0], shifted, images / f"{cls.name}.png", max_height=700,
                         title_right=f"{cls.name} ({shown})")
            out.update(picture=f"images/{cls.name}.png", params=params, counts=counts,
                       effects=measure(cls, params, docs))
            for level in sorted(cls.severities):
                out["levels"][level] = measure(cls, {**params, **cls.severities[level]}, docs)
    except Exception as exc:  # a missing extra or program: the page says so instead of a picture
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        out["why"] = f"{type(exc).__name__}: {first}"
        if os.environ.get("DOGOOD_DOCS_DEBUG"):
            traceback.print_exc()
    return out


def _effect_cells(values: dict[str, float | None]) -> dict[str, str]:
    return {key: fmt.format(values[key]) for key, (_, fmt) in EFFECT_WORDS.items() if values.get(key) is not None}


def shift_page(cls: type[Shift], figures: dict[str, Any]) -> str:
    """The Markdown page of one shift: summary, picture, parameters, levels and measured effects, declared factors,
    counts, needs, conventions, papers, and the class's API documentation."""
    lines = [f"# `{cls.name}`", "", f"*{cls.family} shift*, class `{cls.__module__}.{cls.__name__}`", "",
             summary(cls), ""]
    if figures.get("picture"):
        shown = ", ".join(f"`{k}={v}`" for k, v in figures["params"].items() if k not in ("scorer", "model"))
        lines += [f"![{cls.name}: a synthetic page before and after]({Path(figures['picture']).name})", "",
                  f"*A synthetic page (dogood.sources.synthetic) before and after, drawn when this site was built"
                  f"{' with ' + shown if shown else ' with the defaults'}; boxes in their labels' colours, changed "
                  "words outlined in magenta.*", ""]
    else:
        lines += [f"!!! note \"No picture\"\n    The picture could not be made where this site was built "
                  f"({figures.get('why')}).", ""]
    rows = cls.describe()
    lines += ["## Parameters", ""]
    if rows:
        lines += ["| name | type | default | range | description |", "|---|---|---|---|---|"]
        lines += [f"| `{r['name']}` | {r['type']} | `{r['default']}` | {r['range'] or '–'} | "
                  f"{_cell(r['description'])} |" for r in rows]
    else:
        lines.append("None.")
    lines += ["", f"`inspect.signature(dogood.SHIFTS[{cls.name!r}])` and `dogood describe {cls.name}` show the same.", ""]
    if cls.severities:
        lines += ["## Severity levels", "", "A recipe's `severities: [1, 2, 3, 4, 5]` makes `<config>@<level>` "
                  f"configs. Measured here on {PAGES} synthetic pages (the build measures the same on its own "
                  "pages and states it in the card):", ""]
        keys = [k for k in EFFECT_WORDS if any(v.get(k) for v in figures.get("levels", {}).values())]
        lines += ["| level | parameters | " + " | ".join(EFFECT_WORDS[k][0] for k in keys) + " |",
                  "|---|---|" + "---|" * len(keys)]
        for level, values in level_rows(cls):
            cells = _effect_cells(figures.get("levels", {}).get(level, {}))
            lines.append(f"| {level} | `{values}` | " + " | ".join(cells.get(k, "–") for k in keys) + " |")
        lines.append("")
    elif figures.get("effects"):
        cells = {k: v for k, v in _effect_cells(figures["effects"]).items() if figures["effects"][k]}
        if cells:
            lines += ["## Measured effect", "", f"On {PAGES} synthetic pages with the picture's parameters: "
                      + "; ".join(f"{EFFECT_WORDS[k][0]} {v}" for k, v in cells.items()) + ".", ""]
    factors = getattr(cls, "factors", None)
    if factors:
        lines += ["## Declared factors", "", "What the shift may change (and nothing else):", ""]
        items = factors.items() if isinstance(factors, dict) else ((f, "") for f in factors)
        lines += [f"- `{f}`" + (f": {what}" if what else "") for f, what in items]
        lines.append("")
    lines += ["## Counts", "", "What it reports per document (summed per config in the data card):", ""]
    lines += [f"- `{k}`: {cls.counts_help.get(k, '')}" for k in cls.reported_counts] or ["None."]
    if cls.tallies_help:
        lines += ["", "Tallies:", ""] + [f"- `{k}`: {v}" for k, v in cls.tallies_help.items()]
    needs = cls.requires or cls().requirements()
    lines += ["", "## Needs", ""]
    lines += [f"- `{n}`" for n in needs] or ["Nothing beyond dogood's own dependencies."]
    from dogood.pipeline.cpu_costs import SHIFT_MS

    cost = SHIFT_MS.get(cls.name)
    lines += ["", "`dogood plan RECIPE` checks these before a build. CPU per FUNSD-sized page: "
              + (f"{cost[0]:g} ms ({cost[1]})." if cost else "no figure yet.")]
    lines += ["", "## Box conventions", ""] + [f"- `{k}`: {v}" for k, v in cls.box_levels.items()]
    lines += ["", "## Papers", ""]
    for c in cls.papers:
        lines.append(f"- {c.citation.markdown()}" + (f" Section {c.section}." if c.section else ""))
        if c.inspired_by:
            lines.append(f"    - Inspired by {short_name(c.citation)}: {c.inspired_by}")
    if not cls.papers:
        lines.append("None declared.")
    lines += ["", "## API", "", f"::: {cls.__module__}.{cls.__name__}", "    options:", "      show_root_heading: false",
              "      members: false", ""]
    return "\n".join(lines)


def shift_index(names_with_pictures: dict[str, bool]) -> str:
    """The shift index: every shipped shift by family, linked to its page, and the generated parameter table."""
    lines = ["# Shifts", "", "Every shift dogood ships, one page each (parameters, levels, measured effects, papers "
             "and a picture), generated from the shifts' declarations when this site was built. `dogood describe "
             "SHIFT` prints the same in a terminal. How the shifts work: [shift notes](../shift-notes.md).", ""]
    for family in ("image", "text", "layout"):
        members = [c for c in shipped_shifts() if c.family == family]
        lines += [f"## {family.capitalize()} shifts ({len(members)})", "", "| shift | what |", "|---|---|"]
        lines += [f"| [`{c.name}`]({c.name}.md) | {_cell(summary(c))} |" for c in members]
        lines.append("")
    lines += ["## Parameters and papers", "", "Generated from the declarations (`dogood describe --markdown`):", "",
              shift_table_markdown()]
    return "\n".join(lines)


def references_page() -> str:
    """Every paper dogood cites (:data:`dogood.core.papers.CITATIONS`), as the data cards cite them."""
    lines = ["# Papers", "", "The papers dogood's shifts, metrics and data come from (`dogood.core.papers`); each "
             "shift's page says which section it follows and where it differs.", ""]
    lines += [f"- **{key}**: {c.markdown()}" for key, c in CITATIONS.items()]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def front_picture(path: Path, height: int = 420) -> Path:
    """The README's picture: one synthetic page, then the page under ``char_deletion``, ``merge`` (level 4) and
    ``capture`` (level 3, a drawn desk), side by side at ``height`` pixels (``python docs/gen_pages.py
    --front-picture``)."""
    from PIL import Image

    from dogood.measures.preview import render_preview
    from dogood.shifts.base import SHIFTS

    doc = synthetic_documents(1)[0]
    steps = [("char_deletion", {"fraction": 0.3}), ("merge", SHIFTS["merge"].severities[4]),
             ("capture", {**SHIFTS["capture"].severities[3], "surface": "texture"})]
    panels = []
    for k, (name, params) in enumerate(steps):
        shifted, _ = apply_shift(SHIFTS[name], params, doc, k)
        pair = render_preview(doc, shifted, max_height=height, edits_listed=0, legend=None, title_right=name)
        if not panels:
            plain = render_preview(doc, shifted, max_height=height, edits_listed=0, legend=None, changes=False)
            panels.append(plain.crop((0, 0, plain.width // 2 - 4, plain.height)))
        panels.append(pair.crop((pair.width // 2 + 4, 0, pair.width, pair.height)))
    width = sum(p.width for p in panels) + 8 * (len(panels) - 1)
    canvas = Image.new("RGB", (width, max(p.height for p in panels)), "white")
    x = 0
    for p in panels:
        canvas.paste(p, (x, 0))
        x += p.width + 8
    path.parent.mkdir(parents=True, exist_ok=True)
    canvas.save(path, format="PNG", optimize=True)
    return path
