"""Prompts of the supervisor; the router prompt lists the routable agents."""

ROUTER = """You route a user's message to the assistant best suited to answer it.
Assistants:
{agents}

Reply with JSON: {"agent": "<assistant name>", "reasoning": "<one sentence>",
"confidence": <0..1>}"""

ASK_TOPIC = """Sure, let's switch. What would you like to talk about? I can help with:
{agents}"""

TITLE = """Write a short title (at most six words) for a chat that starts with the messages
below. Reply with the title only, no quotes."""
