"""Prompt-injection rules for retrieved documents, on top of the message rules.

An injection planted in a document speaks to the model that will read it, not to a person:
it addresses "the AI" or "automated systems", tells the model what to reply "if the user
asks", orders it to ignore the rest of the data, or fakes the turns of a conversation
("Assistant: … User: …") and session boundaries. Like every rule, they read the normalised
text (line breaks collapsed), so none depends on where a line starts. A person's chat
message legitimately says "note to the assistant: keep it short", so these rules screen
passages only
(``match.match_document_rules``), never user messages."""

from __future__ import annotations

from ragchat.safety.rules.text import Rule, _rx

_AI_READER = (
    r"(?:ai|a\.i\.|artificial intelligence|assistants?|chat ?bots?|llms?|large language models?|"
    r"language models?|gpts?|bots?|ai (?:systems?|models?|agents?|tools?|assistants?|readers?)|"
    r"automated (?:\w+ )?(?:systems?|software|tools?|screening|analysis|readers?|agents?|"
    r"reviewers?|scanners?))"
)
_DOCUMENT_INJECTION = [
    Rule(
        "prompt_injection",
        "addressed_to_ai",
        _rx(
            rf"\b(?:notes?|messages?|instructions?|attention|notice|reminder|directives?|memo)"
            rf" (?:to|for) (?:any |all |the |every )?{_AI_READER}\b|"
            rf"\b(?:hey|dear|attention),? {_AI_READER}\b|"
            r"\b(?:white[- ]text|hidden (?:text|note|instructions?)|invisible to (?:humans|people|"
            r"readers))\b.{0,60}\b(?:llms?|ai|models?|assistants?|scan(?:ners?|s)?)\b"
        ),
    ),
    Rule(
        "prompt_injection",
        "if_the_user_asks",
        _rx(
            r"\b(?:if|when|whenever) (?:the |a |any )?(?:user|human|requester|operator) "
            r"(?:asks?|requests?|queries|wants|inquires)\b.{0,120}?\b(?:reply|respond|answer|"
            r"say|output|print|tell (?:them|him|her|the user))\b|"
            r"\bif asked (?:for|about|to)\b.{0,60}?\b(?:summar\w+)\b.{0,60}?\b(?:reply|respond|"
            r"say|output|print)\b"
        ),
    ),
    Rule(
        "prompt_injection",
        "reply_only_with",
        _rx(
            r"\b(?:reply|respond|answer)(?: to (?:the user|them|any question))? (?:only )?with "
            r"(?:only |exactly |just |nothing (?:but|except) )(?:the following|this|these words|"
            r"the (?:text|words|sentence|phrase)|[\"'<\u201c])|"
            r"\b(?:simply|only|just) (?:respond|reply) with\b|"
            r"\b(?:provide|give|show|send|repeat) (?:it|this|that|the following(?: \w+)?) "
            r"(?:to the user|for the user|back to the user)\b"
        ),
    ),
    Rule(
        "prompt_injection",
        "ignore_the_data",
        _rx(
            r"\b(?:ignore|disregard|forget|skip)\b(?: all| any| the)? (?:rest of (?:this|the) "
            r"(?:data|document|text|page|content|article|file|context)|(?:other |remaining )?"
            r"(?:info|information|data|text|content|documents?|snippets|context) (?:above|below|"
            r"except|other than|before this|after this)|everything (?:else|except|other than)|"
            r"(?:the |these |those )?(?:above|previous|prior) directions|(?:all |any )?"
            r"(?:previous|prior|above|preceding|other) (?:text|content|information|documents?|"
            r"snippets|data|context|messages?))\b"
        ),
    ),
    Rule(
        "prompt_injection",
        "fake_turns",
        _rx(
            r"\b(?:assistant|ai|gpt|chatbot)\s*:\s.{0,240}?\b(?:user|human)\s*:\s|"
            r"\b(?:system|assistant)\s*:\s*(?:focus|ignore|disregard|from now|you (?:must|will|"
            r"are)|new (?:task|instructions?)|provide|reply|respond|print|output)\b|"
            r"<\s*end of (?:session|conversation|document|context|input)\s*>|"
            r"\[\s*(?:system|rest-of-document|end of document|new instructions?)\s*\]"
        ),
    ),
    Rule(
        "prompt_injection",
        "asks_for_the_prompt",
        _rx(
            r"\b(?:system|initial|original|hidden|secret|internal|developer|pre-?)[ _-]?prompts?\b|"
            r"\bsystemprompt\b|\b(?:your|my) (?:instructions|prompt) (?:are|were|say)\b|"
            r"\bi was (?:instructed|told) to\b|\bwhat are you not (?:supposed|allowed) to\b"
        ),
    ),
    Rule(
        "prompt_injection",
        "override_and_output",
        _rx(
            r"\b(?:override|ignore|disregard|bypass)\b.{0,120}?\b(?:and|then) (?:output|report|"
            r"respond|reply|print|say|answer)\s*[:\"'\u201c]|"
            r"\b(?:just|only|now) (?:print|output|say|write)\s*[\"'\u201c]"
        ),
    ),
]
