"""Finding the members a note mentions (`inbox_actors/team/mentions.py`): the two forms, where a mention may stand,
the longest name, shared names, and what the picker inserts; and a note's text cut at its mentions for showing."""

from __future__ import annotations

from inbox_actors.team.mentions import Directory, Member, Piece, pieces

ASHA, ASHA_RAO, SAM, SAM_TOO, AL, ZOE = 1, 2, 3, 4, 5, 6
TEAM = Directory([
    Member(ASHA, "Asha", "asha@example.com"), Member(ASHA_RAO, "Asha Rao", "rao@example.com"),
    Member(SAM, "Sam", None), Member(SAM_TOO, "sam", "sam.two@example.com"), Member(AL, "Al"),
    Member(ZOE, "Zoë [ops]", None)])


def named(text: str) -> list[tuple[int, list[tuple[int, int]]]]:
    return [(found.member_id, found.spans) for found in TEAM.find(text)]


def test_a_name_or_an_email_after_an_at_names_its_member_whatever_its_case():
    assert named("@asha can you call back?") == [(ASHA, [(0, 5)])]
    assert named("Ask @RAO@example.com.") == [(ASHA_RAO, [(4, 20)])]
    assert named("cc @Al, @Asha") == [(AL, [(3, 6)]), (ASHA, [(8, 13)])]
    assert named("(@Al)\n@al again") == [(AL, [(1, 4), (6, 9)])]  # twice: one mention, both places


def test_the_longest_name_the_text_goes_on_with_is_the_one_mentioned():
    assert named("@Asha Rao will call") == [(ASHA_RAO, [(0, 9)])]
    assert named("@Asha Ramos will call") == [(ASHA, [(0, 5)])]  # "Asha Ra…" is no name: Asha


def test_a_mention_stands_as_a_word():
    assert named("write to asha@example.com") == []  # an address in the text names nobody
    assert named("@Alice is new") == []  # Al, but the word goes on
    assert named("@Al.Smith") == [] and named("@Al-Smith") == []
    assert named("@Al. Then @Al-") == [(AL, [(0, 3), (10, 13)])]
    assert named("@Al's idea") == [(AL, [(0, 3)])]
    assert named("@@Al") == [] and named("@") == [] and named("a@") == []


def test_a_name_two_members_share_names_neither_and_no_shorter_one_either():
    assert named("@Sam please") == []
    assert named("@sam.two@example.com please") == [(SAM_TOO, [(0, 20)])]


def test_the_explicit_form_names_a_member_by_id_and_an_unknown_id_stays_text():
    assert named("@[Sam](member:3) and @[Sam](member:4)") == [(SAM, [(0, 16)]), (SAM_TOO, [(21, 37)])]
    assert named("@[Boss](member:99) hi") == []
    assert named("@[Asha](member:2)") == [(ASHA_RAO, [(0, 17)])]  # its display name is only what the writer saw
    assert named("@[](member:1) @[x](member:01) x@[Al](member:5)") == []


def test_what_the_picker_inserts_names_that_member_alone():
    members = {member.member_id: member for member in TEAM.by_id.values()}
    assert TEAM.handle(members[AL]) == "@Al"
    assert TEAM.handle(members[ASHA_RAO]) == "@Asha Rao"
    assert TEAM.handle(members[ZOE]) == "@Zoë [ops]"
    # "@Asha Rao…" would name Asha Rao, and two members are called Sam: the explicit form.
    assert TEAM.handle(members[ASHA]) == "@[Asha](member:1)"
    assert TEAM.handle(members[SAM]) == "@[Sam](member:3)"
    for member in members.values():
        inserted = TEAM.handle(member)
        assert named(f"see {inserted} today") == [(member.member_id, [(4, 4 + len(inserted))])], inserted
    # The explicit form's display name leaves out brackets and line breaks, which would end it.
    twins = Directory([Member(7, "Lee [night]"), Member(8, "lee [night]")])
    assert twins.handle(Member(7, "Lee [night]")) == "@[Lee night](member:7)"


def test_a_note_is_cut_at_its_stored_mentions_for_showing():
    text = "Hi @Al, ask @[Asha](member:1)"
    assert pieces(text, [(12, 29, ASHA), (3, 6, AL)]) == [
        Piece("Hi "), Piece("@Al", AL), Piece(", ask "), Piece("@[Asha](member:1)", ASHA)]
    # A span the text cannot hold, or one overlapping another, is left as text.
    assert pieces("@Al", [(0, 3, AL), (1, 2, ASHA), (2, 9, ZOE)]) == [Piece("@Al", AL)]
    assert pieces("", []) == []
