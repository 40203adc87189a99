"""Contact field rules: what a contact may hold, how values are normalised, and the sentence for each refusal."""

import pytest

from inbox_actors.domain import contact_fields as fields


def test_name_is_trimmed_and_required():
    assert fields.contact_name("  Asha Rao ") == "Asha Rao"
    with pytest.raises(fields.InvalidName, match="Name cannot be empty"):
        fields.contact_name("   ")
    with pytest.raises(fields.InvalidName, match="Name must be a string"):
        fields.contact_name(None)


@pytest.mark.parametrize("check, limit, error", [
    (fields.contact_name, fields.MAX_NAME, fields.InvalidName),
    (fields.company, fields.MAX_COMPANY, fields.InvalidCompany),
    (fields.status, fields.MAX_STATUS, fields.InvalidStatus),
    (fields.notes, fields.MAX_NOTES, fields.InvalidNotes),
])
def test_text_fields_have_a_length_limit(check, limit, error):
    assert check("x" * limit) == "x" * limit
    with pytest.raises(error, match=f"at most {limit} characters"):
        check("x" * (limit + 1))


@pytest.mark.parametrize("text", ["nul\x00byte", "bell\x07", "line\nbreak", "del\x7f"])
def test_control_characters_are_refused_in_single_line_fields(text):
    with pytest.raises(fields.InvalidName, match="control characters"):
        fields.contact_name(text)


def test_notes_keep_line_breaks_and_tabs_but_not_nul():
    assert fields.notes("first line\nsecond\tcolumn") == "first line\nsecond\tcolumn"
    with pytest.raises(fields.InvalidNotes, match="control characters"):
        fields.notes("nul\x00")


@pytest.mark.parametrize("clear", [None, "", "   "])
def test_optional_fields_clear_with_null_or_empty_text(clear):
    assert fields.email(clear) is None
    assert fields.company(clear) is None
    assert fields.notes(clear) is None


def test_status_cannot_be_cleared():
    with pytest.raises(fields.InvalidStatus, match="Status cannot be empty"):
        fields.status("")
    with pytest.raises(fields.InvalidStatus, match="Status must be a string"):
        fields.status(None)


@pytest.mark.parametrize("good", ["a@b.co", "first.last+tag@mail.example.org", " padded@example.com "])
def test_plausible_emails_pass(good):
    assert fields.email(good) == good.strip()


@pytest.mark.parametrize("bad", ["plain", "two@@example.com", "a@b", "a b@example.com", "@example.com",
                                 "a@.com", "a@example.", "a@b@c.com"])
def test_malformed_emails_are_refused(bad):
    with pytest.raises(fields.InvalidEmail, match="not a valid email address"):
        fields.email(bad)


def test_email_has_a_length_limit():
    with pytest.raises(fields.InvalidEmail, match="at most 254"):
        fields.email("a" * 250 + "@example.com")


def test_tag_list_trims_and_drops_duplicates_ignoring_case():
    assert fields.tag_list([" VIP ", "vip", "lead", "Lead", "new"]) == ("VIP", "lead", "new")


@pytest.mark.parametrize("bad, sentence", [
    ("", "Tags cannot be empty"),
    ("a,b", "contains a comma"),
    ("x" * (fields.MAX_TAG + 1), f"at most {fields.MAX_TAG} characters"),
    (3, "Tag must be a string"),
])
def test_bad_tags_are_refused(bad, sentence):
    with pytest.raises(fields.InvalidTag, match=sentence):
        fields.tag_list(["ok", bad])


def test_tags_must_be_a_list_not_a_string():
    with pytest.raises(fields.InvalidTag, match="array of strings"):
        fields.tag_list("vip")


def test_a_contact_holds_a_bounded_number_of_tags():
    fields.tag_list([f"t{i}" for i in range(fields.MAX_TAGS)])
    with pytest.raises(fields.TooManyTags):
        fields.tag_list([f"t{i}" for i in range(fields.MAX_TAGS + 1)])
    with pytest.raises(fields.TooManyTags):
        fields.add_tags([f"t{i}" for i in range(fields.MAX_TAGS)], ["one more"])


def test_add_tags_reports_only_the_new_ones_and_keeps_stored_spelling():
    tags, new = fields.add_tags(("VIP", "lead"), ["vip", "Paid", "paid", "lead"])
    assert tags == ("VIP", "lead", "Paid")
    assert new == ("Paid",)


def test_replace_tags_keeps_stored_spelling_of_kept_tags_and_reports_new_ones():
    tags, new = fields.replace_tags(("VIP", "lead"), ["vip", "churned"])
    assert tags == ("VIP", "churned")
    assert new == ("churned",)


def test_remove_tag_ignores_case_and_missing_tags():
    assert fields.remove_tag(("VIP", "lead"), "vip") == ("lead",)
    assert fields.remove_tag(("VIP", "lead"), "absent") == ("VIP", "lead")


def test_attribute_changes_validate_keys_and_values():
    assert fields.attribute_changes({" plan ": "gold", "seats": 3, "ratio": 0.5, "trial": False, "old": None}) == {
        "plan": "gold", "seats": 3, "ratio": 0.5, "trial": False, "old": None}


@pytest.mark.parametrize("changes, sentence", [
    ({}, "at least one attribute"),
    ({"": 1}, "Attribute names cannot be empty"),
    ({"k" * (fields.MAX_ATTRIBUTE_KEY + 1): 1}, f"at most {fields.MAX_ATTRIBUTE_KEY} characters"),
    ({"nested": {"a": 1}}, "must be a string, a number, a boolean or null"),
    ({"list": [1, 2]}, "must be a string, a number, a boolean or null"),
    ({"long": "x" * (fields.MAX_ATTRIBUTE_TEXT + 1)}, f"at most {fields.MAX_ATTRIBUTE_TEXT} characters"),
    ({"nul": "a\x00b"}, "NUL"),
    ({"huge": 2**60}, "too large"),
    ({"a": 1, " a ": 2}, "given twice"),
])
def test_bad_attribute_changes_are_refused(changes, sentence):
    with pytest.raises(fields.InvalidAttribute, match=sentence):
        fields.attribute_changes(changes)


def test_attributes_must_be_an_object():
    with pytest.raises(fields.InvalidAttribute, match="must be an object"):
        fields.attribute_changes(["a"])


def test_merge_attributes_sets_replaces_and_removes_with_null():
    current = {"plan": "silver", "seats": 2, "legacy": True}
    merged = fields.merge_attributes(current, {"plan": "gold", "legacy": None, "region": "south", "absent": None})
    assert merged == {"plan": "gold", "seats": 2, "region": "south"}
    assert current == {"plan": "silver", "seats": 2, "legacy": True}, "the stored map is not changed in place"


def test_a_contact_holds_a_bounded_number_of_attributes():
    full = {f"k{i}": i for i in range(fields.MAX_ATTRIBUTES)}
    assert fields.merge_attributes(full, {"k0": None, "new": 1}) is not None
    with pytest.raises(fields.TooManyAttributes):
        fields.merge_attributes(full, {"one more": 1})
