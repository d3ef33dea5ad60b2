"""``dogood build``: build a recipe into a dataset folder."""

from __future__ import annotations

from pathlib import Path

from dogood.cli.common import config_options, count


def add_parser(sub) -> None:
    p = sub.add_parser("build", help="build a recipe into a dataset folder")
    p.add_argument("recipe", help="recipe name (see `dogood list`) or path to a recipe YAML")
    p.add_argument("--source", help="where the source data is (e.g. the FUNSD dataset folder)")
    p.add_argument("--out", help="output dataset folder (default: out/<recipe name>)")
    p.add_argument("--seed", type=int, help="override the recipe's seed")
    p.add_argument("--num-proc", type=count, default=1,
                   help="processes, the driver included, at most one per document (output is identical for any number)")
    p.add_argument("--limit", type=count, help="only the first N documents of each split")
    p.add_argument("--on-error", choices=["raise", "skip"], default="raise",
                   help="stop at a bad document (raise) or leave it out and list it in the card (skip)")
    config_options(p, "build only these configs",
                    "override a parameter of a config's shifts, e.g. bert_attack.model=/models/bert (CONFIG may "
                    "be a glob; VALUE is YAML; repeatable); the card lists every override")
    p.add_argument("--split", action="append", dest="splits", metavar="NAME",
                   help="build these splits instead of the recipe's, e.g. train (a comma list; repeatable)")
    p.add_argument("--copies", type=count, metavar="K",
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
    p.add_argument("--quads", action="store_true", default=None,
                   help="also write each word's four corners after the geometric shifts (rotate, distort, capture) "
                        "in a 'quads' column (absolute pixels); default: the recipe's quads (off)")
    p.add_argument("--ray", metavar="ADDRESS", help="run the shards on Ray with --num-proc actors, each reading and "
                                                    "writing whole shards: 'local' starts Ray here, 'auto' or "
                                                    "ray://host:port joins a cluster (pip install \"dogood[distributed]\")")
    p.set_defaults(func=cmd_build)


def cmd_build(args) -> int:
    from dogood.pipeline.build import build
    from dogood.pipeline.recipe import load_recipe

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
        quads=args.quads,
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
