"""The ``dogood`` command: list, build, show and preview recipes; describe shifts; train the baseline; evaluate models.

Exit codes: 0 success, 1 bad input or a failed build (the message names the
file or document), 2 wrong usage, 130 interrupted (Ctrl-C).

Every foreseeable failure (bad input, a file that cannot be read or written,
the Hub or the network) prints one line ``dogood: error: ...`` naming the
file, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dogood.errors import DogoodError


def main(argv: list[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):  # a file name that is not UTF-8 is printed escaped, not a crash
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args) or 0
    except DogoodError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        _say(f"dogood: interrupted{INTERRUPTED.get(args.command, '')}")
        return 130
    except RecursionError:
        return _fail("the input is nested too deeply to read")
    except UnicodeError as exc:
        what = getattr(exc, "object", None)
        what = f": {what[:200]!r}" if isinstance(what, (str, bytes)) else f" ({exc})"
        return _fail(f"text or a file name that is not valid UTF-8{what}")
    except OSError as exc:  # files, folders, and the Hub or the network (requests' errors are OSErrors)
        return _fail(_os_message(exc))
    except Exception as exc:
        hub = _hub_error(exc)
        if hub is None:
            raise  # a bug: keep the traceback
        return _fail(hub)


#: What is true after Ctrl-C, per command; other commands write nothing that needs saying.
INTERRUPTED = {
    "build": "; no dataset folder was written (run the same command again to resume: finished shards are kept)",
    "push": "; run the same command again to resume (finished build shards are kept; files already on the "
                "Hub are not sent again)",
    "eval": "; no report was written (an earlier report in the --out folder is left as it was)",
    "train-baseline": "; no model file was written (an earlier one is left as it was)",
}


def _say(message: str) -> None:
    print(message.encode("utf-8", "backslashreplace").decode("utf-8"), file=sys.stderr)


def _fail(message: str) -> int:
    _say(f"dogood: error: {message}")
    return 1


def _os_message(exc: OSError) -> str:
    names = [n for n in (exc.filename, exc.filename2) if n is not None]
    if names and exc.strerror:
        return f"{' -> '.join(map(str, names))}: {exc.strerror}"
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0] if text.strip() else type(exc).__name__


def _hub_error(exc: Exception) -> str | None:
    """A one-line message for a Hugging Face Hub or network failure, else ``None``."""
    try:
        from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled
    except ImportError:  # pragma: no cover
        return None
    if isinstance(exc, (HfHubHTTPError, OfflineModeIsEnabled)):
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        return f"the Hugging Face Hub: {first}"
    return None


def _count(value: str) -> int:
    """An argparse type: a whole number of at least 1 (else a usage error, exit 2)."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


def _config_options(p: argparse.ArgumentParser, which: str, set_help: str) -> None:
    """``--config``, ``--exclude-config`` and ``--set``, the same for ``build`` and ``push``."""
    p.add_argument("--config", action="append", dest="configs", metavar="NAME",
                   help=f"{which}: a name, a glob (ms_*) or a comma list (repeatable)")
    p.add_argument("--exclude-config", action="append", dest="exclude_configs", metavar="NAME",
                   help="leave these configs out: a name, a glob or a comma list (repeatable)")
    p.add_argument("--set", action="append", dest="overrides", metavar="CONFIG.PARAM=VALUE", default=[],
                   help=set_help)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dogood", description="Turn document-AI datasets into out-of-distribution benchmark datasets."
    )
    parser.add_argument("--version", action="version", version=f"dogood {_version()}")
    sub = parser.add_subparsers(metavar="COMMAND", dest="command")

    p = sub.add_parser("list", help="list the recipes, one line each (with RECIPE: its configs and their chains)")
    p.add_argument("recipe", nargs="?", help="a recipe name or YAML path: list its configs")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("describe", help="what a shift does: parameters, box conventions, counts, papers "
                                        "(no shift: list them all)")
    p.add_argument("shift", nargs="?", help="a shift's recipe name, e.g. char_deletion")
    p.add_argument("--markdown", action="store_true", help="print the README's shift table (Markdown)")
    p.set_defaults(func=cmd_describe)

    p = sub.add_parser("build", help="build a recipe into a dataset folder")
    p.add_argument("recipe", help="recipe name (see `dogood list`) or path to a recipe YAML")
    p.add_argument("--source", help="where the source data is (e.g. the FUNSD dataset folder)")
    p.add_argument("--out", help="output dataset folder (default: out/<recipe name>)")
    p.add_argument("--seed", type=int, help="override the recipe's seed")
    p.add_argument("--num-proc", type=_count, default=1,
                   help="worker processes, at most one per document (output is identical for any number)")
    p.add_argument("--limit", type=_count, help="only the first N documents of each split")
    p.add_argument("--on-error", choices=["raise", "skip"], default="raise",
                   help="stop at a bad document (raise) or leave it out and list it in the card (skip)")
    _config_options(p, "build only these configs",
                    "override a parameter of a config's shifts, e.g. bert_attack.model=/models/bert (CONFIG may "
                    "be a glob; VALUE is YAML; repeatable); the card lists every override")
    p.add_argument("--split", action="append", dest="splits", metavar="NAME",
                   help="build these splits instead of the recipe's, e.g. train (a comma list; repeatable)")
    p.add_argument("--copies", type=_count, metavar="K",
                   help="K rows per document and config, each shifted with its own draws (ids DOC#0..DOC#K-1; "
                        "default: the recipe's copies, 1)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing output folder that a dogood build wrote (never any other folder)")
    p.add_argument("--wait", action="store_true",
                   help="when another build is writing the same --out, wait for it instead of stopping")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--box-level", choices=["segment", "word"],
                   help="convention of the bboxes column: 'segment' (each token its entity's box, as the LayoutLMv3 "
                        "FUNSD loader; default for FUNSD-style data) or 'word' (each token its own box; default otherwise)")
    p.add_argument("--ray", metavar="ADDRESS", help="run the shards on Ray with --num-proc actors, each reading and "
                                                    "writing whole shards: 'local' starts Ray here, 'auto' or "
                                                    "ray://host:port joins a cluster (pip install 'ray[data]')")
    p.set_defaults(func=cmd_build)

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
        p.add_argument("--id", action=_Renamed, nargs="?", help=argparse.SUPPRESS)
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

    p = sub.add_parser("train-baseline", help="train dogood's CRF baseline on FUNSD train (or its document baseline "
                                              "on RVL-CDIP train) and save it to a file")
    p.add_argument("--task", choices=("token", "document"), default="token",
                   help="token: the CRF tagger on FUNSD (default); document: the page classifier on RVL-CDIP")
    p.add_argument("--source", help="the FUNSD (or, with --task document, RVL-CDIP) dataset folder (default: found "
                                    "as `dogood build` finds it); with --task document, 'synthetic' trains on "
                                    "generated pages (a smoke test only)")
    p.add_argument("--pages", type=_count, default=400,
                   help="with --source synthetic: pages per split (default: 400)")
    p.add_argument("--split", default="train", help="split to train on (default: train)")
    p.add_argument("--out", help="model file (default: the one `--model baseline` loads, in the dogood cache)")
    p.add_argument("--c1", type=float, help="L1 regularisation (default: the baseline's)")
    p.add_argument("--c2", type=float, help="L2 regularisation (default: the baseline's)")
    p.add_argument("--max-iterations", type=int, help="L-BFGS iterations (default: the baseline's)")
    p.add_argument("--limit", type=_count, help="train on the first N documents only")
    p.add_argument("--eval-split", default="test",
                   help="split to report entity F1 (document: accuracy) on after training ('none' to skip)")
    p.set_defaults(func=cmd_train_baseline)

    p = sub.add_parser("eval", help="score a model on an ID dataset and its OOD variants; write a report")
    p.add_argument("--model", default="baseline",
                   help="'baseline' (default), a .dogood-model file, a predictions .jsonl file or folder, "
                        "or a Hugging Face model folder or Hub id")
    p.add_argument("--id", dest="id_dataset", required=True, metavar="DATASET",
                   help="the in-distribution dataset: a built folder[:config], a Hub id[:config], or funsd / rvl_cdip")
    p.add_argument("--ood", nargs="+", required=True, metavar="DATASET",
                   help="OOD datasets, named as --id; a built folder without :config means all its configs")
    p.add_argument("--split", default="test", help="split to score (default: test)")
    p.add_argument("--out", help="report folder (default: eval/<model name>)")
    p.add_argument("--limit", type=_count, help="only the first N documents of the ID set (and the OOD documents paired with them)")
    p.add_argument("--labels", help="comma-separated label names in the model's id order (Hugging Face models whose "
                                    "config has generic LABEL_n names)")
    p.add_argument("--device", default="cpu", help="torch device for Hugging Face models (default: cpu)")
    p.add_argument("--batch-size", type=int, default=8, help="documents per forward pass for Hugging Face models")
    p.add_argument("--box-level", choices=["segment", "word"],
                   help="box convention the Hugging Face model was fine-tuned with (default: segment for token "
                        "classifiers, as the LayoutLMv3 FUNSD data; word for document classifiers)")
    p.add_argument("--require-same-ids", action="store_true",
                   help="refuse OOD sets whose document ids differ from the ID set's (default: score the shared "
                        "documents, with a warning)")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="N",
                   help="bootstrap resamples for the intervals (default: 1000; 0: no intervals)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default: 0)")
    p.add_argument("--kieval", action="store_true", help="add KIEval entity-level scores (token classification)")
    p.add_argument("--anls-official", action="store_true",
                   help="DocVQA-style datasets: score ANLS as the official DocVQA/RRC script (default: the paper's formula)")
    p.add_argument("--reference", default="auto", metavar="MODEL",
                   help="the model whose errors the corruption errors of severity configs (<config>@<s>) are divided "
                        "by, named as --model (default: the baseline of the task when one is trained; 'none': no "
                        "corruption errors)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("gallery", help="write a static HTML page of a built folder: originals beside shifted pages, "
                                       "boxes, statistics, the eval plot")
    p.add_argument("folder", metavar="OUT", help="a dataset folder `dogood build` wrote")
    p.add_argument("--docs", type=_count, default=3, help="documents per config (default: 3)")
    p.add_argument("--html", help="the HTML file to write (default: OUT-gallery.html beside OUT; never inside OUT)")
    p.add_argument("--split", help="split to show (default: each config's first)")
    p.add_argument("--source", help="where the source data is, for the original pages")
    p.add_argument("--report", metavar="DIR", help="a `dogood eval` report folder to show (default: reports in "
                                                   "eval/*/ that scored OUT)")
    p.set_defaults(func=cmd_gallery)

    p = sub.add_parser("export", help="write a built folder as FUNSD JSON + PNG, COCO-style boxes or flat JSONL")
    p.add_argument("folder", metavar="OUT", help="a dataset folder `dogood build` wrote")
    p.add_argument("--format", required=True, choices=["funsd-json", "coco", "jsonl"], help="what to write")
    p.add_argument("--to", metavar="DIR", help="destination folder (default: OUT-<format> beside OUT)")
    p.add_argument("--config", action="append", dest="configs", metavar="NAME",
                   help="export only these configs: a name, a glob or a comma list (repeatable; default: all)")
    p.add_argument("--level", choices=["entity", "word"],
                   help="coco: one box per entity (default for FUNSD-style data) or per word (default otherwise)")
    p.add_argument("--overwrite", action="store_true", help="replace a destination that dogood exported")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("push", help="build and publish the datasets of a manifest (hub_upload/*.yaml) to the Hub")
    p.add_argument("manifest", help="publish manifest: which recipes and configs go to which Hub dataset repo")
    p.add_argument("--dry-run", metavar="DIR", help="stage each dataset into DIR exactly as it would be uploaded; "
                                                    "send nothing (no token needed)")
    p.add_argument("--build-dir", default="out", help="where builds are made or reused (default: out)")
    p.add_argument("--source", help="where the source data is")
    p.add_argument("--num-proc", type=_count, default=1, help="worker processes for builds")
    _config_options(p, "push only these of the manifest's configs (a dataset left with none is not pushed)",
                    "override a parameter of matching configs' shifts, as `dogood build --set` (repeatable); "
                    "the card lists every override")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_push)
    return parser


def cmd_gallery(args) -> int:
    from dogood.gallery import write_gallery

    result = write_gallery(args.folder, args.html, docs=args.docs, split=args.split, source=args.source,
                           report=args.report)
    if result["originals"]:
        print(f"dogood: warning: original pages not shown: {result['originals']}", file=sys.stderr)
    reports = f", eval report(s) {', '.join(map(str, result['reports']))}" if result["reports"] else ""
    print(f"wrote {result['path']}: {result['documents']} document(s) in {len(result['configs'])} config(s){reports}")
    return 0


def cmd_export(args) -> int:
    from dogood.export import export

    result = export(args.folder, args.format, args.to, configs=args.configs, level=args.level,
                    overwrite=args.overwrite)
    n = sum(n for splits in result["configs"].values() for n in splits.values())
    print(f"exported {n} document(s) of {len(result['configs'])} config(s) as {args.format} -> {result['path']}")
    return 0


def cmd_push(args) -> int:
    from dogood.publish import push

    results = push(args.manifest, build_dir=args.build_dir, dry_run=args.dry_run, source=args.source,
                   num_proc=args.num_proc, progress=not args.quiet, configs=args.configs,
                   exclude_configs=args.exclude_configs, overrides=args.overrides)
    for r in results:
        if args.dry_run:
            print(f"{r.repo} {r.tag}: staged in {r.folder} (nothing sent)")
        elif r.uploaded:
            print(f"{r.repo} {r.tag}: uploaded, commit {r.commit}")
        else:
            print(f"{r.repo} {r.tag}: already published with this content; nothing uploaded")
    if not args.dry_run and results:
        r = results[0]
        print(f"load it with: datasets.load_dataset({r.repo!r}, CONFIG, revision={r.tag!r})")
    return 0


def _version() -> str:
    from dogood.version import __version__

    return __version__


def cmd_list(args) -> int:
    from dogood.recipe import list_recipes, load_recipe

    if args.recipe:
        recipe = load_recipe(args.recipe)
        print(recipe.summary())
        for line in recipe.config_lines():
            print("  " + line)
        return 0
    recipes = list_recipes()
    if not recipes:
        print("no recipes found (looked in ./recipes and the recipes shipped with dogood)")
    for recipe in recipes:
        print(recipe.summary())
    return 0


def cmd_describe(args) -> int:
    from dogood.describe import describe_shift, shift_list, shift_table_markdown
    from dogood.shifts import SHIFTS

    if args.markdown:
        sys.stdout.write(shift_table_markdown())
    elif args.shift is None:
        sys.stdout.write(shift_list())
    elif args.shift not in SHIFTS:
        _say(f"dogood: error: unknown shift {args.shift!r}; known shifts: {', '.join(sorted(SHIFTS))}")
        return 2
    else:
        sys.stdout.write(describe_shift(args.shift))
    return 0


def cmd_build(args) -> int:
    from dogood.pipeline.build import build
    from dogood.recipe import load_recipe

    recipe = load_recipe(args.recipe)
    if args.overrides:
        recipe = recipe.with_overrides(args.overrides)
    out = Path(args.out) if args.out else Path("out") / recipe.name
    report = build(
        recipe,
        out,
        source_path=args.source,
        seed=args.seed,
        num_proc=args.num_proc,
        limit=args.limit,
        on_error=args.on_error,
        configs=recipe.select_configs(args.configs, args.exclude_configs) if args.configs or args.exclude_configs
        else None,
        overwrite=args.overwrite,
        progress=not args.quiet,
        ray=args.ray,
        box_level=args.box_level,
        wait=args.wait,
        splits=args.splits,
        copies=args.copies,
    )
    docs = ", ".join(f"{n} {split}" for split, n in report.documents.items()) or "0"
    copies = f" x {report.copies} copies" if report.copies > 1 else ""
    print(f"built {recipe.name} v{recipe.version}: {docs} documents{copies} x {len(report.configs)} config(s) "
          f"({', '.join(report.configs)}) -> {out}")
    if report.skipped:
        print(f"skipped {len(report.skipped)} document(s), listed in {out / 'README.md'}:")
        for s in report.skipped[:10]:
            print(f"  {s['split']} {s['id']}: {s['reason']}")
    print(f"load it with: datasets.load_dataset({str(out)!r}, {report.configs[0]!r})")
    return 0


class _Renamed(argparse.Action):
    """``--id`` of show/preview, renamed ``--doc``: a usage error that says so (``--id`` is eval's ID dataset)."""

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(f"{option_string} is now --doc: pass the document id as --doc {values or 'ID'} "
                     "(--id names the in-distribution dataset of `dogood eval`)")


def _pick(args, need_config: bool, need_original: bool = False):
    """(original, shifted, label) for show/preview.

    A recipe: the source document, and the config's chain applied to it now (``shifted`` is ``None`` when no
    config is wanted). A built folder: the stored row is ``shifted``; ``original`` is the source document of
    the folder's recipe (read only when ``need_original``; else ``None``).
    """
    from dogood.pipeline.worker import apply_chain
    from dogood.recipe import load_recipe
    from dogood.sources import open_source

    path = Path(args.recipe)
    if path.is_dir() and (path / "README.md").is_file():
        from dogood.sources.hf import HFDatasetSource

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
    try:
        chains = json.loads((folder / "dogood_build.json").read_text(encoding="utf-8")).get("chains") or {}
    except (OSError, ValueError, RecursionError):
        chains = {}
    names = [c for c in chains if (folder / "data" / c).is_dir()]
    names = names or sorted(p.name for p in (folder / "data").glob("*") if p.is_dir())
    if not names:
        raise DogoodError(f"{folder} has no data/<config>/ folders; is it a dataset folder `dogood build` wrote?")
    return names[0]


def _built_original(folder: Path, split: str, doc_id: str, source_path: str | None):
    """The source document that ``folder``'s row ``doc_id`` was made from: its recipe's source, read again."""
    from dogood.recipe import load_recipe
    from dogood.sources import open_source

    try:
        info = json.loads((folder / "dogood_build.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
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
        from dogood.docdiff import format_diff

        print(format_diff(original, shifted))
        return 0
    doc = shifted or original
    if args.json:
        from dogood.schema import document_to_row

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
    from dogood.preview import save_preview

    original, shifted, name = _pick(args, need_config=True, need_original=True)
    out = Path(args.out) if args.out else Path(f"preview-{name}-{original.id.replace('/', '_')}.png")
    if out.exists() or out.is_symlink():
        try:
            png = out.is_file() and not out.is_symlink() and out.open("rb").read(8) == b"\x89PNG\r\n\x1a\n"
        except OSError:
            png = False
        if not png:
            raise DogoodError(f"--out {out} exists and is not a PNG image; refusing to replace it")
    save_preview(original, shifted, out)
    print(f"wrote {out}")
    return 0


def _check_model_file(out: Path) -> None:
    """Refuse to replace a file that is not a dogood model (a zip holding a baseline's members)."""
    import zipfile

    from dogood.models import baseline_kind
    from dogood.models.baseline import META_MEMBER, MODEL_MEMBER

    if not (out.exists() or out.is_symlink()):
        return
    try:
        with zipfile.ZipFile(out) as zf:
            ours = {META_MEMBER, MODEL_MEMBER} <= set(zf.namelist())
    except (OSError, zipfile.BadZipFile):
        ours = False
    ours = ours or (out.is_file() and baseline_kind(out) is not None)
    if not ours or out.is_symlink():
        raise DogoodError(f"--out {out} exists and is not a dogood model file; refusing to replace it")


def _document_source(args, split: str):
    """The pages ``train-baseline --task document`` reads: an RVL-CDIP folder's split, or synthetic pages."""
    if args.source == "synthetic":
        from dogood.sources.synthetic import SyntheticSource

        return SyntheticSource(pages=args.pages, split=split)
    from dogood.sources.rvl_cdip import RvlCdipSource

    return RvlCdipSource(root=args.source, split=split)


def cmd_train_document_baseline(args) -> int:
    import time

    from dogood.metrics import accuracy
    from dogood.models import default_document_baseline_path
    from dogood.ocr import report_tesseract_runs, tesseract_runs
    from dogood.models.doc_baseline import train_document_baseline
    from dogood.schema import RVL_CDIP_CLASSES

    given = [f"--{k.replace('_', '-')}" for k in ("c1", "c2", "max_iterations") if getattr(args, k) is not None]
    if given:
        raise DogoodError(f"{', '.join(given)} apply to the CRF (--task token), not to the document baseline")
    if args.out:
        _check_model_file(Path(args.out))
    source = _document_source(args, args.split)
    ids = list(source.ids())
    ids = ids[: args.limit] if args.limit else ids
    start = time.perf_counter()
    pages, ocr_seconds = tesseract_runs()
    try:
        model = train_document_baseline(source.load(i) for i in ids)
    except ValueError as exc:
        raise DogoodError(f"cannot train the document baseline on {args.source or 'RVL-CDIP'} {args.split}: {exc}") from None
    seconds = time.perf_counter() - start
    report_tesseract_runs(tesseract_runs()[0] - pages, tesseract_runs()[1] - ocr_seconds, of=len(ids))
    out = Path(args.out) if args.out else default_document_baseline_path()
    model.save(out)
    what = "synthetic" if args.source == "synthetic" else "RVL-CDIP"
    print(f"trained {model.name} on {len(ids)} {what} {args.split} pages ({len(model.classes)} classes) "
          f"in {seconds:.0f} s -> {out}")
    if args.eval_split and args.eval_split != "none":
        test = _document_source(args, args.eval_split)
        same = getattr(test, "labels_path", None)
        if same is not None and same == getattr(source, "labels_path", None):
            print(f"dogood: warning: --split {args.split} and --eval-split {args.eval_split} both read {same}: "
                  "the accuracy below is on the training pages", file=sys.stderr)
        test_docs = [test.load(i) for i in test.ids()]
        preds = model.predict(test_docs)
        scores = accuracy([d.label for d in test_docs], [preds[d.id].label for d in test_docs],
                          labels=list(RVL_CDIP_CLASSES))
        print(f"{what} {args.eval_split} ({len(test_docs)} pages): accuracy {100 * scores['accuracy']:.2f} "
              f"(chance with {len(RVL_CDIP_CLASSES)} balanced classes: {100 / len(RVL_CDIP_CLASSES):.2f})")
    return 0


def cmd_train_baseline(args) -> int:
    import time

    if args.task == "document":
        return cmd_train_document_baseline(args)
    if args.source == "synthetic":
        raise DogoodError("--source synthetic trains the document baseline only: add --task document")

    from dogood.models import default_baseline_path
    from dogood.models.baseline import train_baseline
    from dogood.sources.funsd import FunsdSource

    if args.out:
        _check_model_file(Path(args.out))
    source = FunsdSource(root=args.source, split=args.split)
    ids = source.ids()[: args.limit] if args.limit else source.ids()
    docs = [source.load(i) for i in ids]
    options = {k: v for k, v in (("c1", args.c1), ("c2", args.c2), ("max_iterations", args.max_iterations)) if v is not None}
    start = time.perf_counter()
    model = train_baseline(docs, **options)
    seconds = time.perf_counter() - start
    out = Path(args.out) if args.out else default_baseline_path()
    model.save(out)
    print(f"trained {model.name} on {len(docs)} FUNSD {args.split} documents in {seconds:.0f} s -> {out}")
    if args.eval_split and args.eval_split != "none":
        from dogood.metrics import funsd_entity_scores

        test = FunsdSource(root=args.source, split=args.eval_split)
        test_docs = [test.load(i) for i in test.ids()]
        preds = model.predict(test_docs)
        scores = funsd_entity_scores(test_docs, {k: p.tags for k, p in preds.items()})
        per_label = ", ".join(f"{k} {100 * v['f1']:.1f}" for k, v in scores["per_label"].items())
        print(f"FUNSD {args.eval_split} ({len(test_docs)} documents): entity precision {100 * scores['precision']:.2f}, "
              f"recall {100 * scores['recall']:.2f}, F1 {100 * scores['f1']:.2f} ({per_label})")
    return 0


def _check_report_folder(out: Path) -> None:
    """Refuse a report folder that is a file, or that holds report files dogood did not write."""
    if out.exists() and not out.is_dir():
        raise DogoodError(f"--out {out} is a file; the report is a folder (report.md, .csv, .json, .png)")
    existing = [out / f"report.{ext}" for ext in ("md", "csv", "json", "png") if (out / f"report.{ext}").exists()]
    if not existing:
        return
    try:
        info = json.loads((out / "report.json").read_text(encoding="utf-8"))
        ours = isinstance(info, dict) and {"model", "task", "metric", "datasets"} <= set(info)
    except (OSError, ValueError, RecursionError):
        ours = False
    if not ours:
        raise DogoodError(f"--out {out} holds {existing[0].name}, which is not a dogood eval report; refusing to "
                          "replace it: pick another --out")


def _reference_model(args, model, task: str, ood_sets, options: dict):
    """``--reference``: the model the corruption errors are divided by, and a note when there is none.

    Loaded only when some OOD config is a severity config (``<config>@<s>``). ``auto``: the task's baseline
    when it is trained (the CRF for token classification, the document baseline for document classification).
    """
    from dogood.models import default_baseline_path, default_document_baseline_path, load_model
    from dogood.robustness import split_severity

    spec = args.reference
    if spec == "none":
        return None, "--reference none"
    if not any(split_severity(d.config)[1] for d in ood_sets):
        return None, None
    if spec == "auto":
        path = {"token": default_baseline_path, "document": default_document_baseline_path}.get(task)
        if path is None:
            return None, f"no baseline for {task} datasets to compare with (pass --reference MODEL)"
        if not path().is_file():
            how = "dogood train-baseline" + (" --task document" if task == "document" else "")
            return None, f"no trained baseline at {path()} (train one with `{how}`, or pass --reference MODEL)"
        spec = "baseline"
    if spec == args.model:
        return model, None
    try:
        return load_model(spec, task=task, **options), None
    except DogoodError as exc:
        raise DogoodError(f"--reference {spec}: {exc}") from None


def cmd_eval(args) -> int:
    from dogood.evaluate import evaluate, resolve_datasets
    from dogood.models import load_model

    if args.quiet:
        import datasets

        datasets.disable_progress_bars()

    if args.out:
        _check_report_folder(Path(args.out))
    id_sets = resolve_datasets(args.id_dataset, args.split)
    if len(id_sets) != 1:
        names = ", ".join(d.name for d in id_sets)
        raise DogoodError(f"--id names {len(id_sets)} datasets ({names}); pick one with {args.id_dataset}:CONFIG")
    ood_sets = [d for spec in args.ood for d in resolve_datasets(spec, args.split)]
    options = {"device": args.device, "batch_size": args.batch_size}
    if args.labels:
        options["labels"] = [x.strip() for x in args.labels.split(",")]
    if args.box_level:
        options["box_level"] = args.box_level
    from dogood.models.loading import HubUnreachable

    try:
        model = load_model(args.model, task=id_sets[0].task, **options)
    except HubUnreachable as exc:
        raise HubUnreachable(f"--model: {exc}; pass a local model folder to --model", model=exc.model) from None
    reference, reference_note = _reference_model(args, model, id_sets[0].task, ood_sets, options)
    report = evaluate(model, id_sets[0], ood_sets, limit=args.limit, progress=not args.quiet,
                      require_same_ids=args.require_same_ids, resamples=args.bootstrap, seed=args.seed,
                      kieval=args.kieval, anls_official=args.anls_official, reference=reference,
                      reference_note=reference_note)
    for warning in report.warnings:
        print(f"dogood: warning: {warning}", file=sys.stderr)
    out = Path(args.out) if args.out else Path("eval") / model.name.replace("/", "_")
    paths = report.write(out)
    print(report.to_markdown().split("## Per dataset")[0].rstrip())
    print()
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
