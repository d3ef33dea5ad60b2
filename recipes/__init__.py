"""The recipes shipped with dogood (YAML files), found by name through :func:`dogood.pipeline.recipe.recipe_dirs`."""
