"""``seqcheck validate LOG...``: event logs of real runs (``impl/runtime``) checked against the spec.

``logset.validate_logs`` is the entry point; ``logs`` reads the files, ``protocols`` maps a
protocol's logs to its spec (reusing ``checks/conform``'s bindings and timed rules), ``member``
replays one member's log step by step, ``report`` draws the first disallowed step as a trace chart
(text, and the HTML viewer's page), ``command`` is the command line.
"""
