"""The recipes shipped with dogood (YAML files), found by name through :func:`dogood.recipe.recipe_dirs`."""
