"""Packages for setuptools; everything else is in ``pyproject.toml``.

Every package under ``dogood/`` is found (``__init__.py`` or not); ``recipes/``
and ``data_cards/`` ship as ``dogood.recipes`` and ``dogood.data_cards``
(``package-dir`` in ``pyproject.toml``), which ``[tool.setuptools.packages.find]``
cannot add to what it finds.
"""

from setuptools import find_namespace_packages, setup

setup(packages=find_namespace_packages(include=["dogood", "dogood.*"], exclude=["*.__pycache__"])
      + ["dogood.recipes", "dogood.data_cards"])
