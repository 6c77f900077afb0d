"""Random fault schedules through the lockstep harness, on Spark: the command (``command``), one
run (``run``), the derived model files (``model``), coverage (``coverage``), the Spark job
(``spark``) and its resumable ledger (``ledger``), shrinking (``shrink``) and the timing of a step's
parts (``parts``)."""
