"""The production engines against the spec: the engine mapping shared by every protocol
(``engines``) and one module per protocol with an engine (``unicast2``, ``unicast3``), the lockstep
harness (``differential``), traces run on the engines (``replay``) and the readable scripts that
emitted regression tests call (``script``)."""
