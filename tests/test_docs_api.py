"""The API page of the documentation site shows each function's name, signature and parameters, and no Sphinx
role printed literally (``:func:``), checked on the HTML ``mkdocs build`` makes of ``docs/api.md`` with the
project's own mkdocstrings settings and hooks."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def api_html(tmp_path_factory):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    pytest.importorskip("material")
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("tag:yaml.org,2002:python/name:", lambda loader, suffix, node: suffix)
    config = yaml.load((REPO / "mkdocs.yml").read_text(), Loader=Loader)
    plugins = [p for p in config["plugins"] if isinstance(p, dict) and "mkdocstrings" in p]
    plugins[0]["mkdocstrings"]["handlers"]["python"]["paths"] = [str(REPO)]
    site = tmp_path_factory.mktemp("api-site")
    (site / "docs").mkdir()
    shutil.copy(REPO / "docs" / "api.md", site / "docs" / "index.md")
    small = {"site_name": "api", "docs_dir": "docs", "site_dir": "site", "theme": config["theme"],
             "plugins": ["search", *plugins], "markdown_extensions": ["admonition", "attr_list", "tables", "toc"],
             "hooks": [str(REPO / h) for h in config.get("hooks", [])],
             "validation": {"links": {"not_found": "ignore", "anchors": "ignore", "unrecognized_links": "ignore"}}}
    (site / "mkdocs.yml").write_text(yaml.safe_dump(small))
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(site / "mkdocs.yml")],
                          capture_output=True, text=True, cwd=site, env={"NO_MKDOCS_2_WARNING": "1", "PATH": ""})
    assert done.returncode == 0, done.stderr
    return (site / "site" / "index.html").read_text(encoding="utf-8")


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)).replace("&gt;", ">")


def test_every_object_has_its_name_as_a_heading(api_html):
    for name in ("dogood.build", "dogood.evaluate", "dogood.eval.compare.compare", "dogood.make_shift",
                 "dogood.eval.report.EvalReport", "dogood.eval.tasks.base.Task"):
        assert f'id="{name}"' in api_html, name


def test_functions_show_their_signature_and_parameters(api_html):
    text = _text(api_html)
    # one line, or one parameter a line when a formatter (ruff, black) is installed: mkdocstrings uses it
    assert re.search(r"compare\( ?before: Any, after: Any, datasets: Any,", text)
    assert "resamples: int = DEFAULT_RESAMPLES" in text
    section = text[text.index("dogood.eval.run.evaluate"):]
    assert "Parameters:" in section and "require_same_ids" in section and "Refuse OOD sets" in section


def test_no_sphinx_role_is_printed_literally(api_html):
    assert not re.search(r":(func|class|mod|meth|data|attr|exc):", api_html)
    assert "<code>load_model</code>" in api_html or "<code>dogood.models.load_model</code>" in api_html
