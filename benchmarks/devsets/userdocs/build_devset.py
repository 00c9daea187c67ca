"""Writes questions.jsonl and conversations.jsonl of the user-documents dev set from the lists
below, resolving each transcript answer's quoted words to the time range of the cues holding
them (so the gold time ranges always match docs/garden-committee-june.vtt).

Question record: ``id``, ``question``, ``answerable``; answerable ones have ``facts`` (a list of
key facts, each a list of accepted variants), ``where`` (prose, table, list, glossary,
transcript) and ``place`` (``file`` plus ``heading`` path, ``page`` or ``start``/``end``).
Unanswerable ones have ``near`` (the document they are closest to). Conversation record:
``id`` and ``turns``, each turn a message and, when judged, the same fields as a question."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from make_transcript import render

HERE = Path(__file__).parent
HB, LF, SG, NT = (
    "staff-handbook.md",
    "amoxicillin-leaflet.md",
    "digestive-system-study-guide.md",
    "bio101-lecture7-notes.txt",
)
PDF, VTT = "lumen-wm814-manual.pdf", "garden-committee-june.vtt"
ROOTS = {
    HB: "Northwind Analytics Staff Handbook",
    LF: "Amoxicillin 250 mg and 500 mg Capsules: Package leaflet",
    SG: "Study Guide: The Human Digestive System",
}


def _cues() -> list[tuple[str, str, str]]:
    out = []
    for block in render().split("\n\n"):
        lines = block.strip().splitlines()
        if len(lines) == 2 and "-->" in lines[0]:
            start, end = (s.strip() for s in lines[0].split("-->"))
            out.append((start, end, re.sub(r"<[^>]+>", "", lines[1])))
    return out


def vtt(phrase: str) -> dict[str, Any]:
    """The time range of the cues the words of ``phrase`` were spoken in."""
    cues = _cues()
    text, spans = "", []
    for start, end, words in cues:
        spans.append((len(text), len(text) + len(words), start, end))
        text += words + " "
    at = text.find(phrase)
    if at < 0:
        raise ValueError(f"not in the transcript: {phrase!r}")
    hit = [s for s in spans if s[0] < at + len(phrase) and s[1] > at]
    return {"file": VTT, "start": hit[0][2], "end": hit[-1][3]}


def md(file: str, *path: str) -> dict[str, Any]:
    return {"file": file, "heading": [ROOTS[file], *path]}


def page(n: int) -> dict[str, Any]:
    return {"file": PDF, "page": n}


def notes() -> dict[str, Any]:
    return {"file": NT}


def Q(
    qid: str, question: str, facts: list[list[str]], where: str, place: dict[str, Any]
) -> dict[str, Any]:
    return {
        "id": qid,
        "question": question,
        "answerable": True,
        "facts": facts,
        "where": where,
        "place": place,
    }


def U(qid: str, question: str, near: str) -> dict[str, Any]:
    return {"id": qid, "question": question, "answerable": False, "near": near}


def T(
    message: str,
    facts: list[list[str]] | None = None,
    where: str = "",
    place: dict[str, Any] | None = None,
) -> dict[str, Any]:
    turn: dict[str, Any] = {"message": message}
    if facts is not None:
        turn |= {"facts": facts, "where": where, "place": place}
    return turn


# QUESTIONS and CONVERSATIONS follow.


def QUESTIONS() -> list[dict[str, Any]]:
    hotel, meal = (
        ("Travel and expenses", "Hotel allowances"),
        ("Travel and expenses", "Meal allowances"),
    )
    return [
        # -- staff handbook (Markdown, tables and prose) --------------------------------------
        Q(
            "hb01",
            "What's the most we can spend on a hotel in London per night?",
            [["180"]],
            "table",
            md(HB, *hotel),
        ),
        Q(
            "hb02",
            "hotel limit for paris?",
            [["190"], ["eur", "€", "euro"]],
            "table",
            md(HB, *hotel),
        ),
        Q(
            "hb03",
            "How much can I spend on a hotel room in New York?",
            [["290"]],
            "table",
            md(HB, *hotel),
        ),
        Q(
            "hb04",
            "I'm going to Edinburgh for a conference, what's the nightly hotel cap?",
            [["130"]],
            "table",
            md(HB, *hotel),
        ),
        Q(
            "hb05",
            "What's the hotel allowance for cities in the UK that aren't listed, like Leeds?",
            [["100"]],
            "table",
            md(HB, *hotel),
        ),
        Q(
            "hb06",
            "Can I book a more expensive hotel than the cap?",
            [["director"]],
            "prose",
            md(HB, *hotel),
        ),
        Q(
            "hb07",
            "How much can I claim for dinner when travelling in the UK?",
            [["35"]],
            "table",
            md(HB, *meal),
        ),
        Q("hb08", "What is the lunch allowance abroad?", [["20"]], "table", md(HB, *meal)),
        Q(
            "hb09",
            "Can I claim for a glass of wine with dinner on a business trip?",
            [["alcohol is not reimbursed", "not reimbursed"]],
            "prose",
            md(HB, *meal),
        ),
        Q(
            "hb10",
            "If my hotel includes breakfast can I still claim the breakfast allowance?",
            [["cannot"]],
            "prose",
            md(HB, *meal),
        ),
        Q(
            "hb11",
            "How many days of annual leave do I get after 3 years here?",
            [["27"]],
            "table",
            md(HB, "Annual leave", "Entitlement"),
        ),
        Q(
            "hb12",
            "How much holiday do new starters get?",
            [["25"]],
            "table",
            md(HB, "Annual leave", "Entitlement"),
        ),
        Q(
            "hb13",
            "How many public holidays do we get?",
            [["8", "eight"]],
            "table",
            md(HB, "Annual leave", "Entitlement"),
        ),
        Q(
            "hb14",
            "When does the leave year start?",
            [["1 april"]],
            "prose",
            md(HB, "Annual leave", "Entitlement"),
        ),
        Q(
            "hb15",
            "How many days of leave can I carry over to next year?",
            [["5", "five"]],
            "prose",
            md(HB, "Annual leave", "Carrying leave over"),
        ),
        Q(
            "hb16",
            "By when do I have to use carried over days?",
            [["30 june"]],
            "prose",
            md(HB, "Annual leave", "Carrying leave over"),
        ),
        Q(
            "hb17",
            "I was signed off for most of last winter with a back injury and never got to use my holiday. My manager says I'll lose it. Is that right?",
            [["18 months"]],
            "prose",
            md(HB, "Annual leave", "Carrying leave over"),
        ),
        Q(
            "hb18",
            "How much notice do I need to give for two weeks off?",
            [["four weeks", "4 weeks"]],
            "prose",
            md(HB, "Annual leave", "Booking leave"),
        ),
        Q(
            "hb19",
            "Can I sell my unused holiday?",
            [["not allowed"]],
            "prose",
            md(HB, "Annual leave", "Buying and selling leave"),
        ),
        Q(
            "hb20",
            "What happens if I get ill while I'm on holiday?",
            [["fit note", "medical certificate"]],
            "prose",
            md(HB, "Annual leave", "Sickness during leave"),
        ),
        Q(
            "hb21",
            "What time do I need to call in sick by?",
            [["10:00"]],
            "prose",
            md(HB, "Sickness absence", "Reporting sickness"),
        ),
        Q(
            "hb22",
            "When do I need a doctor's note?",
            [["8th", "eighth", "more than 7", "7 calendar days"]],
            "prose",
            md(HB, "Sickness absence", "Evidence"),
        ),
        Q(
            "hb23",
            "How many weeks of full sick pay do I get if I've been here 3 years?",
            [["12 weeks"]],
            "table",
            md(HB, "Sickness absence", "Company sick pay"),
        ),
        Q(
            "hb24",
            "sick pay for someone in their first year?",
            [["4 weeks"]],
            "table",
            md(HB, "Sickness absence", "Company sick pay"),
        ),
        Q(
            "hb25",
            "What are the core hours?",
            [["10:00"], ["16:00"]],
            "prose",
            md(HB, "Working hours", "Flexitime"),
        ),
        Q(
            "hb26",
            "How many hours of flexi credit can I carry into next month?",
            [["10 hours"]],
            "prose",
            md(HB, "Working hours", "Flexitime"),
        ),
        Q(
            "hb27",
            "How many days a week do I have to be in the office?",
            [["two days", "2 days"]],
            "prose",
            md(HB, "Working hours", "Working from home"),
        ),
        Q(
            "hb28",
            "How long is maternity leave on full pay?",
            [["16 weeks"]],
            "prose",
            md(HB, "Family leave", "Maternity and adoption leave"),
        ),
        Q(
            "hb29",
            "How much paternity leave do dads get?",
            [["4 weeks", "four weeks"]],
            "prose",
            md(HB, "Family leave", "Paternity leave"),
        ),
        Q(
            "hb30",
            "My kid's school closed suddenly, do I get time off for that?",
            [["5 days", "five days"]],
            "prose",
            md(HB, "Family leave", "Shared parental leave and time off for dependants"),
        ),
        Q(
            "hb31",
            "Can I fly premium economy to New York?",
            [["6 hours"]],
            "prose",
            md(HB, "Travel and expenses", "Booking travel"),
        ),
        Q(
            "hb32",
            "When am I allowed to travel first class on the train?",
            [["more than 3 hours", "3 hours"]],
            "prose",
            md(HB, "Travel and expenses", "Booking travel"),
        ),
        Q(
            "hb33",
            "What's the mileage rate for using my own car?",
            [["45p"]],
            "prose",
            md(HB, "Travel and expenses", "Mileage"),
        ),
        Q(
            "hb34",
            "How long do I have to submit an expense claim?",
            [["60 days"]],
            "prose",
            md(HB, "Travel and expenses", "Claiming expenses"),
        ),
        Q(
            "hb35",
            "Do I need a receipt for a £6 coffee?",
            [["over £10", "over 10", "£10"]],
            "prose",
            md(HB, "Travel and expenses", "Claiming expenses"),
        ),
        Q(
            "hb36",
            "How much is the home office allowance?",
            [["300"]],
            "prose",
            md(HB, "Equipment and IT", "Home office allowance"),
        ),
        Q(
            "hb37",
            "I left my work laptop on the train, what do I do?",
            [["24 hours"], ["0161 555 0199", "it-help@northwind.example"]],
            "prose",
            md(HB, "Equipment and IT", "Lost or stolen equipment"),
        ),
        Q(
            "hb38",
            "How long does a password have to be?",
            [["14 characters"]],
            "prose",
            md(HB, "Equipment and IT", "Passwords and security"),
        ),
        Q(
            "hb39",
            "What's my yearly training budget?",
            [["1,000", "1000"]],
            "prose",
            md(HB, "Learning and development"),
        ),
        Q(
            "hb40",
            "A supplier sent me a bottle of champagne worth about £70, can I keep it?",
            [["gift register", "declared"]],
            "prose",
            md(HB, "Conduct", "Gifts and hospitality"),
        ),
        Q(
            "hb41",
            "What is the notice period for a senior associate?",
            [["2 months", "two months"]],
            "table",
            md(HB, "Leaving Northwind", "Notice periods"),
        ),
        Q(
            "hb42",
            "How much notice do managers have to give when they resign?",
            [["3 months", "three months"]],
            "table",
            md(HB, "Leaving Northwind", "Notice periods"),
        ),
        Q(
            "hb43",
            "What's the notice period during probation?",
            [["one week", "1 week"]],
            "prose",
            md(HB, "Leaving Northwind", "Notice periods"),
        ),
        Q(
            "hb44",
            "Do I get paid for holiday I haven't taken when I leave?",
            [["final salary", "paid"]],
            "prose",
            md(HB, "Leaving Northwind", "Final pay"),
        ),
        Q(
            "hb45",
            "What's the whistleblowing phone number?",
            [["0800 555 0142"]],
            "prose",
            md(HB, "Conduct", "Raising a concern"),
        ),
        # -- appliance manual (PDF, error-code table) -----------------------------------------
        Q(
            "wm01",
            "My washing machine shows E21, what does that mean?",
            [["drain", "draining"]],
            "table",
            page(4),
        ),
        Q(
            "wm02",
            "What does error E10 mean on the Lumen?",
            [["no water", "water coming in"]],
            "table",
            page(4),
        ),
        Q(
            "wm03",
            "The display says E32, how do I fix it?",
            [["unbalanced"], ["spread", "evenly"]],
            "table",
            page(4),
        ),
        Q(
            "wm04",
            "What should I do about an E41 code?",
            [["leak"], ["call service", "close the tap"]],
            "table",
            page(4),
        ),
        Q("wm05", "What is F05?", [["heating element"]], "table", page(4)),
        Q("wm06", "The machine says E01 and won't start", [["door"]], "table", page(4)),
        Q(
            "wm07",
            "An error code keeps coming back after I fixed it, what now?",
            [["one minute", "1 minute"]],
            "prose",
            page(4),
        ),
        Q(
            "wm08",
            "How long does the cotton programme take?",
            [["3 h 30", "3h 30", "3 hours 30"]],
            "table",
            page(3),
        ),
        Q("wm09", "How much can I put in on the wool programme?", [["2 kg"]], "table", page(3)),
        Q("wm10", "What is the hottest temperature for synthetics?", [["60"]], "table", page(3)),
        Q("wm11", "How long is the quick wash?", [["15 min"]], "table", page(3)),
        Q(
            "wm12",
            "Why does the eco programme take so long?",
            [["heats the water more slowly", "more slowly"]],
            "prose",
            page(3),
        ),
        Q(
            "wm13",
            "How do I clean the drain pump filter?",
            [["anticlockwise"], ["rinse"]],
            "prose",
            page(5),
        ),
        Q(
            "wm14",
            "How often should I clean the filter?",
            [["once a month", "monthly"]],
            "prose",
            page(5),
        ),
        Q("wm15", "My washing machine smells, what can I do?", [["drum clean"]], "prose", page(5)),
        Q("wm16", "Where is the pump filter?", [["bottom right"]], "prose", page(5)),
        Q(
            "wm17",
            "How long is the warranty?",
            [["2-year", "2 year", "two year"]],
            "prose",
            page(6),
        ),
        Q("wm18", "How do I get a 5 year warranty?", [["register"], ["28 days"]], "prose", page(6)),
        Q(
            "wm19",
            "What's the phone number to book a repair?",
            [["0345 600 1234"]],
            "prose",
            page(6),
        ),
        Q(
            "wm20",
            "Does the warranty cover damage from coins left in pockets?",
            [["does not cover", "not cover"]],
            "prose",
            page(6),
        ),
        Q(
            "wm21",
            "Do I need to remove anything before the first wash?",
            [["transport bolts"]],
            "prose",
            page(1),
        ),
        Q("wm22", "How high should the drain hose be?", [["60 cm"], ["100 cm"]], "prose", page(2)),
        Q(
            "wm23",
            "Can I plug the washing machine into an extension lead?",
            [["do not use an extension lead", "do not use"]],
            "prose",
            page(2),
        ),
        Q("wm24", "What's the maximum spin speed?", [["1400"]], "prose", page(1)),
        Q("wm25", "Where can I find the serial number?", [["inside the door"]], "prose", page(6)),
        # -- committee meeting (WebVTT, sentences across cues) --------------------------------
        Q(
            "gc01",
            "Who is running the compost workshop?",
            [["gloria mendes"]],
            "transcript",
            vtt("compost adviser, Gloria Mendes, has offered to run the workshop"),
        ),
        Q(
            "gc02",
            "When is the compost workshop?",
            [["fourteenth of june", "14 june", "14th of june"]],
            "transcript",
            vtt("Saturday the fourteenth of June, from ten until twelve"),
        ),
        Q(
            "gc03",
            "What time does the compost workshop start?",
            [["ten", "10"]],
            "transcript",
            vtt("from ten until twelve"),
        ),
        Q(
            "gc04",
            "How many households are on the waiting list?",
            [["fourteen", "14"]],
            "transcript",
            vtt("We have fourteen households on the waiting list"),
        ),
        Q(
            "gc05",
            "How much was the water bill last year?",
            [["four hundred and twenty", "420"]],
            "transcript",
            vtt("The water bill for last year came to four hundred and twenty pounds"),
        ),
        Q(
            "gc06",
            "Who is going to fit the water butts?",
            [["daniel"]],
            "transcript",
            vtt("Daniel buys and fits two water butts"),
        ),
        Q(
            "gc07",
            "How much is the plot fee?",
            [["thirty-five", "35"]],
            "transcript",
            vtt("the plot fee stays at thirty-five pounds a year"),
        ),
        Q(
            "gc08",
            "When is the next committee meeting?",
            [["ninth of july", "9 july"]],
            "transcript",
            vtt("the next meeting is on Wednesday the ninth of July"),
        ),
        Q(
            "gc09",
            "What will the council give away at the workshop?",
            [["compost bin"]],
            "transcript",
            vtt("the council will give a free compost bin to the first twenty households"),
        ),
        Q(
            "gc10",
            "How do people sign up for the compost workshop?",
            [["whatsapp"]],
            "transcript",
            vtt("book through the garden's WhatsApp group"),
        ),
        Q(
            "gc11",
            "Why did the water bill go up?",
            [["dry summer"]],
            "transcript",
            vtt("mostly because of the dry summer"),
        ),
        Q(
            "gc12",
            "How much money does the garden have in reserve?",
            [["two thousand", "2,000", "2000"]],
            "transcript",
            vtt("just over two thousand pounds in the account"),
        ),
        Q(
            "gc13",
            "Who suggested splitting plots into half plots?",
            [["tom"]],
            "transcript",
            vtt("Could we split some of the bigger plots into half plots?"),
        ),
        Q(
            "gc14",
            "When will plots come free?",
            [["september"]],
            "transcript",
            vtt("Two plots will come free in September"),
        ),
        Q(
            "gc15",
            "Who sent apologies for the meeting?",
            [["ken"]],
            "transcript",
            vtt("Apologies have been received from Ken"),
        ),
        Q(
            "gc16",
            "How much will the water butts cost?",
            [["twenty-five pounds", "25", "fifty", "50"]],
            "transcript",
            vtt("for twenty-five pounds each"),
        ),
        Q(
            "gc17",
            "What is Gloria bringing to the workshop?",
            [["wormeries"]],
            "transcript",
            vtt("She'll bring two wormeries to show people"),
        ),
        Q(
            "gc18",
            "Where is the next meeting being held?",
            [["church hall"]],
            "transcript",
            vtt("in the church hall as usual"),
        ),
        # -- class notes (plain text) ---------------------------------------------------------
        Q("cn01", "When is the bio midterm?", [["22 october", "wednesday 22"]], "prose", notes()),
        Q("cn02", "When is lab report 3 due?", [["17 october", "friday 17"]], "prose", notes()),
        Q("cn03", "Where does glycolysis happen?", [["cytoplasm"]], "prose", notes()),
        Q("cn04", "How much ATP does glycolysis make?", [["2 atp"]], "prose", notes()),
        Q(
            "cn05",
            "Where does the Krebs cycle take place?",
            [["mitochondrial matrix", "matrix"]],
            "prose",
            notes(),
        ),
        Q(
            "cn06",
            "How many ATP does oxidative phosphorylation produce?",
            [["34"]],
            "prose",
            notes(),
        ),
        Q(
            "cn07",
            "What is the total ATP yield from one glucose?",
            [["36 to 38", "36"]],
            "prose",
            notes(),
        ),
        Q(
            "cn08",
            "What do muscles make when there's not enough oxygen?",
            [["lactic acid"]],
            "prose",
            notes(),
        ),
        Q("cn09", "Why is cyanide poisonous?", [["electron transport chain"]], "prose", notes()),
        Q(
            "cn10",
            "When are Dr Okafor's office hours?",
            [["thursdays", "thursday"], ["2 to 4"]],
            "prose",
            notes(),
        ),
        Q(
            "cn11",
            "What does yeast produce in fermentation?",
            [["ethanol"], ["carbon dioxide"]],
            "prose",
            notes(),
        ),
        Q("cn12", "What's the final electron acceptor?", [["oxygen"]], "prose", notes()),
        Q("cn13", "What's the reading for next week?", [["chapter 9"]], "prose", notes()),
        Q("cn14", "Which lectures does the midterm cover?", [["1 to 8"]], "prose", notes()),
        # -- study guide (Markdown, list, table and glossary) ---------------------------------
        Q(
            "sg01",
            "What is bile?",
            [["liver"], ["emulsifies fats", "emulsif"]],
            "glossary",
            md(SG, "Glossary"),
        ),
        Q(
            "sg02",
            "What does peristalsis mean?",
            [["muscle contraction"]],
            "glossary",
            md(SG, "Glossary"),
        ),
        Q("sg03", "What are villi?", [["finger-like"]], "glossary", md(SG, "Glossary")),
        Q("sg04", "Define denatured", [["active site"]], "glossary", md(SG, "Glossary")),
        Q("sg05", "What does a lacteal absorb?", [["fatty acids"]], "glossary", md(SG, "Glossary")),
        Q(
            "sg06",
            "What's the order food goes through the digestive system?",
            [["mouth"], ["oesophagus"], ["stomach"], ["small intestine"], ["large intestine"]],
            "list",
            md(SG, "The path of food"),
        ),
        Q(
            "sg07",
            "What happens in the large intestine?",
            [["water is absorbed", "water"]],
            "list",
            md(SG, "The path of food"),
        ),
        Q(
            "sg08",
            "How long does food take to go through the body?",
            [["24 and 72 hours", "24"]],
            "prose",
            md(SG, "The path of food"),
        ),
        Q(
            "sg09",
            "What does lipase break down?",
            [["lipids", "fats"], ["fatty acids"]],
            "table",
            md(SG, "Enzymes"),
        ),
        Q(
            "sg10",
            "Where is amylase made?",
            [["salivary glands"], ["pancreas"]],
            "table",
            md(SG, "Enzymes"),
        ),
        Q("sg11", "What pH does pepsin work best at?", [["ph 2"]], "prose", md(SG, "Enzymes")),
        Q(
            "sg12",
            "At what temperature do enzymes get denatured?",
            [["45"]],
            "prose",
            md(SG, "Enzymes"),
        ),
        Q(
            "sg13",
            "How do you test for starch?",
            [["iodine"], ["blue-black"]],
            "prose",
            md(SG, "Required practical: testing for food molecules"),
        ),
        Q(
            "sg14",
            "What colour does biuret go with protein?",
            [["purple"]],
            "prose",
            md(SG, "Required practical: testing for food molecules"),
        ),
        Q(
            "sg15",
            "How long is the small intestine?",
            [["6 metres"]],
            "prose",
            md(SG, "The small intestine and absorption"),
        ),
        Q("sg16", "How long is paper 1?", [["1 hour 45"]], "prose", md(SG, "Exam tips")),
        # -- medicine leaflet (Markdown, dose table) ------------------------------------------
        Q(
            "lf01",
            "How long should I take amoxicillin?",
            [["5 to 10 days"]],
            "prose",
            md(LF, "3. How to take amoxicillin", "How long to take it for"),
        ),
        Q(
            "lf02",
            "What's the adult dose of amoxicillin?",
            [["250 mg to 500 mg", "250 mg"], ["three times a day"]],
            "table",
            md(LF, "3. How to take amoxicillin", "Usual dose"),
        ),
        Q(
            "lf03",
            "How much amoxicillin for a child under 40 kg?",
            [["40 mg to 90 mg", "40 mg"]],
            "table",
            md(LF, "3. How to take amoxicillin", "Usual dose"),
        ),
        Q(
            "lf04",
            "What's the maximum dose for children?",
            [["100 mg per kg"]],
            "prose",
            md(LF, "3. How to take amoxicillin", "Usual dose"),
        ),
        Q(
            "lf05",
            "What dose is used for a dental abscess?",
            [["3 g"]],
            "prose",
            md(LF, "3. How to take amoxicillin", "Usual dose"),
        ),
        Q(
            "lf06",
            "I forgot a dose, what should I do?",
            [["as soon as you remember"], ["double dose", "4 hours"]],
            "prose",
            md(LF, "3. How to take amoxicillin", "If you forget to take amoxicillin"),
        ),
        Q(
            "lf07",
            "Can I stop taking it once I feel better?",
            [["even if you feel better", "keep taking"]],
            "prose",
            md(LF, "3. How to take amoxicillin", "How long to take it for"),
        ),
        Q(
            "lf08",
            "What are the common side effects of amoxicillin?",
            [["rash"], ["diarrhoea"]],
            "prose",
            md(LF, "4. Possible side effects"),
        ),
        Q(
            "lf09",
            "When should I stop taking amoxicillin and see a doctor?",
            [["swelling"], ["difficulty breathing", "breathing"]],
            "prose",
            md(LF, "4. Possible side effects"),
        ),
        Q(
            "lf10",
            "Who should not take amoxicillin?",
            [["allergic"], ["penicillin"]],
            "list",
            md(LF, "2. Before you take amoxicillin", "Do not take amoxicillin"),
        ),
        Q(
            "lf11",
            "Does amoxicillin affect the pill?",
            [["less effective"]],
            "prose",
            md(LF, "2. Before you take amoxicillin", "Other medicines and amoxicillin"),
        ),
        Q(
            "lf12",
            "Can I take paracetamol with amoxicillin?",
            [["can be taken alongside", "alongside"]],
            "prose",
            md(LF, "2. Before you take amoxicillin", "Other medicines and amoxicillin"),
        ),
        Q(
            "lf13",
            "How should I store the capsules?",
            [["below 25"]],
            "prose",
            md(LF, "5. How to store amoxicillin"),
        ),
        Q(
            "lf14",
            "What happens if I take too much amoxicillin?",
            [["upset stomach", "diarrhoea", "feeling sick"]],
            "prose",
            md(LF, "3. How to take amoxicillin", "If you take more amoxicillin than you should"),
        ),
        Q(
            "lf15",
            "Does amoxicillin work for a cold?",
            [["do not work", "viral"]],
            "prose",
            md(LF, "1. What amoxicillin is and what it is used for"),
        ),
        Q(
            "lf16",
            "What colour are the 500 mg capsules?",
            [["maroon and yellow"]],
            "prose",
            md(LF, "6. Contents of the pack"),
        ),
        Q(
            "lf17",
            "How far apart should the doses be?",
            [["4 hours"]],
            "prose",
            md(LF, "3. How to take amoxicillin"),
        ),
        Q(
            "lf18",
            "Can I drive while taking amoxicillin?",
            [["feeling well", "do not drive"]],
            "prose",
            md(LF, "2. Before you take amoxicillin", "Driving and using machines"),
        ),
        Q(
            "lf19",
            "What dose for a severe infection in an adult?",
            [["750 mg to 1 g", "750 mg"]],
            "table",
            md(LF, "3. How to take amoxicillin", "Usual dose"),
        ),
        Q(
            "lf20",
            "I take allopurinol for gout, is that a problem with amoxicillin?",
            [["allergic skin reaction", "skin reaction"]],
            "prose",
            md(LF, "2. Before you take amoxicillin", "Other medicines and amoxicillin"),
        ),
        # -- not answered by the documents (near misses on the same topics) -------------------
        U("u01", "Is it safe to take paracetamol when pregnant?", LF),
        U("u02", "What is the maximum daily dose of paracetamol?", LF),
        U("u03", "Can I drink alcohol while taking amoxicillin?", LF),
        U("u04", "How much does a pack of amoxicillin cost?", LF),
        U("u05", "Is amoxicillin safe for dogs?", LF),
        U("u06", "What is the dose of ibuprofen for adults?", LF),
        U("u07", "Can amoxicillin treat acne?", LF),
        U("u08", "How much can I spend on a hotel in Tokyo?", HB),
        U("u09", "What's the hotel allowance in Madrid?", HB),
        U("u10", "Do we get a bonus at Christmas?", HB),
        U("u11", "What is the company pension contribution?", HB),
        U("u12", "Is there a cycle to work scheme?", HB),
        U("u13", "How much is the daily allowance for meals in Singapore in dollars?", HB),
        U("u14", "Can I bring my dog to the office?", HB),
        U("u15", "What's the dress code?", HB),
        U("u16", "How many sick days did I take last year?", HB),
        U("u17", "What is the salary for a senior associate?", HB),
        U("u18", "Do we get private health insurance?", HB),
        U("u19", "What does error code E55 mean?", PDF),
        U("u20", "How do I connect the washing machine to wifi?", PDF),
        U("u21", "How much does the Lumen WM-814 weigh?", PDF),
        U("u22", "Can the washing machine dry clothes too?", PDF),
        U("u23", "What is the energy rating of the machine?", PDF),
        U("u24", "How do I use the delay start timer?", PDF),
        U("u25", "How loud is the machine on spin?", PDF),
        U("u26", "Who is the treasurer of the garden committee?", VTT),
        U("u27", "When was the garden founded?", VTT),
        U("u28", "How big is each plot in square metres?", VTT),
        U("u29", "Who won the best plot competition?", VTT),
        U("u30", "What vegetables grow best in the garden?", VTT),
        U("u31", "How many ATP does beta oxidation of fats produce?", NT),
        U("u32", "When is the final exam for BIO 101?", NT),
        U("u33", "What is photosynthesis?", NT),
        U("u34", "What grade do I need to pass BIO 101?", NT),
        U("u35", "What does the liver do besides making bile?", SG),
        U("u36", "What is the function of the appendix?", SG),
        U("u37", "How many teeth do adults have?", SG),
        U("u38", "What enzyme digests lactose?", SG),
        U("u39", "When is paper 2?", SG),
        U("u40", "What is the capital of Australia?", "none"),
        U("u41", "Who won the football last night?", "none"),
        U("u42", "How do I reset my router?", "none"),
        U("u43", "What's a good recipe for banana bread?", "none"),
        U("u44", "Does amoxicillin interact with the COVID vaccine?", LF),
        U("u45", "How many days of compassionate leave do I get when a relative dies?", HB),
    ]


def CONVERSATIONS() -> list[dict[str, Any]]:
    hotel, meal = (
        ("Travel and expenses", "Hotel allowances"),
        ("Travel and expenses", "Meal allowances"),
    )
    lt = ("3. How to take amoxicillin",)
    c = [
        [
            T("What's the hotel cap in London?", [["180"]], "table", md(HB, *hotel)),
            T("And in Paris?", [["190"]], "table", md(HB, *hotel)),
            T("What if I need to go over it?", [["director"]], "prose", md(HB, *hotel)),
        ],
        [
            T("How much can I claim for dinner on a UK trip?", [["35"]], "table", md(HB, *meal)),
            T("What about when I'm abroad?", [["45"]], "table", md(HB, *meal)),
            T(
                "Can I include drinks in that?",
                [["alcohol is not reimbursed", "not reimbursed"]],
                "prose",
                md(HB, *meal),
            ),
        ],
        [
            T(
                "How much annual leave do I get after 6 years?",
                [["30"]],
                "table",
                md(HB, "Annual leave", "Entitlement"),
            ),
            T(
                "Can I carry some of it over?",
                [["5", "five"]],
                "prose",
                md(HB, "Annual leave", "Carrying leave over"),
            ),
            T("Until when?", [["30 june"]], "prose", md(HB, "Annual leave", "Carrying leave over")),
        ],
        [
            T(
                "I've been off sick for 10 days. Do I need a fit note?",
                [["8th", "eighth", "fit note"]],
                "prose",
                md(HB, "Sickness absence", "Evidence"),
            ),
            T(
                "Who do I send it to?",
                [["people team"]],
                "prose",
                md(HB, "Sickness absence", "Evidence"),
            ),
            T(
                "How much sick pay will I get? I've worked here 2 years.",
                [["12 weeks"]],
                "table",
                md(HB, "Sickness absence", "Company sick pay"),
            ),
        ],
        [
            T(
                "What's the mileage rate?",
                [["45p"]],
                "prose",
                md(HB, "Travel and expenses", "Mileage"),
            ),
            T(
                "Does that change after a certain distance?",
                [["25p"], ["10,000", "10000"]],
                "prose",
                md(HB, "Travel and expenses", "Mileage"),
            ),
            T(
                "And how do I claim it?",
                [["claimit"]],
                "prose",
                md(HB, "Travel and expenses", "Claiming expenses"),
            ),
        ],
        [
            T(
                "How long is paternity leave?",
                [["4 weeks", "four weeks"]],
                "prose",
                md(HB, "Family leave", "Paternity leave"),
            ),
            T(
                "Can I split it?",
                [["two separate blocks", "two blocks", "blocks of two weeks"]],
                "prose",
                md(HB, "Family leave", "Paternity leave"),
            ),
            T(
                "What's the notice period for a manager?",
                [["3 months", "three months"]],
                "table",
                md(HB, "Leaving Northwind", "Notice periods"),
            ),
        ],
        [
            T(
                "What are the core hours?",
                [["10:00"], ["16:00"]],
                "prose",
                md(HB, "Working hours", "Flexitime"),
            ),
            T("How early can I start?", [["07:30"]], "prose", md(HB, "Working hours", "Flexitime")),
            T(
                "And can I take a whole day off from my flexi credit?",
                [["two flexi days", "flexi days"]],
                "prose",
                md(HB, "Working hours", "Flexitime"),
            ),
        ],
        [
            T(
                "I lost my work phone. What should I do?",
                [["24 hours"]],
                "prose",
                md(HB, "Equipment and IT", "Lost or stolen equipment"),
            ),
            T(
                "What's their number?",
                [["0161 555 0199"]],
                "prose",
                md(HB, "Equipment and IT", "Lost or stolen equipment"),
            ),
            T(
                "Will they wipe it?",
                [["wipe"]],
                "prose",
                md(HB, "Equipment and IT", "Lost or stolen equipment"),
            ),
        ],
        [
            T(
                "What's the training budget?",
                [["1,000", "1000"]],
                "prose",
                md(HB, "Learning and development"),
            ),
            T(
                "Do I have to pay it back if I leave?",
                [["12 months"], ["2,000", "2000"]],
                "prose",
                md(HB, "Learning and development"),
            ),
        ],
        [
            T("My washer is showing E21", [["drain"]], "table", page(4)),
            T("How do I clean that filter?", [["anticlockwise"]], "prose", page(5)),
            T("How often should I do it?", [["once a month", "monthly"]], "prose", page(5)),
        ],
        [
            T("What does E10 mean?", [["no water", "water coming in"]], "table", page(4)),
            T("And what should I do about it?", [["tap"], ["inlet"]], "table", page(4)),
            T(
                "What if it keeps happening?",
                [["one minute", "1 minute", "contact lumen service"]],
                "prose",
                page(4),
            ),
        ],
        [
            T("How long is the warranty on the Lumen?", [["2-year", "2 year"]], "prose", page(6)),
            T("Can I extend it?", [["register"], ["5 years"]], "prose", page(6)),
            T("How do I book a repair?", [["0345 600 1234"]], "prose", page(6)),
        ],
        [
            T("How long does the Eco 40-60 programme take?", [["3 h 15"]], "table", page(3)),
            T("Why is it so long?", [["more slowly"]], "prose", page(3)),
            T("How hot does it get?", [["60"]], "table", page(3)),
        ],
        [
            T(
                "Do I need to do anything before the first wash?",
                [["transport bolts"]],
                "prose",
                page(1),
            ),
            T("Should I throw those away?", [["keep the bolts", "keep"]], "prose", page(1)),
            T("What about the drain hose height?", [["60 cm"]], "prose", page(2)),
        ],
        [
            T(
                "Who is running the compost workshop?",
                [["gloria mendes"]],
                "transcript",
                vtt("compost adviser, Gloria Mendes, has offered to run the workshop"),
            ),
            T(
                "When is it?",
                [["fourteenth of june", "14 june"]],
                "transcript",
                vtt("Saturday the fourteenth of June, from ten until twelve"),
            ),
            T(
                "What is she bringing?",
                [["wormeries"]],
                "transcript",
                vtt("She'll bring two wormeries to show people"),
            ),
            T(
                "How do people sign up?",
                [["whatsapp"]],
                "transcript",
                vtt("book through the garden's WhatsApp group"),
            ),
        ],
        [
            T(
                "How much was the water bill?",
                [["four hundred and twenty", "420"]],
                "transcript",
                vtt("The water bill for last year came to four hundred and twenty pounds"),
            ),
            T(
                "Why was it higher than before?",
                [["dry summer"]],
                "transcript",
                vtt("mostly because of the dry summer"),
            ),
            T(
                "What did they decide to do about it?",
                [["water butts"]],
                "transcript",
                vtt("Daniel buys and fits two water butts"),
            ),
        ],
        [
            T(
                "How many people are waiting for a plot?",
                [["fourteen", "14"]],
                "transcript",
                vtt("We have fourteen households on the waiting list"),
            ),
            T(
                "When will plots come free?",
                [["september"]],
                "transcript",
                vtt("Two plots will come free in September"),
            ),
            T(
                "Who is measuring the plots for half plots?",
                [["tom"]],
                "transcript",
                vtt("Tom measures the plots along the north fence"),
            ),
        ],
        [
            T(
                "When's the next garden meeting?",
                [["ninth of july", "9 july"]],
                "transcript",
                vtt("the next meeting is on Wednesday the ninth of July"),
            ),
            T("What time?", [["seven"]], "transcript", vtt("at seven in the evening")),
            T("Where is it?", [["church hall"]], "transcript", vtt("in the church hall as usual")),
        ],
        [
            T(
                "How long should I take amoxicillin for?",
                [["5 to 10 days"]],
                "prose",
                md(LF, *lt, "How long to take it for"),
            ),
            T(
                "What if I feel better after 3 days?",
                [["keep taking", "even if you feel better"]],
                "prose",
                md(LF, *lt, "How long to take it for"),
            ),
            T(
                "And if I miss a dose?",
                [["as soon as you remember"]],
                "prose",
                md(LF, *lt, "If you forget to take amoxicillin"),
            ),
        ],
        [
            T(
                "What's the usual adult dose of amoxicillin?",
                [["250 mg to 500 mg", "250 mg"]],
                "table",
                md(LF, *lt, "Usual dose"),
            ),
            T(
                "And for children?",
                [["40 mg to 90 mg", "40 mg"]],
                "table",
                md(LF, *lt, "Usual dose"),
            ),
            T(
                "What's the most they can have?",
                [["100 mg per kg"]],
                "prose",
                md(LF, *lt, "Usual dose"),
            ),
        ],
        [
            T(
                "What are the side effects of amoxicillin?",
                [["rash"], ["diarrhoea"]],
                "prose",
                md(LF, "4. Possible side effects"),
            ),
            T(
                "Which ones mean I should stop taking it?",
                [["swelling", "difficulty breathing"]],
                "prose",
                md(LF, "4. Possible side effects"),
            ),
            T(
                "How should I store the capsules?",
                [["below 25"]],
                "prose",
                md(LF, "5. How to store amoxicillin"),
            ),
        ],
        [
            T(
                "Can I take amoxicillin if I'm allergic to penicillin?",
                [["allergic"]],
                "list",
                md(LF, "2. Before you take amoxicillin", "Do not take amoxicillin"),
            ),
            T(
                "Does it interact with the contraceptive pill?",
                [["less effective"]],
                "prose",
                md(LF, "2. Before you take amoxicillin", "Other medicines and amoxicillin"),
            ),
            T(
                "What about warfarin?",
                [["blood tests"]],
                "prose",
                md(LF, "2. Before you take amoxicillin", "Other medicines and amoxicillin"),
            ),
        ],
        [
            T("What is bile?", [["emulsifies", "emulsif"]], "glossary", md(SG, "Glossary")),
            T("Where is it stored?", [["gall bladder"]], "glossary", md(SG, "Glossary")),
            T("What enzyme digests fats?", [["lipase"]], "table", md(SG, "Enzymes")),
        ],
        [
            T("What does amylase break down?", [["starch"]], "table", md(SG, "Enzymes")),
            T("Where is it made?", [["salivary glands"]], "table", md(SG, "Enzymes")),
            T(
                "And what about pepsin, what pH does it like?",
                [["ph 2"]],
                "prose",
                md(SG, "Enzymes"),
            ),
        ],
        [
            T("What are villi?", [["finger-like"]], "glossary", md(SG, "Glossary")),
            T(
                "Why do they help absorption?",
                [["surface area"]],
                "prose",
                md(SG, "The small intestine and absorption"),
            ),
            T(
                "How long is the small intestine?",
                [["6 metres"]],
                "prose",
                md(SG, "The small intestine and absorption"),
            ),
        ],
        [
            T(
                "How do I test for starch?",
                [["iodine"]],
                "prose",
                md(SG, "Required practical: testing for food molecules"),
            ),
            T(
                "What colour does it turn?",
                [["blue-black"]],
                "prose",
                md(SG, "Required practical: testing for food molecules"),
            ),
            T(
                "And the test for protein?",
                [["biuret"]],
                "prose",
                md(SG, "Required practical: testing for food molecules"),
            ),
        ],
        [
            T("Where does glycolysis happen?", [["cytoplasm"]], "prose", notes()),
            T("How much ATP does it make?", [["2 atp"]], "prose", notes()),
            T(
                "Does it need oxygen?",
                [["does not need oxygen", "not need oxygen"]],
                "prose",
                notes(),
            ),
        ],
        [
            T("When is the midterm?", [["22 october"]], "prose", notes()),
            T("What does it cover?", [["1 to 8"]], "prose", notes()),
            T("When's the lab report due?", [["17 october"]], "prose", notes()),
        ],
        [
            T(
                "What happens in anaerobic respiration in muscles?",
                [["lactic acid"]],
                "prose",
                notes(),
            ),
            T("How much ATP does that give?", [["2 atp"]], "prose", notes()),
            T("What does yeast make instead?", [["ethanol"]], "prose", notes()),
        ],
        [
            T("What's the hotel limit in Berlin?", [["150"]], "table", md(HB, *hotel)),
            T(
                "My washing machine is showing F05. What does it mean?",
                [["heating element"]],
                "table",
                page(4),
            ),
            T(
                "Can I still use it?",
                [["do not use hot programmes", "hot programmes"]],
                "table",
                page(4),
            ),
        ],
        [
            T(
                "Who is running the compost workshop?",
                [["gloria mendes"]],
                "transcript",
                vtt("compost adviser, Gloria Mendes, has offered to run the workshop"),
            ),
            T(
                "Could she cover leaf mould too?",
                [["i'll ask her", "ask her"]],
                "transcript",
                vtt("I'll ask her. I'm sure she'll say yes."),
            ),
            T(
                "How long should I take amoxicillin?",
                [["5 to 10 days"]],
                "prose",
                md(LF, *lt, "How long to take it for"),
            ),
        ],
        [
            T(
                "How much can I accept as a gift from a client?",
                [["50"]],
                "prose",
                md(HB, "Conduct", "Gifts and hospitality"),
            ),
            T(
                "What if it's worth more than that?",
                [["gift register", "declared"]],
                "prose",
                md(HB, "Conduct", "Gifts and hospitality"),
            ),
            T("And cash?", [["refused"]], "prose", md(HB, "Conduct", "Gifts and hospitality")),
        ],
        [
            T(
                "How many study days do I get?",
                [["5 study days", "5"]],
                "prose",
                md(HB, "Learning and development"),
            ),
            T(
                "What does the study guide say emulsify means?",
                [["smaller droplets"]],
                "glossary",
                md(SG, "Glossary"),
            ),
        ],
    ]
    return [{"id": f"c{i:02d}", "turns": turns} for i, turns in enumerate(c, start=1)]


if __name__ == "__main__":
    qs = QUESTIONS()
    ids = [q["id"] for q in qs]
    assert len(ids) == len(set(ids)), "duplicate question id"
    (HERE / "questions.jsonl").write_text(
        "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in qs), encoding="utf-8"
    )
    convs = CONVERSATIONS()
    (HERE / "conversations.jsonl").write_text(
        "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in convs), encoding="utf-8"
    )
    answerable = sum(q["answerable"] for q in qs)
    print(
        f"{answerable} answerable, {len(qs) - answerable} unanswerable, {len(convs)} conversations"
    )
