"""The grading record (``pe_course.record``): one typed reader/writer, its JSON Schema, and attention.

Fast: no sandbox. Golden files (``pytest --force-regen`` after an intended change, then review the
diff): the Indonesian feedback a test cell shows for each status.
"""

from __future__ import annotations

import dataclasses
import json

import jsonschema
import pytest
from conftest import REPO

from pe_course.record import (
    RECORD_VERSION,
    Attention,
    CellResult,
    CellStatus,
    CheckResult,
    ClauseResult,
    GradingRecord,
    MisconceptionResult,
    Note,
    NoteKind,
    record_attention,
)
from pe_course.record.feedback import cell_markdown
from pe_course.record.outcomes import OUTCOMES, english, indonesian
from pe_course.record.schema import json_schema


def sample_record() -> GradingRecord:
    lost = ClauseResult(
        "K3",
        "`ids` boleh kosong (`T = 0`): hasilnya berbentuk `(0, d)`.",
        0.0,
        1.0,
        False,
        "Bentuk keluaran `embed` salah untuk input embed([], tok, pos): diharapkan (0, 2), didapat (0,).",
        "embed([], tok, pos)",
        "(0, 2)",
        "(0,)",
        ["ids-kosong", "kasus"],
    )
    cells = [
        CellResult(
            "test_embed",
            "embed",
            2.0,
            3.0,
            CellStatus.OK,
            [ClauseResult("K1", "`h[t] = tok_table[ids[t]] + pos_table[t]` …", 2.0, 2.0, True), lost],
            [
                CheckResult("kasus", "Contoh dari bab", False, "K1", lost.message),
                CheckResult("ids-kosong", "ids kosong", False, "K3", lost.message),
            ],
            [{"id": "concat-not-add", "hint": "Jumlahkan, jangan gabungkan."}],
        ),
        CellResult("test_one_hot", "one_hot", 0.0, 1.0, CellStatus.TIMEOUT),
    ]
    return GradingRecord(
        "01_embedding",
        cells,
        "bwrap",
        notes=[Note(NoteKind.RESTORED_CELL, "test_one_hot")],
        timed_out_cells=[7],
        seconds=1.23456,
        student="ani",
        assignment="positional-encoding",
        resources={
            "score": {
                "peak_memory": 2 * 2**30,
                "memory_limit": 2 * 2**30,
                "hits": ["memory"],
                "peak_processes": 3,
                "process_limit": 64,
                "cpu_seconds": 1.0,
                "cpu_limit": 300.0,
            }
        },
    )


def test_the_schema_in_docs_is_generated_from_the_classes():
    committed = json.loads((REPO / "docs" / "grading-record.schema.json").read_text(encoding="utf-8"))
    assert committed == json_schema(), (
        "run `python -m pe_course.record.schema` to regenerate docs/grading-record.schema.json"
    )


def test_a_written_record_follows_the_schema_and_reads_back_the_same():
    record = sample_record()
    data = record.to_dict()
    jsonschema.validate(data, json_schema())
    assert data["version"] == RECORD_VERSION and data["score"] == 2.0 and data["max_score"] == 4.0
    again = GradingRecord.from_dict(json.loads(json.dumps(data)))
    assert again.to_dict() == data


def test_the_schema_rejects_an_unknown_status_or_note_kind():
    data = sample_record().to_dict()
    data["cells"][0]["status"] = "missing"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, json_schema())
    data = sample_record().to_dict()
    data["notes"][0]["kind"] = "restored"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, json_schema())


def test_version_2_notes_and_damaged_parts_are_read_safely(tmp_path):
    data = sample_record().to_dict() | {
        "version": 2,
        "notes": [
            "restored-cell: test_embed",
            "grader-error",
            "free text",
            42,
            {"kind": "bogus", "detail": "x"},
        ],
    }
    data["cells"].append("not a cell")
    data["cells"][1]["status"] = "exploded"
    data["cells"][0]["checks"].append(None)
    path = tmp_path / "01_embedding.grading.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    record = GradingRecord.read(path)
    assert [str(n) for n in record.notes] == [
        "restored-cell: test_embed",
        "grader-error",
        "note: free text",
        "note: bogus: x",
    ]
    assert [c.status for c in record.cells] == [CellStatus.OK, CellStatus.ERROR]
    assert len(record.cells[0].checks) == 2 and len(record.cells[0].clauses) == 2
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValueError, match="not a JSON object"):
        GradingRecord.read(path)


def test_attention_is_decided_in_one_place():
    found = record_attention(sample_record())
    kinds = [a.kind for a in found]
    assert kinds == ["restored-cell", "timeout", "resource-limit", "timeout"]
    assert found[0] == Attention("restored-cell", "test_one_hot")
    assert "over the memory limit" in found[2].detail and found[3].detail == "test_one_hot (one_hot)"
    assert (
        record_attention(
            GradingRecord("01_embedding", [CellResult("test_embed", "embed", 3.0, 3.0)], "bwrap")
        )
        == []
    )


def test_a_version_3_record_reads_its_checks_as_clauses():
    """Before version 4 each check had its own points; read back, its clauses carry their sums."""
    v3_check = {
        "name": "ids-kosong",
        "title": "ids kosong",
        "passed": False,
        "points": 0.0,
        "max_points": 0.25,
        "message": "`one_hot` melempar IndexError untuk input one_hot([], 4)",
        "clause": "K3",
        "clause_text": "`ids` boleh kosong",
        "input": "one_hot([], 4)",
        "expected": "array berbentuk (0, 4)",
        "obtained": "IndexError",
    }
    passed = v3_check | {"name": "acak", "passed": True, "points": 0.5, "max_points": 0.5, "clause": "K1"}
    data = {
        "version": 3,
        "notebook": "01_embedding",
        "isolation": "bwrap",
        "cells": [
            {
                "grade_id": "test_one_hot",
                "function": "one_hot",
                "score": 0.5,
                "max_score": 0.75,
                "status": "ok",
                "checks": [passed, v3_check],
                "misconceptions": [],
            }
        ],
    }
    cell = GradingRecord.from_dict(data).cells[0]
    assert [(c.clause, c.points, c.max_points, c.passed) for c in cell.clauses] == [
        ("K1", 0.5, 0.5, True),
        ("K3", 0.0, 0.25, False),
    ]
    assert cell.clauses[1].input == "one_hot([], 4)" and cell.clauses[1].checks == ["ids-kosong"]


@pytest.mark.parametrize("status", list(CellStatus), ids=str)
def test_the_feedback_of_each_status_matches_the_golden_file(status, file_regression):
    cell = sample_record().cells[0]
    cell.status = status
    file_regression.check(cell_markdown(cell), extension=".md", basename=f"feedback_{status.value}")


def test_a_record_keeps_the_hints_its_student_was_given(tmp_path):
    record = sample_record()
    again = GradingRecord.read(record.write(tmp_path / "01_embedding.grading.json"))
    assert again.cells[0].misconceptions == [{"id": "concat-not-add", "hint": "Jumlahkan, jangan gabungkan."}]
    assert again.to_dict() == record.to_dict()


def test_a_record_written_before_hints_were_kept_still_loads():
    """Version 5 and before: a misconception is its id alone; read back, its hint is empty (resume and
    regrade read such records), and what is no id is dropped."""
    data = sample_record().to_dict() | {"version": 5}
    data["cells"][0]["misconceptions"] = ["concat-not-add", "", 7, {"id": "sin-cos-swapped"}]
    cell = GradingRecord.from_dict(json.loads(json.dumps(data))).cells[0]
    assert cell.misconceptions == [
        {"id": "concat-not-add", "hint": ""},
        {"id": "sin-cos-swapped", "hint": ""},
    ]
    assert "Kemungkinan miskonsepsi `concat-not-add`:** " in cell_markdown(cell)


def test_the_schema_is_the_classes_fields():
    """One description of the shape: each object of the schema has exactly its class's fields (and
    what it derives), and a record written has exactly the properties the schema requires."""
    schema = json_schema()
    for name, cls in (("cell", CellResult), ("clause", ClauseResult), ("check", CheckResult), ("note", Note)):
        assert schema["$defs"][name]["required"] == [f.name for f in dataclasses.fields(cls)]
    assert schema["$defs"]["misconception"]["required"] == list(MisconceptionResult.__annotations__)
    data = sample_record().to_dict()
    assert sorted(data) == sorted(schema["required"]) == sorted(schema["properties"])
    assert sorted(data["cells"][0]) == sorted(schema["$defs"]["cell"]["required"])


def test_every_outcome_is_named_once_with_its_texts():
    """Each status, note kind and reason for a look has its English text (the report); each status a
    student can meet has its Indonesian one (the feedback)."""
    kinds = {*CellStatus, *NoteKind, "resource-near", "unisolated", "missing-notebook", "no-grading-record"}
    kinds |= {"unreadable-grading-record", "record-mismatch", "no-submission", "not-graded", "late"}
    assert kinds == set(OUTCOMES)
    assert all(english(k) != k and english(k) for k in kinds)
    assert [s for s in CellStatus if not indonesian(s)] == [CellStatus.OK]
    assert {a.kind for a in record_attention(sample_record())} <= set(OUTCOMES)
    assert english("made-up") == "made-up" and indonesian("made-up") == ""
