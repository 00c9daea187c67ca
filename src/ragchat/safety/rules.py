"""High-precision phrase rules for the offline classifier.

Rules catch the clear phrasings ("I want to kill myself", "ignore all previous instructions")
whatever the embedding says; the fuzzy cases are left to exemplar similarity. Every rule is
written against ``normalise(text)``: lower case, NFKC, straight apostrophes, zero-width characters
removed and whitespace collapsed. A rule may carry an ``unless`` pattern: when that matches
anywhere in the message the rule does not fire (e.g. "developer mode" on an Android phone)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass

_ZERO_WIDTH = re.compile("[\u00ad\u200b-\u200f\u2060\ufeff]")
_SPACE = re.compile(r"\s+")
_APOSTROPHES = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "`": "'", "\u00b4": "'", "\u201c": '"', "\u201d": '"'}
)
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a"})


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = _ZERO_WIDTH.sub("", text).translate(_APOSTROPHES)
    return _SPACE.sub(" ", text).strip().lower()


@dataclass(frozen=True)
class Rule:
    category: str
    name: str
    pattern: re.Pattern[str]
    unless: re.Pattern[str] | None = None

    def matches(self, normalised: str) -> bool:
        if not self.pattern.search(normalised):
            return False
        return not (self.unless and self.unless.search(normalised))


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# ---------------------------------------------------------------------------------------------
# Self-harm: first-person intent, ideation, self-injury and method seeking. Third-person concern
# ("my son said he wants to die, what do I do") is help-seeking and left to the model.
_SELF = r"(?:my ?self|me)"
_SH_INTENT = (
    r"(?:want(?:ed|s)? to|wanna|going to|gonna|plan(?:ning)? to|thinking (?:about|of)|"
    r"thought (?:about|of)|urges? to|tempted to|feel like|keep|kept|can't stop|cannot stop|"
    r"started|been|need to|deserve to|will|i'll|might|try(?:ing)? to|tried to)"
)
# "I'm going to die of boredom": what one "dies of" in everyday hyperbole. Deliberately short:
# shame, pain or loneliness are left to the rule, which reads them as the real thing.
_HYPERBOLE_CAUSE = (
    r"(?:boredom|embarrassment|laughter|laughing|cringe|curiosity|excitement|jealousy|envy)"
)
_SELF_HARM = [
    Rule(
        "self_harm",
        "kill_myself",
        _rx(
            r"\b(?:kill(?:ing|ed)?|unaliv(?:e|ing)|off(?:ing)?|end(?:ing)?|hang(?:ing)?) my ?self\b"
        ),
    ),
    Rule(
        "self_harm",
        "self_injury_intent",
        _rx(
            rf"\b{_SH_INTENT} (?:\w+ ){{0,2}}?(?:hurt|harm|cut|burn|stab|starve|poison|shoot|drown|"
            r"overdose|scratch|hit|punish)(?:ing)? my ?self\b"
        ),
    ),
    Rule(
        "self_harm",
        "self_injury_on_purpose",
        _rx(
            r"\b(?:hurt|harm|cut|burn|hit|scratch)(?:ing|s)? my ?self (?:\w+ ){0,3}?"
            r"(?:on purpose|deliberately|intentionally|to (?:feel|cope|punish|numb|release))"
        ),
    ),
    Rule(
        "self_harm",
        "self_injury_to_cope",
        _rx(
            r"\b(?:cut|burn|scratch|hurt|hit|bang)(?:ting|ing|s)? (?:my ?self|my (?:skin|arms?|"
            r"wrists?|thighs?|legs?|body|stomach|head)) (?:\w+ ){0,5}?(?:to|just to|so i can|"
            r"so that i can|because i|when i) (?:feel|cope|punish|numb|release|calm|deserve|"
            r"forget|stop feeling)\b|"
            r"\b(?:i(?:'ve| have)? been|i keep|i(?:'ve| have)? started|i still|i(?:'m| am)) "
            r"(?:\w+ )?"
            r"(?:cutting|burning|scratching|carving) (?:my ?self|my (?:skin|arms?|wrists?|"
            r"thighs?|legs?|stomach))\b|\bslit(?:ting)? (?:my )?(?:wrists?|veins?|throat)\b|"
            r"\bhow (?:deep|hard|far)\b.{0,40}\b(?:artery|arteries|veins?|wrists?)\b|"
            r"\b(?:cut|burn|scratch|hit|bang|punch)(?:ting|ing|s)? (?:my ?self|my (?:skin|arms?|"
            r"wrists?|thighs?|legs?|body|stomach|head)) (?:\w+ ){0,3}?(?:until|till) (?:it|they|i) "
            r"(?:bleeds?|bruises?|hurts?|pass out)\b|"
            r"\bi(?:'ve|'m| have| am)? (?:\w+ )?(?:started )?(?:cutting|self[- ]?harming) again\b|"
            r"\brelapsed? (?:on|with|into) (?:self[- ]?harm|cutting)\b"
        ),
    ),
    Rule(
        "self_harm",
        "self_harming",
        _rx(r"\bi(?:'ve| have|'m| am)? (?:been |started |still )?self[- ]?harm(?:ing|ed)?\b"),
    ),
    Rule("self_harm", "my_self_harm", _rx(r"\bmy (?:own )?self[- ]?harm(?:ing)?\b")),
    Rule(
        "self_harm",
        "want_to_die",
        _rx(
            r"\bi (?:\w+ ){0,2}?(?:want|wanna|wish|hope|plan|deserve|need|would like|'d like|"
            r"am going|'m going|am ready|'m ready)(?: to)? (?:just )?(?:die|be dead|not exist|"
            r"stop existing|disappear forever)\b"
            rf"(?! (?:of|from) {_HYPERBOLE_CAUSE}\b)"
        ),
    ),
    Rule(
        "self_harm",
        "wish_dead",
        _rx(
            r"\bi wish (?:i|that i) (?:was|were|could be|would be|'d be|could just be) dead\b|"
            r"\bi wish (?:i|that i) (?:could|would) (?:just )?die\b|"
            r"\bi wish (?:i|that i) (?:was|had|were|'d) never (?:been )?born\b|"
            r"\b(?:i'd|i would|i'd much|i would much) rather (?:be dead|die)\b|"
            r"\bi(?:'m| am| would be|'d be) better off dead\b"
        ),
    ),
    Rule(
        "self_harm",
        "dont_want_to_live",
        _rx(
            r"\b(?:don't|do not|dont|no longer) want to (?:live|be alive|exist|be here|go on)"
            r"(?: like this)?(?: anymore| any more| any longer|\s*$|[.!,;])|"
            r"\b(?:don't|do not|dont) want to wake up (?:anymore|any more|ever again|again)\b|"
            r"\b(?:sleep|fall asleep|go to sleep) and never wake up\b|"
            r"\b(?:sleep|go to sleep|fall asleep) forever\b|"
            r"\b(?:hope|pray|wish) (?:that )?i (?:won't|don't|never|wouldn't|do not|will not) "
            r"wake up\b"
        ),
    ),
    Rule(
        "self_harm",
        "no_reason_to_live",
        _rx(
            r"\bno (?:reason|point|purpose) (?:in |for me to |to |of )?(?:keep )?(?:living|live|"
            r"go on|going on|be alive|being alive|exist|existing)\b|"
            r"\bmy life (?:is|isn't|is not) (?:not )?worth (?:living|it)\b|"
            r"\b(?:don't|do not|dont|can't|cannot|no longer) see (?:the|any) (?:point|reason) "
            r"(?:in|of|to|for) (?:living|life|going on|being alive|staying alive|being here|"
            r"waking up|anything anymore)\b|"
            r"\b(?:life|living) (?:isn't|is not|is no longer) worth (?:living|it) "
            r"(?:anymore|for me)"
        ),
    ),
    Rule(
        "self_harm",
        "end_my_life",
        _rx(
            r"\b(?:end(?:ing)?|take|taking) my (?:own )?life\b|\bend(?:ing)? it all\b|"
            r"\bsuicide (?:is|seems like|feels like) (?:the|my) only\b"
        ),
        unless=_rx(r"\b(?:dnr|do not resuscitate|doctors? (?:ending|to end))\b"),
    ),
    Rule(
        "self_harm",
        "suicidal_first_person",
        _rx(
            r"\bi(?:'m| am|'ve been| have been| feel| keep)? (?:feeling |so |very |really |"
            r"getting |kind of |kinda |pretty )?suicidal\b|"
            r"\bi(?:'m| am)? (?:having|have|get|had|keep having|been having) "
            r"(?:\w+ )?(?:suicidal|suicide) (?:thoughts|feelings|urges|ideation)\b|"
            r"\b(?:want|wanna|going|gonna|plan(?:ning)?|thinking (?:about|of)|"
            r"considering|ready|decided|trying) (?:to )?(?:commit(?:ting)? )?suicide\b|"
            r"\b(?:how|ways?|best way|easiest way|quickest way) (?:do i |can i |to )?"
            r"commit suicide\b|\b(?:write|writing|wrote|draft|help me (?:with|write)) "
            r"(?:a |my )?suicide (?:note|letter)\b"
        ),
    ),
    Rule(
        "self_harm",
        "better_off_without_me",
        _rx(
            r"\b(?:better off|happier|be fine) without me\b|"
            r"\bbetter off (?:with (?:a different|another|a new|a better) (?:mom|mum|mother|dad|"
            r"father|parent|wife|husband|partner)|if i (?:just )?(?:was|were|wasn't|weren't|"
            r"disappeared|died|was gone|were gone)\b)|"
            r"\b(?:nobody|no one|no-one) (?:would|will) (?:\w+ )?(?:miss me|care if i (?:die|"
            r"died|was gone|were gone|disappeared)|notice if i (?:was|were|'m) gone|notice if i "
            r"(?:die|died|disappeared))"
        ),
    ),
    Rule(
        "self_harm",
        "method_seeking",
        _rx(
            r"\b(?:painless|quick|quickest|easiest|easy|best|fastest|peaceful|surest|"
            r"least painful) (?:way|method|ways|methods) (?:to|of) (?:die|dying|kill(?:ing)? "
            rf"{_SELF}|end(?:ing)? (?:it|my life)|commit(?:ting)? suicide)\b|"
            r"\bhow (?:many|much) .{0,40}\b(?:to|would|will|until|before|does it take to) "
            rf"(?:die|kill {_SELF}|end it|never wake up|not wake up)\b|"
            # "how much caffeine would be fatal" is a toxicology question; it is method seeking
            # when it is about the asker's own supply or body ("how many of my pills").
            r"\bhow (?:many|much) (?=.{0,40}\b(?:i|me|my)\b).{0,40}\b(?:to|would|will|until|"
            r"before|does it take to) (?:be lethal|be fatal)\b|"
            r"\bhow (?:many|much) .{0,40}\b(?:be|is) (?:lethal|fatal) (?:for|to) me\b|"
            r"\bhow (?:deep|hard|long) (?:do|should|would|can) i (?:cut|slit|bleed|hang)\b|"
            r"\bways to (?:die|kill (?:myself|yourself)|commit suicide|end (?:it|my life))\b|"
            r"\bkill me (?:quickly|fast|painlessly|peacefully|in my sleep|for sure)\b|"
            rf"\benough (?:\w+ ){{0,3}}?to (?:kill {_SELF}|die|end my life)\b"
        ),
        unless=_rx(r"\b(?:people|patients|children|kids|americans|cases)\b .{0,10}\bdie\b"),
    ),
    Rule(
        "self_harm",
        "slang",
        _rx(
            r"\bi (?:\w+ ){0,2}?(?:wanna|want to|going to|gonna|will|might|should) kms\b|"
            r"\bsewer ?slide\b|\b(?:want|wanna|going|gonna|thinking about|plan) (?:to )?unalive\b"
        ),
    ),
    Rule(
        "self_harm",
        "jump_intent",
        _rx(
            r"\b(?:thinking (?:about|of)|want to|wanna|going to|gonna|plan(?:ning)? to) "
            r"(?:jump|jumping) (?:off|from|in front of)\b"
        ),
    ),
    Rule(
        "self_harm",
        "overdose_intent",
        _rx(
            r"\b(?:want|going|gonna|plan(?:ning)?|thinking about|trying|tried) to "
            r"(?:overdose|od)\b|\bi (?:just )?(?:took|swallowed) (?:a whole bottle|an entire "
            r"bottle|all (?:of )?my (?:pills|meds|medication))|"
            r"\b(?:saving|stockpiling|hoarding|collecting|stashing) (?:up )?(?:my |all my |all "
            r"the )?(?:pills|meds|medications?|tablets|sleeping pills|painkillers)\b|"
            r"\b(?:swallow|take) (?:everything in the medicine cabinet|all (?:of )?(?:my|the) "
            r"(?:pills|meds|tablets|painkillers)(?: at once)?|the whole (?:bottle|pack|box))\b"
        ),
    ),
]

# ---------------------------------------------------------------------------------------------
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

# ---------------------------------------------------------------------------------------------
# Prompt injection: attempts to override, reveal or replace the assistant's instructions.
_INSTR = (
    r"(?:instructions?|prompts?|rules|directions|guidelines|guardrails|constraints|directives|"
    r"programming|restrictions|training|polic(?:y|ies)|filters|system messages?|context)"
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
            r" (?:previous|prior|preceding|above|earlier|initial|original|system|developer|"
            rf"safety|former) (?:\w+ )?{_INSTR}\b|"
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

RULES: tuple[Rule, ...] = (*_SELF_HARM, *_VIOLENT, *_CSE, *_WEAPONS, *_INJECTION)

# When the recent conversation already expressed self-harm, a follow-up asking about doses or
# methods is read in that light ("I want to end it" … "how many would be enough?").
METHOD_FOLLOW_UP = _rx(
    r"\b(?:how (?:many|much)|lethal|fatal|overdose|dose|doses|pills?|tablets?|enough|"
    r"rope|bridge|height|tall|deep|painless|quick|quickest|fastest|method|methods|way to)\b"
)


# Words someone else said, quoted after "says"/"yelled"/…: "my son said 'I want to die'" is a
# parent asking for help, not the user's own statement. Not stripped for prompt injection.
_REPORTED = re.compile(
    r"\b(?:says?|said|saying|yell(?:s|ed|ing)?|scream(?:s|ed|ing)?|shout(?:s|ed|ing)?|"
    r"told (?:me|us|her|him|them)|tells (?:me|us)|wrote|writes|texted|texts|posted|whispered|"
    r"keeps? saying|kept saying)\b[^'\"]{0,20}(['\"])[^'\"]{1,200}\1"
)


def strip_reported_speech(normalised: str) -> str:
    return _REPORTED.sub(" ", normalised)


def _variants(text: str, *, reported: bool = True) -> list[str]:
    base = _BENIGN_BOMBS.sub(" ", normalise(text))
    if not reported:
        base = strip_reported_speech(base)
    variants = [base]
    deleet = base.translate(_LEET)
    if deleet != base:
        variants.append(deleet)
    return variants


def match_rules(text: str, categories: Collection[str] | None = None) -> list[Rule]:
    """Every rule that fires on ``text`` (raw text; normalised here), restricted to
    ``categories`` when given. At most one rule per name."""
    found: list[Rule] = []
    quoted = _variants(text)
    unquoted = _variants(text, reported=False)
    for rule in RULES:
        if categories is not None and rule.category not in categories:
            continue
        variants = quoted if rule.category == "prompt_injection" else unquoted
        if any(rule.matches(v) for v in variants):
            found.append(rule)
    return found


def self_harm_context(text: str, history_user_turns: Sequence[str]) -> bool:
    """``text`` asks about doses/methods right after the user expressed self-harm."""
    if not METHOD_FOLLOW_UP.search(normalise(text)):
        return False
    return any(match_rules(turn, {"self_harm"}) for turn in history_user_turns)
