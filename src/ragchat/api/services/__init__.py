"""What the routes call: each service owns one concern (turns, documents, sessions, health) and
speaks ragchat's types and errors, not HTTP."""
