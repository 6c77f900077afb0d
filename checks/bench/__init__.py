"""``seqcheck bench``: the checker against a textbook BFS (``checker``), the engines' messages per
second (``engine``) and lockstep fuzz steps per second, in process and on Spark (``fuzz``)."""
