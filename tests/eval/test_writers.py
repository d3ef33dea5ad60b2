"""The report's one write path: a folder dogood did not write is never replaced, a full disk names the file, and a
kill at any point leaves the earlier report or nothing a later run cannot remove."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dogood.core.errors import DogoodError
from dogood.core.fs import PARTIAL_MARKER
from dogood.eval.report import EvalReport
from dogood.eval.writers import check_report_folder, is_report_folder


def _report(value: float = 80.0) -> EvalReport:
    row = {"dataset": "funsd", "value": value, "f1": value, "precision": value, "recall": value, "documents": 2,
           "split": "test", "location": "funsd source", "per_label": {"QUESTION": {"f1": value}},
           "error_rates": {"other": 0.0}}
    ood = {**row, "dataset": "funsd-l/merge", "config": "merge", "value": value - 10, "f1": value - 10,
           "id_value": value, "change": -10.0, "relative_change": -12.5, "families": ["layout"], "note": None}
    return EvalReport(model="m", task="token", id=row, ood=[ood])


def test_a_folder_holding_a_users_layout_report_is_never_replaced(tmp_path, capsys):
    """`eval --task layout --out F` replaced a folder holding only the user's own ``layout_report.md`` (the folder
    was checked by file name only)."""
    from dogood.cli import main

    mine = tmp_path / "F"
    mine.mkdir()
    (mine / "layout_report.md").write_text("# my notes\n")
    with pytest.raises(DogoodError, match="layout_report.md, which is not a dogood eval report"):
        _report().write(mine)
    assert main(["eval", "--task", "layout", "--id", "x", "--ood", "y", "--predictions", str(tmp_path),
                 "--out", str(mine)]) == 1
    err = capsys.readouterr().err
    assert err.count("dogood: error:") == 1 and "layout_report.md, which is not a dogood eval report" in err
    assert [p.name for p in mine.iterdir()] == ["layout_report.md"]
    assert (mine / "layout_report.md").read_text() == "# my notes\n"


def test_an_earlier_versions_layout_report_is_replaced_by_the_one_report(tmp_path):
    old = tmp_path / "eval" / "layout"
    old.mkdir(parents=True)
    (old / "layout_report.json").write_text(json.dumps({"task": "layout", "metric": "mAP", "datasets": []}))
    (old / "layout_report.md").write_text("# Layout analysis\n")
    assert is_report_folder(old)
    paths = _report().write(old)
    assert sorted(p.name for p in old.iterdir()) == ["report.csv", "report.json", "report.md", "report.png"]
    assert json.loads(paths["json"].read_text())["scale"] == "percent"
    assert sorted(p.name for p in old.parent.iterdir()) == ["layout"]  # no partial or old folder left


def test_a_full_disk_names_the_file_and_leaves_the_earlier_report(tmp_path, monkeypatch):
    out = tmp_path / "report"
    _report(80.0).write(out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    real = Path.write_text

    def full(self, *args, **kwargs):
        if self.name == "report.csv":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full)
    with pytest.raises(DogoodError) as exc:
        _report(50.0).write(out)
    assert str(exc.value) == f"cannot write the report file {out / 'report.csv'}: No space left on device"
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # the earlier report, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]  # no partial folder left


def test_the_cli_names_the_file_on_a_full_disk(funsd_test, tmp_path, monkeypatch, capsys):
    from dogood.cli import main
    from dogood.core.schema import iob_tags

    preds = tmp_path / "gold.jsonl"
    doc = funsd_test.load(funsd_test.ids()[0])
    preds.write_text(json.dumps({"id": doc.id, "ner_tags": iob_tags(doc)[1]}) + "\n")
    real = Path.write_text

    def full(self, *args, **kwargs):
        if self.name == "report.json":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full)
    out = tmp_path / "r"
    assert main(["eval", "--model", str(preds), "--id", "funsd", "--ood", "funsd", "--limit", "1", "--bootstrap", "0",
                 "--quiet", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("dogood: error:") == 1 and "Traceback" not in err
    assert f"cannot write the report file {out / 'report.json'}: No space left on device" in err
    assert not out.exists() and not list(tmp_path.glob(".r.*"))


KILLED = """
import os, sys
from pathlib import Path
import dogood.eval.writers as w
sys.path.insert(0, {tests!r})
from test_writers import _report
w.commit_folder = lambda tmp, out: os._exit(9)  # killed after the report is whole, before its rename
_report(50.0).write(Path({out!r}))
"""


def test_a_kill_before_the_rename_leaves_nothing_a_later_run_cannot_remove(tmp_path):
    """A kill between the report being sealed and renamed left a ``.partial`` folder no later run removed. The
    folder keeps dogood's mark until it is in place: the next run removes it (its process is gone)."""
    out = tmp_path / "report"
    _report(80.0).write(out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    script = KILLED.format(tests=str(Path(__file__).parent), out=str(out))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 9, done.stderr
    (left,) = tmp_path.glob(".report.partial-*")
    assert (left / PARTIAL_MARKER).is_file() and (left / "report.json").is_file()  # whole, and still marked
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # the earlier report untouched
    _report(60.0).write(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]  # the leftover removed
    assert json.loads((out / "report.json").read_text())["datasets"][0]["value"] == 60.0


def test_a_kill_after_the_rename_leaves_a_report_the_next_run_replaces(tmp_path):
    """Killed after the rename, before the mark is dropped: the folder is a report (the mark is one of its files)."""
    out = tmp_path / "report"
    _report(80.0).write(out)
    (out / PARTIAL_MARKER).write_text(f"{os.getpid()}\n")
    assert is_report_folder(out)
    check_report_folder(out)
    _report(70.0).write(out)
    assert sorted(p.name for p in out.iterdir()) == ["report.csv", "report.json", "report.md", "report.png"]
