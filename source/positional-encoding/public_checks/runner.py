"""The public check in the student's kernel: ``check_function`` runs a function's public cases and
properties (``<notebook>.json`` beside this package) and prints every clause's result."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .charging import (
    BASE_CLAUSE,
    Failure,
    Membership,
    Pending,
    RaiseWatch,
    evidence_for,
    settle,
    trace,
)
from .compare import as_array, assert_close, judge
from .data import from_data, outcome_from_data
from .evidence import Answer, first_real
from .messages import CheckFailed, Outcome, call_outcome, no_value, plain, show_call
from .verdicts import Clause, ClauseVerdict, Gate, preview_points, verdict_lines, verdicts

# --------------------------------------------------------------------------------------------
# The public check, in the student's kernel
# --------------------------------------------------------------------------------------------
HERE = Path(__file__).resolve().parent


class PublicChecker:
    """Runs a function's public cases and properties (``<notebook>.json`` beside this file) on the
    student's function, charging each failure as the graders do."""

    def __init__(
        self, name: str, func: Callable[..., Any], spec: Mapping[str, Any], properties: Any = None
    ) -> None:
        self.name, self.func, self.spec, self.properties = name, func, spec, properties
        self.clauses = [Clause(k, c["text"], float(c["points"])) for k, c in spec["clauses"].items()]
        self.form_shape = spec.get("form_shape")
        self.form = spec.get("form")
        self.base = spec.get("base", BASE_CLAUSE)
        self.form_seen = False
        self.first_no_value: CheckFailed | None = None
        raises = spec.get("raises")
        self.watch = RaiseWatch(tuple(raises) if raises else None)
        self.failures: list[Failure] = []
        self.evidence: set[str] = set()
        self.pending: list[Pending] = []
        self.answers: list[Answer] = []  # the cases' answers, where a value was expected and came back
        self.check = ""

    # -- what a property receives (the graders' Grader offers the same) --------------------------
    def call(self, fn: str, *args: Any, **kwargs: Any) -> Any:
        if fn != self.name:
            raise KeyError(fn)
        outcome = call_outcome(self.func, args, kwargs)
        if not outcome.ok:
            raise no_value(fn, outcome, args, kwargs)
        return outcome.value

    array = staticmethod(as_array)
    close = staticmethod(assert_close)

    @staticmethod
    def fail(message: str, input: str = "") -> None:
        raise CheckFailed(message, input=input)

    # -- running ---------------------------------------------------------------------------------
    def _evaluate(self, case: Mapping[str, Any]) -> tuple[Outcome, list[CheckFailed]]:
        args = tuple(from_data(a) for a in case["args"])
        kwargs = {k: from_data(v) for k, v in case.get("kwargs", {}).items()}
        outcome = call_outcome(self.func, args, kwargs)
        expected = outcome_from_data(case["expected"])
        failures = judge(
            self.name,
            args,
            kwargs,
            outcome,
            expected,
            rtol=case.get("rtol", 1e-6),
            atol=case.get("atol", 1e-8),
            form_shape=self.form_shape,
        )
        if outcome.ok and not any(f.kind == "form" for f in failures) and expected.ok:
            self.form_seen = True
        return outcome, failures

    def _memberships(self, case: Mapping[str, Any]) -> list[Membership]:
        return [
            Membership(m["clause"], m.get("twin"), bool(m.get("same_expected")), m.get("class", ""))
            for m in case.get("classes", [])
        ]

    def _twin(self, case: Mapping[str, Any]) -> tuple[Outcome, bool]:
        outcome, failures = self._evaluate(case)
        if not any(f.kind != "form" for f in failures):
            self.evidence.update(
                evidence_for(self._memberships(case), "raises" in case["expected"], self.base)
            )
            return outcome, True
        return outcome, False

    def _answer(self, case: Mapping[str, Any], outcome: Outcome, right: bool) -> Answer:
        """The answer to a case, with its probe (shipped as data: the same input with other values,
        where the reference's result differs) to look at it again."""
        args = tuple(from_data(a) for a in case["args"])
        kwargs = {k: from_data(v) for k, v in case.get("kwargs", {}).items()}
        probe = None
        if "probe" in case:
            p_args = tuple(from_data(a) for a in case["probe"]["args"])
            p_kwargs = {k: from_data(v) for k, v in case["probe"].get("kwargs", {}).items()}

            def probe() -> tuple[Outcome, str]:
                return call_outcome(self.func, p_args, p_kwargs), show_call(self.name, p_args, p_kwargs)

        return Answer(
            show_call(self.name, args, kwargs),
            outcome,
            outcome_from_data(case["expected"]).value,
            right,
            args,
            kwargs,
            probe,
            lambda: call_outcome(self.func, args, kwargs),
        )

    def run_case(self, case: Mapping[str, Any]) -> None:
        self.check = case.get("check", "")
        outcome, failures = self._evaluate(case)
        self.watch.saw(outcome, outcome_from_data(case["expected"]))
        answer = None
        if outcome.ok and "value" in case["expected"]:
            answer = self._answer(case, outcome, not any(f.kind != "form" for f in failures))
            self.answers.append(answer)
        if not any(f.kind != "form" for f in failures):  # right values (a wrong form is the form clause's)
            self.evidence.update(
                evidence_for(self._memberships(case), "raises" in case["expected"], self.base)
            )
        if not failures:
            return
        size = len(json.dumps(case["args"]))
        for exc in failures:
            if exc.kind == "form":
                self._charge(self.form or self.base, exc, size)
            else:
                if self.first_no_value is None and exc.kind == "no-value":
                    self.first_no_value = CheckFailed(str(exc), input=exc.input, obtained=exc.obtained)
                steps = trace(
                    case,
                    outcome,
                    self._memberships,
                    self._twin,
                    case.get("rtol", 1e-6),
                    case.get("atol", 1e-8),
                )
                self.pending.append(Pending(steps, exc, self.check, size, answer))

    def run_property(self, entry: Mapping[str, Any]) -> None:
        self.check = entry["check"]
        prop = getattr(self.properties, entry["property"])
        try:
            prop(self, *(from_data(a) for a in entry["args"]))
        except CheckFailed as exc:  # inputs ordinary or of its own clause (tests/engine/test_contracts.py)
            clause = self.form if exc.kind == "shape" and self.form and self.form_shape else entry["clause"]
            self._charge(clause, exc, len(json.dumps(entry["args"])))

    def _charge(
        self, clause: str, exc: CheckFailed, size: int, check: str | None = None, own: bool = True
    ) -> None:
        self.failures.append(
            Failure(clause, str(exc), check or self.check, exc.input, exc.expected, exc.obtained, size, own)
        )

    def verdicts(self) -> list[ClauseVerdict]:
        self.failures += settle(self.pending, self.evidence, self.base, self.watch)
        self.pending = []
        found, why, where = first_real(self.answers, str(self.first_no_value or ""))
        return verdicts(
            self.clauses,
            self.failures,
            unproven_form(self.form, self.form_seen, self.first_no_value),
            shown=self.evidence | ({self.form} if self.form and self.form_seen else set()),
            gate=Gate(found, why, where),
            function=self.name,
        )


def unproven_form(form: str | None, seen: bool, first: CheckFailed | None) -> dict[str, Failure]:
    """A form clause with no result of the right form at all (every call raised, ...) is not met."""
    if not form or seen:
        return {}
    message = "Tidak ada keluaran yang dapat diperiksa bentuknya" + (f": {first}" if first else ".")
    return {
        form: Failure(form, message, "", first.input if first else "", "", first.obtained if first else "")
    }


def _load(name: str, folder: Path) -> tuple[Mapping[str, Any], Any]:
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if name in data.get("functions", {}):
            properties = None
            if (folder / "properties.py").is_file():
                import importlib.util

                spec = importlib.util.spec_from_file_location("public_properties", folder / "properties.py")
                if spec is not None and spec.loader is not None:
                    properties = importlib.util.module_from_spec(spec)
                    spec.loader.exec_module(properties)
            return data["functions"][name], properties
    raise FileNotFoundError(
        f"Kasus publik untuk `{name}` tidak ditemukan di {folder}. Unduh ulang seluruh folder tugas "
        "(notebook beserta folder public_checks/ di sampingnya)."
    )


def run_public(
    name: str, func: Callable[..., Any], folder: Path | None = None
) -> tuple[list[ClauseVerdict], int, int]:
    """The clause verdicts of the public check of ``name``, with the numbers of cases and properties
    (read from ``folder``, by default the folder of this file)."""
    spec, properties = _load(name, folder or HERE)
    checker = PublicChecker(name, func, spec, properties)
    for case in spec.get("cases", []):
        checker.run_case(case)
    for entry in spec.get("properties", []):
        checker.run_property(entry)
    return checker.verdicts(), len(spec.get("cases", [])), len(spec.get("properties", []))


def _upstream_note(name: str, func: Callable[..., Any], folder: Path | None) -> str:
    """A note when ``name`` builds on another graded function whose own public check fails: its
    failures show here too, while the graders give ``name`` a correct one."""
    spec, _ = _load(name, folder or HERE)
    upstream = spec.get("builds_on")
    calls = getattr(getattr(func, "__code__", None), "co_names", ())
    other = getattr(func, "__globals__", {}).get(upstream) if upstream in calls else None
    if not upstream or not callable(other):
        return ""  # it does not call the upstream function by name
    verdicts_up, _, _ = run_public(upstream, other, folder)
    lost = [v.clause.id for v in verdicts_up if not v.passed]
    if not lost:
        return ""
    return (
        f"Catatan: `{name}` memakai `{upstream}` Anda, yang belum lolos pemeriksaan publiknya (ketentuan "
        f"{', '.join(lost)}); kegagalan di atas bisa berasal dari sana. Saat dinilai, `{name}` diberi "
        f"`{upstream}` yang benar, jadi perbaiki `{upstream}` lebih dulu."
    )


def check_function(name: str, func: Callable[..., Any], folder: Path | None = None) -> None:
    """Run the public check of graded function ``name`` on ``func``; print every clause's result and
    raise ``AssertionError`` when a clause fails (so that nbgrader's Validate reports it, with the
    failed clauses' messages and without a traceback into this file)."""
    if not callable(func):
        raise PublicCheckFailed(f"`{name}` bukan fungsi.")
    results, n_cases, n_props = run_public(name, func, folder)
    failed = [v for v in results if not v.passed]
    unwritten = len(failed) == len(results) and all(
        f"`{name}` belum ditulis" in (v.failure.message if v.failure else "") for v in failed
    )
    print(
        plain(
            f"Pemeriksaan publik `{name}`: {n_cases} kasus (keluaran yang diharapkan dihitung dari solusi "
            f"referensi) dan {n_props} sifat."
        )
    )
    if unwritten:
        print(plain(f"`{name}` belum ditulis: ganti `raise NotImplementedError(...)` dengan kode Anda."))
    for v in results:
        lines = verdict_lines(v, short=True)
        for line in lines[:1] if unwritten else lines:
            print(plain(line.replace("- ✅", "[lolos]").replace("- ❌", "[gagal]")))
    total = sum(v.clause.points for v in results)
    if not failed:
        print(
            f"\nSemua ketentuan lolos pada kasus publik ({total:g} poin). Penilai tersembunyi memakai lebih "
            "banyak input untuk ketentuan yang sama, jadi poin penuh belum dijamin."
        )
        return
    note = _upstream_note(name, func, folder)
    if note:
        print(f"\n{plain(note)}")
    earned = sum(preview_points(v) for v in results)
    print(f"\nPoin pada kasus publik: {earned:g} dari {total:g}.")
    summary = [
        f"`{name}`: ketentuan {', '.join(v.clause.id for v in failed)} belum terpenuhi pada kasus publik."
    ]
    if not unwritten:
        summary += [f"{v.clause.id}: {v.failure.message}" for v in failed if v.failure]
    raise PublicCheckFailed("\n".join(plain(line) for line in summary))


class PublicCheckFailed(AssertionError):
    """A clause failed on the public cases: shown (in the notebook and by Validate) as its message
    only, not as a traceback into this file."""

    def _render_traceback_(self) -> list[str]:  # IPython shows these lines instead of the traceback
        return [f"{type(self).__name__}: {self}"]
