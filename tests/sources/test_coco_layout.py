"""The coco_layout source on hostile COCO folders (issue 36): it opens only images inside its image folder, reads
only regular files, and refuses malformed or oversized annotation files with one error naming the file and entry.

Before, ``file_name: ../../private/secret.png`` (or an absolute name) built with exit 0, put the private page into
the rows and its local path (``/`` as ``_``) into the ids; ``/dev/zero`` reached 3.9 GB and a MemoryError;
duplicate category ids relabelled regions, unknown ones were tracebacks.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from PIL import Image

from dogood.cli import main
from dogood.core import fs
from dogood.core.errors import DocumentError, SourceError
from dogood.sources.coco_layout import CocoLayoutSource

RECIPE = """\
name: lay
version: 1.0.0
source: {kind: coco_layout}
splits: [test]
configs:
  original: []
"""


def page(path: Path, shade: int = 255) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("L", (80, 60), shade).save(path)


@pytest.fixture
def coco(tmp_path):
    """``make(images=..., annotations=..., categories=...)``: a COCO folder ``tmp_path/coco`` with ``test.json``
    and the pages ``test/a.png`` and ``test/b.png``; a private page lies at ``tmp_path/private/secret.png``."""
    root = tmp_path / "coco"
    page(root / "test" / "a.png")
    page(root / "test" / "b.png")
    page(tmp_path / "private" / "secret.png", 7)

    def make(images=None, annotations=None, categories=None, raw=None) -> Path:
        data = {"images": images if images is not None else [{"id": 1, "file_name": "a.png"},
                                                             {"id": 2, "file_name": "b.png"}],
                "annotations": annotations if annotations is not None else [
                    {"id": 1, "image_id": 1, "category_id": 1, "bbox": [5, 5, 20, 10]},
                    {"id": 2, "image_id": 2, "category_id": 2, "bbox": [10, 20, 30, 10]}],
                "categories": categories if categories is not None else [{"id": 1, "name": "title"},
                                                                         {"id": 2, "name": "text"}]}
        (root / "test.json").write_text(raw if raw is not None else json.dumps(data))
        return root

    return make


def build(tmp_path, root, capsys) -> tuple[int, str]:
    recipe = tmp_path / "lay.yaml"
    recipe.write_text(RECIPE)
    code = main(["build", str(recipe), "--source", str(root), "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return code, (err.strip().splitlines() or [""])[-1]


def test_a_clean_folder_builds(coco, tmp_path, capsys):
    root = coco()
    source = CocoLayoutSource(root=root)
    assert source.ids() == ["a", "b"] and source.entity_labels() == ("title", "text")
    assert [w.text for w in source.load("b").words] == ["text"]
    assert build(tmp_path, root, capsys)[0] == 0


@pytest.mark.parametrize("name", ["../../private/secret.png", "ABS", "test/../../private/secret.png",
                                  "file:///etc/passwd"])
def test_image_names_that_leave_the_folder_are_refused_before_any_page_is_read(coco, tmp_path, capsys, name):
    name = str(tmp_path / "private" / "secret.png") if name == "ABS" else name
    root = coco(images=[{"id": 1, "file_name": "a.png"}, {"id": 2, "file_name": name}])
    code, line = build(tmp_path, root, capsys)
    assert code == 1 and line.startswith("dogood: error: ")
    assert "test.json: images[1] (id 2): image file_name" in line and ("absolute" in line or "leaves" in line)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("target", ["private", "/dev/zero", "fifo"])
def test_a_link_out_of_the_folder_or_a_special_file_is_refused_naming_the_document(coco, tmp_path, capsys, target):
    root = coco()
    (root / "test" / "b.png").unlink()
    if target == "fifo":
        os.mkfifo(root / "test" / "b.png")
    else:
        (root / "test" / "b.png").symlink_to(tmp_path / "private" / "secret.png" if target == "private" else target)
    with pytest.raises(DocumentError, match=r"document 'b'.*(outside|FIFO)"):
        CocoLayoutSource(root=root).load("b")
    code, line = build(tmp_path, root, capsys)
    assert code == 1 and "document 'b'" in line and ("outside" in line or "FIFO" in line)
    assert not (tmp_path / "out").exists()


def test_a_link_inside_the_folder_is_read(coco, tmp_path):
    root = coco()
    shutil.move(root / "test" / "b.png", root / "test" / "real-b.png")
    (root / "test" / "b.png").symlink_to(root / "test" / "real-b.png")
    assert CocoLayoutSource(root=root).load("b").width == 80


def test_dev_zero_named_through_a_link_is_refused_within_a_memory_bound(coco, tmp_path, bounded_run):
    root = coco()
    (root / "test" / "b.png").unlink()
    (root / "test" / "b.png").symlink_to("/dev/zero")
    (tmp_path / "lay.yaml").write_text(RECIPE)
    run = bounded_run(f"from dogood.cli import main\nsys.exit(main(['build', {str(tmp_path / 'lay.yaml')!r}, "
                      f"'--source', {str(root)!r}, '--out', 'out', '--quiet']))")
    assert run.code == 1 and run.last_line.startswith("dogood: error: ") and "document 'b'" in run.last_line, run.err
    assert run.peak_mib < 1024, run.peak_mib


@pytest.mark.parametrize("change, message", [
    ({"categories": [{"id": 1, "name": "title"}, {"id": 1, "name": "text"}]}, "share the id 1"),
    ({"categories": [{"id": "1", "name": "title"}]}, r"categories\[0\] is not an object with a whole-number id"),
    ({"categories": [{"id": 1.0, "name": "title"}]}, "whole-number id"),
    ({"categories": [{"id": 1, "name": "x" * 2000}]}, "2000 characters"),
    ({"annotations": [{"id": 9, "image_id": 1, "category_id": 7, "bbox": [0, 0, 1, 1]}]},
     r"annotations\[0\] \(id 9\) has category_id 7, which no category has"),
    ({"annotations": [{"id": 9, "image_id": 1, "category_id": "1", "bbox": [0, 0, 1, 1]}]}, "category_id '1'"),
    ({"annotations": [{"id": 9, "image_id": 1, "bbox": [0, 0, 1, 1]}]}, "category_id None"),
    ({"annotations": [[1, 2, 3]]}, r"annotations\[0\] is not an object"),
    ({"images": [{"id": [1], "file_name": "a.png"}]}, r"images\[0\] is not an object with an id"),
    ({"images": [{"id": 1, "file_name": 5}]}, r"images\[0\]"),
    ({"raw": '{"images": {}, "categories": []}'}, "not a COCO annotation file"),
    ({"raw": '[1, 2]'}, "not a COCO annotation file"),
    ({"raw": '{"images": [], "categories": [], "annotations": [' + "[" * 100 + "]" * 100 + "]}"}, "nested too deeply: 102 levels"),
    ({"raw": '{"images": [], "categories": [{"id": ' + "9" * 5000 + ', "name": "x"}]}'}, "malformed JSON"),
])
def test_malformed_annotation_files_are_one_error_naming_the_file_and_entry(coco, tmp_path, capsys, change, message):
    root = coco(**change)
    with pytest.raises(SourceError, match=message) as exc:
        CocoLayoutSource(root=root)
    assert "test.json" in str(exc.value)
    code, line = build(tmp_path, root, capsys)
    assert code == 1 and line.startswith("dogood: error: ") and "test.json" in line


def test_too_many_regions_on_a_page_are_refused(coco, tmp_path):
    fs.set_limits(fs.Limits(page_words=3))
    try:
        root = coco(annotations=[{"id": k, "image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1]} for k in range(4)])
        with pytest.raises(SourceError, match=r"images\[0\] \('a.png'\): 4 regions on a page, more than the 3"):
            CocoLayoutSource(root=root)
    finally:
        fs.set_limits(None)


def test_a_fifo_as_the_annotation_file_is_refused_without_waiting(coco, tmp_path):
    root = coco()
    (root / "test.json").unlink()
    os.mkfifo(root / "test.json")
    with pytest.raises(SourceError, match="FIFO"):
        CocoLayoutSource(root=root)
