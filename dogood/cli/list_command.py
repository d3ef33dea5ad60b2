"""``dogood list``: the recipes, one line each; with a recipe, its configs and chains."""

from __future__ import annotations

import sys


def add_parser(sub) -> None:
    p = sub.add_parser("list", help="list the recipes, one line each (with RECIPE: its configs and their chains)")
    p.add_argument("recipe", nargs="?", help="a recipe name or YAML path: list its configs")
    p.add_argument("--markdown", action="store_true",
                   help="print the recipe table (configs, source, the extra each needs) as Markdown")
    p.set_defaults(func=cmd_list)


def cmd_list(args) -> int:
    from dogood.pipeline.recipe import list_recipes, load_recipe, skipped_recipe_files

    if args.markdown:
        from dogood.pipeline.preflight import recipes_table_markdown

        print(recipes_table_markdown(), end="")
        return 0
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
    for path in skipped_recipe_files():
        print(f"dogood: note: {path} is not a regular file (a folder, a FIFO or a link to nothing): not read",
              file=sys.stderr)
    return 0
