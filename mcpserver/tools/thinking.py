"""``legacymind_think``, ``legacymind_search`` and ``inner_voice``: the REST endpoints' inputs,
services and answers, as tools."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from innervoice.api import InnerVoiceInput, InnerVoiceOut
from innervoice.services import inner_voice_ask
from innervoice.threads import thread_close
from mcpserver.registry import Call, Tool, register
from thoughts.api.read import SearchOut, search_answer
from thoughts.api.read_inputs import SearchInput
from thoughts.api.think import ThinkView
from thoughts.api.think_out import ThinkOut, think_render
from thoughts.services import thought_think


def think(call: Call) -> dict[str, Any]:
    return think_render(thought_think(owner=call.user, params=call.form.params()))


def search(call: Call) -> dict[str, Any]:
    return search_answer(call.form, call.user)


class InnerVoiceToolInput(InnerVoiceInput):
    close_thread = serializers.BooleanField(
        default=False, help_text="Close the thread after this answer (the next ask starts one)."
    )


class InnerVoiceToolOut(InnerVoiceOut):
    thread_closed = serializers.BooleanField()


def inner_voice(call: Call) -> dict[str, Any]:
    result = inner_voice_ask(owner=call.user, params=call.form.params())
    closed = False
    if call.data["close_thread"]:
        thread_close(thread=result.thread)
        closed = True
    return {**InnerVoiceOut(result).data, "thread_closed": closed}


register(
    Tool(
        name="legacymind_think",
        description="Store a thought: the mode is chosen from the content and hint, it is "
        "embedded, linked (previous_thought_id, revises_thought, branch_from), related KG "
        "memories are injected (injection_scale 0-3), and with needs_verification a "
        "hypothesis is checked against the KG. Returns the thought id, mode, links, injected "
        "memories and telemetry (spec 002).",
        input=ThinkView.ThinkInput,
        output=ThinkOut,
        run=think,
    )
)
register(
    Tool(
        name="legacymind_search",
        description="KG memories (target entity, observation or mixed) and, with "
        "include_thoughts or target=thoughts, your thoughts nearest to a query, filtered by "
        "session, chain, links, origin, tags, confidence and date.",
        input=SearchInput,
        output=SearchOut,
        run=search,
        read_only=True,
    )
)
register(
    Tool(
        name="inner_voice",
        description="Ask the inner voice: a short answer grounded in your thoughts and the KG, "
        "with its sources and a follow-up question, stored as two linked thoughts in a "
        "dialogue thread (your open one, thread_id, or new_thread on a topic; close_thread "
        "ends it). The question itself is never stored.",
        input=InnerVoiceToolInput,
        output=InnerVoiceToolOut,
        run=inner_voice,
    )
)
