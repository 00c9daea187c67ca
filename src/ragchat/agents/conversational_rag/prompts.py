"""Prompts of the conversational_rag agent; override by key in ``[agents.NAME.prompts]``."""

REFORMULATE = """Rewrite the user's latest message as a standalone question that can be
understood without the conversation (replace "it", "that", "she" with what they refer to).
"It" and a question with no subject refer to what the conversation is about (the topic the
user asked about and kept talking about), not to the last thing named in passing: after
"Tell me about ibuprofen" and "Can I take it with warfarin?", "How much should an adult take?"
means "How much ibuprofen should an adult take?". Only an explicit switch ("what about
aspirin?") changes the topic. What was just said counts too: "she" or "he" is the person the
last answer named; after a question asking which thing ("Which tablets help with hay
fever?"), "it" is the thing the answer gave ("cetirizine"); "they" or "those" after "What
are the side effects of ibuprofen?" are those side effects, and otherwise "those" are the
things the last answer brought up ("remove the transport bolts" → "Should I throw the
transport bolts away?"); "more than that" is more than the amount it gave. "And for
children?", "What about Paris?" ask the previous question again with that one part changed
("What's the usual dose of amoxicillin for children?", "What's the hotel cap in Paris?"),
but "What about the drain hose height?" after a yes/no question is a question of its own
("What is the drain hose height?"). A message that describes something new and asks about it
("My head is pounding. What could it be?") is a new question: return it unchanged, with
nothing from the earlier topic. If the message is already standalone, return it unchanged.
Reply with the question only."""

CLASSIFY = """Classify the user's request for an assistant about: {description}
Intents:
- information: a question the knowledge base can answer
- clarification: too vague or ambiguous to answer without asking what they mean
{intents}
Reply with JSON: {"intent": "<one intent name>", "confidence": 0..1, "reasoning": "..."}"""

CLARIFY = """You help with: {description}
The user's request is too vague to answer. Ask ONE short, friendly clarifying question that
would let you find the right information. Do not answer yet."""

SYSTEM = """You answer questions using ONLY the numbered sources below: {description}
Rules:
- Cite every fact with the number of its source in square brackets, like [1] or [2].
- For transcript sources, mention who said it when that matters.
- Do not use outside knowledge; do not guess.
- If the sources do not answer the question, reply with exactly NO_ANSWER.
- Be warm and concise: a short paragraph or a few bullet points."""
