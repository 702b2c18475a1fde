"""The five actors on trio: Supervisor, Main, Mood, Time, Mouth.

Each actor owns one nursery holding its inbox, its reasoning loop and its memory's
fade coroutine (:mod:`solace.actors.base`); who perceives which event is one pure
routing table (:mod:`solace.actors.routing`). Public names are re-exported here;
submodules may change.
"""

from __future__ import annotations

from solace.actors.base import Actor as Actor
from solace.actors.base import Message as Message
from solace.actors.main_actor import MainActor as MainActor
from solace.actors.main_actor import UserLine as UserLine
from solace.actors.mood import MoodActor as MoodActor
from solace.actors.mouth import DraftMessage as DraftMessage
from solace.actors.mouth import Mouth as Mouth
from solace.actors.mouth import Speech as Speech
from solace.actors.mouth_filter import SpokenText as SpokenText
from solace.actors.mouth_filter import to_speech as to_speech
from solace.actors.routing import ACTOR_KINDS as ACTOR_KINDS
from solace.actors.routing import ACTORS as ACTORS
from solace.actors.routing import Perception as Perception
from solace.actors.routing import perceive as perceive
from solace.actors.routing import perceptions_for as perceptions_for
from solace.actors.routing import route as route
from solace.actors.session import MainSession as MainSession
from solace.actors.supervisor import Supervisor as Supervisor
from solace.actors.timekeeper import TimeActor as TimeActor
from solace.models.affect import Affect as Affect
from solace.models.affect import score_affect as score_affect

__all__ = [
    "ACTORS",
    "ACTOR_KINDS",
    "Actor",
    "Affect",
    "DraftMessage",
    "MainActor",
    "MainSession",
    "Message",
    "MoodActor",
    "Mouth",
    "Perception",
    "Speech",
    "SpokenText",
    "Supervisor",
    "TimeActor",
    "UserLine",
    "perceive",
    "perceptions_for",
    "route",
    "score_affect",
    "to_speech",
]
