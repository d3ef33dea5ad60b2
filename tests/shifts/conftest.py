"""Fixtures the shift tests share: the FUNSD test forms they shift."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def pages(funsd_test):
    """The first 10 FUNSD test forms."""
    return [funsd_test.load(i) for i in funsd_test.ids()[:10]]
