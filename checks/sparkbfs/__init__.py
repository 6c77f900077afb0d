"""The exhaustive breadth-first search on Spark (``seqcheck check --master URL``): the driver's side
(``search``: levels, checkpoints, counterexamples) and the executors' (``visit``: one pass over a level)."""
