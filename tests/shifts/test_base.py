"""Which shift parameters are paths (issue 36): only those a shift declares (:attr:`Shift.path_params`) are ever
read from this machine and recorded by name and content hash; text that looks like a path stays text.

Before, ``texts: ["/usr/share"]`` was hashed as a folder (735 MB read for a seed), and a FIFO inside it hung
``build`` and ``plan``.
"""

from __future__ import annotations

import os
import subprocess
import sys

from dogood.core import fs
from dogood.pipeline.recipe import parse_recipe
from dogood.shifts import SHIFTS, make_shift
from dogood.shifts.base import recorded_step


def test_text_that_looks_like_a_path_is_never_read(tmp_path, monkeypatch):
    def no_reading(*args, **kwargs):
        raise AssertionError("a text parameter was read as a path")

    (tmp_path / "folder").mkdir()
    monkeypatch.setattr(fs, "_content_sha256", no_reading)
    for text in ("/usr/share", str(tmp_path / "folder"), "./x", "~"):
        shift = make_shift({"shift": "watermark", "texts": [text]})
        assert shift.params()["texts"] == [text] and text in shift.step_key()
        assert recorded_step({"shift": "watermark", "texts": [text]}) == {"shift": "watermark", "texts": [text]}
    recipe = parse_recipe({"name": "t", "version": "1.0.0", "source": {"kind": "funsd"},
                           "configs": {"w": [{"shift": "watermark"}]}}).with_overrides(["w.texts=/usr/share"])
    assert recipe.overrides == ("w.texts=/usr/share",) and recipe.recorded_chain("w")[0]["texts"] == "/usr/share"


def test_declared_path_parameters_are_recorded_by_name_and_content(tmp_path):
    annotations = tmp_path / "instances.json"
    annotations.write_text('{"images": []}')
    shift = make_shift({"shift": "natural_background", "annotations": str(annotations)})
    shown = shift.params()["annotations"]
    assert shown.startswith("instances.json#sha256:") and str(tmp_path) not in shift.step_key()
    step = recorded_step({"shift": "natural_background", "annotations": str(annotations)})
    assert step["annotations"] == shown
    recipe = parse_recipe({"name": "t", "version": "1.0.0", "source": {"kind": "funsd"},
                           "configs": {"n": [{"shift": "natural_background"}]}})
    assert recipe.with_overrides([f"n.annotations={annotations}"]).overrides == (f"n.annotations={shown}",)
    assert {name for name, cls in SHIFTS.items() if cls.path_params} == {
        "bert_attack", "capture", "move", "natural_background"}


def test_a_fifo_inside_a_path_parameter_is_passed_over_not_waited_on(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    os.mkfifo(folder / "pipe")
    code = ("from dogood.core.fs import recorded_path, sha256_file, FileRefused\n"
            f"print(recorded_path({str(folder)!r}))\n"
            f"try:\n    sha256_file({str(folder / 'pipe')!r})\nexcept FileRefused as exc:\n    print(exc.reason)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first.startswith("model#sha256:") and "is a FIFO" in second
