"""``dogood plan`` for builds bigger than this machine: ``--cores``, ``--ray-cpus`` and ``--pages``, and the figures the
estimate rests on, each named with where it was measured."""

from __future__ import annotations

import re

import pytest

from dogood.cli.main import main
from dogood.pipeline import cpu_costs
from dogood.pipeline.preflight import plan_recipe
from dogood.pipeline.recipe import load_recipe


def _total_seconds(out: str) -> float:
    value, unit = re.search(r"Estimated time for the \d+ that can run: ([0-9.]+) (s|min|h) on", out).groups()
    return float(value) * {"s": 1, "min": 60, "h": 3600}[unit]


def test_plan_rvl_cdip_i1_on_64_cores_names_its_figures_and_how_to_plan_the_full_release(capsys):
    assert main(["plan", "rvl-cdip-i1", "--cores", "64"]) == 0
    out = capsys.readouterr().out
    assert "3 test documents; 64 worker processes" in out
    figures = out[out.index("The estimate's figures"):]
    for what in ("read a rvl_cdip page", "shift natural_background", "shift reocr", "row", "new pixels encoded",
                 "measures (image)", "workers busy", "per config"):
        assert what in figures, what
    rows = [line for line in figures.splitlines()[1:] if re.match(r"  \S.* +[0-9.]+  ", line)]
    assert rows and all("RESULTS" in line for line in rows)  # each figure says where it was measured
    assert "add --pages 40000 to plan for all of them" in out


def test_more_cores_and_pages_scale_the_estimate(capsys):
    recipe = load_recipe("rvl-cdip-i1")
    sixteen = plan_recipe(recipe, num_proc=16, pages=400_000)
    sixty_four = plan_recipe(recipe, num_proc=64, pages=400_000)
    ray = plan_recipe(recipe, num_proc=64, pages=400_000, ray=True)
    assert 3.9 < sixteen.total_seconds() / sixty_four.total_seconds() < 4.01  # the pages dominate
    busy = cpu_costs.OCCUPANCY
    assert ray.total_seconds() / sixty_four.total_seconds() == pytest.approx(
        busy["processes"][0] / busy["ray"][0], rel=0.01)
    # per page: read and source OCR, natural_background three times, Tesseract twice, rows and measures
    per_page = cpu_costs.read_ms("rvl_cdip") + sum(cpu_costs.config_ms(recipe.chain(c)) for c in recipe.configs)
    assert sixteen.total_seconds() == pytest.approx(
        400_000 * per_page / 1000 / (16 * busy["processes"][0]) + 3 * cpu_costs.config_fixed_seconds(16), rel=1e-6)
    assert main(["plan", "rvl-cdip-i1", "--pages", "400000", "--ray-cpus", "64"]) == 0
    out = capsys.readouterr().out
    assert "(estimated for 400,000 pages); 64 Ray CPUs" in out and "--pages" not in out.split("figures")[-1]
    assert _total_seconds(out) == pytest.approx(ray.total_seconds(), rel=0.06)


def test_a_config_s_figures_add_up_and_a_severity_level_measures_more():
    rotate = [{"shift": "rotate"}]
    parts = cpu_costs.config_figures(rotate)
    assert [what for what, _, _ in parts] == ["shift rotate", "row", "new pixels encoded", "measures (geometric)"]
    assert cpu_costs.config_ms(rotate) == pytest.approx(sum(ms for _, ms, _ in parts))
    assert cpu_costs.config_ms(rotate, severity=True) == pytest.approx(
        cpu_costs.config_ms(rotate) + cpu_costs.EFFECTS_MS[0])
    assert cpu_costs.config_kind([{"shift": "char_deletion"}]) == "text"
    assert cpu_costs.config_kind(load_recipe("funsd-l").chain("merge")) == "layout"
    assert cpu_costs.config_kind([{"shift": "defocus"}]) == "image"
    assert cpu_costs.config_ms([{"shift": "bert_attack"}], unknown=None) is None  # no figure: no estimate
