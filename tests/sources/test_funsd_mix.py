"""Do-GOOD's synthetic FUNSD-L documents (funsd_mix): the repo's structure per document, boxes on their ink, FUNSD
labels and valid links, seeded determinism, the repo's library files, and a build of the shipped recipe."""

from __future__ import annotations

import numpy as np
import pytest

from dogood.core.errors import DogoodError, SourceError
from dogood.core.schema import FUNSD_LABELS
from dogood.sources import open_source
from dogood.sources.funsd_mix import FunsdMixSource, LibraryEntity, draw_layout


@pytest.fixture(scope="module")
def mix(funsd_dir) -> FunsdMixSource:
    return FunsdMixSource(root=funsd_dir)


@pytest.fixture(scope="module")
def docs(mix):
    return [(mix.layout(i), mix.load(i)) for i in mix.ids()]


def repo_cells(top_q: bool, rows: int, columns: int = 2, padding: int = 1) -> list[str]:
    """The kinds of the cells gen_ood_mix.py's loop visits (row by row), transcribed from reading it: strong cells
    always, weak cells where its conditions pick the weak Q or A library (filled or not)."""
    out = []
    for r in range(rows + 2 * padding):
        for c in range(columns + 2 * padding):
            if padding <= r < padding + rows and padding <= c < padding + columns:
                if top_q and r == padding:
                    out.append("strong_question")
                elif not top_q and c == padding:
                    out.append("strong_question")
                else:
                    out.append("strong_answer")
            elif top_q:
                if r == 0 or r == padding:
                    out.append("weak_question")
                elif r == padding + rows or r == padding + rows - 1:
                    out.append("weak_answer")
            else:
                if c == 0 or c == padding:
                    out.append("weak_question")
                elif c == padding + columns or c == padding + columns - 1:
                    out.append("weak_answer")
    return out


def test_repo_structure_counted_by_hand():
    # questions in a row, 8 strong rows: 2 questions, 14 answers; the top ring row (4) and the question row's ring
    # cells (2) are weak-question cells, the bottom ring row and the last strong row's ring cells weak-answer cells
    kinds = repo_cells(True, 8)
    order = ("strong_question", "strong_answer", "weak_question", "weak_answer")
    assert [kinds.count(k) for k in order] == [2, 14, 6, 6]
    # questions in a column, 10 strong rows: 10 and 10; the left ring column (12) and the question column's ring cells
    # (2) weak-question cells, likewise on the right
    kinds = repo_cells(False, 10)
    assert [kinds.count(k) for k in order] == [10, 10, 14, 14]


def test_every_document_has_the_repos_structure(docs):
    seen = set()
    for layout, doc in docs:
        counts = layout.counts()
        seen.add((layout.top_q, layout.rows))
        assert 8 <= layout.rows <= 10 and layout.columns == 2
        assert [s.kind for s in layout.slots[1:]] == repo_cells(layout.top_q, layout.rows)
        assert layout.slots[0].kind == "header" and counts["header"] == 1
        if layout.top_q:
            expected = (2, 2 * (layout.rows - 1), 6, 6)
        else:
            expected = (layout.rows, layout.rows, layout.rows + 4, layout.rows + 4)
        assert (counts["strong_question"], counts["strong_answer"], counts["weak_question_cells"],
                counts["weak_answer_cells"]) == expected
        assert counts["weak_question"] <= expected[2] and counts["weak_answer"] <= expected[3]
        filled = [s for s in layout.slots if s.entity is not None]
        assert len(doc.entities) == len(filled) == 1 + expected[0] + expected[1] + counts["weak_question"] + \
            counts["weak_answer"]
        for slot, ent in zip(filled, doc.entities):  # each entity keeps its FUNSD label, its words, in slot order
            assert ent.label == slot.entity.label
            assert tuple(doc.words[i].text for i in ent.word_ids) == slot.entity.texts
            want = {"strong_question": {"question"}, "strong_answer": {"answer"}, "weak_question": {"other"},
                    "weak_answer": {"other"}, "header": {"question", "answer", "other"}}[slot.kind]
            assert ent.label in want
    assert len(docs) == 50 and {top_q for top_q, _ in seen} == {True, False}
    weak = [s for layout, _ in docs for s in layout.slots if s.kind.startswith("weak")]
    share = sum(s.entity is not None for s in weak) / len(weak)
    assert abs(share - 0.3) < 0.05, share  # weak_prob 0.3 over about a thousand cells


def test_table_geometry_is_the_repos(docs):
    for layout, doc in docs:
        header, cells = layout.slots[0].box, [s.box for s in layout.slots[1:]]
        assert header[1] == 50 and 500 <= header[2] - header[0] <= 700 and 50 <= header[3] - header[1] <= 80
        assert abs((header[0] + header[2]) - 800) <= 1  # centred on the 800 px wide canvas
        assert all(150 <= x1 - x0 <= 200 and 20 <= y1 - y0 <= 30 for x0, y0, x1, y1 in cells)
        strong = [s.box for s in layout.slots if s.kind.startswith("strong")]
        q = [s.box for s in layout.slots if s.kind == "strong_question"]
        for s in layout.slots:
            if s.kind == "weak_question":  # above or level with the question row / left of or in the question column
                assert (s.box[1] <= q[0][1]) if layout.top_q else (s.box[0] <= q[0][0])
            if s.kind == "weak_answer":
                last = max(b[1] for b in strong) if layout.top_q else max(b[0] for b in strong)
                assert (s.box[1] if layout.top_q else s.box[0]) >= last
        assert (doc.width, doc.height) == (800, 1000)


def test_word_boxes_are_their_inks_extent_inside_their_cells(docs):
    for layout, doc in docs:
        gray = np.asarray(doc.image.to_array())[..., 0]
        covered = np.zeros(gray.shape, dtype=bool)
        filled = [s for s in layout.slots if s.entity is not None]
        for slot, ent in zip(filled, doc.entities):
            cx0, cy0, cx1, cy1 = slot.box
            for i in ent.word_ids:
                x0, y0, x1, y1 = doc.words[i].box
                assert cx0 <= x0 < x1 <= cx1 and cy0 <= y0 < y1 <= cy1, (doc.id, doc.words[i])
                crop = gray[y0:y1, x0:x1] < 255
                assert crop[0].any() and crop[-1].any() and crop[:, 0].any() and crop[:, -1].any()  # tight
                covered[y0:y1, x0:x1] = True
        assert (gray[~covered] == 255).all()  # no ink outside the word boxes: blank paper
        assert (gray[covered] < 255).any()


def test_labels_and_links(docs):
    for layout, doc in docs:
        by_id = {e.id: e for e in doc.entities}
        assert [e.id for e in doc.entities] == list(range(len(doc.entities)))
        assert {e.label for e in doc.entities} <= set(FUNSD_LABELS)
        pairs = set()
        for e in doc.entities:
            for q, a in e.links:
                assert by_id[q].label == "question" and by_id[a].label == "answer" and e.id in (q, a)
                assert (q, a) in by_id[a if e.id == q else q].links  # on both ends, as FUNSD has them
                pairs.add((q, a))
        questions = [e for e in doc.entities if e.label == "question" and e.links]
        per_question = layout.rows - 1 if layout.top_q else 1  # a question's column, or its row
        assert len(questions) == (2 if layout.top_q else layout.rows)
        assert all(len(q.links) == per_question for q in questions)
        assert len(pairs) == len(questions) * per_question


def test_same_seed_same_bytes_any_order(funsd_dir, mix):
    other = FunsdMixSource(root=funsd_dir)
    last = other.load("mix-49")  # alone, first, in another source object
    again = mix.load("mix-49")
    assert last.image.encoded_bytes() == again.image.encoded_bytes()
    assert (last.words, last.entities) == (again.words, again.entities)
    reseeded = FunsdMixSource(root=funsd_dir, seed=1).load("mix-49")
    assert reseeded.words != last.words
    assert FunsdMixSource(root=funsd_dir, split="train").load("mix-49").words != last.words  # the split seeds too


def test_options_are_checked(funsd_dir):
    with pytest.raises(SourceError, match="documents must be"):
        FunsdMixSource(root=funsd_dir, documents=0)
    with pytest.raises(SourceError, match="maps"):
        FunsdMixSource(library="repo")
    with pytest.raises(SourceError, match="rows"):
        FunsdMixSource(root=funsd_dir, rows=[9, 8])
    with pytest.raises(DogoodError, match="has no option 'colour'"):
        open_source({"kind": "funsd_mix", "colour": 1}, "test")
    src = open_source({"kind": "funsd_mix", "documents": 3}, "test", funsd_dir)
    assert list(src.ids()) == ["mix-00", "mix-01", "mix-02"] and src.describe()["library_source"]["kind"] == "funsd"


def test_the_repos_library_files(tmp_path, funsd_dir):
    lines = {
        "strong_question_map": ["Date:\tB-QUESTION\t0", "To\tB-QUESTION\t1", "whom:\tI-QUESTION\t1"],
        "strong_answer_map": ["12/3/91\tB-ANSWER\t0"],
        "weak_Q_map": ["Brand\tO\t4", "Name\tO\t4"],
        "weak_A_map": ["1991\tO\t2"],
        "weak_other_map": ["PLEASE\tB-QUESTION\t5", "NOTE\tI-QUESTION\t5", "REPORT\tO\t6"],
    }
    for name, rows in lines.items():
        (tmp_path / name).write_text("\n".join(rows) + "\n", encoding="utf-8")
    src = FunsdMixSource(library="repo", maps=tmp_path, documents=2)
    lib = src.libraries()
    assert [e.texts for e in lib["strong_question"]] == [("Date:",), ("To", "whom:")]
    assert [(e.texts, e.label) for e in lib["header"]] == [(("PLEASE", "NOTE"), "question"), (("REPORT",), "other")]
    assert lib["weak_question"][0] == LibraryEntity(("Brand", "Name"), "other", ("weak_Q_map", 0))
    doc = src.load("mix-01")
    assert {" ".join(doc.words[i].text for i in e.word_ids) for e in doc.entities} <= \
        {"Date:", "To whom:", "12/3/91", "Brand Name", "1991", "PLEASE NOTE", "REPORT"}
    (tmp_path / "weak_A_map").unlink()
    with pytest.raises(SourceError, match="weak_A_map: missing"):
        FunsdMixSource(library="repo", maps=tmp_path).load("mix-00")


def test_weak_and_header_entities_are_drawn_in_proportion_to_their_words():
    lib = {kind: (LibraryEntity(("a",), "other", ("d", 0)), LibraryEntity(("b", "c", "d"), "other", ("d", 1)))
           for kind in ("strong_question", "strong_answer", "weak_question", "weak_answer", "header")}
    rng = np.random.default_rng(0)
    headers = [draw_layout(lib, rng).slots[0].entity.origin[1] for _ in range(2000)]
    assert abs(np.mean(headers) - 0.75) < 0.04  # 3 words of 4: the repo picks a random token's entity
    strong = [s.entity.origin[1] for _ in range(200) for s in draw_layout(lib, rng).slots if s.kind == "strong_answer"]
    assert abs(np.mean(strong) - 0.5) < 0.03  # strong entities: uniform per entity


def test_builds_the_shipped_recipe(tmp_path, funsd_dir):
    import datasets

    from dogood.cli import main

    out = tmp_path / "mix"
    assert main(["build", "funsd-l-mix", "--source", str(funsd_dir), "--out", str(out), "--limit", "2"]) == 0
    rows = datasets.load_dataset(str(out), "dg_mix", split="test")
    src = FunsdMixSource(root=funsd_dir)
    names = rows.features["ner_tags"].feature.names
    for row in rows:
        doc = src.load(row["id"])
        assert row["tokens"] == [w.text for w in doc.words]
        labels = {i: e.label for e in doc.entities for i in e.word_ids}
        assert [names[t].split("-")[-1].lower() if names[t] != "O" else "other" for t in row["ner_tags"]] == \
            [labels[i] for i in range(len(doc.words))]
    assert rows["id"] == ["mix-00", "mix-01"]
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "the documents as the source draws them" in card and "(the in-distribution reference)" not in card
