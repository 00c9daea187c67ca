"""Writes docs/garden-committee-june.vtt: a committee meeting whose sentences run across cues
(each cue holds about eight words, cut without regard to sentence ends, as caption tools do)."""

from __future__ import annotations

from pathlib import Path

TURNS = [
    (
        "Margaret Ellis",
        "Right, shall we make a start? Welcome everyone to the June meeting of the "
        "Greenfield Community Garden committee. Tonight we have three items: the plot waiting list, "
        "the water bill, and finally the compost workshop. Apologies have been received from Ken, who "
        "is away on holiday.",
    ),
    ("Margaret Ellis", "First item, the waiting list. Priya, where are we?"),
    (
        "Priya Shah",
        "We have fourteen households on the waiting list at the moment, which is up from "
        "nine in March. Two plots will come free in September when the Hendersons move away, so those "
        "go to the first two names on the list.",
    ),
    (
        "Tom Okoye",
        "Could we split some of the bigger plots into half plots? That would let more "
        "families in sooner.",
    ),
    (
        "Margaret Ellis",
        "Good idea. Let's agree that Tom measures the plots along the north fence "
        "and brings a proposal for half plots to the July meeting.",
    ),
    ("Margaret Ellis", "Second item, the water bill. Tom, you have the figures."),
    (
        "Tom Okoye",
        "Yes. The water bill for last year came to four hundred and twenty pounds, which "
        "is about ninety pounds more than the year before, mostly because of the dry summer. Our "
        "reserves are fine, we have just over two thousand pounds in the account, but I'd like us to "
        "fit water butts to the two sheds to collect rainwater.",
    ),
    (
        "Daniel Brooks",
        "I can get two water butts from the council recycling scheme for twenty-five "
        "pounds each, and I'm happy to fit them myself on a weekend.",
    ),
    (
        "Margaret Ellis",
        "Lovely. So that's agreed: Daniel buys and fits two water butts, up to fifty "
        "pounds from the garden fund. And the plot fee stays at thirty-five pounds a year for now.",
    ),
    (
        "Margaret Ellis",
        "Finally the compost workshop. We said in April we wanted one before the summer holidays.",
    ),
    (
        "Aisha Rahman",
        "I spoke to the council's waste team, and their compost adviser, Gloria Mendes, "
        "has offered to run the workshop for us free of charge. She suggested Saturday the "
        "fourteenth of June, from ten until twelve, at the main shed.",
    ),
    ("Margaret Ellis", "Wonderful. Will she bring anything?"),
    (
        "Aisha Rahman",
        "She'll bring two wormeries to show people, and the council will give a free "
        "compost bin to the first twenty households who sign up. People should book through the "
        "garden's WhatsApp group, and I'll keep the list.",
    ),
    (
        "Priya Shah",
        "Could we ask her to cover leaf mould as well? Half the plot holders ask me about "
        "what to do with autumn leaves.",
    ),
    ("Aisha Rahman", "I'll ask her. I'm sure she'll say yes."),
    (
        "Margaret Ellis",
        "Any other business? No? Then the next meeting is on Wednesday the ninth of "
        "July at seven in the evening, in the church hall as usual. Thank you all, and see you at the "
        "workshop.",
    ),
]

WORDS_PER_CUE = 8
SECONDS_PER_WORD = 0.42
PAUSE = 0.8


def _ts(seconds: float) -> str:
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{int(h):02d}:{int(m):02d}:{s:06.3f}"


def render() -> str:
    out = ["WEBVTT", "", "NOTE title: Greenfield Community Garden committee, June meeting", ""]
    t = 2.0
    for speaker, text in TURNS:
        words = text.split()
        for i in range(0, len(words), WORDS_PER_CUE):
            chunk = words[i : i + WORDS_PER_CUE]
            end = t + len(chunk) * SECONDS_PER_WORD
            out += [f"{_ts(t)} --> {_ts(end)}", f"<v {speaker}>{' '.join(chunk)}", ""]
            t = end
        t += PAUSE
    return "\n".join(out)


if __name__ == "__main__":
    path = Path(__file__).parent / "docs" / "garden-committee-june.vtt"
    path.write_text(render(), encoding="utf-8")
    print(path)
