"""dogood.pipeline.stats: one document's statistics, added up, read back from shard records (old ones too), credits."""

from __future__ import annotations

from dogood.core.document import ShiftRecord
from dogood.pipeline import stats


def test_shift_stats_keep_counts_and_tallies_per_shift():
    records = [ShiftRecord("a", {}, 1, None, {"changed": 1}, {"photo": {"7": 1}}),
               ShiftRecord("b", {}, 2, None, {"changed": 2}),
               ShiftRecord("a", {}, 3, None, {"changed": 3, "licence=CC BY": 1})]  # a tally still sent as a count
    assert stats.shift_stats(records) == {
        "a": {"counts": {"changed": 4}, "tallies": {"photo": {"7": 1}, "licence": {"CC BY": 1}}},
        "b": {"counts": {"changed": 2}, "tallies": {}},
    }


def test_add_sums_numbers_and_merges_mappings_and_finish_sorts():
    total = {}
    for one in ({"documents": 1, "labels": {"O": 2}, "shifts": {"a": {"counts": {"x": 1}, "tallies": {"t": {"v": 1}}}}},
                {"documents": 1, "labels": {"B": 1}, "shifts": {"a": {"counts": {"x": 2}, "tallies": {"t": {"w": 1}}}}}):
        stats.add(total, one)
    done = stats.finish(total)
    assert done["documents"] == 2 and done["words"] == 0 and list(done["labels"]) == ["B", "O"]
    assert done["shifts"] == {"a": {"counts": {"x": 3}, "tallies": {"t": {"v": 1, "w": 1}}}}


def test_old_shard_records_are_read_back():
    old_shard = {"documents": 3, "shift_counts": {"a: changed": 2, "a: photo=7": 1}, "labels": {"O": 1}}
    assert stats.from_record(old_shard) == {
        "documents": 3, "labels": {"O": 1},
        "shifts": {"a": {"counts": {"changed": 2}, "tallies": {"photo": {"7": 1}}}}}
    new = {"documents": 3, "shifts": {"a": {"counts": {"changed": 2}, "tallies": {}}}}
    assert stats.from_record(new) == new


def test_credits_come_from_each_shifts_tallies_over_the_splits():
    seen = []

    class Photos:
        name = "a"

        def credits(self, tallies):
            seen.append(tallies)
            return [{"id": int(k)} for k in tallies.get("photo", {})]

    by_split = {"train": {"shifts": {"a": {"counts": {}, "tallies": {"photo": {"10": 1}}}}},
                "test": {"shifts": {"a": {"counts": {}, "tallies": {"photo": {"10": 1, "9": 2}}}}}}
    out = stats.credits({"c": [Photos()]}, {"c": by_split})
    assert seen == [{"photo": {"10": 2, "9": 2}}]
    assert [c["id"] for c in out] == [9, 10]


def test_document_stats_of_an_unshifted_document(funsd_test):
    from dogood.core.schema import document_to_row

    doc = funsd_test.load(funsd_test.ids()[0])
    row = document_to_row(doc, "funsd")
    s = stats.document_stats(doc, doc, row, "funsd")
    assert s["documents"] == 1 and s["words"] == s["source_words"] == len(doc.words)
    assert s["box_changed"] == s["text_changed"] == s["words_removed"] == 0 and s["shifts"] == {}
    assert sum(s["labels"].values()) == len(row["tokens"])
