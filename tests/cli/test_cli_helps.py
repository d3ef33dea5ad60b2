"""A command line that helps: a closed pipe ends quietly, missing packages are named with their extra, and
`dogood plan` says before a build which configs can run here and how long they take."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from dogood.cli import main
from dogood.core.extras import MissingDependency, install_line, require_module
from dogood.pipeline.preflight import CANNOT, NETWORK, READY, check, plan_recipe
from dogood.pipeline.recipe import load_recipe


def _closed_pipe(*args: str) -> tuple[int, str]:
    proc = subprocess.Popen([sys.executable, "-m", "dogood", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ))
    proc.stdout.close()  # the reader leaves before the first line, as `| head -0` would
    err = proc.stderr.read().decode()
    return proc.wait(), err


@pytest.mark.parametrize("args", [("list", "funsd-c"), ("describe",), ("list",)])
def test_a_closed_pipe_ends_quietly(args):
    code, err = _closed_pipe(*args)
    assert code == 0 and err == "", err


def test_help_loads_no_heavy_module():
    code = ("import sys; from dogood.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print([m for m in ('datasets', 'torch', 'pyarrow', 'dogood.shifts', 'transformers', 'cv2') "
            "if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_missing_packages_name_the_extra_never_a_bare_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "augraphy", None)
    from dogood.page.augraphy_seeded import augraphy

    with pytest.raises(Exception) as info:
        augraphy()
    message = str(info.value)
    assert 'pip install "dogood[scan]"' in message and "--no-deps" not in message
    monkeypatch.setitem(sys.modules, "textattack", None)
    with pytest.raises(MissingDependency, match=re.escape('pip install "dogood[text]"')):
        require_module("textattack", "homoglyph_swap")
    assert install_line("text").startswith('pip install "dogood[text]"')


def test_every_hint_in_the_package_names_an_extra():
    """No message in dogood's code tells the user to `pip install` a bare package or to use --no-deps."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "dogood"
    bad = []
    for path in root.rglob("*.py"):
        if path.name == "extras.py":  # says why hints name extras, --no-deps included
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "--no-deps" in line or re.search(r"pip install '?(?!dogood|-e|--no-binary|\{)[a-z]", line):
                bad.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    assert not bad, bad


def test_plan_funsd_i_gives_each_config_a_verdict_and_an_estimate(capsys):
    assert main(["plan", "funsd-i"]) == 0
    out = capsys.readouterr().out
    recipe = load_recipe("funsd-i")
    assert out.startswith(f"funsd-i v{recipe.version}: FUNSD, found on this machine; 50 test documents")
    rows = {line.split()[0]: line.split() for line in out.splitlines()[3:3 + len(recipe.configs)]}
    assert list(rows) == list(recipe.configs)
    for config, row in rows.items():
        assert row[1] in (READY, NETWORK, CANNOT), row
        assert re.fullmatch(r"[0-9.]+", row[2]) and row[3] in ("s", "min"), row
    # Tesseract re-reading the page costs far more than the warp alone
    seconds = {c: float(r[2]) * (60 if r[3] == "min" else 1) for c, r in rows.items()}
    assert seconds["distort_reocr"] > 5 * seconds["distort"]
    assert re.search(r"Estimated time for the \d+ that can run: [0-9.]+ (s|min) on 1 process", out)


def test_plan_scales_with_processes_and_limit():
    recipe = load_recipe("funsd-l")
    one = plan_recipe(recipe, configs=["merge"], num_proc=1)
    two = plan_recipe(recipe, configs=["merge"], num_proc=2, limit=10)
    assert one.documents == {"test": 50} and one.configs[0].verdict == READY
    assert two.configs[0].seconds < one.configs[0].seconds


def test_plan_says_what_is_missing_and_how_to_install_it(monkeypatch):
    monkeypatch.setattr("dogood.pipeline.preflight.have", lambda module: module != "augraphy")
    recipe = load_recipe("funsd-i")
    plan = plan_recipe(recipe, configs=["scan_fax", "distort"])
    fax, distort = plan.configs
    assert fax.verdict == CANNOT and 'scan_quality needs augraphy: pip install "dogood[scan]"' in fax.reasons[0]
    assert distort.verdict == READY
    monkeypatch.setattr("dogood.pipeline.preflight.shutil.which", lambda name: None)
    reocr = plan_recipe(recipe, configs=["distort_reocr"]).configs[0]
    assert reocr.verdict == CANNOT and "apt-get install tesseract-ocr" in reocr.reasons[0]


def test_plan_refuses_a_model_it_cannot_reach_offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    shift = load_recipe("funsd-t").chain("bert_attack")[0]
    shift.model = "no-such-org/no-such-model"
    verdict, reason = check("model:model", shift)
    assert verdict == CANNOT and "--set bert_attack.model=/path" in reason
    shift.model = str(tmp_path)
    assert check("model:model", shift) == (READY, "")


def test_plan_names_the_pos_extra_for_the_configs_that_tag_words(monkeypatch):
    """`ms_word_synonym` and the paper-style word kinds need the part-of-speech tagger's model: without it the plan
    says so with the `pos` extra; the character kinds and the other word kinds stay ready."""
    from dogood.core.errors import SourceError
    from dogood.language import pos_tagger

    def absent():
        raise SourceError(f"the part-of-speech tagger needs its model from the package textblob-aptagger: "
                          f"{pos_tagger.INSTALL}")

    monkeypatch.setattr(pos_tagger, "tagger", absent)
    recipe = load_recipe("funsd-t")
    names = ["ms_word_synonym", "ms_paper_word_negation", "ms_paper_char_swap", "ms_word_deletion"]
    synonym, negation, swap, deletion = plan_recipe(recipe, configs=names).configs
    for config in (synonym, negation):
        assert config.verdict == CANNOT and 'pip install "dogood[pos]"' in config.reasons[0], config.reasons
    assert swap.verdict == READY and deletion.verdict == READY


def test_every_shipped_shift_but_bert_attack_has_a_cpu_figure_and_funsd_p_gets_an_estimate():
    """The plan's per-page figures cover every registered shift (bert_attack: no BERT weights offline when the
    benchmarks ran), each naming the section of bench/RESULTS.md it comes from."""
    from dogood.pipeline.cpu_costs import SHIFT_MS
    from dogood.shifts.describe import shipped_shifts

    assert {cls.name for cls in shipped_shifts()} - set(SHIFT_MS) == {"bert_attack"}
    assert all(ms > 0 and source.startswith("RESULTS") for ms, source in SHIFT_MS.values())
    plan = plan_recipe(load_recipe("funsd-p"), num_proc=1)
    assert len(plan.configs) == 65 and all(c.seconds and c.seconds > 0 for c in plan.configs)
    seconds = {c.config: c.seconds for c in plan.configs}
    assert seconds["texture@3"] > seconds["defocus@3"]  # paper_texture costs about 20x defocus a page (RESULTS (m))
