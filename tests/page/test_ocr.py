"""In-process Tesseract (tesserocr) against the binary (pytesseract): identical records, the fallback, one shared
cache, and one engine per worker process, never pickled."""

from __future__ import annotations

import json
import multiprocessing
import os
import pickle
import shutil
import subprocess
import sys

import pytest

from dogood.core.document import PageImage
from dogood.core.errors import SourceError
from dogood.page import ocr

pytestmark = pytest.mark.skipif(shutil.which("tesseract") is None, reason="the tesseract binary is not installed")


@pytest.fixture(scope="module")
def in_process():
    """Skip where tesserocr cannot run the binary's Tesseract (CI must have it: the README's install builds it)."""
    engine = ocr.ocr_engine()
    if engine != "tesserocr":
        if os.environ.get("CI"):
            raise AssertionError(f"CI has no in-process Tesseract: {engine}")
        pytest.skip(engine)


@pytest.fixture(scope="module")
def pages(data_dir, funsd_dir):
    """The 3 shared RVL-CDIP TIFFs and 2 FUNSD test forms, as encoded bytes."""
    tiffs = sorted((data_dir / "rvl_cdip" / "images").glob("*.tif"))
    forms = sorted((funsd_dir / "testing_data" / "images").glob("*.png"))[:2]
    assert len(tiffs) == 3
    return {p.name: p.read_bytes() for p in [*tiffs, *forms]}


def both(data: bytes, config: str = "") -> tuple[list, list]:
    args = ocr._engine_args(config)
    return (ocr._run_pytesseract(PageImage.from_bytes(data), lang="eng", config=config),
            ocr._run_tesserocr(PageImage.from_bytes(data), lang="eng", args=args))


def test_identical_records_on_rvl_cdip_and_funsd_pages_in_any_order(in_process, pages):
    binary = {name: ocr._run_pytesseract(PageImage.from_bytes(d), lang="eng", config="") for name, d in pages.items()}
    args = ocr._engine_args("")
    # one engine reads every page, forwards then backwards: a page's records never depend on the pages before it
    for names in (list(pages), list(pages)[::-1]):
        for name in names:
            assert ocr._run_tesserocr(PageImage.from_bytes(pages[name]), lang="eng", args=args) == binary[name], name
    assert sum(len(records) > 40 for records in binary.values()) == 4  # 503210033+-0034.tif has no words
    for records in binary.values():
        assert all({"text", "box", "conf", "block", "par", "line", "word"} == set(r) for r in records)
        assert all(isinstance(r["conf"], float) for r in records)
    assert len(ocr._ENGINES) >= 1 and ocr._engine("eng", args) is ocr._engine("eng", args)


def test_identical_records_with_psm_dpi_and_variables(in_process, pages):
    tiff = pages["80035521.tif"]
    for config in ("--psm 6 --dpi 150", "-c tessedit_pageseg_mode=11", "--psm 4 -c tessedit_pageseg_mode=6"):
        binary, in_proc = both(tiff, config)
        assert in_proc == binary, config
    assert ocr._engine_args("--psm 4 -c tessedit_pageseg_mode=6")[0] == 4  # the binary keeps -c's mode unless 6
    assert ocr._engine_args("--psm 4 -c tessedit_pageseg_mode=11")[0] == 11
    assert ocr._engine_args("--oem 1 --dpi 300 -c a=b=c") == (3, 1, 300, (("a", "b=c"),))


def test_identical_on_an_rgb_page(in_process, pages):
    import io

    rgb = io.BytesIO()
    PageImage.from_bytes(pages["2024525661.tif"]).to_pil().convert("RGB").save(rgb, "PNG")
    binary, in_proc = both(rgb.getvalue())
    assert in_proc == binary and len(binary) > 40


@pytest.mark.parametrize("config", ["--user-words words.txt", "--tessdata-dir /x", "-l fra", "digits", "--psm 0",
                                    "--psm", "-c novalue", "--psm six"])
def test_configs_the_engine_does_not_mirror_go_to_the_binary(in_process, config):
    assert ocr._engine_args(config) is None
    assert ocr.ocr_engine(config).startswith("pytesseract (config")


def test_fallback_when_tesserocr_is_missing_or_another_tesseract(monkeypatch, pages, tmp_path):
    import pytesseract

    calls = []
    real = pytesseract.image_to_data

    def counted(*args, **kwargs):
        calls.append(kwargs.get("config"))
        return real(*args, **kwargs)

    monkeypatch.setattr(pytesseract, "image_to_data", counted)
    monkeypatch.setattr(ocr, "_TESSEROCR", {})
    monkeypatch.setitem(sys.modules, "tesserocr", None)  # `import tesserocr` raises ImportError
    assert ocr.ocr_engine().startswith("pytesseract (tesserocr cannot be imported")
    words = ocr.ocr_words(PageImage.from_bytes(pages["80035521.tif"]), cache=False)
    assert calls == [""] and len(words) > 40

    class Wheel:  # the PyPI wheel's bundled Tesseract
        @staticmethod
        def tesseract_version():
            return "tesseract 5.5.4\n leptonica-1.87.0\n"

    monkeypatch.setattr(ocr, "_TESSEROCR", {})
    monkeypatch.setitem(sys.modules, "tesserocr", Wheel)
    assert ocr.ocr_engine().startswith(f"pytesseract (tesserocr's Tesseract is 5.5.4, the tesseract binary's "
                                       f"{ocr.tesseract_version()}")
    assert ocr.ocr_words(PageImage.from_bytes(pages["80035521.tif"]), cache=False) == words
    assert calls == ["", ""]


def test_one_cache_for_both_engines(in_process, monkeypatch, pages, tmp_path):
    import pytesseract

    data = pages["2024525661.tif"]
    # each engine writes the same cache file, byte for byte
    files = {}
    for engine in ("tesserocr", "pytesseract"):
        with monkeypatch.context() as m:
            if engine == "pytesseract":
                m.setattr(ocr, "_TESSEROCR", {"module": None, "why": "test"})
            ocr.ocr_records(PageImage.from_bytes(data), cache=tmp_path / engine)
        (path,) = (tmp_path / engine).rglob("*.json")
        files[engine] = path
    assert files["tesserocr"].relative_to(tmp_path / "tesserocr") == files["pytesseract"].relative_to(tmp_path / "pytesseract")
    assert files["tesserocr"].read_bytes() == files["pytesseract"].read_bytes()
    assert json.loads(files["tesserocr"].read_text())["tesseract"] == ocr.tesseract_version()

    def boom(*args, **kwargs):
        raise AssertionError("Tesseract ran although the page is cached")

    # what one engine cached, the other serves without reading the page
    monkeypatch.setattr(ocr, "_run_tesserocr", boom)
    monkeypatch.setattr(pytesseract, "image_to_data", boom)
    cached = ocr.ocr_records(PageImage.from_bytes(data), cache=tmp_path / "pytesseract")
    monkeypatch.setattr(ocr, "_TESSEROCR", {"module": None, "why": "test"})
    assert ocr.ocr_records(PageImage.from_bytes(data), cache=tmp_path / "tesserocr") == cached


def test_missing_language_is_a_source_error(in_process, pages):
    with pytest.raises(SourceError, match=r"no data for language 'eng\+xyz' \(no xyz.traineddata.*tesseract-ocr-xyz"):
        ocr.ocr_words(PageImage.from_bytes(pages["80035521.tif"]), lang="eng+xyz", cache=False)


def _read_in_worker(data: bytes) -> tuple:
    inherited = len(ocr._INHERITED)
    records = ocr.ocr_records(PageImage.from_bytes(data), cache=False)
    return os.getpid(), inherited, len(ocr._ENGINES), records


def test_each_worker_process_makes_its_own_engine(in_process, pages):
    data = pages["80035521.tif"]
    here = ocr.ocr_records(PageImage.from_bytes(data), cache=False)
    assert len(ocr._ENGINES) >= 1
    with pytest.raises(TypeError, match="never pickled"):
        pickle.dumps(next(iter(ocr._ENGINES.values())))
    from dogood.core.document import Document
    from dogood.shifts import make_shift

    shift = make_shift({"shift": "reocr"})
    assert len(shift(Document(id="p", image=PageImage.from_bytes(data)), 0).words) == len(here)
    pickle.loads(pickle.dumps(shift))  # a shift that read pages holds no engine

    for method in ("fork", "spawn"):
        with multiprocessing.get_context(method).Pool(2) as pool:
            results = pool.map(_read_in_worker, [data] * 4, chunksize=1)
        assert {pid for pid, *_ in results}.isdisjoint({os.getpid()})
        for pid, inherited, engines, records in results:
            assert records == here
            assert engines == 1  # its own, made on its first page
            # a forked worker set its parent's engines aside (never used nor ended there); a spawned one had none
            assert inherited == (len(ocr._ENGINES) if method == "fork" else 0)


def test_engines_are_ended_by_release_and_at_exit(in_process, pages, tmp_path):
    ocr.ocr_records(PageImage.from_bytes(pages["80035521.tif"]), cache=False)
    engine = next(iter(ocr._ENGINES.values()))
    ocr.release_engines()
    assert ocr._ENGINES == {}
    with pytest.raises(RuntimeError):  # an ended engine reads nothing
        engine.api.GetUTF8Text()

    page = tmp_path / "page.tif"
    page.write_bytes(pages["80035521.tif"])
    script = (
        "import atexit; from dogood.page import ocr; from dogood.core.document import PageImage\n"
        f"ocr.ocr_records(PageImage.from_file({str(page)!r}), cache=False)\n"
        "assert len(ocr._ENGINES) == 1\n"
        "atexit._run_exitfuncs(); assert ocr._ENGINES == {}; print('ended')\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": root})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ended" and out.stderr == ""  # Leptonica's messages silenced too


def test_a_build_that_ocrs_is_byte_identical_with_either_engine(in_process, data_dir, tmp_path, monkeypatch):
    """RVL-CDIP-I1 `natural` (source OCR, then `reocr` on the shifted page): the same bytes through the binary
    in this process and in-process in 2 forked workers, each with an OCR cache of its own."""
    from dogood.pipeline.build import build
    from dogood.pipeline.recipe import load_recipe

    def files(out):
        return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*.parquet"))}

    outs = {}
    for engine, workers in (("pytesseract", 1), ("tesserocr", 2)):
        with monkeypatch.context() as m:
            m.setenv("DOGOOD_CACHE", str(tmp_path / f"cache-{engine}"))
            if engine == "pytesseract":
                m.setattr(ocr, "_TESSEROCR", {"module": None, "why": "test"})
            outs[engine] = tmp_path / engine
            build(load_recipe("rvl-cdip-i1"), outs[engine], source_path=data_dir / "rvl_cdip", configs=["natural"],
                  num_proc=workers, progress=False)
    binary, in_proc = files(outs["pytesseract"]), files(outs["tesserocr"])
    assert binary and binary == in_proc
    assert len(list((tmp_path / "cache-tesserocr" / "ocr").rglob("*.json"))) == 6  # 3 pages, 3 shifted pages
