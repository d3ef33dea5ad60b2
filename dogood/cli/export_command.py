"""``dogood export``: a built folder as FUNSD JSON + PNG, COCO-style boxes or flat JSONL."""

from __future__ import annotations


def add_parser(sub) -> None:
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


def cmd_export(args) -> int:
    from dogood.share.export import export

    result = export(args.folder, args.format, args.to, configs=args.configs, level=args.level,
                    overwrite=args.overwrite)
    n = sum(n for splits in result["configs"].values() for n in splits.values())
    print(f"exported {n} document(s) of {len(result['configs'])} config(s) as {args.format} -> {result['path']}")
    return 0
