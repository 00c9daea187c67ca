"""What OCR leaves in text, cleaned: stray stops, line-end hyphens, running heads."""

from __future__ import annotations

from ragchat.ingest.ocr_clean import (
    drop_running_heads,
    drop_stray_quotes,
    drop_stray_stops,
    join_hyphens,
)


def test_a_speck_read_as_a_stop_does_not_cut_the_sentence() -> None:
    text = "rents at 27 Cavendish Road, we are. therefore writing to say it is £940."
    assert drop_stray_stops(text) == (
        "rents at 27 Cavendish Road, we are therefore writing to say it is £940."
    )


def test_a_speck_read_as_an_opening_quote_goes_unless_a_quote_closes() -> None:
    assert drop_stray_quotes("takes five ‘working days to cut") == "takes five working days to cut"
    assert drop_stray_quotes("the ‘quiet room’ is upstairs") == "the ‘quiet room’ is upstairs"


def test_real_stops_and_abbreviations_stay() -> None:
    text = "It ends here. Then more, e.g. the dose, etc. and Dr. Okafor."
    assert drop_stray_stops(text) == text


def test_words_hyphenated_at_line_ends_are_joined_but_compounds_keep_their_hyphen() -> None:
    assert join_hyphens("Your ten-\nancy deposit") == "Your tenancy\ndeposit"
    assert join_hyphens("a well-\nknown fact") == "a well-known\nfact"
    assert join_hyphens("the re-\nport") == "the report"


def test_a_line_heading_every_page_is_said_once() -> None:
    bodies = ["Dear Ms Pryce,\nYour deposit", "The rent goes up\nin September", "Yours,\nM. Okafor"]
    pages = [f"Harbour Lettings Ltd\n{b}\nPage {n} of 3" for n, b in enumerate(bodies, 1)]
    assert drop_running_heads(pages) == [pages[0], bodies[1], bodies[2]]
    assert drop_running_heads(pages[:2]) == pages[:2]  # two pages prove nothing
