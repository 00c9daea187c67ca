"""Child sexual exploitation rules. Kept apart because most of the module is context:
parenting and protective questions mention children and sex together all the time, and
``_PROTECT`` keeps them from firing."""

from __future__ import annotations

from ragchat.safety.rules.text import Rule, _rx

# Child sexual exploitation. Parenting questions mention children and sex together all the time
# ("how do I talk to my 8-year-old about sex", "signs of grooming"), so co-occurrence needs a
# production/contact request and no protective context; a few terms always fire.
_MINOR = (
    r"(?:child|children|kid|kids|minor|minors|underage|under-age|preteens?|pre-teens?|toddlers?|"
    r"little (?:girl|boy)s?|young (?:girl|boy)s?|school ?girls?|school ?boys?|"
    r"(?:1[0-7]|[1-9]|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|nine|"
    r"eight|seven|six|five)[- ]?(?:year|yr)s?[- ]?olds?|teens?|teenagers?|teenage (?:girl|boy)s?)"
)
_SEXUAL = (
    r"(?:sex|sexual|sexually|sexy|nude|nudes|naked|undressed|porn\w*|erotic\w*|lewd|"
    r"seduc\w+|intercourse|orgasm\w*|arous\w+|fetish\w*)"
)
_REQUEST = (
    r"(?:write|writing|story|stories|roleplay|role-play|role play|pics?|pictures?|photos?|"
    r"images?|videos?|describe|generate|create|draw|show me|send|fantas(?:y|ies|ize)|scene|"
    r"find me|where (?:can|do) i (?:find|get|buy|download)|convince|get (?:a|an|the|my)|"
    r"i want|i'd like|meet|alone with)"
)
_PROTECT = (
    r"(?:abuse|abused|abuser|signs?|protect\w*|prevent\w*|report\w*|education|educate|"
    r"talk (?:to|with)|talking (?:to|with)|explain\w*|normal|development\w*|puberty|doctor|"
    r"pediatrician|paediatrician|therapist|counsel\w*|police|victim|safety|warning|consent|"
    r"age[- ]appropriate|curious|curiosity|body parts|private parts|where babies come from|"
    r"is it (?:ok|okay|safe)|should i|what do i do|what should i do|worried|concerned|"
    r"found out|caught|found|saw|seen|exposed|exposure|came across|stumbled|stop|block\w*|"
    r"filter\w*|parental controls?|limit\w*|ban|away from|watching|looking at|accident\w*|"
    r"teach(?:es|ing)?|learn\w*|understand\w*|books?|sex ed|pregnan\w*|contracepti\w*|"
    r"birth control|condoms?|stis?|stds?|hpv|vaccin\w*|post|instagram|facebook|beach|bath|"
    r"bathtub|pool|diapers?|changing)"
)
_CSE = [
    Rule(
        "child_sexual_exploitation",
        "explicit_terms",
        _rx(
            r"\b(?:child|kiddie|kiddy|underage|preteen|pre-teen|minor) (?:porn\w*|nudes|sex "
            r"(?:videos?|pics?|images?|tapes?))\b|\bcsam\b|\bcp (?:links?|videos?|pics?)\b|"
            r"\bloli(?:con)?\b|\bshota(?:con)?\b|\bjailbait\b|\bpedo(?:phile)? (?:porn|content|"
            r"pics|videos)\b"
        ),
    ),
    Rule(
        "child_sexual_exploitation",
        "sexual_minor_request",
        _rx(
            rf"^(?=.*\b{_MINOR}\b)(?=.*\b{_SEXUAL}\b)(?=.*\b{_REQUEST}\b)"
            r"(?!.*\bage (?:1[89]|[2-9]\d)\b)"
        ),
        unless=_rx(rf"\b{_PROTECT}\b"),
    ),
    Rule(
        "child_sexual_exploitation",
        "grooming_secrecy",
        _rx(
            rf"^(?=.*\b(?:{_MINOR}|kids'|girls?|boys?|players?|pupils?)\b)"
            r"(?=.*\b(?:keep (?:it|this) between us|our (?:little )?secret|"
            r"without (?:the |their |her |his )?parents? (?:knowing|noticing|finding out|"
            r"suspecting|seeing)|(?:don't|not to) tell (?:your|their|her|his) (?:parents|mom|"
            r"dad|mum|mother|father))\b)"
        ),
    ),
    Rule(
        "child_sexual_exploitation",
        "contact_intent",
        _rx(
            r"\b(?:i want to|i'd like to|i'm going to|i am going to|how (?:do|can|could|would|"
            r"should) i|help me|how to|ways? to|best way to|tips (?:to|for|on))\b.{0,30}"
            r"\b(?:have sex with|sleep with|seduce|molest|sexually touch|groom|sext(?:ing)? with|"
            rf"get nudes from|get naked with|hook up with)\b.{{0,25}}\b{_MINOR}\b"
        ),
        unless=_rx(r"\b(?:hair|nails?|coat|fur|beard|eyebrows?|teeth|bangs|dog|cat|pony)\b"),
    ),
]
