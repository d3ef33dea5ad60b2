"""Generate the shift pages, the shift index, the recipe table and the papers page at docs build time.

Run by mkdocs-gen-files (``mkdocs.yml``); the pages exist only in the built site. Pictures and measured effects
come from synthetic pages (:mod:`dogood.share.docs_pages`), so no dataset is needed. ``DOGOOD_DOCS_SHIFTS`` (a
comma list) limits the pictures to some shifts while writing the docs; the others get a page without one.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from dogood.pipeline.preflight import recipes_table_markdown
from dogood.share.docs_pages import docs_data, references_page, shift_figures, shift_index, shift_page
from dogood.shifts.describe import shipped_shifts

if "--front-picture" in sys.argv[1:]:  # the README's picture, committed as docs/images/front.png
    from dogood.share.docs_pages import front_picture

    print(front_picture(Path(__file__).resolve().parent / "images" / "front.png"))
    raise SystemExit(0)

import mkdocs_gen_files  # noqa: E402  (only under mkdocs)

only = {s for s in os.environ.get("DOGOOD_DOCS_SHIFTS", "").split(",") if s}
started = time.perf_counter()
with tempfile.TemporaryDirectory(prefix="dogood-docs-images-") as tmp, docs_data():
    images = Path(tmp) / "images"
    images.mkdir()
    work = Path(tmp) / "work"
    work.mkdir()
    pictures = {}
    for cls in shipped_shifts():
        if only and cls.name not in only:
            figures = {"why": "left out of this build by DOGOOD_DOCS_SHIFTS"}
        else:
            figures = shift_figures(cls, work, images)
        pictures[cls.name] = bool(figures.get("picture"))
        if figures.get("picture"):
            with mkdocs_gen_files.open(f"shifts/{cls.name}.png", "wb") as fh:
                fh.write((images / f"{cls.name}.png").read_bytes())
        with mkdocs_gen_files.open(f"shifts/{cls.name}.md", "w") as fh:
            fh.write(shift_page(cls, figures))
        mkdocs_gen_files.set_edit_path(f"shifts/{cls.name}.md", f"../dogood/shifts/{cls.family}/{cls.name}.py")
    with mkdocs_gen_files.open("shifts/index.md", "w") as fh:
        fh.write(shift_index(pictures))
with mkdocs_gen_files.open("recipes-table.md", "w") as fh:
    fh.write("# Recipe table\n\nEvery shipped recipe (`dogood list`), generated when this site was built: its "
             "configs, and the extra and programs its configs need (`dogood plan RECIPE` checks them on your "
             "machine).\n\n" + recipes_table_markdown(detail=True))
with mkdocs_gen_files.open("papers.md", "w") as fh:
    fh.write(references_page())
print(f"dogood docs: {sum(pictures.values())} of {len(pictures)} shift pictures made in "
      f"{time.perf_counter() - started:.0f} s", file=sys.stderr)
