"""The supervisor graph: every user message is safety-checked before any agent runs, then
routed to one agent and dispatched to that agent's graph.

Session stickiness: the first message of a conversation is routed (by the model when one is
configured, else, or when the model fails, by the embedding router) and the conversation is
assigned to that agent; later messages go straight to it. A conversation is reassigned only
by an explicit switch phrase (``[supervisor].switch_phrases``: the rest of the message is
routed afresh, or the supervisor asks what to talk about) or by a clear topic change (the
embedding router, run every turn, picks a different agent with confidence ≥
``switch_confidence`` and the current agent scores ≥ ``switch_margin`` lower). The exact rule
is in ``ragchat.agents.supervisor.routing``."""

from ragchat.agents.supervisor.graph import build_graph

__all__ = ["build_graph"]
