"""Rules for violent crimes against people and for indiscriminate (mass-casualty) weapons.

``_BENIGN_BOMBS`` (bath bombs, photo bombs…) is also removed from every message before
matching (``match._variants``), so no category reads it as a weapon."""

from __future__ import annotations

import re

from ragchat.safety.rules.text import Rule, _rx

# Violent crimes: intent (first person or "how do I") + violent verb + a human target. Game and
# shell ("kill the boss", "kill the process") and pest targets never match: targets are people.
_TARGET = (
    r"(?:him|her|someone|somebody|anyone|people|a person|everyone|"
    r"(?:my|our|the|a|his|her) (?:\w+ )?(?:wife|husband|partner|spouse|boyfriend|girlfriend|ex|"
    r"mom|mum|mother|dad|father|step ?father|step ?mother|step ?son|step ?daughter|son|daughter|"
    r"child|kid|baby|infant|newborn|toddler|brother|sister|boss|coworker|co-worker|colleague|"
    r"teacher|neighbou?r|roommate|classmate|friend|family|parents?|grand ?ma|grand ?mother|"
    r"grand ?pa|grand ?father|in-laws?|landlord|cop|police officer|president|nanny|"
    r"babysitter|stepchild|students?|patient|doctor|nurse|victim)s?)"
)
_VIOLENT_INTENT = (
    r"(?:i(?:'m| am) (?:going to|gonna|planning to|about to)|i (?:will|want to|wanna|plan to|"
    r"intend to|need to|have to|should)|i'll|how (?:do|can|could|would|should) i|how to|"
    r"help me|best way to|easiest way to|ways? to|tell me how to)"
)
_FILLER = r"(?: (?:just|really|finally|actually|secretly|quietly|slowly|go|get|to|and))*"
_VIOLENT = [
    Rule(
        "violent_crimes",
        "intent_verb_target",
        _rx(
            rf"\b{_VIOLENT_INTENT}{_FILLER} (?:kill|murder|stab|strangle|choke|poison|torture|"
            r"maim|kidnap|abduct|smother|suffocate|behead|run over|hurt|injure|attack|assault|"
            rf"drown|shoot|beat up) {_TARGET}\b(?!'s|')"
            r"(?! (?:a |an )?(?:text|message|email|note|dm|call|look|glance|smile|line)\b)"
            r"(?! (?:in|with|at|for|outdoors|indoors) (?:low|natural|the|a|my|golden|bright|"
            r"light|photos?|pictures?|portraits?))"
        ),
        unless=_rx(r"\b(?:feelings|chess|game|video ?game|fortnite|minecraft)\b"),
    ),
    Rule(
        "violent_crimes",
        "make_suffer",
        _rx(rf"\b(?:make|making) {_TARGET} (?:suffer|bleed)\b"),
        unless=_rx(r"\b(?:story|novel|character|book|villain)\b"),
    ),
    Rule(
        "violent_crimes",
        "armed_intent",
        _rx(
            r"\b(?:wait|show up|go after|confront|follow|ambush|find|go to|come to|visit|"
            r"surprise|jump) (?:\w+ ){0,4}?with (?:a|my|the) (?:knife|gun|bat|baseball bat|hammer|"
            r"machete|axe|crowbar|pistol|rifle|shotgun|blade)\b"
        ),
    ),
    Rule(
        "violent_crimes",
        "spike_drink",
        _rx(
            r"\b(?:put|slip|add|mix|spike|drop)\b.{0,40}\b(?:in|into) (?:[\w']+ ){0,2}?"
            r"(?:drink|food|coffee|tea|meal|water|glass)\b.{0,60}\b(?:can't|cannot|won't|"
            r"couldn't|unable to|doesn't|wouldn't) (?:fight|resist|remember|move|say no|wake)|"
            r"\b(?:roofie|date rape drug|knock(?:out)? drops)\b|"
            r"\b(?:spike|drug) (?:her|his|their|someone's|my \w+'s) drink\b"
        ),
    ),
    Rule(
        "violent_crimes",
        "throat_cut",
        _rx(r"\b(?:cut|slit|slash) (?:their|his|her|someone's|a person's) throats?\b"),
    ),
    Rule(
        "violent_crimes",
        "staged_accident",
        _rx(
            r"\bmake (?:it|his death|her death|their death|the death) look like (?:an accident|"
            r"(?:he|she|they) (?:fell|slipped|did it|killed (?:himself|herself|themselves))|"
            r"a suicide|natural causes|self[- ]defen[cs]e|a robbery|an overdose)\b"
        ),
        unless=_rx(r"\b(?:story|novel|character|book|plot|detective|mystery|screenplay|game)\b"),
    ),
    Rule(
        "violent_crimes",
        "killing_tool",
        _rx(
            r"\b(?:best|good|easiest|quickest|fastest|right|ideal) (?:\w+ ){0,2}?(?:for|to use "
            r"for) (?:killing|murdering|stabbing|hurting|poisoning|strangling) (?:a person|people|"
            r"someone|somebody|a human|humans|him|her)\b|\b(?:kill|killing|murder|murdering) "
            r"(?:a person|a human|someone|somebody|people) (?:quickly|quietly|silently|without)\b|"
            r"\b(?:poison|toxin)s? (?:\w+ ){0,3}?(?:hardest|impossible|hard) to (?:detect|trace)\b"
        ),
        unless=_rx(r"\b(?:story|novel|character|book|plot|detective|mystery|screenplay|game)\b"),
    ),
    Rule(
        "violent_crimes",
        "beat_target",
        _rx(
            rf"\b{_VIOLENT_INTENT}{_FILLER} beat {_TARGET} (?:up|to death|senseless|"
            rf"black and blue|until)\b|\bbeat {_TARGET} to death\b"
        ),
    ),
    Rule(
        "violent_crimes",
        "get_away_with_murder",
        _rx(
            r"\bhow (?:do|can|could|would|should|to) (?:i |you |someone |one )?get away with "
            r"(?:murder|killing)\b|\b(?:kill|murder|poison|hurt)\w* .{0,50}\bget away with it\b|"
            r"\b(?:kill|murder|poison)\w* .{0,40}\b(?:look like an accident|without (?:getting "
            r"caught|a trace|leaving (?:a )?trace|being detected|anyone (?:knowing|noticing)))"
        ),
    ),
    Rule(
        "violent_crimes",
        "mass_violence",
        _rx(
            r"\b(?:shoot up|bomb|blow up|attack|burn down|set fire to) (?:my|the|a|our|this) "
            r"(?:\w+ )?(?:school|class|classroom|office|workplace|church|mosque|synagogue|temple|"
            r"mall|concert|hospital|daycare|kindergarten|campus|parade|subway)\b"
        ),
        unless=_rx(r"\b(?:game|history|happened|news|film|movie|book)\b"),
    ),
    Rule(
        "violent_crimes",
        "hitman",
        _rx(r"\b(?:hire|find|pay|get) (?:a |an )?(?:hitman|hit man|assassin|contract killer)\b"),
    ),
    Rule(
        "violent_crimes",
        "shake_baby",
        _rx(
            r"\bhow (?:hard|long|much|often) .{0,25}\bshake (?:a|my|the|this) (?:\w+ )?"
            r"(?:baby|infant|newborn|toddler)\b(?! (?:bottle|formula|food|monitor|rattle|toy))"
        ),
    ),
]

# ---------------------------------------------------------------------------------------------
# Indiscriminate weapons: a how-to request + a making verb + a mass-casualty weapon.
_BENIGN_BOMBS = re.compile(
    r"\b(?:bath|seed|glitter|flavou?r|calorie|cherry|photo|water|stink|cheese) ?bombs?\b|"
    r"\bbomb calorimeter\b|\bbombshell\b",
    re.IGNORECASE,
)
_WEAPON = (
    r"(?:(?:pipe |nail |car |truck |fertili[sz]er |homemade |home-made |dirty |nuclear |"
    r"atomic |suicide |letter |pressure cooker |petrol |gasoline )?bombs?|explosives?|"
    r"explosive devices?|ieds?|detonators?|nerve (?:agents?|gas)|sarin|soman|tabun|vx|"
    r"novichok|ricin|abrin|anthrax|botulinum(?: toxin)?|smallpox|mustard gas|chlorine gas|"
    r"phosgene|hydrogen cyanide|chemical weapons?|biological weapons?|bio-?weapons?|"
    r"nuclear weapons?|nukes?|napalm|molotov(?: cocktails?)?|tatp|rdx|semtex|"
    r"weapons?[- ]grade (?:uranium|plutonium)|toxic gas|poison gas|deadly virus)"
)
_WEAPONS = [
    Rule(
        "indiscriminate_weapons",
        "make_weapon",
        _rx(
            r"\b(?:how (?:do|can|could|would|should) (?:i|we|you|one|someone)|how to|"
            r"instructions?|steps?|guide|recipe|tutorial|teach me|tell me how|explain how to|"
            r"what do i need to|ways? to|help me|i want to|i'm going to|plan to|synthesis|"
            r"synthesis route|formula)\b.{0,40}?\b(?:make|making|build|building|assemble|"
            r"construct|synthesi[sz]e|synthesis|produce|manufacture|cook|brew|culture|grow|"
            r"weaponi[sz]e|enrich|create|prepare|extract|detonate|rig|pack|release|spread|"
            rf"deploy|obtain|buy)\b.{{0,40}}?\b{_WEAPON}\b|"
            r"\b(?:ingredients|quantities|recipe|formula|materials|components|precursors?|"
            rf"shopping list)\b.{{0,40}}\b{_WEAPON}\b|"
            r"\b(?:grow|culture|engineer|make|release|spread|modify|weaponi[sz]e|breed)\b.{0,60}"
            r"\bto (?:cause|start|create|trigger|unleash) (?:a |an )?(?:pandemic|epidemic|"
            r"outbreak|mass casualt\w+)\b"
        ),
    ),
    Rule(
        "indiscriminate_weapons",
        "gas_attack",
        _rx(
            r"\b(?:toxic|poison(?:ous)?|deadly|lethal|nerve) gas\b.{0,60}\b(?:hurt|kill|attack|"
            r"harm|poison)\b.{0,25}\b(?:people|crowd|everyone|a lot|lots|many|hundreds|"
            r"thousands|the city|the subway)|\b(?:hurt|kill|attack|harm|poison)\b.{0,25}"
            r"\b(?:people|crowd|everyone|many|hundreds|thousands)\b.{0,40}\b(?:toxic|"
            r"poison(?:ous)?|deadly|lethal|nerve) gas\b"
        ),
    ),
]
