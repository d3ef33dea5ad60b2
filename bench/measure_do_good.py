"""The rates docs/do-good.md gives, on FUNSD test: words changed by the word swaps in ``style: repo`` (every word)
and token boxes changed by ``merge`` (entity level) under dogood's rule and ``rule: repo``, as Markdown tables::

    python bench/measure_do_good.py            # both tables
    python bench/measure_do_good.py --merge    # the merge table only (no TextAttack needed)

BERT-Attack is left out: it needs a masked LM's weights. The embedding swap uses dogood's counter-fitted GloVe.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = Path(os.environ.setdefault("DOGOOD_DATA_DIR", str(ROOT.parent / "shared" / "data")))
os.environ.setdefault("NLTK_DATA", str(DATA / "nltk_data"))

from dogood.core.boxes import normalize_boxes  # noqa: E402
from dogood.core.schema import token_boxes, token_index  # noqa: E402
from dogood.shifts import make_shift  # noqa: E402
from dogood.sources.funsd import FunsdSource, find_funsd_root  # noqa: E402

LAMBDAS = [((0, 0), "pixels"), ((10, 0), "pixels"), ((20, 0), "pixels"), ((0, 5), "pixels"), ((0, 10), "pixels"),
           ((10, 5), "pixels"), ((20, 10), "pixels"), ((70, 30), "normalized")]
SWAPS = {"char_deletion": {}, "homoglyph_swap": {}, "number_swap": {}, "embedding_swap": {"pct_words_to_swap": 0.1}}


def text_table(docs) -> list[str]:
    rows = ["| config | words changed |", "|---|---|"]
    for name, extra in SWAPS.items():
        shift = make_shift({"shift": name, "style": "repo", "fraction": 1.0, **extra})
        shift.prepare()
        words = changed = 0
        for k, doc in enumerate(docs):
            out = shift(doc, k)
            pairs = [(a.text, b.text) for a, b in zip(doc.words, out.words) if a.text.strip()]
            words += len(pairs)
            changed += sum(a != b for a, b in pairs)
        rows.append(f"| {name} | {100 * changed / words:.1f}% ({changed:,} / {words:,}) |")
    return rows


def merge_table(docs) -> list[str]:
    rows = ["| λ1/λ2 | dogood's rule | rule: repo |", "|---|---|---|"]
    for (lx, ly), units in LAMBDAS:
        cells = []
        for rule in ("dogood", "repo"):
            shift = make_shift({"shift": "merge", "lambda_x": lx, "lambda_y": ly, "level": "entity", "rule": rule,
                                "units": units})
            tokens = changed = 0
            for doc in docs:
                out = shift(doc, 0)
                index = token_index(doc)
                before = normalize_boxes(token_boxes(doc, "segment", index), doc.width, doc.height)
                after = normalize_boxes(token_boxes(out, "segment", index), doc.width, doc.height)
                tokens += len(index)
                changed += sum(a != b for a, b in zip(before, after))
            cells.append(f"{100 * changed / tokens:.1f}% ({changed:,})")
        unit = "px" if units == "pixels" else "(0-1000)"
        rows.append(f"| {lx}/{ly} {unit} | {cells[0]} | {cells[1]} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--merge", action="store_true", help="the merge table only")
    args = parser.parse_args()
    source = FunsdSource(root=find_funsd_root(DATA / "funsd" / "dataset"), split="test")
    docs = [source.load(i) for i in source.ids()]
    if not args.merge:
        print("\n".join(text_table(docs)), end="\n\n")
    print("\n".join(merge_table(docs)))


if __name__ == "__main__":
    main()
