"""MkDocs hook: the Sphinx roles dogood's docstrings use (``:func:`dogood.evaluate```, ``:class:`~x.Y```) shown as
code on the API page, not printed literally (mkdocstrings reads the docstrings as Markdown, which has no roles).

A role becomes the code of its target, ``~`` keeping the last part as Sphinx does; no link is made (most targets
are not on the site, and an unresolved cross-reference fails ``mkdocs build --strict``).
"""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|data|attr|exc|obj|const|pep|ref):<code>(~?)([^<]+)</code>")


def _code(m: re.Match) -> str:
    target = m.group(2)
    return f"<code>{target.rsplit('.', 1)[-1] if m.group(1) else target}</code>"


def on_page_content(html: str, **kwargs) -> str:
    return ROLE.sub(_code, html)
