"""The AI agent's knowledge and pricing rules that need no database: how an article is split into passages, how a
question becomes search words, how prices are shown, and how a pricing sheet's CSV is read and judged."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from inbox_actors.ai_agent import knowledge, pricing
from inbox_actors.ai_agent.knowledge import MAX_PASSAGE, TARGET_PASSAGE, split_passages
from inbox_actors.bot.settings import BotRefusal
from inbox_actors.use_cases.outcomes import Refused
from inbox_actors.use_cases.pricing_sheets import csv_items

HEADER = "name,price,currency,unit,valid_from,valid_until,notes"


# -- splitting -----------------------------------------------------------------------------------------------


def test_text_before_any_heading_is_headed_by_the_title_and_headings_start_sections():
    body = "Welcome to the shop.\n\n# Opening hours\nMonday to Friday,\n9 to 5.\n\n## Holidays ##\nClosed."
    assert split_passages("Shop guide", body) == [
        ("Shop guide", "Welcome to the shop."),
        ("Opening hours", "Monday to Friday,\n9 to 5."),
        ("Holidays", "Closed."),
    ]


def test_small_paragraphs_of_a_section_are_merged_but_never_across_a_heading():
    body = "First.\n\nSecond.\n\n\n\nThird.\n# Next\nFourth."
    assert split_passages("T", body) == [("T", "First.\n\nSecond.\n\nThird."), ("Next", "Fourth.")]


def test_paragraphs_are_merged_only_up_to_the_target_size():
    paragraph = "word " * 100  # 499 characters once trimmed
    passages = split_passages("T", f"{paragraph}\n\n{paragraph}\n\n{paragraph}")
    assert len(passages) == 3 and all(len(text) <= TARGET_PASSAGE for _, text in passages)
    short = split_passages("T", "a" * 300 + "\n\n" + "b" * 300 + "\n\n" + "c" * 300)
    assert [len(text) for _, text in short] == [602, 300]


def test_a_long_paragraph_is_cut_at_sentence_ends_never_mid_word():
    sentences = [f"Sentence number {n} tells the customer something useful about prices." for n in range(60)]
    paragraph = " ".join(sentences)
    passages = split_passages("Prices", paragraph)
    assert len(passages) > 1
    assert all(len(text) <= MAX_PASSAGE for _, text in passages)
    assert all(text.endswith(".") for _, text in passages)  # each piece ends where a sentence does
    assert " ".join(text for _, text in passages) == paragraph  # nothing lost, nothing repeated


def test_a_sentence_longer_than_a_passage_is_cut_at_spaces_and_a_single_huge_word_where_it_must():
    long_sentence = " ".join(["lorem"] * 400)  # 2,399 characters, no sentence end
    passages = split_passages("T", long_sentence)
    assert all(len(text) <= MAX_PASSAGE for _, text in passages)
    assert all(set(text.split()) == {"lorem"} for _, text in passages)
    huge = split_passages("T", "x" * 2_500)
    assert [len(text) for _, text in huge] == [1_000, 1_000, 500]


def test_headings_need_a_space_and_code_fences_hide_them():
    body = "#hashtag is not a heading\n\n```\n# a comment in code\n\nstill code\n```\n\n####### seven is text"
    passages = split_passages("T", body)
    assert [heading for heading, _ in passages] == ["T"]
    assert "# a comment in code\n\nstill code" in passages[0][1]
    assert "####### seven is text" in passages[0][1]


def test_a_heading_with_nothing_under_it_makes_no_passage_and_an_empty_one_is_the_title():
    assert split_passages("T", "# Only a heading") == []
    assert split_passages("T", "# A\n# B\ntext\n#\nmore") == [("B", "text"), ("T", "more")]


def test_line_endings_of_any_kind_split_paragraphs():
    assert split_passages("T", "one\r\n\r\ntwo\r\rthree") == [("T", "one\n\ntwo\n\nthree")]


def test_a_question_s_words_are_joined_by_or_without_the_operator_itself():
    assert knowledge.question_words("What are your prices? Prices, or discounts!") == \
        "what or are or your or prices or discounts"
    assert knowledge.question_words("  ?!  ") == ""
    assert knowledge.question_words("snake_case -minus \"quoted\"") == "snake or case or minus or quoted"


# -- prices --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("stored", "shown"), [("19.0000", "19.00"), ("2.1250", "2.125"), ("0.5000", "0.50"),
                                                ("0.0000", "0.00"), ("1234567890.1234", "1234567890.1234")])
def test_a_price_is_shown_exactly_with_at_least_two_decimals(stored, shown):
    assert pricing.price_text(Decimal(stored)) == shown


def test_a_price_query_matches_whole_words_and_prefixes_with_plurals_trimmed():
    words, prefixes = pricing.query_terms("Haircuts or boxes, a kid")
    assert words == "haircuts or boxes or a or kid"
    assert prefixes == "'haircuts':* | 'haircut':* | 'boxes':* | 'boxe':* | 'box':* | 'kid':*"
    assert pricing.query_terms("!!") == ("", "")


# -- CSV -----------------------------------------------------------------------------------------------------


def test_a_csv_is_read_row_by_row_with_its_row_numbers():
    text = f"\ufeff{HEADER}\r\nHaircut,19.00,EUR,per visit,2026-01-01,2026-12-31,\"Adults, all lengths\"\r\n\r\n" \
           " Beard trim ,7,EUR\r\n"
    assert pricing.read_csv(text) == [
        (2, {"name": "Haircut", "price": "19.00", "currency": "EUR", "unit": "per visit", "valid_from": "2026-01-01",
             "valid_until": "2026-12-31", "notes": "Adults, all lengths"}),
        (4, {"name": "Beard trim", "price": "7", "currency": "EUR", "unit": "", "valid_from": "", "valid_until": "",
             "notes": ""}),
    ]


def test_the_columns_from_unit_on_may_be_left_out_of_the_header():
    assert pricing.read_csv("name,price,currency\nTea,2.5,GBP\n") == [
        (2, {"name": "Tea", "price": "2.5", "currency": "GBP"})]
    items = csv_items("name,price,currency\nTea,2.5,GBP\n")
    assert items == [pricing.Item("Tea", Decimal("2.5"), "GBP")]


@pytest.mark.parametrize("text", ["", "\n", "name,price\nTea,2\n", "Name,Price,Currency\n", "price,name,currency\n",
                                  f"{HEADER},extra\n", "name,price,currency,valid_from\n"])
def test_a_header_other_than_the_columns_in_order_is_refused(text):
    with pytest.raises(BotRefusal) as refused:
        pricing.read_csv(text)
    assert (refused.value.status, refused.value.code) == (400, "invalid_csv")
    assert refused.value.message.startswith("Row 1 must be the header name,price,currency,unit,")


def test_a_row_with_more_fields_than_the_header_or_broken_quoting_names_its_row():
    with pytest.raises(BotRefusal, match=r"^Row 3 has 4 fields; the header has 3\.$"):
        pricing.read_csv("name,price,currency\nTea,2,GBP\nCake,3,GBP,slice\n")
    with pytest.raises(BotRefusal, match=r"^Row 2 is not valid CSV"):
        pricing.read_csv('name,price,currency\n"Tea,2,GBP\n')


def test_too_many_rows_or_bytes_are_refused():
    rows = "".join(f"Item {n},1.00,EUR\n" for n in range(pricing.MAX_ITEMS + 1))
    with pytest.raises(BotRefusal, match="more than 5,000 rows"):
        pricing.read_csv("name,price,currency\n" + rows)
    assert len(csv_items("name,price,currency\n" + rows.rsplit("Item", 1)[0])) == pricing.MAX_ITEMS
    with pytest.raises(BotRefusal, match="larger than 1,048,576 bytes"):
        pricing.read_csv("name,price,currency,unit,valid_from,valid_until,notes\n" + "x" * pricing.MAX_CSV_BYTES)


@pytest.mark.parametrize(("row", "field"), [
    (",1.00,EUR", "name must be"), ("Tea,,EUR", "price must be"), ("Tea,-1,EUR", "price must be"),
    ("Tea,1.23456,EUR", "price must be"), ("Tea,1,000.00,EUR", None), ("Tea,1.00,eur", "currency must be"),
    ("Tea,1.00,EURO", "currency must be"), ("Tea,1.00,EUR," + "u" * 41, "unit must be"),
    ("Tea,1.00,EUR,,2026-02-30", "valid_from must be"), ("Tea,1.00,EUR,,,31/12/2026", "valid_until must be"),
    ("Tea,1.00,EUR,,2026-03-01,2026-02-01", "valid_until must be on or after valid_from"),
    ("Tea,1.00,EUR,,,," + "n" * 501, "notes must be"),
])
def test_a_bad_row_refuses_the_whole_file_naming_the_row_and_the_field(row, field):
    refused = csv_items(f"{HEADER}\nGood,1.00,EUR\n{row}\n")
    assert isinstance(refused, Refused) and (refused.status, refused.code) == (400, "invalid_csv")
    assert refused.message.startswith("Row 3")
    if field is not None:
        assert refused.message.startswith(f"Row 3: {field}"), refused.message


def test_a_good_file_gives_its_items_trimmed_with_exact_prices_and_dates():
    items = csv_items(f"{HEADER}\n  Men's   haircut ,19.00,EUR, per visit ,2026-01-01,,Walk-ins welcome\n")
    assert items == [pricing.Item("Men's haircut", Decimal("19.00"), "EUR", "per visit", date(2026, 1, 1), None,
                                  "Walk-ins welcome")]


def test_an_export_is_read_back_as_the_same_items():
    items = [pricing.PriceItem(1, "Haircut, long", "19.00", "EUR", "per visit", date(2026, 1, 1), None, 'Say "hi"'),
             pricing.PriceItem(2, "Tea", "2.125", "GBP", "", None, date(2026, 12, 31), "")]
    text = pricing.write_csv(items)
    assert text.splitlines()[0] == HEADER
    again = csv_items(text)
    assert [(i.name, pricing.price_text(i.price), i.currency, i.unit, i.valid_from, i.valid_until, i.notes)
            for i in again] == [(i.name, i.price, i.currency, i.unit, i.valid_from, i.valid_until, i.notes)
                                for i in items]
