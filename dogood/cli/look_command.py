"""``dogood show`` and ``dogood preview``: one document, as text or as a PNG beside its original."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dogood.cli.common import Renamed
from dogood.core.errors import DogoodError


def add_parser(sub) -> None:
    for name, helptext in (
            ("show", "print one document, readable: the source's (no --config), a config's shifted copy, or the row "
                     "a built folder stores; --diff lists the words the config changed (old → new)"),
            ("preview", "write a PNG: the source document beside a config's shifted copy (a built folder: its stored "
                        "row beside the source document); words a text shift changed are outlined and listed, a "
                        "merged box shows its labels")):
        p = sub.add_parser(name, help=helptext, description=helptext)
        p.add_argument("recipe", help="recipe name or path (the config's chain is applied now), or a dataset folder "
                                      "`dogood build` wrote (its stored rows are read)")
        p.add_argument("--config", help="which config (default: the first; for show of a recipe without --diff, "
                                        "none: the source document)")
        p.add_argument("--split", help="split (default: the recipe's or the folder's first)")
        p.add_argument("--doc", dest="doc_id", metavar="ID", help="document id (default: the one at --index)")
        p.add_argument("--id", action=Renamed, nargs="?", help=argparse.SUPPRESS)
        p.add_argument("--index", type=int, default=0, help="document position, when no --doc is given (default: 0)")
        p.add_argument("--source", help="where the source data is (for a built folder: where its recipe's source "
                                        "is, to read the original document)")
        if name == "show":
            p.add_argument("--json", action="store_true", help="print the record as JSON")
            p.add_argument("--diff", action="store_true",
                           help="print each word the config's chain changed as old → new (boxes when moved), with "
                                "counts and the share of pixels changed")
            p.set_defaults(func=cmd_show)
        else:
            p.add_argument("--out", help="PNG path (default: preview-<recipe>-<config>-<id>.png)")
            p.set_defaults(func=cmd_preview)


def _pick(args, need_config: bool, need_original: bool = False):
    """(original, shifted, label) for show/preview.

    A recipe: the source document, and the config's chain applied to it now (``shifted`` is ``None`` when no
    config is wanted). A built folder: the stored row is ``shifted``; ``original`` is the source document of
    the folder's recipe (read only when ``need_original``; else ``None``).
    """
    from dogood.pipeline.recipe import load_recipe
    from dogood.pipeline.worker import apply_chain
    from dogood.sources import open_source

    path = Path(args.recipe)
    if path.is_dir() and (path / "README.md").is_file():
        from dogood.sources.hf_dataset import HFDatasetSource

        config = args.config or _first_config(path)
        split = args.split or _first_split(path, config)
        source = HFDatasetSource(name=str(path), config=config, split=split)
        shifted = source.load(args.doc_id or _nth(source.ids(), args.index))
        original = _built_original(path, split, shifted.id, args.source) if need_original else None
        return original, shifted, f"{path.name}-{config}"
    recipe = load_recipe(args.recipe)
    split = args.split or recipe.splits[0]
    source = open_source(recipe.source, split, args.source)
    doc = source.load(args.doc_id or _nth(source.ids(), args.index))
    config = args.config or (next(iter(recipe.configs)) if need_config else None)
    if config is None:
        return doc, None, recipe.name
    return doc, apply_chain(doc, recipe.chain(config), recipe.seed), f"{recipe.name}-{config}"


def _first_config(folder: Path) -> str:
    from dogood.core.fs import FileRefused
    from dogood.pipeline.safety import read_build_info

    try:
        chains = read_build_info(folder).get("chains") or {}
    except (OSError, FileRefused, AttributeError):
        chains = {}
    names = [c for c in chains if (folder / "data" / c).is_dir()]
    names = names or sorted(p.name for p in (folder / "data").glob("*") if p.is_dir())
    if not names:
        raise DogoodError(f"{folder} has no data/<config>/ folders; is it a dataset folder `dogood build` wrote?")
    return names[0]


def _built_original(folder: Path, split: str, doc_id: str, source_path: str | None):
    """The source document that ``folder``'s row ``doc_id`` was made from: its recipe's source, read again."""
    from dogood.core.fs import FileRefused
    from dogood.pipeline.recipe import load_recipe
    from dogood.pipeline.safety import read_build_info
    from dogood.sources import open_source

    try:
        info = read_build_info(folder)
        if not isinstance(info, dict):
            raise ValueError("not a mapping")
    except (OSError, ValueError, FileRefused):
        raise DogoodError(f"{folder} has no readable dogood_build.json: it names the source the original document "
                          "comes from") from None
    stored = info.get("source") if isinstance(info.get("source"), dict) else {}
    try:
        spec = load_recipe(str(info.get("recipe"))).source
    except DogoodError:
        spec = {"kind": stored.get("kind")}
    try:
        return open_source(spec, split, source_path).load(doc_id)
    except DogoodError as exc:
        raise DogoodError(f"{folder}: the original of document {doc_id!r} is read from the source of recipe "
                          f"{info.get('recipe')!r} ({spec.get('kind')}), and that failed: {exc}; pass --source "
                          "PATH") from None


def _nth(ids: list[str], index: int) -> str:
    if not 0 <= index < len(ids):
        raise DogoodError(f"--index {index} is out of range: the split has {len(ids)} documents")
    return ids[index]


def _first_split(folder: Path, config: str) -> str:
    files = sorted((folder / "data" / config).glob("*.parquet"))
    if not files:
        raise DogoodError(f"{folder} has no data/{config}/<split>-*.parquet files")
    return files[0].name.split("-")[0]


def cmd_show(args) -> int:
    original, shifted, _ = _pick(args, need_config=args.diff, need_original=args.diff)
    if args.diff:
        from dogood.measures.diff import format_diff

        print(format_diff(original, shifted))
        return 0
    doc = shifted or original
    if args.json:
        from dogood.core.schema import document_to_row

        schema = "rvl_cdip" if doc.label and not doc.entities else "funsd"
        row = document_to_row(doc, schema, getattr(args, "box_level", None))
        row.pop("image")
        print(json.dumps(row, indent=1))
        return 0
    print(format_document(doc))
    return 0


def format_document(doc) -> str:
    """A readable, plain-text view of a document."""
    lines = [f"document {doc.id}  ({doc.width}x{doc.height} px, {len(doc.words)} words, {len(doc.entities)} entities)"]
    if doc.label:
        lines.append(f"label: {doc.label}")
    for rec in doc.provenance:
        extra = f"  skipped: {rec.skipped}" if rec.skipped else ""
        lines.append(f"shift: {rec.shift} {rec.params_json()} seed={rec.seed}{extra}")
    owner = doc.word_entity()
    if doc.entities:
        for ent in doc.entities:
            links = ", ".join(f"{a}->{b}" for a, b in ent.links)
            box = doc.entity_box(ent)
            lines.append(f"[{ent.id:>3}] {ent.label:<9} {doc.entity_text(ent)!r} box={list(box) if box else None}"
                         + (f" links {links}" if links else ""))
            for wid in ent.word_ids:
                w = doc.words[wid]
                lines.append(f"        {wid:>4} {w.text!r:<24} {list(w.box)}")
    loose = [i for i, e in enumerate(owner) if e is None]
    for wid in loose:
        w = doc.words[wid]
        lines.append(f"  {wid:>4} {w.text!r:<24} {list(w.box)}")
    for qa in doc.qa:
        lines.append(f"Q: {qa.question}  A: {' | '.join(qa.answers)}")
    return "\n".join(lines)


def cmd_preview(args) -> int:
    from dogood.measures.preview import save_preview

    original, shifted, name = _pick(args, need_config=True, need_original=True)
    out = Path(args.out) if args.out else Path(f"preview-{name}-{original.id.replace('/', '_')}.png")
    if out.exists() or out.is_symlink():
        from dogood.core.fs import FileRefused, open_file

        try:
            with open_file(out, follow=False, what="preview") as fh:
                png = fh.read(8) == b"\x89PNG\r\n\x1a\n"
        except (OSError, FileRefused):
            png = False
        if not png:
            raise DogoodError(f"--out {out} exists and is not a PNG image; refusing to replace it")
    save_preview(original, shifted, out)
    print(f"wrote {out}")
    return 0
