"""What the instructor builds before students see an assignment: ``release/`` (:mod:`.release`), the
public checks' files shipped beside the notebooks (:mod:`.public_files`, their numbers stored as
:mod:`.precision` says), the graders' self-validation (:mod:`.self_validation`, with the
:mod:`.degenerate` students), the points table (:mod:`.points_table`) and the PE tables shipped as data
(:mod:`.pe_tables`)."""
