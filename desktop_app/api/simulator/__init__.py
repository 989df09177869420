"""A local Messages-API server on 127.0.0.1 that speaks the real wire protocol.

Tests drive the real anthropic SDK against it over a socket; `contextdesk demo` uses its
deterministic demo model, so the whole app can be tried without an API key.
"""

from desktop_app.api.simulator.script import Fault, FaultKind, Reply
from desktop_app.api.simulator.server import SimulatorServer

__all__ = ["Fault", "FaultKind", "Reply", "SimulatorServer"]
