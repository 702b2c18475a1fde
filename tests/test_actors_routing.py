"""The routing table and Mood's scorer: a pure function of the event."""

from __future__ import annotations

from datetime import UTC, datetime

from solace.actors.routing import (
    Annotation,
    annotation_attrs,
    annotation_of,
    calendar_tags,
    consulted,
    perceive,
    route,
    speaker_of,
)
from solace.models.affect import score_affect
from substrate import Event

MAY_8 = datetime(2023, 5, 8, 14, 0, tzinfo=UTC).timestamp()


def ev(agent: str, kind: str, content: str, **attrs: str) -> Event:
    return Event(1, 0.0, agent, kind, content, attrs)


def test_messages_go_to_supervisor_and_main_and_emotional_ones_to_mood() -> None:
    assert route(ev("user", "message", "The meeting is at 3pm.")) == ("Supervisor", "Main")
    assert route(ev("Caroline", "message", "I am SO excited!!! I got promoted")) == (
        "Supervisor", "Main", "Mood",
    )


def test_speech_only_from_mouth_reaches_supervisor_main_and_mouth() -> None:
    assert route(ev("Mouth", "speech", "Hello")) == ("Supervisor", "Main", "Mouth")
    assert route(ev("Main", "speech", "Hello")) == ()


def test_two_actors_at_one_event_make_two_perceptions_of_it() -> None:
    event = ev("Caroline", "message", "I went to a pottery class with my kids.")
    perceptions = perceive(event)
    assert [p.agent for p in perceptions] == ["Supervisor", "Main"]
    assert {p.speaker for p in perceptions} == {"Caroline"}


def test_a_dated_message_reaches_time_tagged_with_its_calendar_and_no_feeling() -> None:
    event = Event(1, MAY_8, "Caroline", "message",
                  "I was so happy at the pottery class yesterday!", {})
    by_agent = {p.agent: p for p in perceive(event)}
    assert list(by_agent) == ["Supervisor", "Main", "Mood", "Time"]
    assert by_agent["Time"].tags == ("2023", "2023-05", "2023-05-07")
    assert by_agent["Time"].emotional_weight == 0.0
    affect = score_affect(event.content)
    for name in ("Supervisor", "Main", "Mood"):  # Mood's reading, as before
        assert (by_agent[name].emotional_weight, by_agent[name].tags) == (affect.weight,
                                                                          affect.tags)


def test_an_annotation_reaches_time_too() -> None:
    event = Event(1, MAY_8, "user", "message", "We met on 3 June 2022.", {})
    time = next(p for p in perceive(event, Annotation(0.7, ("wedding",))) if p.agent == "Time")
    assert time.emotional_weight == 0.7
    assert time.tags == ("2022", "2022-06", "2022-06-03", "wedding")


def test_calendar_tags_resolve_relative_dates_and_skip_what_anchors_nothing() -> None:
    assert calendar_tags("I moved here last month, in 2019 really", MAY_8) == (
        "2019", "2023", "2023-04")
    assert calendar_tags("See you on Friday, or recently, or in the summer", MAY_8) == ()
    assert route(ev("user", "message", "See you on Friday")) == ("Supervisor", "Main", "Time")


def test_draft_is_private_to_its_author() -> None:
    (p,) = perceive(ev("Main", "draft", "maybe say hi"))
    assert (p.agent, p.private) == ("Main", True)
    assert route(ev("someone", "draft", "x")) == ()


def test_time_cues_reach_time_and_main_and_bookkeeping_reaches_nobody() -> None:
    assert route(ev("Time", "cue", "It is Monday")) == ("Main", "Time")
    for kind in ("curation", "fade", "mood", "topic"):
        assert route(ev("Main", kind, "x")) == ()


def test_conversation_layer_messages_name_the_user_and_skip_logged_replies() -> None:
    user_msg = ev("Main", "message", "hi there", layer="conversation", role="user")
    assert speaker_of(user_msg) == "user"
    assert route(user_msg) == ("Supervisor", "Main")
    assert route(ev("Main", "message", "hello", role="assistant")) == ()
    assert route(ev("Main", "fact", "", op="$unset")) == ()


def test_mood_weight_and_tags_are_attached_to_every_perception() -> None:
    event = ev("Caroline", "message", "I was really scared after the accident")
    affect = score_affect(event.content)
    assert affect.weight > 0.5 and "fear" in affect.tags and "negative" in affect.tags
    for p in perceive(event):
        assert p.emotional_weight == affect.weight and p.tags == affect.tags


def test_annotation_overrides_weight_and_adds_tags_and_round_trips_as_str_attrs() -> None:
    attrs = annotation_attrs(0.9, ("birthday",))
    assert all(isinstance(v, str) for v in attrs.values())
    mood_event = Event(43, 0.0, "Mood", "mood", "", attrs)
    target, annotation = annotation_of(mood_event)  # type: ignore[misc]
    assert target == 42 and annotation == Annotation(0.9, ("birthday",))
    (p, *_rest) = perceive(ev("user", "message", "I am so happy"), annotation)
    assert p.emotional_weight == 0.9 and "birthday" in p.tags and "joy" in p.tags
    assert annotation_of(ev("user", "message", "x")) is None


def test_affect_is_deterministic_and_handles_negation() -> None:
    assert score_affect("I am happy") == score_affect("I am happy")
    assert score_affect("I am happy").valence > 0 > score_affect("I am not happy").valence
    assert score_affect("The meeting is at 3pm.").weight == 0.0
    assert score_affect("I am very happy").valence > score_affect("I am happy").valence


def test_perceptions_for_replays_an_agents_share_with_overrides_applied() -> None:
    from solace.actors.routing import perceptions_for

    events = [
        Event(1, 0.0, "user", "message", "hello there"),
        Event(2, 0.0, "Mood", "mood", "", annotation_attrs(0.75, ("greeting",))),
        Event(3, 0.0, "Time", "cue", "It is Monday"),
        Event(4, 0.0, "Main", "draft", "say hi back"),
    ]
    main = perceptions_for("Main", events)
    assert [e.entry_id for e, _ in main] == [1, 3, 4]
    assert main[0][1].emotional_weight == 0.75 and main[0][1].tags == ("greeting",)
    assert main[2][1].private
    assert [e.entry_id for e, _ in perceptions_for("Time", events)] == [3]
    assert perceptions_for("Mouth", events) == []


def test_a_question_asking_when_consults_time_and_nothing_else_does() -> None:
    for query in ("When did Melanie paint a sunrise?", "what year did you move?",
                  "I moved once. When was that?", "On which day did we meet?",
                  "How long ago was the trip?", "In what month was it?"):
        assert consulted("Main", query) == ("Time",), query
    for query in ("What did John eat?", "Whenever you like, tell me.",
                  "Where was the wedding?", "How long has she painted?"):
        assert consulted("Main", query) == (), query
    assert consulted("Time", "When did we meet?") == ()  # Time's own memory is asked anyway
