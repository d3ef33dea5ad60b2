"""``dogood push``: build and publish the datasets of a manifest to the Hub."""

from __future__ import annotations

from dogood.cli.common import config_options, count


def add_parser(sub) -> None:
    p = sub.add_parser("push", help="build and publish the datasets of a manifest (hub_upload/*.yaml) to the Hub")
    p.add_argument("manifest", help="publish manifest: which recipes and configs go to which Hub dataset repo")
    p.add_argument("--dry-run", metavar="DIR", help="stage each dataset into DIR exactly as it would be uploaded; "
                                                    "send nothing (no token needed)")
    p.add_argument("--build-dir", default="out", help="where builds are made or reused (default: out)")
    p.add_argument("--source", help="where the source data is")
    p.add_argument("--num-proc", type=count, default=1, help="worker processes for builds")
    config_options(p, "push only these of the manifest's configs (a dataset left with none is not pushed)",
                    "override a parameter of matching configs' shifts, as `dogood build --set` (repeatable); "
                    "the card lists every override")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_push)


def cmd_push(args) -> int:
    from dogood.share.publish import push

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
