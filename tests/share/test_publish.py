"""Publishing: manifests, staged folders and cards, checked before anything is sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from dogood.pipeline.recipe import load_recipe
from dogood.share.publish import PublishError, load_manifest, local_oids, push, same_content


def write_manifest(folder: Path, body: str) -> Path:
    path = folder / "manifest.yaml"
    path.write_text(body, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "body, message",
    [
        ("datasets:\n  - {repo: me/x, recipe: no-such-recipe}\n", "unknown recipe|not found|no recipe"),
        ("datasets:\n  - {repo: me/x, recipe: funsd-l, version: '1.1'}\n", "not semver"),
        ("datasets:\n  - {repo: me/x, recipe: funsd-l, version: 9.9.9}\n", "differs from recipe funsd-l"),
        ("datasets:\n  - {repo: me/x, recipe: funsd-l, configs: [nope]}\n", "has no config nope"),
        ("datasets:\n  - {repo: not-a-repo-id, recipe: funsd-l}\n", "owner/name"),
        ("datasets:\n  - {repo: me/x, recipe: funsd-l, colour: red}\n", "unknown key"),
        ("datasets:\n  - {repo: me/x, recipe: funsd-l}\n  - {repo: me/x, recipe: funsd}\n", "listed twice"),
        ("datasets: []\n", "non-empty list"),
        ("datasets: [\n", "not valid YAML"),
        ("datasets:\n  - {repo: me/x, recipe: funsd-l, results: [missing.json]}\n", "cannot read eval report"),
    ],
)
def test_bad_manifests_are_refused_with_the_reason(tmp_path, body, message):
    with pytest.raises(PublishError, match=message) as err:
        load_manifest(write_manifest(tmp_path, body))
    assert "manifest.yaml" in str(err.value)


def test_shipped_manifests_are_valid():
    folder = Path(__file__).resolve().parents[2] / "hub_upload"
    names = sorted(p.name for p in folder.glob("*.yaml"))
    assert names
    for path in folder.glob("*.yaml"):
        for entry in load_manifest(path):
            assert entry.tag == f"v{entry.recipe.version}"


def test_a_missing_token_stops_before_any_build_or_upload(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # no stored login
    import huggingface_hub.constants as c

    monkeypatch.setattr(c, "HF_TOKEN_PATH", str(tmp_path / "hf-home" / "token"))
    monkeypatch.setattr(c, "HF_STORED_TOKENS_PATH", str(tmp_path / "hf-home" / "stored_tokens"))
    manifest = write_manifest(tmp_path, "datasets:\n  - {repo: me/funsd-l, recipe: funsd-l, configs: [merge]}\n")
    with pytest.raises(PublishError, match="no Hugging Face token"):
        push(manifest, build_dir=tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def staged(funsd_dir, tmp_path_factory):
    base = tmp_path_factory.mktemp("publish")
    report = {"model": "m", "metric": "f1", "datasets": [
        {"dataset": "funsd", "role": "id", "split": "test", "value": 0.7127, "drop": None},
        {"dataset": "funsd-l/merge", "role": "ood", "split": "test", "value": 0.2301, "drop": 0.4826}]}
    (base / "report.json").write_text(json.dumps(report))
    manifest = write_manifest(base, "datasets:\n  - repo: me/funsd-l\n    recipe: funsd-l\n"
                                    "    configs: [merge, merge_x0_y0]\n    results: [report.json]\n")
    results = push(manifest, build_dir=base / "out", dry_run=base / "dry", source=str(funsd_dir), progress=False)
    return results[0].folder, base


def test_dry_run_stages_the_card_for_the_repo(staged):
    folder, _ = staged
    card = (folder / "README.md").read_text()
    header = yaml.safe_load(card.split("---")[1])
    configs = {c["config_name"]: c["data_files"] for c in header["configs"]}
    assert set(configs) == {"merge", "merge_x0_y0"}
    for name, files in configs.items():
        for f in files:
            assert list(folder.glob(f["path"])), f["path"]  # every YAML config points at uploaded files
    assert header["pretty_name"] == "funsd-l" and header["license"]
    assert header["task_categories"] == ["token-classification"]
    assert {i["config_name"] for i in header["dataset_info"]} == {"merge", "merge_x0_y0"}
    version = load_recipe("funsd-l").version
    assert f'load_dataset("me/funsd-l", "merge", split="test", revision="v{version}")' in card
    for config in ("merge", "merge_x0_y0"):
        assert f"](previews/{config}.jpg)" in card and (folder / "previews" / f"{config}.jpg").is_file()
    assert "| funsd-l/merge | ood | test | 23.01 | -48.26 |" in card  # the results table
    assert "Do-GOOD" in card and "Licences" in card


def test_staging_does_not_touch_the_build(staged):
    folder, base = staged
    built = base / "out" / "funsd-l"
    assert f'load_dataset("{built.name}", ' in (built / "README.md").read_text()  # the local card names its folder
    assert same_content({k: v for k, v in local_oids(built).items() if k != "README.md"},
                        {k: v[0] for k, v in local_oids(folder).items() if k != "README.md"})


def test_a_finished_build_is_reused(staged, funsd_dir):
    folder, base = staged
    built = base / "out" / "funsd-l" / "data" / "merge"
    before = {p.name: p.stat().st_mtime_ns for p in built.iterdir()}
    manifest = base / "manifest.yaml"
    push(manifest, build_dir=base / "out", dry_run=base / "dry2", source=str(funsd_dir), progress=False)
    assert {p.name: p.stat().st_mtime_ns for p in built.iterdir()} == before


def test_push_takes_config_globs_exclusions_and_set_as_build_does(funsd_dir, tmp_path, capsys):
    from dogood.cli import main

    manifest = write_manifest(tmp_path, "datasets:\n  - {repo: me/funsd-t, recipe: funsd-t}\n"
                                        "  - {repo: me/funsd-l, recipe: funsd-l}\n")
    code = main(["push", str(manifest), "--dry-run", str(tmp_path / "dry"), "--build-dir", str(tmp_path / "out"),
                 "--source", str(funsd_dir), "--quiet", "--config", "char_del*,ms_char_swap,homoglyph_swap",
                 "--exclude-config", "homoglyph_*", "--set", "char_deletion.fraction=0.5"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "me/funsd-t v" in out and "me/funsd-l" not in out  # funsd-l has none of these configs: not pushed
    folder = tmp_path / "dry" / "me__funsd-t"
    assert sorted(p.name for p in (folder / "data").iterdir()) == ["char_deletion", "ms_char_swap"]
    info = json.loads((folder / "dogood_build.json").read_text())
    assert info["overrides"] == ["char_deletion.fraction=0.5"]
    assert info["chains"]["char_deletion"] == [{"shift": "char_deletion", "fraction": 0.5}]
    assert info["chains"]["ms_char_swap"][0]["fraction"] == 0.1
    card = (folder / "README.md").read_text()
    assert "Parameters overridden for this build (`--set`)" in card and "- `char_deletion.fraction=0.5`" in card
    from datasets import load_dataset

    row = load_dataset(str(folder), "char_deletion", split="test")[0]
    assert json.loads(row["dogood"]["provenance"][0]["params"])["fraction"] == 0.5


@pytest.mark.parametrize("options, message", [
    (["--config", "marge*"], "no config of the manifest matches 'marge\\*'"),
    (["--exclude-config", "*"], "leave no config to push"),
    (["--set", "merge.lambda_z=3"], "no shift of config\\(s\\) merge takes a parameter 'lambda_z'"),
    (["--set", "nope.lambda_x=3"], "no config to push matches 'nope'"),
    (["--set", "merge=3"], "expected CONFIG.PARAM=VALUE"),
])
def test_push_refuses_a_bad_selection_before_building(options, message, tmp_path, capsys):
    import re

    from dogood.cli import main

    manifest = write_manifest(tmp_path, "datasets:\n  - {repo: me/funsd-l, recipe: funsd-l}\n")
    code = main(["push", str(manifest), "--dry-run", str(tmp_path / "dry"), "--build-dir", str(tmp_path / "out"),
                 "--quiet", *options])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("dogood: error: ") and "Traceback" not in err
    assert re.search(message, err), err
    assert not (tmp_path / "out").exists() and not (tmp_path / "dry").exists()


# -- every staged byte is scanned (issue 36) -------------------------------------------------------------------
def _hf_rows(path: Path, ids: list[str], image_text: str | None = None) -> Path:
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq
    from PIL import Image, PngImagePlugin

    buf, info = io.BytesIO(), PngImagePlugin.PngInfo()
    if image_text:
        info.add_text("Source", image_text)
    Image.new("L", (40, 30), 255).save(buf, format="PNG", pnginfo=info)
    pq.write_table(pa.table({"id": ids, "image": [{"bytes": buf.getvalue(), "path": None}] * len(ids),
                             "label": ["letter"] * len(ids)}), path)
    return path


@pytest.mark.parametrize("case", ["flattened id", "image metadata", "file url"])
def test_dry_run_refuses_local_paths_in_ids_image_metadata_and_file_urls(tmp_path, capsys, case):
    """Before, an id made of a local path (``/`` as ``_``) and ``file://`` URLs passed the scan and were staged."""
    from dogood.cli import main

    private = tmp_path / "home-of-me" / "scans"
    private.mkdir(parents=True)
    ids = ["page-1", str(private / "p2.png").replace("/", "_") if case == "flattened id" else "page-2"]
    rows = _hf_rows(tmp_path / "rows.parquet", ids, str(private / "p2.png") if case == "image metadata" else None)
    description = f"notes in file://{private}/notes.txt" if case == "file url" else "pages"
    recipe = tmp_path / "r.yaml"
    recipe.write_text(f"name: r\nversion: 1.0.0\ndescription: {description}\nsource: {{kind: hf, name: {rows}, "
                      "ocr: false}\nconfigs:\n  plain: []\n")
    manifest = write_manifest(tmp_path, f"datasets:\n  - repo: me/r\n    recipe: {recipe}\n")
    staged = tmp_path / "staged"
    code = main(["push", str(manifest), "--build-dir", str(tmp_path / "builds"), "--dry-run", str(staged), "--quiet"])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err, err
    line = err.strip().splitlines()[-1]
    assert line.startswith("dogood: error: ") and str(private.relative_to(tmp_path)) in line.replace("_", "/")
    where = {"flattened id": "row 1, column id", "image metadata": "row 0, column image (the image's metadata)",
             "file url": "README.md"}[case]
    assert where in line
    assert not [p for p in staged.rglob("*") if p.is_file()]  # nothing staged
