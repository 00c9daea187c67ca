"""The conversation: a supervisor graph that checks safety, routes each message to a configured
agent (by its registered kind) and returns a typed ``TurnResult``; ``build_engine`` in
``factory.py`` assembles it. docs/architecture.md follows one turn through this package."""
