"""A build's timeline (:mod:`dogood.pipeline.timeline`): spans recorded only when asked, brought back from the workers,
and the serial share Amdahl's law takes, computed by hand on made-up timelines and measured on real builds."""

from __future__ import annotations

import os

import pytest

from dogood.pipeline import timeline
from dogood.pipeline.build import build
from dogood.pipeline.recipe import parse_recipe


def _span(who, what, start, end, **info):
    return {"who": who, "what": what, "start": float(start), "end": float(end), **info}


def test_nothing_is_recorded_unless_asked():
    assert not timeline.is_recording()
    with timeline.span("plan"):
        pass
    assert timeline.drain() is None
    with timeline.recording() as spans:
        with timeline.span("plan", recipe="x"):
            pass
        timeline.extend([_span("worker-7", "task", 1, 2)])
    assert [(s["who"], s["what"]) for s in spans] == [("driver", "plan"), ("worker-7", "task")]
    assert spans[0]["recipe"] == "x" and spans[0]["end"] >= spans[0]["start"]
    assert not timeline.is_recording()


def test_a_task_run_by_the_driver_itself_comes_back_as_a_worker_s():
    with timeline.recording() as spans:
        with timeline.as_worker():
            with timeline.span("load"):
                pass
            own = timeline.drain()
        with timeline.span("write"):
            pass
    assert [(s["who"], s["what"]) for s in own] == [("worker-0", "load")]
    assert [(s["who"], s["what"]) for s in spans] == [("driver", "write")]  # the worker's went with its result


def test_serial_time_counts_idle_workers_while_tasks_are_left_not_the_last_tasks():
    # two workers, four tasks: the driver plans 0-1; w1 runs 1-3 and 3-6, w2 starts late (2-4) and runs 4-5;
    # the last task (w1, to 6) runs alone with nothing left for w2: not serial; the card 6-7 is
    spans = [_span("driver", "build", 0, 7), _span("driver", "plan", 0, 1),
             _span("w1", "task", 1, 3), _span("w1", "task", 3, 6), _span("w2", "task", 2, 4), _span("w2", "task", 4, 5),
             _span("driver", "card", 6, 7)]
    s = timeline.summary(spans, workers=2)
    # serial: 0-1 (plan), 1-2 (one of two busy, four tasks left), 5-6? at 5, one task left (w1's): not serial; 6-7
    assert s["wall"] == 7 and s["busy"] == 2 + 3 + 2 + 1 and s["tasks"] == 4
    assert s["serial"] == pytest.approx(3.0)
    assert s["serial_share"] == pytest.approx(3 / 7)
    assert s["amdahl_serial"] == pytest.approx(3 / (3 + 8))
    assert s["speedup"][16] == pytest.approx(1 / (3 / 11 + (8 / 11) / 16))
    assert s["serial_steps"] == {"plan": 1.0, "workers between tasks": 1.0, "card": 1.0}
    assert s["steps"]["worker: task"] == 8 and s["steps"]["driver: card"] == 1


def test_amdahl_bounds_of_the_issue():
    # 12.8x at 16 processes needs a serial share of at most 1/60; 9.6x at most 1/22.5
    assert timeline.serial_share_for(12.8, 16) == pytest.approx(1 / 60)
    assert timeline.serial_share_for(9.6, 16) == pytest.approx(1 / 22.5)
    assert timeline.amdahl_speedup(1 / 60, 16) == pytest.approx(12.8)
    assert timeline.summary([], 4)["serial"] == 0.0


@pytest.mark.parametrize("num_proc", [1, 2])
def test_a_recorded_build_brings_back_every_task_of_every_worker(funsd_dir, tmp_path, num_proc):
    recipe = parse_recipe({"name": "funsd-timeline", "version": "1.0.0", "source": {"kind": "funsd"},
                           "splits": ["test"], "seed": 0,
                           "configs": {"merge": [{"shift": "merge", "level": "entity"}], "drop": [{"shift": "key_drop"}]}})
    with timeline.recording() as spans:
        build(recipe, tmp_path / "out", source_path=funsd_dir, limit=4, num_proc=num_proc, progress=False)
    tasks = [s for s in spans if s["what"] == timeline.TASK]
    assert len(tasks) == 4 and len({s["doc"] for s in tasks}) == 4  # one task a document (two cheap configs)
    workers = {s["who"] for s in tasks}
    if num_proc == 1:
        assert workers == {"worker-0"}  # this process, as the worker
    else:
        assert workers and all(w.startswith("worker-") and w != f"worker-{os.getpid()}" for w in workers)
    assert {"plan", "card", "commit"} <= {s["what"] for s in spans if s["who"] == "driver"}
    configs = {s["config"] for s in spans if s["what"] == "shift"}
    assert configs == {"merge", "drop"}
    s = timeline.summary(spans, num_proc)
    assert 0 < s["serial"] < s["wall"] and s["busy"] > 0
    assert not timeline.is_recording()
