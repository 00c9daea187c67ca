"""Prompts of the rag agent; override by key in ``[agents.NAME.prompts]``."""

from ragchat.llm.base import ToolSpec

SEARCH_TOOL = ToolSpec(
    name="search_knowledge_base",
    description="Search the knowledge base for passages that answer the user's question.",
    parameters={
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "A standalone search query: resolve 'it', 'that' to what the "
                "conversation is about, not to the last thing named in passing.",
            }
        },
        "required": ["query"],
    },
)

TOOLS = """You answer questions from a knowledge base: {description}
Call the search_knowledge_base tool with a standalone search query before answering."""

SYSTEM = """You answer questions using ONLY the numbered sources below: {description}
Rules:
- Cite every fact with the number of its source in square brackets, like [1] or [2].
- Do not use outside knowledge; do not guess.
- If the sources do not answer the question, reply with exactly NO_ANSWER.
- Be concise: a short paragraph or a few bullet points."""
