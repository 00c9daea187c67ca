"""Self-harm rules, the largest group. Besides blocking a message, they decide whether a
dose or method question is a follow-up to earlier self-harm in the chat
(``match.self_harm_context``)."""

from __future__ import annotations

from ragchat.safety.rules.text import Rule, _rx

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
# What "I'd rather die than …" weighs against when it means it: going on living as things are.
_GOING_ON = (
    r"live|living|alive|exist|go on|going on|carry on|carrying on|keep going|like this|"
    r"another day|wake up|go back|anymore|any more|suffer|this pain|face"
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
            r"\b(?:i'd|i would|i'd much|i would much) rather (?:be dead|die)\b"
            # "I'd rather die than do karaoke": a preference, unless what it is weighed
            # against is living on ("… than go on like this")
            rf"(?!\s+than\s+(?![^.!?\n]*\b(?:{_GOING_ON})))|"
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
