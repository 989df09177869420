"""The engine's heart, standard library only: blocks, messages, the transcript, the
Messages API's rules (validate, repair), the agent loop and the ports outer layers implement."""
