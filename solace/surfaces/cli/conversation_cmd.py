"""``solace topics|facts|notes``: the user's side of curation, facts and notes.

These commands open the home's substrate and rebuild the conversation projection alone
(no models, no actors: they are quick), then make the application API's calls over it
(:class:`~solace.app.Layers`), which append the user's decisions as events.
User-side curation sets ``keepInMemoryManuallySet`` / ``deprecatedManuallySet``
exactly as the REPL's ``/promote`` and friends do. While ``solace serve`` or ``solace run
--serve`` holds the home, they ask that process over HTTP instead (the default scope
only); while a process that does not serve holds it, they refuse (one line, exit 1).

Every command takes ``--home DIR`` (default ``~/.solace``) and the scope options
``--user``, ``--agent``, ``--org`` (defaults: the single-user scope of ``solace run``).
None of them creates a home: the read-only ones (``topics list|show``, ``facts get``,
``notes show``) refuse a home with no substrate, the others a ``--home`` that is not an
existing directory.
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import trio

from solace.app import Layers, NotFoundError, Solace
from solace.app.api import FactView
from solace.app.topics import NotesView, TopicCalls, TopicDetail, format_topic_detail
from solace.clock import WallClock
from solace.conversation import (
    DEFAULT_SCOPE,
    Scope,
    open_conversations,
)
from solace.conversation.formatting import format_notes
from solace.home import Home
from solace.models import Guard, HashingEmbedder, NoLLM, WordPieceTokenizer
from solace.offload import Offloader
from solace.surfaces.cli.errors import CliError, UsageError, guarded
from solace.surfaces.cli.options import (
    add_common,
    config_of,
    existing_home,
    finish,
    open_home_substrate,
)
from solace.surfaces.cli.remote import Remote, local_or_remote, quoted
from solace.surfaces.cli.views import (
    format_fact_views,
    format_topic_views,
    topic_views_from_json,
)
from solace.surfaces.repl_commands import REPL_COMMANDS, handle_repl_line

__all__ = ["handle_repl_line", "register", "repl_commands"]

Action = Callable[[Solace, argparse.Namespace], Awaitable[str]]
RemoteAction = Callable[[Remote, argparse.Namespace], str]


def repl_commands() -> Mapping[str, str]:
    """The REPL commands this layer handles, with one-line help each.

    Dispatch a typed line with ``await handle_repl_line(rt.conversations, session_id,
    line)``: it returns the text to print, or None if the line is not one of these.
    """
    return REPL_COMMANDS


#: The commands that only read: they refuse a home with no substrate.
READ_ONLY = frozenset({("topics", "list"), ("topics", "show"), ("facts", "get"),
                       ("notes", "show")})


def _scoped(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--user", default=DEFAULT_SCOPE.user, metavar="USER",
                        help=f"scope: the user (default {DEFAULT_SCOPE.user})")
    parser.add_argument("--agent", default=DEFAULT_SCOPE.agent, metavar="AGENT",
                        help=f"scope: the agent (default {DEFAULT_SCOPE.agent})")
    parser.add_argument("--org", default=DEFAULT_SCOPE.org, metavar="ORG",
                        help=f"scope: the organisation (default {DEFAULT_SCOPE.org})")
    add_common(parser)


def register(subparsers: Any) -> None:
    """Add ``topics``, ``facts`` and ``notes`` to the ``solace`` command line."""
    topics = subparsers.add_parser("topics", help="list, show and curate topics")
    tsub = topics.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = tsub.add_parser("list", help="this scope's topics and their memory state")
    _scoped(p)
    p.set_defaults(func=_command(_topics_list, _remote_topics_list))
    p = tsub.add_parser("show", help="a topic's summary, flags, notes and thread")
    p.add_argument("topic_id")
    _scoped(p)
    p.set_defaults(func=_command(_topics_show, _remote_topics_show))
    for action, text in (
        ("promote", "keep a topic in cross-session memory"),
        ("demote", "take a topic out of memory"),
        ("deprecate", "mark a topic's decision reversed (title only in memory)"),
        ("undeprecate", "lift a deprecation (the user's alone)"),
    ):
        p = tsub.add_parser(action, help=text)
        p.add_argument("topic_id")
        _scoped(p)
        p.set_defaults(func=_command(_topics_curate, _remote_topics_curate), curation=action)

    facts = subparsers.add_parser("facts", help="durable facts (never summarised)")
    fsub = facts.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = fsub.add_parser("set", help="create or replace a fact")
    p.add_argument("key")
    p.add_argument("value")
    _scoped(p)
    p.set_defaults(func=_command(_facts_set, _remote_facts_set))
    p = fsub.add_parser("get", help="all facts, or one by key")
    p.add_argument("key", nargs="?")
    _scoped(p)
    p.set_defaults(func=_command(_facts_get, _remote_facts_get))
    p = fsub.add_parser("unset", help="delete a fact")
    p.add_argument("key")
    _scoped(p)
    p.set_defaults(func=_command(_facts_unset, _remote_facts_unset))

    notes = subparsers.add_parser("notes", help="a topic's notes")
    nsub = notes.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = nsub.add_parser("show", help="active and archived notes of a topic")
    p.add_argument("topic_id")
    _scoped(p)
    p.set_defaults(func=_command(_notes_show, _remote_notes_show))
    p = nsub.add_parser("add", help="append to a topic's active notes")
    p.add_argument("topic_id")
    p.add_argument("text")
    _scoped(p)
    p.set_defaults(func=_command(_notes_add, _remote_notes_add))
    p = nsub.add_parser("replace", help="replace a topic's active notes")
    p.add_argument("topic_id")
    p.add_argument("text")
    _scoped(p)
    p.set_defaults(func=_command(_notes_replace, _remote_notes_replace))


def _command(action: Action,
             remote: RemoteAction | None = None) -> Callable[[argparse.Namespace], int]:
    def func(args: argparse.Namespace) -> int:
        finish(args)
        try:
            scope = Scope(args.user, args.agent, args.org)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        config = config_of(args)
        read_only = (args.command, args.action) in READ_ONLY
        root = existing_home(args.home, config, substrate=read_only)
        out = local_or_remote(
            root, lambda: trio.run(_run, Home.at(root, config), scope, args, action),
            None if remote is None else lambda server: _remotely(server, scope, args, remote))
        print(out)
        return 0

    return guarded(func)


async def _run(home: Home, scope: Scope, args: argparse.Namespace, action: Action) -> str:
    cfg = home.config
    async with await open_home_substrate(home) as sub:
        tokenizer = WordPieceTokenizer(cfg.models.embedder_path)
        conv = await open_conversations(
            substrate=sub, config=cfg.conversation, llm=NoLLM(), embedder=HashingEmbedder(),
            tokenizer=tokenizer, guard=Guard(tokenizer=tokenizer), offloader=Offloader(1),
            clock=WallClock(), snapshot=home.conversation_snapshot,  # read, never written here
        )
        return await action(Solace(Layers(conversations=conv), scope), args)


async def _topics_list(app: Solace, args: argparse.Namespace) -> str:
    return format_topic_views(app.topics())


async def _topics_show(app: Solace, args: argparse.Namespace) -> str:
    return format_topic_detail(TopicCalls(app).topic(args.topic_id))


async def _topics_curate(app: Solace, args: argparse.Namespace) -> str:
    topic = await app.curate(args.topic_id, args.curation)
    return f"{topic.topic_id}: {topic.state}"


async def _facts_set(app: Solace, args: argparse.Namespace) -> str:
    fact = await app.set_fact(args.key, args.value)
    return f"{fact.key} = {fact.value}"


async def _facts_get(app: Solace, args: argparse.Namespace) -> str:
    facts = app.facts()
    if args.key is None:
        return format_fact_views(facts)
    for fact in facts:
        if fact.key == args.key:
            return fact.value
    raise NotFoundError(f"no durable fact {args.key!r} for scope {app.scope.key}")


async def _facts_unset(app: Solace, args: argparse.Namespace) -> str:
    await app.unset_fact(args.key)
    return f"{args.key} unset"


def _notes(view: NotesView) -> str:
    return format_notes(view)


async def _notes_show(app: Solace, args: argparse.Namespace) -> str:
    return _notes(TopicCalls(app).notes(args.topic_id))


async def _notes_add(app: Solace, args: argparse.Namespace) -> str:
    await app.add_note(args.topic_id, args.text)
    return _notes(TopicCalls(app).notes(args.topic_id))


async def _notes_replace(app: Solace, args: argparse.Namespace) -> str:
    return _notes(await TopicCalls(app).replace_notes(args.topic_id, args.text))


# -- the same commands against a serving process (solace.surfaces.cli.remote) -------------------


def _remotely(server: Remote, scope: Scope, args: argparse.Namespace,
              remote: RemoteAction) -> str:
    if scope != DEFAULT_SCOPE:
        raise CliError(f"the home is served at {server.info.url}, which acts on the default "
                       f"scope only, not {scope.key}; stop the server to use --user, --agent "
                       "or --org")
    return remote(server, args)


def _remote_topics_list(server: Remote, args: argparse.Namespace) -> str:
    return format_topic_views(topic_views_from_json(server.call("GET", "/topics")["topics"]))


def _remote_topics_show(server: Remote, args: argparse.Namespace) -> str:
    answer = server.call("GET", f"/topics/{quoted(args.topic_id)}")
    return format_topic_detail(TopicDetail.from_json(answer))


def _remote_topics_curate(server: Remote, args: argparse.Namespace) -> str:
    answer = server.call("POST", f"/topics/{quoted(args.topic_id)}/curate",
                         body={"action": args.curation})
    (topic,) = topic_views_from_json([answer])
    return f"{topic.topic_id}: {topic.state}"


def _remote_facts_set(server: Remote, args: argparse.Namespace) -> str:
    fact = server.call("PUT", f"/facts/{quoted(args.key)}", body={"value": args.value})
    return f"{fact['key']} = {fact['value']}"


def _remote_facts_get(server: Remote, args: argparse.Namespace) -> str:
    if args.key is None:
        facts = server.call("GET", "/facts")["facts"]
        return format_fact_views([FactView(**f) for f in facts])
    return str(server.call("GET", f"/facts/{quoted(args.key)}")["value"])


def _remote_facts_unset(server: Remote, args: argparse.Namespace) -> str:
    server.call("DELETE", f"/facts/{quoted(args.key)}")
    return f"{args.key} unset"


def _remote_notes(answer: dict[str, object]) -> str:
    return _notes(NotesView.from_json(answer))


def _remote_notes_show(server: Remote, args: argparse.Namespace) -> str:
    return _remote_notes(server.call("GET", f"/topics/{quoted(args.topic_id)}/notes"))


def _remote_notes_add(server: Remote, args: argparse.Namespace) -> str:
    return _remote_notes(server.call("POST", f"/topics/{quoted(args.topic_id)}/notes",
                                     body={"text": args.text}))


def _remote_notes_replace(server: Remote, args: argparse.Namespace) -> str:
    return _remote_notes(server.call("PUT", f"/topics/{quoted(args.topic_id)}/notes",
                                     body={"text": args.text}))
