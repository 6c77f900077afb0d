"""Traces people can look at: the self-contained HTML trace viewer (``seqcheck show --html``)."""
