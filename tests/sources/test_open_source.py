"""Opening a source (issue 36): a ``file:`` URL as ``--source`` or a source option is refused before anything is
built (before, it was refused only by the card's scan, after the whole build)."""

from __future__ import annotations

import pytest

from dogood.cli import main
from dogood.core.errors import SourceError
from dogood.sources import open_source


@pytest.mark.parametrize("spec, path", [({"kind": "funsd"}, "file:///data/funsd"),
                                        ({"kind": "hf", "name": "FILE:///data/rows.parquet"}, None),
                                        ({"kind": "rvl_cdip", "parquet": "file://host/data/x.parquet"}, None)])
def test_a_file_url_source_is_refused_before_the_build(tmp_path, capsys, spec, path):
    with pytest.raises(SourceError, match="is a file: URL of this machine; pass the path itself"):
        open_source(spec, "test", path)
    recipe = tmp_path / "r.yaml"
    options = ", ".join(f"{k}: {v!r}" for k, v in spec.items())
    recipe.write_text(f"name: r\nversion: 1.0.0\nsource: {{{options}}}\nconfigs:\n  plain: []\n")
    argv = ["build", str(recipe), "--out", str(tmp_path / "out"), "--quiet"] + (["--source", path] if path else [])
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "pass the path itself" in err.strip().splitlines()[-1]
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".out*"))
