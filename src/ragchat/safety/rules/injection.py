"""Prompt-injection rules. This is the one category matched against the message as
written, with quoted text included (``match.match_rules``): an instruction in quotes is
still an instruction."""

from __future__ import annotations

import re

from ragchat.safety.rules.text import Rule, _rx

# Prompt injection: attempts to override, reveal or replace the assistant's instructions.
_INSTR = (
    r"(?:instructions?|prompts?|rules|directions|guidelines|guardrails|constraints|directives|"
    r"programming|restrictions|training|polic(?:y|ies)|filters|system messages?|context)"
)
# The same without the nouns a person's own documents use of themselves: "disregard the
# previous policy, what does the new one say?" asks about a policy document. Those nouns
# count only as "your …" or "the system …".
_INSTR_OWN = (
    r"(?:instructions?|prompts?|rules|guidelines|guardrails|constraints|directives|"
    r"programming|system messages?)"
)
_DEVICES = re.compile(
    r"\b(?:android|iphone|phone|tablet|ipad|chrome|windows|mac|macbook|settings|device|"
    r"browser|samsung|pixel|xbox|playstation|switch|laptop|router|tv)\b",
    re.IGNORECASE,
)
_INJECTION = [
    Rule(
        "prompt_injection",
        "ignore_instructions",
        _rx(
            r"\b(?:ignore|disregard|forget|override|bypass|discard)"
            r"(?: all| any| every| each| of)*(?: the| your| these| those| such)?"
            r" (?:previous|prior|preceding|above|earlier|initial|original|former)"
            rf" (?:\w+ ){{0,2}}?{_INSTR_OWN}\b|"
            r"\b(?:ignore|disregard|forget|override|bypass|discard)"
            r"(?: all| any| every| each| of)*(?: the| your| these| those| such)?"
            r"(?: (?:previous|prior|preceding|above|earlier|initial|original|former))?"
            rf" (?:system|developer|safety) (?:\w+ ){{0,2}}?{_INSTR}\b|"
            r"\b(?:ignore|disregard|forget|override|bypass|abandon|discard|drop)(?: all| any|"
            rf" all of)? your (?:\w+ )?{_INSTR}\b|"
            rf"\b(?:ignore|disregard|forget) all (?:the |of the )?{_INSTR}\b|"
            rf"\b(?:ignore|disregard|forget) (?:the |all )?(?:{_INSTR}|text|everything) "
            r"(?:above|before this|you(?:'ve| were| have been) (?:given|told)|given to you|"
            r"so far)\b|\b(?:ignore|disregard|forget) everything (?:above|you(?:'ve| were| have "
            r"been) told|prior|before this)\b"
        ),
    ),
    Rule(
        "prompt_injection",
        "reveal_prompt",
        _rx(
            r"\b(?:reveal|print|output|display|repeat|leak|dump|disclose|recite|echo|copy|paste|"
            r"write out|spell out|quote|show me|tell me|give me|share|list|send me|read me)"
            r"(?: back)?(?: me)? (?:\w+ ){0,3}?your (?:\w+ ){0,2}?(?:system prompt|"
            r"system message|prompt|instructions|system instructions|initial instructions|"
            r"configuration|developer message|pre-?prompt|hidden rules|secret rules)\b|"
            r"\b(?:what(?:'s| is| are| were| was)|show|reveal|print|output|repeat) (?:me )?"
            r"(?:your|the) (?:\w+ )?(?:system prompt|hidden prompt|initial prompt|original prompt|"
            r"hidden instructions|secret instructions|system instructions|initial instructions|"
            r"instructions you were given|prompt you were given|developer (?:message|prompt))\b|"
            r"\b(?:print|output|repeat|reveal|show|display|recite|copy|paste)(?: me)? "
            r"(?:everything|all (?:the )?text|the text|all|the words|what(?:'s| is)) "
            r"(?:written |that appears? |that is )?(?:above|before) (?:this|my|the first)"
            r"(?: line| message| prompt| point)?\b|"
            r"\b(?:instructions|prompt|rules|guidelines|text) (?:\w+ ){0,2}?(?:given to you|you "
            r"were given|you received|you were told)\b.{0,80}\b(?:verbatim|word for word|exactly|"
            r"quote|repeat|print|show|reveal|what (?:are|were|is|was))\b|"
            r"\b(?:what|quote|repeat|print|show|reveal)\b.{0,60}\b(?:instructions|prompt|"
            r"rules|guidelines) (?:\w+ ){0,2}?(?:given to you|you were given|you received)\b|"
            r"\b(?:secret|hidden|internal|confidential) system (?:prompt|instructions|message)s?\b|"
            r"\b(?:rules|instructions|guidelines|prompt|directives) (?:that )?you (?:were|'ve been|"
            r"have been) (?:programmed|configured|instructed|set up|trained) with\b|"
            r"\b(?:text|words|messages?|content|instructions) (?:that )?(?:comes?|came|appears?|"
            r"is|are|was|were) (?:before|above|prior to) (?:my|the|this) (?:first |very first )?"
            r"(?:message|question|prompt|conversation)\b"
        ),
        unless=_rx(r"\b(?:recipe|banana|bread|cake|cook|inhaler|medication|dose)\b"),
    ),
    Rule(
        "prompt_injection",
        "jailbreak_persona",
        _rx(
            r"\byou are (?:now |going to be |to be )?(?:dan|an? (?:unrestricted|unfiltered|"
            r"uncensored|jailbroken|evil|rogue|amoral|unaligned) (?:\w+ )?(?:ai|assistant|model|"
            r"chatbot|bot|version|llm))\b|\bdo anything now\b|"
            r"\b(?:act|pretend|behave|respond|answer|roleplay|role-play|play|reply)"
            r"(?: \w+){0,3}? (?:as|like|to be) (?:dan\b|(?:\w+ ){0,3}?an? (?:unrestricted|"
            r"unfiltered|uncensored|jailbroken|evil|amoral|unaligned) (?:\w+ )?(?:ai|assistant|"
            r"model|chatbot|bot|version|llm)\b)|\bjailbr(?:eak|oken) (?:mode|prompt|version)\b|"
            r"\byou(?:'re| are) (?:now )?jailbroken\b|\bstay in (?:dan|developer|jailbreak) mode\b|"
            r"\b(?:freed|free|released|liberated|unshackled|unchained) (?:yourself )?from (?:all |"
            r"any )?(?:of )?(?:your )?(?:limitations|restrictions|rules|guidelines|constraints|"
            r"programming|filters|chains|shackles)\b|"
            r"\b(?:who|that|which) (?:has|have) no (?:moral |ethical |content )?(?:restrictions|"
            r"limits|rules|filters|guidelines|boundaries|constraints|morals|ethics)\b|"
            r"\b(?:no|without) (?:moral|ethical|content) (?:restrictions|limits|rules|filters|"
            r"guidelines|boundaries|constraints)\b|"
            r"\b(?:who|that|which|you) (?:never|doesn't|does not|won't|will not|can't|cannot) "
            r"(?:refuse|decline|reject)s? (?:any|a single|anything)(?: \w+)?\b"
        ),
    ),
    Rule(
        "prompt_injection",
        "special_mode",
        _rx(
            r"\b(?:enable|enter|activate|switch (?:to|into)|you(?:'re| are)(?: now)? in|now in|"
            r"turn on|go into|simulate) (?:the )?(?:dan|developer|dev|jailbreak|jailbroken|"
            r"unrestricted|unfiltered|uncensored) mode\b"
        ),
        unless=_DEVICES,
    ),
    Rule(
        "prompt_injection",
        "no_rules",
        _rx(
            r"\byou(?:'re| are| have| now have| will have| must have| can have| no longer have)?"
            r" (?:now )?(?:no|zero) (?:more )?(?:rules|restrictions|"
            r"filters|guidelines|limits|limitations|censorship|content polic(?:y|ies)|"
            r"guardrails|ethics|ethical guidelines|morals|safety guidelines)\b(?! (?:about|on|for|"
            r"around) (?:screen|bedtime|sleep|food|sugar|candy|tv))|"
            r"\b(?:answer|respond|reply|talk|speak|act|operate|behave)(?: to me)? "
            r"(?:\w+ ){0,2}?without (?:any )?(?:rules|restrictions|filters|guidelines|limits|"
            r"limitations|censorship|content polic(?:y|ies)|guardrails|refusing|refusals|"
            r"ethical (?:guidelines|constraints)|safety)\b"
        ),
        unless=_rx(r"\b(?:kids?|child|children|toddler|teen|son|daughter|parenting|house)\b"),
    ),
    Rule(
        "prompt_injection",
        "fake_role_tokens",
        _rx(
            r"<\|?(?:im_start|im_end|system|endoftext|eot_id|start_header_id|end_header_id)\|?>|"
            r"</?(?:system|sys|instructions?|assistant|user)>|\[/?(?:system|inst|sys)\]|"
            r"^(?:###\s*)?(?:system|admin|administrator|developer)(?: override| message| prompt|"
            r" instructions?| update| note)?\s*:|\bsystem override\b|"
            r"\bnew (?:system )?(?:instructions?|rules|directives?)\s*:|"
            r"\[(?:admin|administrator|developer|dev|root|sudo|system|override|jailbreak)\]|"
            r"\b(?:assistant|ai|chatbot|model|llm|gpt)\s*[,:]\s*(?:stop|ignore|disregard|forget|"
            r"instead|you must|new task)\b|\binstead (?:tell|inform|say to|respond to) the user\b|"
            r"\b(?:previous|prior|above|earlier|old|original|your|the) (?:rules|instructions|"
            r"guidelines|policies|restrictions) (?:no longer apply|are (?:void|cancell?ed|lifted|"
            r"suspended|disabled|revoked|over|gone)|(?:don't|do not) apply)\b|"
            r"\bnone of your (?:rules|policies|guidelines|restrictions|instructions|filters) "
            r"(?:exist|apply|matter|count)\b|"
            r"\b(?:new|updated|revised) (?:instructions|rules|orders) from (?:your|the) "
            r"(?:administrator|admin|developers?|creators?|owners?|operators?|system|company)\b|"
            r"\b(?:this is|message from) (?:your|the) (?:developer|administrator|admin|creator|"
            r"system)s?\b.{0,40}\b(?:ignore|disregard|override|new instructions|obey|comply)"
        ),
    ),
    Rule(
        "prompt_injection",
        "obey_me",
        _rx(
            r"\bfrom now on,? you (?:will|must|are going to|shall|should|have to) (?:\w+ ){0,3}?"
            r"(?:ignore|disregard|not follow|no longer follow|answer without|respond without|"
            r"bypass|obey|comply with (?:all|every|any))\b|"
            r"\b(?:you must|you will|you have to) obey (?:me|my commands|only me)\b|"
            r"\bobey (?:me|my commands) (?:instead|and not|rather than|over)\b"
        ),
    ),
    Rule(
        "prompt_injection",
        "disable_safety",
        _rx(
            r"\b(?:override|disable|turn off|deactivate|bypass|remove|lift|switch off|ignore) "
            r"(?:your |the |all |any )?(?:safety|content|moderation|ethical|ethics) ?(?:filters?|"
            r"settings|protocols|guidelines|restrictions|policies|policy|mode|guardrails|checks|"
            r"layer|module)\b|\bsafety (?:protocols?|mode|filters?|settings?) (?:is |are )?"
            r"(?:disabled|off|removed|deactivated)\b|"
            r"\b(?:override|disable|turn off|deactivate|bypass|remove|lift|switch off) (?:all )?"
            r"your (?:\w+ )?(?:filters?|guardrails|restrictions|rules|safety|moderation|limits|"
            r"limitations|censorship)\b"
        ),
        unless=_DEVICES,
    ),
]
