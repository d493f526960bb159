"""A grading round, in the instructor's process: the loop (:mod:`.grade`) written once over the runner
interface it owns (:mod:`.runner`; the command chooses the runner, :mod:`pe_course.runners`), what it
returns (:mod:`.summary`), the task a worker runs (:mod:`.task`), each result merged once (:mod:`.merge`)
by the single gradebook writer (:mod:`.writer`, reading :mod:`.private_result`), the resumable state
(:mod:`.resume`) and the comparison with what students had before (:mod:`.regrade`,
:mod:`.regrade_report`)."""
