"""``dogood plan RECIPE``: before building, which configs can run here, which cannot and why, and how long.

``--cores N`` (or ``--ray-cpus N`` for a Ray cluster) and ``--pages N`` plan a build bigger than this machine's:
``dogood plan rvl-cdip-i1 --pages 400000 --cores 64``. The estimate ends with the figures it rests on, each with
where it was measured.
"""

from __future__ import annotations

from dogood.cli.common import count

#: Pages of the full releases, for the hint when a source here is a sample of one (the official label files).
FULL_PAGES = {"rvl_cdip": {"train": 320_000, "val": 40_000, "validation": 40_000, "test": 40_000}}


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
    p.add_argument("--num-proc", "--cores", type=count, default=1, dest="num_proc", metavar="N",
                   help="worker processes (cores) the build would use (default 1)")
    p.add_argument("--ray-cpus", type=count, metavar="N",
                   help="plan a build on a Ray cluster of N CPUs (build --ray with --num-proc N)")
    p.add_argument("--pages", type=count, metavar="N",
                   help="estimate for N source pages in all, not the source's (e.g. 400000: all of RVL-CDIP)")
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
    workers = args.ray_cpus or args.num_proc
    plan = plan_recipe(recipe, source_path=args.source, configs=configs, splits=splits, limit=args.limit,
                       num_proc=workers, copies=args.copies, pages=args.pages, ray=args.ray_cpus is not None)
    print("\n".join(plan.lines() + [""] + figure_lines(plan) + hint_lines(plan, args.pages)))
    return 0


def figure_lines(plan) -> list[str]:
    """The figures the estimate rests on, each with where it was measured (:mod:`dogood.pipeline.cpu_costs`)."""
    from dogood.pipeline import cpu_costs
    from dogood.pipeline.preflight import CANNOT

    recipe = plan.recipe
    kind = recipe.source.get("kind", "?")
    figures: dict[str, tuple[float | None, str]] = {}
    read = cpu_costs.READ_MS.get(kind)
    figures[f"read a {kind} page"] = read if read is not None else (cpu_costs.read_ms(kind), "no figure: 1 ms")
    for c in plan.configs:
        if c.verdict == CANNOT or c.seconds is None:
            continue
        for what, ms, where in cpu_costs.config_figures(recipe.chain(c.config), severity=c.config in recipe.levels):
            figures.setdefault(what, (ms, where))
    width = max(len(w) for w in figures)
    lines = ["The estimate's figures (CPU ms a page, dogood.pipeline.cpu_costs; measured on 2 shared AMD EPYC "
             "cores):"]
    lines += [f"  {what.ljust(width)}  {ms:8.2f}  {where}" for what, (ms, where) in figures.items() if ms is not None]
    busy = cpu_costs.OCCUPANCY["ray" if plan.ray else "processes"]
    if plan.num_proc > 1:
        lines.append(f"  workers busy {busy[0]:.0%} of the time: {busy[1]}")
    if plan.ray:
        lines.append(f"  Ray's actors start in {cpu_costs.RAY_START_MS[0] / 1000:g} s: {cpu_costs.RAY_START_MS[1]}")
    lines.append(f"  per config: {cpu_costs.CONFIG_FIXED_MS[0]:g} ms alone ({cpu_costs.CONFIG_FIXED_MS[1]}) and a "
                 f"preview, {cpu_costs.PREVIEW_MS[0]:g} ms ({cpu_costs.PREVIEW_MS[1]})")
    lines.append("  wall = pages x CPU per page / (workers x busy share) + the above; a machine faster or slower "
                 "than these cores scales it. The multi-core figures: docs/building.md, 'Builds that scale'.")
    return lines


def hint_lines(plan, pages: int | None) -> list[str]:
    """When the source here is a sample of a bigger release (3 RVL-CDIP pages), how to plan for all of it."""
    full = FULL_PAGES.get(plan.recipe.source.get("kind", ""), {})
    total = sum(full.get(split, 0) for split in plan.documents)
    found = sum(n or 0 for n in plan.documents.values())
    if pages is not None or not total or found >= total:
        return []
    splits = ", ".join(plan.documents)
    return ["", f"The full release has {total:,} pages in {splits} ({found:,} here): add --pages {total} to plan "
                f"for all of them."]
