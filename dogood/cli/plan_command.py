"""``dogood plan RECIPE``: before building, which configs can run here, which cannot and why, and how long."""

from __future__ import annotations

from dogood.cli.common import count


def add_parser(sub) -> None:
    p = sub.add_parser("plan", help="before a build: which configs can run on this machine (dependencies, data, "
                                    "models), which cannot and why, and an estimated time")
    p.add_argument("recipe", help="a recipe name (dogood list) or a YAML path")
    p.add_argument("--source", help="where the source data is, as for build")
    p.add_argument("--config", action="append", dest="configs", metavar="NAME",
                   help="only these configs: a name, a glob or a comma list (repeatable)")
    p.add_argument("--exclude-config", action="append", dest="exclude_configs", metavar="NAME",
                   help="leave these configs out (repeatable)")
    p.add_argument("--set", action="append", dest="overrides", metavar="CONFIG.PARAM=VALUE", default=[],
                   help="override a parameter, as for build")
    p.add_argument("--split", action="append", dest="splits", metavar="NAME",
                   help="plan these splits instead of the recipe's (repeatable)")
    p.add_argument("--limit", type=count, help="only the first N documents of each split")
    p.add_argument("--num-proc", type=count, default=1, help="worker processes the build would use (default 1)")
    p.add_argument("--copies", type=count, help="rows per document and config")
    p.set_defaults(func=cmd_plan)


def cmd_plan(args) -> int:
    from dogood.pipeline.preflight import plan_recipe
    from dogood.pipeline.recipe import load_recipe

    recipe = load_recipe(args.recipe)
    if args.overrides:
        recipe = recipe.with_overrides(args.overrides)
    configs = recipe.select_configs(args.configs, args.exclude_configs) if args.configs or args.exclude_configs \
        else None
    splits = [s.strip() for item in args.splits for s in item.split(",") if s.strip()] if args.splits else None
    plan = plan_recipe(recipe, source_path=args.source, configs=configs, splits=splits, limit=args.limit,
                       num_proc=args.num_proc, copies=args.copies)
    print("\n".join(plan.lines()))
    return 0
