"""Tables found from where words sit (ingest.layout), on word boxes made here."""

from __future__ import annotations

from ragchat.ingest.layout import Word, find_tables


def _line(y: float, cells: list[tuple[float, str]]) -> list[Word]:
    """Words of one line at height ``y``: each cell starts at its x, 6 units a character."""
    words = []
    for x, text in cells:
        for part in text.split():
            words.append(Word(part, x, y, x + 6 * len(part), y + 10))
            x += 6 * (len(part) + 1)
    return words


def test_an_unruled_timetable_is_rows_under_their_column_names() -> None:
    rows = [["Stop", "Weekdays", "Sunday"], ["Millbrook Green", "05:50", "08:15"]]
    rows += [["Station Road", "05:58", "08:23"], ["Market Square", "06:07", "08:32"]]
    words = [
        w
        for i, r in enumerate(rows)
        for w in _line(100 + 16 * i, list(zip((0, 200, 300), r, strict=True)))
    ]
    words += _line(20, [(0, "Buses run every day except Christmas Day, every twenty minutes.")])
    [table] = find_tables(words)
    assert table.rows == rows and not table.pairs


def test_label_value_lines_are_a_form_not_a_table() -> None:
    pairs = [("Patient name:", "Eleanor Whitfield"), ("Date of birth:", "03/11/1958")]
    pairs += [("NHS number:", "485 777 3456")]
    words = [w for i, (a, b) in enumerate(pairs) for w in _line(30 * i, [(0, a), (200, b)])]
    [form] = find_tables(words)
    assert form.pairs and form.rows[1] == ["Date of birth", "03/11/1958"]


def test_prose_in_two_columns_is_not_a_table() -> None:
    left = "The library will close for refurbishment from the third of March"
    right = "The new building will have a children's corner and twelve computers"
    words = [w for i in range(6) for w in _line(14 * i, [(0, left), (450, right)])]
    assert find_tables(words) == []
