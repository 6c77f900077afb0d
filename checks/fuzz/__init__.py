"""Random fault schedules through the lockstep harness, in this process or on Spark: the command
(``command``), one run (``run``), the derived model files (``model``), coverage (``coverage``),
state fingerprints (``fingerprints``), the job in this process (``inprocess``) or on Spark
(``spark``) and its resumable ledger (``ledger``), shrinking (``shrink``) and the timing of a
step's parts (``parts``)."""
