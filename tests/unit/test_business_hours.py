from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from inbox_actors.domain.business_hours import (
    BusinessHours,
    InvalidBusinessHours,
    Opening,
    business_hours_json,
    open_seconds_between,
    parse_business_hours,
    sla_deadline,
)

BERLIN = ZoneInfo("Europe/Berlin")
UTC = timezone.utc
HOUR = 3600
NINE_TO_SIX = [{"open": "09:00", "close": "18:00"}]
# Monday 2026-01-05 starts the week; January keeps Berlin on CET (UTC+1) throughout.
OFFICE = parse_business_hours(
    {"time_zone": "Europe/Berlin", "weekly": {day: NINE_TO_SIX for day in ("mon", "tue", "wed", "thu", "fri")}}
)


def berlin(day: int, hour: int, minute: int = 0, month: int = 1) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=BERLIN)


def hours(weekly: dict, holidays: tuple[str, ...] = (), time_zone: str = "Europe/Berlin") -> BusinessHours:
    return parse_business_hours({"time_zone": time_zone, "weekly": weekly, "holidays": list(holidays)})


def refusal(value: object) -> str:
    with pytest.raises(InvalidBusinessHours) as raised:
        parse_business_hours(value)
    return str(raised.value)


MON = {"mon": NINE_TO_SIX}
LUNCHTIME_OVERLAP = {"open": "09:00", "close": "12:30"}


@pytest.mark.parametrize(
    ("value", "sentence"),
    [
        ([], "business_hours must be an object or null."),
        ({"time_zone": "UTC", "weekly": MON, "tz": 1},
         "business_hours.tz is not a known field; use time_zone, weekly and holidays."),
        ({"weekly": MON}, "business_hours.time_zone is required."),
        ({"time_zone": "UTC"}, "business_hours.weekly is required."),
        ({"time_zone": 5, "weekly": MON}, 'business_hours.time_zone must be a string such as "Europe/Berlin".'),
        ({"time_zone": "Mars/Olympus", "weekly": MON},
         'business_hours.time_zone must be an IANA time zone name such as "Europe/Berlin".'),
        ({"time_zone": "localtime", "weekly": MON},
         'business_hours.time_zone must be an IANA time zone name such as "Europe/Berlin".'),
        ({"time_zone": "../etc/passwd", "weekly": MON},
         'business_hours.time_zone must be an IANA time zone name such as "Europe/Berlin".'),
        ({"time_zone": "UTC", "weekly": []}, "business_hours.weekly must be an object keyed by day, such as mon."),
        ({"time_zone": "UTC", "weekly": {"monday": NINE_TO_SIX}},
         "business_hours.weekly.monday is not a day; use mon, tue, wed, thu, fri, sat or sun."),
        ({"time_zone": "UTC", "weekly": {"mon": None}}, "business_hours.weekly.mon must be a list of openings."),
        ({"time_zone": "UTC", "weekly": {"mon": NINE_TO_SIX * 5}},
         "business_hours.weekly.mon may hold at most 4 openings."),
        ({"time_zone": "UTC", "weekly": {"mon": ["09:00-18:00"]}},
         "business_hours.weekly.mon[0] must be an object with open and close."),
        ({"time_zone": "UTC", "weekly": {"mon": [{"open": "09:00", "close": "18:00", "tz": "x"}]}},
         "business_hours.weekly.mon[0].tz is not a known field; use open and close."),
        ({"time_zone": "UTC", "weekly": {"mon": [{"open": "09:00"}]}},
         "business_hours.weekly.mon[0].close is required."),
        ({"time_zone": "UTC", "weekly": {"tue": [{"open": "9:00", "close": "18:00"}]}},
         'business_hours.weekly.tue[0].open must be a time "HH:MM" from 00:00 to 23:59.'),
        ({"time_zone": "UTC", "weekly": {"tue": [{"open": "24:00", "close": "24:00"}]}},
         'business_hours.weekly.tue[0].open must be a time "HH:MM" from 00:00 to 23:59.'),
        ({"time_zone": "UTC", "weekly": {"tue": [{"open": "09:00", "close": "24:01"}]}},
         'business_hours.weekly.tue[0].close must be a time "HH:MM" up to 24:00.'),
        ({"time_zone": "UTC", "weekly": {"mon": [{"open": "09:00", "close": "09:00"}]}},
         "business_hours.weekly.mon[0].close must be after open."),
        ({"time_zone": "UTC", "weekly": {"mon": [{"open": "12:00", "close": "18:00"}, LUNCHTIME_OVERLAP]}},
         "business_hours.weekly.mon[0] overlaps business_hours.weekly.mon[1]; openings of one day must not overlap."),
        ({"time_zone": "UTC", "weekly": {"mon": [], "sun": []}},
         "business_hours.weekly must hold at least one opening; send business_hours as null for no business hours."),
        ({"time_zone": "UTC", "weekly": MON, "holidays": None},
         'business_hours.holidays must be a list of dates "YYYY-MM-DD".'),
        ({"time_zone": "UTC", "weekly": MON, "holidays": ["2026-02-30"]},
         'business_hours.holidays[0] must be a date "YYYY-MM-DD".'),
        ({"time_zone": "UTC", "weekly": MON, "holidays": ["2026-01-01", "20261225"]},
         'business_hours.holidays[1] must be a date "YYYY-MM-DD".'),
        ({"time_zone": "UTC", "weekly": MON, "holidays": ["2026-12-25", "2026-01-01", "2026-12-25"]},
         "business_hours.holidays[2] repeats business_hours.holidays[0]."),
        ({"time_zone": "UTC", "weekly": MON, "holidays": ["2026-01-01"] * 367},
         "business_hours.holidays may hold at most 366 dates."),
    ],
)
def test_parse_refuses_with_a_sentence_naming_the_field(value: object, sentence: str) -> None:
    assert refusal(value) == sentence


def test_parse_sorts_and_round_trips_through_json() -> None:
    parsed = hours(
        {
            "sun": [],
            "fri": [{"open": "13:00", "close": "24:00"}, {"open": "08:30", "close": "13:00"}],
            "mon": NINE_TO_SIX,
        },
        holidays=("2026-12-25", "2026-01-01"),
        time_zone="Asia/Kolkata",
    )
    stored = business_hours_json(parsed)
    assert stored == {
        "time_zone": "Asia/Kolkata",
        "weekly": {
            "mon": [{"open": "09:00", "close": "18:00"}],
            "fri": [{"open": "08:30", "close": "13:00"}, {"open": "13:00", "close": "24:00"}],
        },
        "holidays": ["2026-01-01", "2026-12-25"],
    }
    assert list(stored["weekly"]) == ["mon", "fri"]
    assert parse_business_hours(stored) == parsed
    assert parsed.weekly["fri"][0] == Opening(open="08:30", close="13:00")
    assert parse_business_hours(None) is None and business_hours_json(None) is None


def test_without_business_hours_the_clock_runs_around_the_clock() -> None:
    since = datetime(2026, 1, 10, 23, 0, tzinfo=UTC)  # a Saturday night
    assert sla_deadline(since, 2 * HOUR, None) == datetime(2026, 1, 11, 1, 0, tzinfo=UTC)
    assert open_seconds_between(since, since + timedelta(hours=5), None) == 5 * HOUR


def test_deadline_inside_hours_counts_from_the_start_and_answers_in_utc() -> None:
    deadline = sla_deadline(berlin(5, 10), 2 * HOUR, OFFICE)
    assert deadline == datetime(2026, 1, 5, 11, 0, tzinfo=UTC)  # 12:00 in Berlin
    assert deadline.tzinfo == UTC


def test_deadline_before_opening_starts_counting_at_the_opening() -> None:
    assert sla_deadline(berlin(5, 7), HOUR, OFFICE) == berlin(5, 10)


def test_deadline_after_closing_rolls_to_the_next_day() -> None:
    assert sla_deadline(berlin(5, 19), HOUR, OFFICE) == berlin(6, 10)
    assert sla_deadline(berlin(5, 17), 2 * HOUR, OFFICE) == berlin(6, 10)  # one hour today, one tomorrow


def test_deadline_skips_the_weekend() -> None:
    assert sla_deadline(berlin(9, 17, 30), HOUR, OFFICE) == berlin(12, 9, 30)
    assert sla_deadline(berlin(10, 12), HOUR, OFFICE) == berlin(12, 10)  # a wait sent on Saturday


def test_deadline_skips_a_holiday() -> None:
    with_holiday = hours({day: NINE_TO_SIX for day in ("mon", "tue", "wed")}, holidays=("2026-01-06",))
    assert sla_deadline(berlin(5, 17), 2 * HOUR, with_holiday) == berlin(7, 10)


def test_deadline_skips_a_lunch_break() -> None:
    lunch = hours({"mon": [{"open": "13:00", "close": "17:00"}, {"open": "09:00", "close": "12:00"}]})
    assert sla_deadline(berlin(5, 11), 2 * HOUR, lunch) == berlin(5, 14)


def test_deadline_at_exactly_the_close_is_the_closing_instant() -> None:
    assert sla_deadline(berlin(5, 17), HOUR, OFFICE) == berlin(5, 18)


def test_deadline_spanning_several_days() -> None:
    assert sla_deadline(berlin(5, 9), 3 * 9 * HOUR + HOUR, OFFICE) == berlin(8, 10)
    assert sla_deadline(berlin(8, 12), 5 * 9 * HOUR, OFFICE) == berlin(15, 12)  # a full working week, Thu to Thu


def test_close_at_24_00_is_midnight_of_the_next_day() -> None:
    late = hours({"sat": [{"open": "20:00", "close": "24:00"}], "sun": [{"open": "00:00", "close": "02:00"}]})
    assert sla_deadline(berlin(10, 23), HOUR, late) == berlin(11, 0)
    assert sla_deadline(berlin(10, 23), 2 * HOUR, late) == berlin(11, 1)
    saturday_only = hours({"sat": [{"open": "20:00", "close": "24:00"}]})
    assert sla_deadline(berlin(10, 23), 2 * HOUR, saturday_only) == berlin(17, 21)


def test_spring_forward_counts_real_seconds() -> None:
    # 2026-03-29: Berlin clocks jump from 02:00 CET to 03:00 CEST (01:00 UTC); 01:00-05:00 local is 3 real hours.
    night = hours({"sun": [{"open": "01:00", "close": "05:00"}]})
    since = datetime(2026, 3, 29, 0, 0, tzinfo=UTC)  # 01:00 CET, the opening
    assert sla_deadline(since, 2 * HOUR, night) == datetime(2026, 3, 29, 2, 0, tzinfo=UTC)  # 04:00 CEST
    assert sla_deadline(since, 3 * HOUR, night) == datetime(2026, 3, 29, 3, 0, tzinfo=UTC)  # the close, 05:00 CEST
    assert open_seconds_between(since, since + timedelta(days=1), night) == 3 * HOUR


def test_opening_inside_the_spring_gap_moves_later_by_the_gap() -> None:
    gap = hours({"sun": [{"open": "02:30", "close": "04:00"}]})  # 02:30 does not exist that night: 03:30 CEST
    sunday = datetime(2026, 3, 29, 0, 0, tzinfo=UTC)
    assert sla_deadline(sunday, 10 * 60, gap) == datetime(2026, 3, 29, 1, 40, tzinfo=UTC)
    assert open_seconds_between(sunday, sunday + timedelta(days=1), gap) == 30 * 60


def test_fall_back_counts_real_seconds() -> None:
    # 2026-10-25: Berlin clocks go back from 03:00 CEST to 02:00 CET (01:00 UTC); 01:00-05:00 local is 5 real hours.
    night = hours({"sun": [{"open": "01:00", "close": "05:00"}]})
    since = datetime(2026, 10, 24, 23, 0, tzinfo=UTC)  # 01:00 CEST, the opening
    assert sla_deadline(since, 4 * HOUR, night) == datetime(2026, 10, 25, 3, 0, tzinfo=UTC)  # 04:00 CET
    assert sla_deadline(since, 5 * HOUR, night) == datetime(2026, 10, 25, 4, 0, tzinfo=UTC)  # the close, 05:00 CET
    assert open_seconds_between(since, since + timedelta(days=1), night) == 5 * HOUR


def test_open_seconds_inside_outside_and_spanning() -> None:
    assert open_seconds_between(berlin(5, 10), berlin(5, 11, 30), OFFICE) == 1.5 * HOUR
    assert open_seconds_between(berlin(10, 10), berlin(11, 20), OFFICE) == 0.0  # the weekend
    assert open_seconds_between(berlin(5, 19), berlin(6, 8), OFFICE) == 0.0  # overnight
    assert open_seconds_between(berlin(9, 17), berlin(12, 10), OFFICE) == 2 * HOUR  # Friday evening to Monday
    assert open_seconds_between(berlin(5, 12), berlin(5, 10), OFFICE) == 0.0


def test_long_wait_with_one_short_opening_a_week_and_many_holidays_finishes() -> None:
    # One hour every Wednesday; a year of holidays blocks the first 52 Wednesdays, so 720 hours need 720 more weeks.
    first_day = datetime(2026, 1, 5, tzinfo=UTC)
    holidays = tuple((first_day + timedelta(days=offset)).date().isoformat() for offset in range(366))
    sparse = hours({"wed": [{"open": "00:00", "close": "01:00"}]}, holidays=holidays, time_zone="UTC")
    first_open_wednesday = datetime(2027, 1, 6, tzinfo=UTC)
    deadline = sla_deadline(first_day, 30 * 24 * HOUR, sparse)
    assert deadline == first_open_wednesday + timedelta(weeks=719, hours=1)


def test_hours_without_openings_raise_instead_of_walking_forever() -> None:
    closed = BusinessHours(time_zone="UTC", weekly={})
    with pytest.raises(ValueError):
        sla_deadline(datetime(2026, 1, 5, tzinfo=UTC), HOUR, closed)
