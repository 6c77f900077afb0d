"""``seqcheck bench``: the checker against a textbook BFS (``checker``), the engines' messages per
second (``engine``), lockstep fuzz steps per second, in process and on Spark (``fuzz``), and the
visited-state set's lookup and insert cost from a million to tens of millions of fingerprints
against the sorted runs it replaced (``fpset``)."""
