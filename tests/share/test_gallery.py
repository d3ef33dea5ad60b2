"""`dogood gallery`: the page in a real headless Chromium (toggle the boxes, read the screenshot's pixels),
escaping of document text, the originals' source check, eval reports, and refusals."""

from __future__ import annotations

import base64
import html.parser
import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from dogood.cli import main
from dogood.core.document import Document, Entity, PageImage, Word
from dogood.measures.preview import label_colour

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


@pytest.fixture(scope="module")
def built(funsd_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gallery") / "funsd-l"
    assert main(["build", "funsd-l", "--source", str(funsd_dir), "--out", str(out), "--limit", "2",
                 "--config", "merge,merge_x0_y0", "--quiet"]) == 0
    return out


def _shifted(folder: Path, config: str) -> list[Document]:
    from dogood.sources.hf_dataset import HFDatasetSource

    src = HFDatasetSource(name=str(folder), config=config, split="test")
    return [src.load(i) for i in src.ids()]


def _near(pixels: np.ndarray, colour, tol: int = 40) -> np.ndarray:
    return np.abs(pixels[..., :3].astype(int) - np.array(colour)).max(axis=-1) <= tol


@pytest.fixture(scope="module")
def browser():
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip(f"Chromium is not installed ({CHROMIUM}, {CHROMEDRIVER}): apt-get install chromium chromium-driver "
                    "(.ci/run installs them)")
    import os

    pytest.importorskip("selenium", reason="the gallery's browser test drives Chromium with Selenium (the test extra)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    saved = os.environ.get("SE_OFFLINE")
    os.environ["SE_OFFLINE"] = "true"  # never let Selenium Manager download a driver
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1200",
                "--force-device-scale-factor=1", "--hide-scrollbars"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    yield driver
    driver.quit()
    if saved is None:
        os.environ.pop("SE_OFFLINE", None)
    else:
        os.environ["SE_OFFLINE"] = saved


def test_gallery_boxes_toggle_in_chromium(built, browser, tmp_path):
    from selenium.webdriver.common.by import By

    page = tmp_path / "gallery.html"
    assert main(["gallery", str(built), "--html", str(page), "--docs", "2"]) == 0
    browser.get(page.as_uri())
    assert browser.title == "dogood gallery: funsd-l"
    doc = _shifted(built, "merge")[0]
    # a known question entity: its (merged) word box, where the page must show the question colour
    owner = doc.word_entity()
    wid = next(i for i, e in enumerate(owner) if e is not None and e.label == "question" and doc.words[i].text)
    x0, y0, x1, y1 = doc.words[wid].box
    blue = label_colour("question")
    svg = browser.find_element(By.ID, f"merge--{doc.id}--shifted")

    def shot() -> tuple[np.ndarray, float]:
        browser.execute_script("arguments[0].scrollIntoView()", svg)
        im = np.asarray(Image.open(io.BytesIO(svg.screenshot_as_png)).convert("RGB"))
        return im, im.shape[1] / doc.width

    def edge_hits(im: np.ndarray, s: float) -> float:
        """Share of the box's top-edge columns with a question-coloured pixel within 2 px of the edge."""
        top = round(y0 * s)
        band = im[max(0, top - 2): top + 3, round(x0 * s) + 2: round(x1 * s) - 1]
        return float(_near(band, blue).any(axis=0).mean())

    before, s = shot()
    assert edge_hits(before, s) > 0.9
    toggle = browser.find_element(By.ID, "toggle-boxes")
    assert toggle.is_selected()
    toggle.click()
    assert not toggle.is_selected()
    after, s = shot()
    assert edge_hits(after, s) == 0.0
    assert _near(after, blue).sum() == 0  # no box anywhere: the scanned page itself has no blue
    assert before.shape == after.shape and (before != after).any(axis=-1).sum() > 1000
    toggle.click()
    again, s = shot()
    assert edge_hits(again, s) > 0.9
    # the original is beside it, with its own (unmerged) boxes, and both configs are there
    orig = browser.find_element(By.ID, f"merge--{doc.id}--original")
    assert orig.location["x"] < svg.location["x"]
    assert browser.find_element(By.ID, f"merge_x0_y0--{doc.id}--shifted")
    assert len(browser.find_elements(By.CSS_SELECTOR, "section")) == 2


def test_gallery_page_content(built, tmp_path):
    page = tmp_path / "g.html"
    assert main(["gallery", str(built), "--html", str(page), "--docs", "1"]) == 0
    text = page.read_text(encoding="utf-8")
    info = json.loads((built / "dogood_build.json").read_text(encoding="utf-8"))
    doc = _shifted(built, "merge")[0]
    for config in ("merge", "merge_x0_y0"):
        stats = info["stats"][config]["test"]
        assert f"<td>words with a new box</td><td class=\"n\">{stats['box_changed']}</td>" in text
        assert f'id="{config}--{doc.id}--original"' in text
    assert "Original pages not shown" not in text
    # merge keeps the pixels: the page is embedded once and used by all four panels of the document
    assert text.count("<image id=") == 1 and text.count("<use href=") == 4
    # every distinct box of the shifted document is drawn, in its label's colour
    boxes = {tuple(w.box) for w in doc.words}
    start = text.index(f'id="merge--{doc.id}--shifted"')
    panel = text[start: text.index("</svg>", start)]
    assert panel.count("<rect ") == len(boxes)


def test_gallery_escapes_document_text():
    """Words, ids and labels from a dataset are untrusted: they reach the page as text, never as markup."""
    from dogood.share import gallery

    evil = "<img src=x onerror=alert(1)>"
    doc = Document("d</h3><script>x()</script>", PageImage.from_array(np.full((40, 60), 255, np.uint8)),
                   (Word(evil, (1, 1, 20, 10)), Word("ok", (25, 1, 50, 10))), (Entity(0, "question", (0, 1)),))
    images: dict[str, str] = {}
    section = gallery.ConfigSection("c", "test", [f"merge {evil}"], [("documents", 1)], [], [evil])
    section.documents.append(gallery.DocumentRow(doc.id, gallery._panel(doc, images, "c--x--shifted"), None))
    page = gallery._render({"recipe": evil, "description": evil}, Path("x"), [section], images, [], [evil])

    tags = []

    class Tags(html.parser.HTMLParser):
        def handle_starttag(self, tag, attrs):
            tags.append(tag)

    Tags().feed(page)
    assert "script" not in tags and "img" not in tags
    assert "&lt;img src=x onerror=alert(1)&gt;" in page


def test_gallery_originals_only_from_the_source_the_build_read(built, funsd_dir, copy_funsd_forms, tmp_path, capsys):
    copy = copy_funsd_forms(tmp_path / "funsd", n=4)
    page = tmp_path / "g.html"
    assert main(["gallery", str(built), "--html", str(page), "--source", str(copy)]) == 0  # same files: shown
    assert "Original pages not shown" not in page.read_text(encoding="utf-8")
    first = sorted((copy / "testing_data" / "annotations").glob("*.json"))[0]
    first.write_text(first.read_text(encoding="utf-8").replace('"question"', '"answer"', 1), encoding="utf-8")
    capsys.readouterr()
    assert main(["gallery", str(built), "--html", str(page), "--source", str(copy)]) == 0
    text = page.read_text(encoding="utf-8")
    assert "Original pages not shown: the funsd source found" in text and "--original" not in text
    assert "--shifted" in text
    assert "dogood: warning: original pages not shown" in capsys.readouterr().err


def test_gallery_shows_an_eval_report_that_scored_the_folder(built, gold_scorer, tmp_path, capsys):
    from dogood.eval import evaluate

    report = evaluate(gold_scorer, f"{built}:merge", [str(built)], resamples=0)
    report.write(Path("eval") / "gold")  # tests run in a working folder of their own
    page = tmp_path / "g.html"
    assert main(["gallery", str(built), "--html", str(page)]) == 0
    assert capsys.readouterr().out.rstrip().endswith("eval report(s) " + str(Path("eval/gold").resolve()))
    text = page.read_text(encoding="utf-8")
    plot = base64.b64encode((Path("eval") / "gold" / "report.png").read_bytes()).decode("ascii")
    assert f"data:image/png;base64,{plot}" in text
    assert '">Eval: gold (' in text and "100.00" in text
    other = tmp_path / "no-report"
    other.mkdir()
    assert main(["gallery", str(built), "--html", str(page), "--report", str(other)]) == 1
    assert capsys.readouterr().err.strip().startswith("dogood: error: --report")


def test_gallery_refusals(built, tmp_path, capsys):
    assert main(["gallery", str(tmp_path)]) == 1
    assert "is not a dataset folder dogood built" in capsys.readouterr().err
    assert main(["gallery", str(built), "--html", str(built / "gallery.html")]) == 1
    assert "inside the dataset folder" in capsys.readouterr().err
    assert not (built / "gallery.html").exists()
    mine = tmp_path / "notes.html"
    mine.write_text("<p>my notes</p>", encoding="utf-8")
    assert main(["gallery", str(built), "--html", str(mine)]) == 1
    assert mine.read_text(encoding="utf-8") == "<p>my notes</p>"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dogood: error: --html")
    # the default lands beside the folder and is replaced by a second run (it is ours)
    assert main(["gallery", str(built), "--docs", "1"]) == 0
    default = built.with_name("funsd-l-gallery.html")
    assert default.is_file() and main(["gallery", str(built), "--docs", "1"]) == 0
    assert not list(built.parent.glob(".funsd-l-gallery.html.*"))
    with pytest.raises(SystemExit) as exc:
        main(["gallery", str(built), "--docs", "0"])
    assert exc.value.code == 2


def test_gallery_contents_by_family_in_recipe_order_with_zoom(funsd_dir, tmp_path):
    """A table of contents groups the configs by shift family, in the recipe's order (dogood_build.json keeps them
    sorted by name); every page has a zoom link to itself (CSS :target, no script) and a way back."""
    import re

    from dogood.pipeline.build import build
    from dogood.pipeline.recipe import load_recipe

    out = tmp_path / "funsd-c"
    build(load_recipe("funsd-c"), out, source_path=funsd_dir, limit=1, progress=False,
          configs=["merge@2", "merge@1", "char_deletion@1", "distort@1"])
    page = tmp_path / "g.html"
    assert main(["gallery", str(out), "--html", str(page), "--docs", "1"]) == 0
    text = page.read_text(encoding="utf-8")
    nav = text[text.index('<nav class="contents">'):text.index("</nav>")]
    families = re.findall(r"<h3>(\w+) \((\d+)\)</h3>", nav)
    assert families == [("image", "1"), ("text", "1"), ("layout", "2")]
    assert re.findall(r'href="#config-([^"]+)"', nav) == ["distort@1", "char_deletion@1", "merge@1", "merge@2"]
    sections = re.findall(r'<section id="config-([^"]+)">', text)
    assert sections == ["distort@1", "char_deletion@1", "merge@1", "merge@2"]
    for element in re.findall(r'<svg class="page" id="([^"]+)"', text):
        assert f'<figure id="zoom-{element}"' in text and f'href="#zoom-{element}"' in text
    assert "figure:target" in text and "<script" not in text


def test_gallery_shows_only_reports_that_scored_the_build(built, gold_scorer, funsd_dir, tmp_path, capsys):
    """A report that scored another build (or used this folder only as its ID reference) is not shown; a report
    that scored this build shows its ID row and this build's rows only."""
    from dogood.eval import evaluate
    from dogood.pipeline.build import build
    from dogood.pipeline.recipe import load_recipe

    other = tmp_path / "funsd-fa"
    build(load_recipe("funsd-fa"), other, source_path=funsd_dir, limit=2, progress=False, configs=["global_shuffle"])
    evaluate(gold_scorer, f"{built}:merge", [str(other)], resamples=0).write(Path("eval") / "other")
    evaluate(gold_scorer, f"{built}:merge", [str(built), str(other)], resamples=0).write(Path("eval") / "both")
    page = tmp_path / "g.html"
    assert main(["gallery", str(built), "--html", str(page), "--docs", "1"]) == 0
    text = page.read_text(encoding="utf-8")
    assert text.count('">Eval: gold (') == 1
    table = text[text.index('">Eval: gold ('):]
    table = table[:table.index("</table>")]
    assert "global_shuffle" not in table and "funsd-l/merge" in table
    assert "1 other dataset(s) of this report (not of this build) are left out" in text
