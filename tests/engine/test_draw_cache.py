"""The graders' generated inputs kept on disk (``engine/draw_cache.py``) are exactly the ones drawn afresh,
for every strategy the graders use; a changed grader file is a new key; a planted file runs nothing."""

from __future__ import annotations

import os
import pickle
import shutil

import pytest
from conftest import FUNCTIONS, GRADERS

from pe_course.engine import draw_cache, drawing, grade_function
from pe_course.engine import grader as grader_module
from pe_course.engine.diagnosis import InProcessCaller
from pe_course.engine.discovery import load_suite


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("PE_COURSE_NO_DRAW_CACHE", raising=False)
    drawing.draw.cache_clear()
    yield tmp_path / "cache" / "pe-course" / "draws"
    drawing.draw.cache_clear()


def _every_draw(suite, reference) -> list[tuple]:
    """(strategy, n) of every draw grading the reference of every function makes."""
    seen: list[tuple] = []
    original = drawing.draw.__wrapped__

    def recording(factory, n):
        seen.append((factory, n))
        return original(factory, n)

    drawing.draw.cache_clear()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(grader_module, "draw", recording)
        for fn in FUNCTIONS:
            grade_function(fn, suite, reference, InProcessCaller(dict(reference)), deadline=float("inf"))
    return list(dict.fromkeys(seen))


def test_every_kept_draw_is_the_fresh_draw_bit_for_bit(fresh_cache, suite, reference, monkeypatch):
    draws = _every_draw(suite, reference)
    assert len(draws) >= 25, "the graders' strategies were not all reached"
    kept = {(f, n): draw_cache.path_for(f, n) for f, n in draws}
    assert all(kept.values()), [f"{f.__module__}.{f.__name__}" for (f, n), p in kept.items() if p is None]
    assert len(set(kept.values())) == len(kept), "two strategies share a key"
    assert sorted(p.name for p in fresh_cache.iterdir()) == sorted(p.name for p in kept.values())
    monkeypatch.setenv("PE_COURSE_NO_DRAW_CACHE", "1")
    for (factory, n), path in kept.items():
        drawing.draw.cache_clear()
        fresh = drawing.draw(factory, n)
        loaded = draw_cache.load(path, n)
        assert loaded is not None and pickle.dumps(loaded, 4) == pickle.dumps(fresh, 4), factory.__name__


def test_a_changed_grader_file_is_a_new_key(tmp_path, fresh_cache):
    copy = tmp_path / "graders"
    shutil.copytree(GRADERS, copy, ignore=shutil.ignore_patterns("__pycache__", ".hypothesis"))
    strategies = load_suite(copy).module("02_sinusoidal.strategies")
    before = draw_cache.path_for(strategies.pe_inputs, 16)
    assert before is not None and before == draw_cache.path_for(strategies.pe_inputs, 16)
    assert draw_cache.path_for(strategies.pe_inputs, 15) != before
    cases = copy / "02_sinusoidal" / "cases" / "positional_encoding.json"
    cases.write_text(cases.read_text(encoding="utf-8") + "\n", encoding="utf-8")  # any file of the graders
    assert draw_cache.path_for(strategies.pe_inputs, 16) not in (None, before)


class _Planted:
    def __reduce__(self):
        return (os.system, ("touch planted-ran",))


def test_a_planted_or_broken_file_is_drawn_again_and_runs_nothing(tmp_path, fresh_cache, suite, monkeypatch):
    monkeypatch.chdir(tmp_path)
    strategies = suite.module("02_sinusoidal.strategies")
    path = draw_cache.path_for(strategies.pe_inputs, 16)
    assert path is not None
    expected = drawing.draw(strategies.pe_inputs, 16)
    assert draw_cache.load(path, 16) == expected
    for planted in (pickle.dumps(tuple([_Planted()] * 16)), b"not a pickle", pickle.dumps(expected[:3])):
        path.write_bytes(planted)
        assert draw_cache.load(path, 16) is None
        drawing.draw.cache_clear()
        assert drawing.draw(strategies.pe_inputs, 16) == expected
        assert draw_cache.load(path, 16) == expected, "written again"
    assert not (tmp_path / "planted-ran").exists()


def test_an_unwritable_cache_folder_keeps_nothing_and_grading_goes_on(fresh_cache, suite):
    strategies = suite.module("02_sinusoidal.strategies")
    path = draw_cache.path_for(strategies.pe_inputs, 16)
    assert path is not None
    fresh_cache.mkdir(parents=True)
    fresh_cache.chmod(0o500)
    try:
        if os.access(fresh_cache, os.W_OK):  # root writes anywhere: an unwritable folder cannot be made
            pytest.skip("this user can write to a read-only folder")
        assert len(drawing.draw(strategies.pe_inputs, 16)) == 16
        assert not path.exists()
    finally:
        fresh_cache.chmod(0o700)
