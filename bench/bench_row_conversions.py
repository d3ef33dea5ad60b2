"""CPU per row of ``dogood.transform``'s conversions alone, with no shift (issue 31): row -> record
(``row_to_doc``), the pixels read (``to_array``: an RGB page with equal channels read as grey), a record with new
pixels -> row (``doc_to_row``: the page back as RGB PIL, tokens, 0-1000 boxes, tags); and the same with the
pixels untouched. The 50 FUNSD test rows of ``bench_augment.py``'s build (word boxes), min over 7 passes.

    PYTHONPATH=<checkout> python bench/bench_row_conversions.py [ROWS_DIR]   # ROWS_DIR built at the first run

Run it with two checkouts' PYTHONPATH one after the other and compare (the machine is shared: repeat).
"""
import copy
import sys
import tempfile
import time
from pathlib import Path

from datasets import load_dataset

from dogood.core.document import PageImage
from dogood.pipeline.build import build
from dogood.pipeline.recipe import load_recipe
from dogood.sources.rows import doc_to_row, row_to_doc

where = Path(sys.argv[1] if len(sys.argv) > 1 else Path(tempfile.gettempdir()) / "dogood-bench-rows50")
if not where.is_dir():
    build(load_recipe("funsd"), where, limit=50, progress=False, box_level="word")
ds = load_dataset(str(where), "original", split="test").remove_columns(["dogood"])
rows = [ds[i] for i in range(len(ds))]
def one(row, pixels):
    doc, layout = row_to_doc(row, row["id"])
    if pixels:
        arr = doc.image.to_array()
        shifted = copy.copy(doc)
        object.__setattr__(shifted, "image", PageImage.from_array(arr))
    else:
        shifted = doc
    return doc_to_row(shifted, layout, row, doc, input_image=row["image"])
for pixels in (True, False):
    best = 1e9
    for _ in range(7):
        s = time.process_time()
        for r in rows: one(r, pixels)
        best = min(best, time.process_time() - s)
    print(f"{'pixels read and written back' if pixels else 'pixels untouched'}: {1000*best/len(rows):.2f} ms/row")
