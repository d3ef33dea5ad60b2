"""A static HTML gallery of a built dataset folder: pages, boxes, statistics and the eval plot.

:func:`write_gallery` writes one self-contained HTML file (images inline as data
URIs, no script, nothing fetched) that shows, for each config, the first N
documents: the original page (from the source the build recorded, when it can
be found and its files hash to what the build read) beside the shifted one,
each word box drawn over the page as an SVG rectangle in its entity label's
colour (:func:`dogood.measures.preview.label_colour`). One checkbox (``id="toggle-boxes"``)
shows or hides every box (pure CSS: ``:has()``). Per config: the shift chain,
the build's statistics from ``dogood_build.json`` and its notes. When an eval
report (``report.json``, ``report.png`` from ``dogood eval``) scored the folder,
its table and plot are shown.

Every text taken from the data (words, ids, labels, notes) goes through
Jinja2's autoescape, so a document cannot inject markup into the page. A page
image shared by several panels (layout and text shifts keep the pixels) is
embedded once and referenced with SVG ``<use>``.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import io
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from dogood.core.document import Document
from dogood.core.errors import DogoodError
from dogood.core.fs import (
    FileRefused,
    check_name,
    check_no_links,
    naming,
    open_file,
    partial_file,
    portable_text,
    read_json,
)
from dogood.core.fs import read_bytes as fs_read_bytes
from dogood.measures.preview import NO_LABEL, PALETTE, label_colour
from dogood.pipeline.safety import is_dogood_build, read_build_info, source_fingerprint

#: What the first line of every gallery dogood writes holds; only such a file is replaced.
MARKER = '<meta name="generator" content="dogood gallery">'
#: Longest side of an embedded page, in pixels (larger pages are downscaled; boxes follow).
MAX_SIDE = 1000


class GalleryError(DogoodError):
    """A gallery that cannot be written: not a built folder, an output that is not ours."""


@dataclass
class Panel:
    """One page drawn: the image it references, its size and its boxes ``(x, y, w, h, colour, label, text)``."""

    image: str
    width: int
    height: int
    boxes: list[tuple[int, int, int, int, str, str, str]]
    element_id: str


@dataclass
class DocumentRow:
    doc_id: str
    shifted: Panel
    original: Panel | None


@dataclass
class ConfigSection:
    name: str
    split: str
    chain: list[str]
    stats: list[tuple[str, Any]]
    labels: list[tuple[str, int]]
    notes: list[str]
    documents: list[DocumentRow] = field(default_factory=list)
    family: str = ""


def default_html_path(folder: str | Path) -> Path:
    """``<folder>-gallery.html`` beside the built folder (never inside it: `push` would upload it)."""
    folder = Path(folder)
    return folder.with_name(f"{folder.name}-gallery.html")


def write_gallery(folder: str | Path, html: str | Path | None = None, *, docs: int = 3, split: str | None = None,
                  source: str | Path | None = None, report: str | Path | None = None) -> dict[str, Any]:
    """Write the gallery of the built ``folder`` to ``html`` (default :func:`default_html_path`).

    Parameters
    ----------
    docs : documents per config (the first ones of the split).
    split : the split shown (default: each config's first).
    source : where the source data is, for the original pages (as ``dogood build --source``).
    report : an eval report folder (``report.json``, ``report.png``); when ``None``, reports in
        ``eval/*/`` under the working folder or beside ``folder``'s parent that scored ``folder`` are shown.

    Returns a summary: ``path``, ``configs``, ``documents``, ``originals`` (the reason when none),
    ``reports`` (the report folders shown).
    """
    folder = Path(folder)
    if not folder.is_dir() or not is_dogood_build(folder):
        raise GalleryError(f"{folder} is not a dataset folder dogood built (no dogood_build.json written by dogood)")
    if docs < 1:
        raise GalleryError(f"--docs must be at least 1, got {docs}")
    out = Path(html) if html is not None else default_html_path(folder)
    _check_html_path(out, folder)
    check_no_links(folder, "the dataset folder")
    info = _read_info(folder)
    configs = [c for c in info.get("chains", {}) if (folder / "data" / c).is_dir()]
    if not configs:
        raise GalleryError(f"{folder} has no data/<config> folders")
    configs = ordered_configs(info, configs)

    images: dict[str, str] = {}  # image id -> data URI
    originals: dict[str, Any] = {}  # split -> source or reason
    sections = []
    for config in configs:
        section = _config_section(folder, info, config, split)
        section.family = config_family(info.get("chains", {}).get(config) or [])
        shifted_docs = _load_built(folder, config, section.split, docs)
        if section.split not in originals:
            originals[section.split] = _open_original(info, section.split, source)
        original_source = originals[section.split]
        known = set() if isinstance(original_source, str) else set(original_source.ids())
        for doc in shifted_docs:
            original = None
            if doc.id in known:
                original = _panel(original_source.load(doc.id), images, f"{config}--{doc.id}--original")
            section.documents.append(DocumentRow(doc.id, _panel(doc, images, f"{config}--{doc.id}--shifted"),
                                                 original))
        sections.append(section)

    reports = [_read_report(Path(report))] if report is not None else _find_reports(folder)
    reports = [_own_rows(r, folder) for r in reports]
    missing = sorted({why for why in originals.values() if isinstance(why, str)})
    missing = [portable_text(why) for why in missing]  # a reason names no folder of this machine
    text = _render(info, folder, sections, images, reports, missing)
    _check_nothing_local(text, folder, out)
    _write_atomic(out, text)
    return {"path": out, "configs": configs, "documents": sum(len(s.documents) for s in sections),
            "originals": "; ".join(missing) or None, "reports": [r["folder"] for r in reports]}


# -- output ------------------------------------------------------------------------------------------------
def _check_html_path(out: Path, folder: Path) -> None:
    """Refuse a path inside the built folder (push and load_dataset read it) or a file dogood did not write."""
    resolved, root = out.resolve(), folder.resolve()
    if resolved == root or root in resolved.parents:
        raise GalleryError(f"--html {out} lies inside the dataset folder {folder} (it would be pushed with the "
                           "data); write it beside the folder, e.g. the default "
                           f"{default_html_path(folder)}")
    if out.is_symlink() or (out.exists() and not out.is_file()):
        raise GalleryError(f"--html {out} exists and is not a file; refusing to replace it")
    if out.exists():
        try:
            with open_file(out, what="gallery") as fh:
                ours = MARKER in fh.read(4096).decode("utf-8", "replace")
        except (OSError, FileRefused):
            ours = False
        if not ours and out.stat().st_size > 0:
            raise GalleryError(f"--html {out} exists and is not a gallery dogood wrote; refusing to replace it")


def _read_info(folder: Path) -> dict:
    """``dogood_build.json``, its config names checked (:func:`dogood.core.fs.check_name`) before they name
    folders."""
    try:
        info = read_build_info(folder)
    except (OSError, FileRefused) as exc:
        raise GalleryError(f"{folder}/dogood_build.json cannot be read ({getattr(exc, 'reason', exc)})") from None
    if not isinstance(info, dict) or not isinstance(info.get("chains"), dict):
        raise GalleryError(f"{folder}/dogood_build.json has no 'chains' mapping")
    for config in info["chains"]:
        try:
            check_name(config, f"{folder}/dogood_build.json: config name", config=True)
        except DogoodError as exc:
            raise GalleryError(str(exc)) from None
    return info


def _check_nothing_local(text: str, folder: Path, out: Path) -> None:
    """Refuse a page that would show a local path, the home folder or the user name (embedded images aside)."""
    from dogood.core.fs import LocalScan

    scan = LocalScan(extra=[folder])
    for n, line in enumerate(re.sub(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=]*", "", text).splitlines(), 1):
        hit = scan.find(line)
        if hit:
            raise GalleryError(f"the gallery {out} would show {hit!r} (line {n}), a path or name of this machine; "
                               "nothing was written")


def _write_atomic(out: Path, text: str) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = partial_file(out)  # a killed run's leftover beside out is removed first
    try:
        with naming(out), os.fdopen(fd, "w", encoding="utf-8") as fh:  # a full disk names the gallery
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# -- data ---------------------------------------------------------------------------------------------------
def _config_section(folder: Path, info: dict, config: str, split: str | None) -> ConfigSection:
    splits = info.get("splits", {}).get(config) or {}
    available = sorted({p.name.split("-")[0] for p in (folder / "data" / config).glob("*.parquet")})
    if split is None:
        split = next(iter(splits), None) or (available[0] if available else None)
    if split not in available:
        raise GalleryError(f"{folder}: config {config!r} has no split {split!r} (it has {', '.join(available) or 'none'})")
    chain = []
    for step in info.get("chain_params", {}).get(config) or info.get("chains", {}).get(config) or []:
        params = step.get("params", {k: v for k, v in step.items() if k != "shift"})
        chain.append(f"{step.get('shift')} {json.dumps(params, sort_keys=True)}")
    st = (info.get("stats", {}).get(config) or {}).get(split) or {}
    names = (("documents", "documents"), ("source_words", "source words"), ("words", "output words"),
             ("tokens", "tokens"), ("box_changed", "words with a new box"), ("text_changed", "words with new text"),
             ("words_removed", "source words removed"))
    stats = [(label, st[key]) for key, label in names if key in st]
    for shift, record in (st.get("shifts") or {}).items():
        for count, value in sorted((record.get("counts") or {}).items()):
            stats.append((f"{shift}: {count}", value))
    labels = sorted((st.get("labels") or {}).items())
    notes = [str(n) for n in (info.get("notes", {}).get(config) or [])]
    return ConfigSection(config, split, chain, stats, labels, notes)


def _load_built(folder: Path, config: str, split: str, docs: int) -> list[Document]:
    import datasets

    from dogood.sources.hf_dataset import HFDatasetSource

    quiet = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()  # no "Generating test split" bar per config
    try:
        source = HFDatasetSource(name=str(folder), config=config, split=split)
    finally:
        if quiet:
            datasets.enable_progress_bars()
    return [source.load(i) for i in source.ids()[:docs]]


def _open_original(info: dict, split: str, path: str | Path | None):
    """The source the build read, for ``split``; or a sentence saying why the originals are not shown."""
    from dogood.sources import open_source

    spec = info.get("source") or {}
    kind = spec.get("kind")
    if not kind:
        return "the build records no source"
    options = {}
    if kind in ("synthetic", "hf", "funsd_mix"):
        options = {k: v for k, v in spec.items() if k not in ("kind", "split", "splits") and v is not None
                   and k in _init_fields(kind)}
    try:
        src = open_source({"kind": kind, **options}, split, path)
        expected = (info.get("source_sha256") or {}).get(split)
        if expected:
            ids = src.ids()
            if info.get("limit"):
                ids = ids[: int(info["limit"])]
            if source_fingerprint(src, ids) != expected:
                return (f"the {kind} source found ({_where(src)}) is not the one the build read (its files differ); "
                        "pass --source")
    except DogoodError as exc:
        return f"the {kind} source could not be opened ({exc}); pass --source"
    return src


def _init_fields(kind: str) -> set[str]:
    if kind == "hf":
        from dogood.sources.hf_dataset import HFDatasetSource as cls
    elif kind == "funsd_mix":
        from dogood.sources.funsd_mix import FunsdMixSource as cls
    else:
        from dogood.sources.synthetic import SyntheticSource as cls
    return {f.name for f in dataclasses.fields(cls) if f.init} - {"split", "dataset", "root", "maps"}  # no local path


def _where(src) -> str:
    return str(getattr(src, "root", None) or getattr(src, "name", None) or src.kind)


def _panel(doc: Document, images: dict[str, str], element_id: str) -> Panel:
    """The page, embedded once per distinct pixels, and its distinct word boxes in the embedded image's pixels."""
    array = doc.image.to_array()
    key = "img-" + hashlib.sha256(array.tobytes() + repr(array.shape).encode()).hexdigest()[:16]
    scale = min(1.0, MAX_SIDE / max(doc.width, doc.height))
    width, height = max(1, round(doc.width * scale)), max(1, round(doc.height * scale))
    if key not in images:
        page = Image.fromarray(array)
        if page.size != (width, height):
            page = page.resize((width, height), Image.Resampling.LANCZOS)
        buf = io.BytesIO()
        page.convert("RGB" if page.mode != "L" else "L").save(buf, format="JPEG", quality=85)
        images[key] = "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
    labels = [NO_LABEL if ent is None else ent.label for ent in doc.word_entity()]
    seen: dict[tuple, int] = {}
    boxes = []
    for word, label in zip(doc.words, labels):
        x0, y0, x1, y1 = (round(v * scale) for v in word.box)
        box = (x0, y0, max(1, x1 - x0), max(1, y1 - y0))
        if box in seen:  # a box shared by several words (merge): drawn once, its text joined
            k = seen[box]
            boxes[k] = (*boxes[k][:6], f"{boxes[k][6]} {word.text}".strip())
            continue
        seen[box] = len(boxes)
        r, g, b = label_colour(label)
        boxes.append((*box, f"rgb({r},{g},{b})", label, word.text))
    return Panel(key, width, height, boxes, element_id)


#: Family order of the table of contents; a config whose chain mixes families is listed under both names joined.
FAMILY_ORDER = ("image", "text", "layout")


def config_family(chain: list) -> str:
    """``image``, ``text``, ``layout``, ``image + text`` (a chain across families) or ``unshifted``."""
    from dogood.shifts import SHIFTS

    found = {SHIFTS[step["shift"]].family for step in chain
             if isinstance(step, dict) and step.get("shift") in SHIFTS}
    names = [f for f in FAMILY_ORDER if f in found] + sorted(found - set(FAMILY_ORDER))
    return " + ".join(names) if names else "unshifted"


def ordered_configs(info: dict, configs: list[str]) -> list[str]:
    """The configs in the recipe's own order when the shipped recipe of the same name and version is found
    (``dogood_build.json`` keeps them sorted by name), else as stored."""
    from dogood.pipeline.recipe import load_recipe

    try:
        recipe = load_recipe(str(info.get("recipe")))
    except DogoodError:
        return configs
    if recipe.version != info.get("version"):
        return configs
    order = {name: k for k, name in enumerate(recipe.configs)}
    return sorted(configs, key=lambda c: (order.get(c, len(order)), c))


def contents(sections: list[ConfigSection]) -> list[tuple[str, list[ConfigSection]]]:
    """The table of contents: families in :data:`FAMILY_ORDER` (then mixed chains, then unshifted), each with its
    configs in build order."""
    groups: dict[str, list[ConfigSection]] = {}
    for s in sections:
        groups.setdefault(s.family, []).append(s)

    def rank(family: str) -> tuple[int, str]:
        if family in FAMILY_ORDER:
            return FAMILY_ORDER.index(family), family
        return (len(FAMILY_ORDER) + (family == "unshifted"), family)

    return sorted(groups.items(), key=lambda item: rank(item[0]))


# -- eval reports ---------------------------------------------------------------------------------------------
def _read_report(folder: Path) -> dict[str, Any]:
    path = folder / "report.json"
    try:
        data = read_json(path, what="eval report")
    except FileNotFoundError:
        raise GalleryError(f"--report {folder} has no report.json (written by `dogood eval --out {folder}`)") from None
    except (OSError, FileRefused) as exc:
        raise GalleryError(f"{path} cannot be read as a dogood eval report ({getattr(exc, 'reason', exc)})") from None
    if not isinstance(data, dict) or not isinstance(data.get("datasets"), list):
        raise GalleryError(f"{path} is not a dogood eval report (no 'datasets' list)")
    plot = folder / "report.png"
    uri = None
    if plot.is_file():
        uri = "data:image/png;base64," + base64.b64encode(
            fs_read_bytes(plot, limit="image_bytes", what="report plot")).decode("ascii")
    from dogood.eval.formats import report_row

    rows = []
    for r in data["datasets"]:
        if isinstance(r, dict):
            value, change, note = report_row(data, r)
            rows.append({**{k: r.get(k) for k in ("dataset", "role", "documents", "location")}, "value": value,
                         "change": change, "note": note})
    return {"folder": folder, "model": data.get("model"), "metric": data.get("metric"), "rows": rows, "plot": uri,
            "hidden": 0}


def _is_folder(location: Any, target: Path, bases: tuple[Path, ...]) -> bool:
    loc = str(location or "")
    return bool(loc) and any((base / loc).resolve() == target for base in bases)


def _own_rows(report: dict[str, Any], folder: Path) -> dict[str, Any]:
    """The report with its ID row and the rows that scored ``folder``; how many other rows were left out."""
    target = folder.resolve()
    bases = (Path.cwd(), Path(report["folder"]).resolve().parent.parent)
    own = [r for r in report["rows"] if r.get("role") == "id" or _is_folder(r.get("location"), target, bases)]
    if not any(r.get("role") != "id" for r in own):  # a report given with --report that scored other folders
        return report
    return {**report, "rows": own, "hidden": len(report["rows"]) - len(own)}


def _find_reports(folder: Path) -> list[dict[str, Any]]:
    """Reports in ``eval/*/`` (the working folder, or beside ``folder``'s parent) one of whose datasets is ``folder``."""
    target = folder.resolve()
    places = {Path("eval").resolve(), (folder.resolve().parent.parent / "eval")}
    found = []
    for place in sorted(places):
        for path in sorted(place.glob("*/report.json")) if place.is_dir() else []:
            try:
                data = read_json(path, what="eval report")
                locations = [str(r.get("location") or "") for r in data.get("datasets", [])]
            except (OSError, FileRefused, AttributeError, TypeError):
                continue
            bases = (Path.cwd(), path.parent.parent.parent)  # where `dogood eval` ran when --out was eval/<model>
            roles = [str(r.get("role") or "") for r in data.get("datasets", [])]
            # a report belongs to the build when it scored the build's configs as OOD sets (a report that used the
            # folder as its ID reference belongs to the builds it compared it with)
            if any(role != "id" and _is_folder(loc, target, bases) for loc, role in zip(locations, roles)):
                found.append(_read_report(path.parent))
    return found


# -- HTML ----------------------------------------------------------------------------------------------------
_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head>""" + MARKER + """
<meta charset="utf-8"><title>dogood gallery: {{ title }}</title>
<style>
body { font-family: sans-serif; margin: 1em 2em; color: #222; }
.controls { position: sticky; top: 0; background: #fff; padding: .5em 0; border-bottom: 1px solid #ccc; z-index: 1; }
.legend span { display: inline-block; margin-right: 1em; }
.swatch { display: inline-block; width: .9em; height: .9em; vertical-align: middle; margin-right: .3em; }
.pair { display: flex; gap: 12px; align-items: flex-start; margin: .5em 0 1.5em; }
figure { margin: 0; flex: 0 1 480px; }
figcaption { font-size: .85em; background: #2d2d2d; color: #fff; padding: 2px 6px; }
svg.page { display: block; width: 100%; height: auto; }
svg.page rect { fill: none; stroke-width: 2; vector-effect: non-scaling-stroke; }
body:has(#toggle-boxes:not(:checked)) g.boxes { display: none; }
.missing { flex: 0 1 480px; color: #666; font-style: italic; }
table { border-collapse: collapse; font-size: .9em; margin: .3em 0; }
td, th { border: 1px solid #ccc; padding: 2px 8px; text-align: left; }
td.n { text-align: right; }
nav.contents { columns: 3 18em; font-size: .9em; margin: .5em 0 1em; }
nav.contents h3 { margin: .2em 0; font-size: 1em; break-after: avoid; }
nav.contents ul { margin: 0 0 .6em; padding-left: 1.2em; break-inside: avoid-column; }
img.plot { max-width: 100%; height: auto; }
figcaption a.zoom, figcaption a.unzoom { color: #9cf; float: right; margin-left: .8em; }
a.unzoom { display: none; }
figure:target { position: fixed; inset: 0; z-index: 10; overflow: auto; background: #fff; max-width: none; }
figure:target svg.page { width: var(--natural-width); max-width: none; }
figure:target a.unzoom { display: inline; }
figure:target a.zoom { display: none; }
body:has(#toggle-large:checked) .pair { flex-direction: column; }
body:has(#toggle-large:checked) figure { flex-basis: auto; width: min(100%, var(--natural-width)); }
</style></head>
<body>
<h1>{{ title }}</h1>
<p>{{ description }}</p>
<p>recipe {{ recipe }} v{{ version }}, seed {{ seed }}, box level {{ box_level }}, {{ n_docs }} document(s) per config
{%- if limit %} (partial build: --limit {{ limit }}){% endif %}.</p>
{% for why in missing %}<p class="note">Original pages not shown: {{ why }}.</p>{% endfor %}
<div class="controls"><label><input type="checkbox" id="toggle-boxes" checked> word boxes</label>
<label><input type="checkbox" id="toggle-large"> large pages</label>
<span class="legend">{% for label, colour in legend %}<span><span class="swatch" style="background: {{ colour }}"></span>{{ label }}</span>{% endfor %}</span></div>
<svg width="0" height="0" style="position: absolute" aria-hidden="true"><defs>
{% for key, uri in images.items() %}<image id="{{ key }}" href="{{ uri }}" width="{{ sizes[key][0] }}" height="{{ sizes[key][1] }}"/>
{% endfor %}</defs></svg>
<h2 id="contents">Contents</h2><nav class="contents">
{% for family, members in toc %}<h3>{{ family }} ({{ members|length }})</h3>
<ul>{% for s in members %}<li><a href="#config-{{ s.name }}">{{ s.name }}</a></li>{% endfor %}</ul>
{% endfor %}{% if reports %}<h3>evaluation</h3><ul>{% for report in reports %}<li><a href="#eval-{{ loop.index }}">{{ report.model }}</a></li>{% endfor %}</ul>{% endif %}
</nav>
{% for report in reports %}
<h2 id="eval-{{ loop.index }}">Eval: {{ report.model }} ({{ report.metric }})</h2>
<p class="note">{{ report.metric }} in percent; change from the ID set in points (negative: worse).</p>
<table><tr><th>dataset</th><th>role</th><th>documents</th><th>{{ report.metric }}</th><th>change</th><th>note</th></tr>
{% for r in report.rows %}<tr><td>{{ r.dataset }}</td><td>{{ r.role }}</td><td class="n">{{ r.documents }}</td>
<td class="n">{{ pct(r.value) }}</td><td class="n">{{ signed(r.change) }}</td><td>{{ r.note or "" }}</td></tr>
{% endfor %}</table>
{% if report.hidden %}<p class="note">{{ report.hidden }} other dataset(s) of this report (not of this build) are left out of the table; the plot shows them all.</p>{% endif %}
{% if report.plot %}<img class="plot" alt="eval plot" src="{{ report.plot }}">{% endif %}
{% endfor %}
{% for family, members in toc %}{% for s in members %}
<section id="config-{{ s.name }}">
<h2>{{ s.name }} <small>({{ s.family }}, {{ s.split }})</small> <a href="#contents" title="contents">↑</a></h2>
<ul>{% for step in s.chain %}<li><code>{{ step }}</code></li>{% endfor %}</ul>
{% for note in s.notes %}<p>{{ note }}</p>{% endfor %}
<table class="stats">{% for k, v in s.stats %}<tr><td>{{ k }}</td><td class="n">{{ v }}</td></tr>{% endfor %}
{% if s.labels %}<tr><td>labels</td><td>{% for k, v in s.labels %}{{ k }} {{ v }}{% if not loop.last %}, {% endif %}{% endfor %}</td></tr>{% endif %}
</table>
{% for d in s.documents %}
<h3>{{ d.doc_id }}</h3>
<div class="pair">
{% if d.original %}{{ panel(d.original, "original", "config-" ~ s.name) }}{% else %}<p class="missing">original not available</p>{% endif %}
{{ panel(d.shifted, s.name, "config-" ~ s.name) }}
</div>
{% endfor %}
</section>
{% endfor %}{% endfor %}
</body></html>
"""

_PANEL = """<figure id="zoom-{{ p.element_id }}" style="--natural-width: {{ p.width }}px"><figcaption>{{ caption }}
<a class="zoom" href="#zoom-{{ p.element_id }}">zoom</a><a class="unzoom" href="#{{ back }}">close</a></figcaption>
<svg class="page" id="{{ p.element_id }}" viewBox="0 0 {{ p.width }} {{ p.height }}" data-width="{{ p.width }}" data-height="{{ p.height }}">
<use href="#{{ p.image }}"/>
<g class="boxes">{% for x, y, w, h, colour, label, text in p.boxes %}<rect x="{{ x }}" y="{{ y }}" width="{{ w }}" height="{{ h }}" style="stroke: {{ colour }}" data-label="{{ label }}"><title>{{ label }}: {{ text }}</title></rect>{% endfor %}</g>
</svg></figure>"""


def _render(info: dict, folder: Path, sections: list[ConfigSection], images: dict[str, str],
            reports: list[dict], missing: list[str]) -> str:
    import jinja2
    from markupsafe import Markup

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    panel_template = env.from_string(_PANEL)
    sizes = {}
    for s in sections:
        for d in s.documents:
            for p in (d.shifted, d.original):
                if p is not None:
                    sizes[p.image] = (p.width, p.height)
    labels = sorted({b[5] for s in sections for d in s.documents for p in (d.shifted, d.original) if p for b in p.boxes},
                    key=lambda x: (list(PALETTE).index(x) if x in PALETTE else len(PALETTE), x))
    legend = [(label, "rgb({},{},{})".format(*label_colour(label))) for label in labels]
    return env.from_string(_TEMPLATE).render(
        title=str(info.get("recipe") or folder.name), description=str(info.get("description") or ""),
        recipe=str(info.get("recipe")), version=str(info.get("version")), seed=info.get("seed"),
        box_level=info.get("box_level"), limit=info.get("limit"), missing=missing, legend=legend,
        images=images, sizes=sizes, reports=reports, sections=sections,
        n_docs=max((len(s.documents) for s in sections), default=0),
        toc=contents(sections),
        panel=lambda p, caption, back="contents": Markup(panel_template.render(p=p, caption=caption, back=back)),
        pct=lambda v: "" if v is None else f"{v:.2f}", signed=lambda change: "" if change is None else f"{change + 0.0:+.2f}",
    )
