"""``POST /api/v1/inner-voice`` and the dialogue threads over HTTP. Views validate, call one
service or selector, and format."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agent.api.fields import ContractField
from agent.safety import Assessment, notice
from agent.schemas import SafetyNotice
from innervoice import selectors
from innervoice.models import DialogueExchange, DialogueThread
from innervoice.services import AskParams, inner_voice_ask
from innervoice.threads import thread_close, thread_delete
from legacymind.api.fields import StringField, UUIDStringField
from legacymind.api.inputs import Input, query_input
from legacymind.api.pagination import Pagination
from legacymind.api.schema import error
from legacymind.users import signed_in
from thoughts.api.read_inputs import TagsField, ThoughtRefField

QUERY_MAX = 4000


class InnerVoiceInput(Input):
    query = StringField(max_length=QUERY_MAX, help_text="The question; never stored or logged.")
    top_k = serializers.IntegerField(min_value=1, max_value=50, default=10)
    floor = serializers.FloatField(
        min_value=0.0,
        max_value=1.0,
        default=0.3,
        help_text="Lowest similarity kept; lowered by 0.05 (never below 0.15) when fewer than "
        "top_k snippets pass.",
    )
    mix = serializers.FloatField(
        min_value=0.0, max_value=1.0, default=0.6, help_text="Share of the snippets from the KG."
    )
    include_private = serializers.BooleanField(
        default=False,
        help_text="Also use your own private thoughts (never anyone else's); the stored "
        "thoughts are then private when one was used.",
    )
    include_tags = TagsField(required=False, help_text="Only thoughts with one of these tags.")
    exclude_tags = TagsField(required=False, help_text="No thoughts with one of these tags.")
    auto_extract_to_kg = serializers.BooleanField(default=True)
    previous_thought_id = ThoughtRefField(
        required=False, allow_null=True, help_text="One of your thoughts the synthesis follows."
    )
    include_feedback = serializers.BooleanField(default=True)
    feedback_max_lines = serializers.IntegerField(min_value=1, max_value=10, default=3)
    thread_id = UUIDStringField(
        required=False, allow_null=True, help_text="Continue this thread of yours."
    )
    new_thread = serializers.CharField(
        required=False,
        max_length=255,
        help_text="Start a thread on this topic. Without it or thread_id, your open thread "
        "continues unless idle longer than INNER_VOICE_TIMEOUT.",
    )

    # The rule validate() applies, in the schema's words.
    schema_rules = {
        "not": {
            "required": ["thread_id", "new_thread"],
            "properties": {"thread_id": {"type": "string"}},
        },
        "description": "thread_id (a thread) and new_thread together are a 400.",
    }

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("thread_id") and attrs.get("new_thread") is not None:
            raise serializers.ValidationError(
                {"new_thread": ["Give thread_id or new_thread, not both."]}
            )
        return attrs

    def params(self) -> AskParams:
        data = self.validated_data
        return AskParams(
            query=data["query"],
            top_k=data["top_k"],
            floor=data["floor"],
            mix=data["mix"],
            include_private=data["include_private"],
            include_tags=list(data.get("include_tags") or []),
            exclude_tags=list(data.get("exclude_tags") or []),
            auto_extract_to_kg=data["auto_extract_to_kg"],
            previous_thought_id=data.get("previous_thought_id"),
            include_feedback=data["include_feedback"],
            feedback_max_lines=data["feedback_max_lines"],
            thread_id=data.get("thread_id"),
            new_thread=data.get("new_thread"),
        )


class ThoughtRefOut(serializers.CharField):
    """A thought id in the ask's form, ``thoughts:<uuid>``, so that ids read from a thread
    compare equal to those the ask answered."""

    def to_representation(self, value: Any) -> str:
        return _ref(value)


class ExtractedOut(serializers.Serializer[Any]):
    status = serializers.ChoiceField(
        choices=["staged", "failed", "queued", "not_queued", "skipped"],
        help_text="staged: extraction ran in-process, counts are the new candidates it staged "
        "(0 when it found only names already pending or in the graph); failed: it ran in-process "
        "and no extractor answered (counts null); queued: a worker runs it (counts null); "
        "not_queued: the task broker was down, manage.py kg_extract takes it later (counts "
        "null); skipped: not requested or KG_AUTO_EXTRACT off.",
    )
    entities = serializers.IntegerField(allow_null=True)
    relationships = serializers.IntegerField(allow_null=True)


class ThreadRefOut(serializers.Serializer[Any]):
    id = serializers.UUIDField(source="thread.id")
    topic = serializers.CharField(source="thread.topic")
    position = serializers.IntegerField(help_text="This exchange's position in the thread.")


class SafetyOut(ContractField):
    """The distress detector's reading of the question, as the notice a client shows: the same
    ``SafetyNotice`` the journaling agent answers (level, category, message, resources; never the
    words that were matched)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault(
            "help_text",
            "The distress detector's reading of the question: show the resources beside the "
            "answer unless the level is none.",
        )
        super().__init__(SafetyNotice, **kwargs)

    def to_representation(self, value: Any) -> Any:
        return super().to_representation(notice(value) if isinstance(value, Assessment) else value)


class InnerVoiceOut(serializers.Serializer[Any]):
    # Renders an innervoice.services.AskResult.

    answer = serializers.CharField()
    synth_thought_id = ThoughtRefOut(source="synthesis.id")
    feedback = serializers.CharField(source="feedback.content", allow_null=True)
    feedback_thought_id = ThoughtRefOut(source="feedback.id", allow_null=True)
    sources_compact = serializers.CharField(
        source="selection.sources_compact",
        help_text="Up to 6 citations: thoughts:<id>, kge:<id>, kgo:<id>.",
    )
    synth_provider = serializers.CharField(help_text="cli, grok or offline-composer.")
    synth_model = serializers.CharField()
    embedding_dim = serializers.IntegerField()
    extracted = ExtractedOut()
    thread = ThreadRefOut(source="*")
    safety = SafetyOut()


def _ref(thought_id: Any) -> str:
    """A thought id as think and the ask answer it, which every endpoint that takes a thought
    id (``/api/v1/thoughts/{id}/`` included) takes as it is."""
    return f"thoughts:{thought_id}"


class InnerVoiceView(APIView):
    """Ask the inner voice: a synthesis over your thoughts and the KG, and a follow-up question,
    stored as two linked thoughts in a dialogue thread. The question itself is never stored."""

    @extend_schema(
        request=InnerVoiceInput,
        responses={
            201: InnerVoiceOut,
            404: error(
                "thread_id names no thread of yours, or previous_thought_id no thought of yours."
            ),
            409: error("thread_id names a closed (or timed-out) thread."),
            503: error("The query or the answer could not be embedded; nothing was stored."),
        },
    )
    def post(self, request: Request) -> Response:
        data = InnerVoiceInput(data=request.data)
        data.is_valid(raise_exception=True)
        result = inner_voice_ask(owner=signed_in(request), params=data.params())
        return Response(InnerVoiceOut(result).data, status=status.HTTP_201_CREATED)


class ThreadOut(serializers.ModelSerializer[DialogueThread]):
    exchange_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = DialogueThread
        fields = [
            "id", "topic", "status", "summary", "started_at", "last_interaction", "closed_at",
            "close_reason", "exchange_count",
        ]  # fmt: skip


class ExchangeOut(serializers.ModelSerializer[DialogueExchange]):
    synthesis_thought_id = ThoughtRefOut(read_only=True, help_text="thoughts:<uuid>")
    synthesis = serializers.CharField(source="synthesis_thought.content", read_only=True)
    feedback_thought_id = ThoughtRefOut(
        allow_null=True, read_only=True, help_text="thoughts:<uuid>"
    )
    feedback = serializers.SerializerMethodField()
    thoughts_provided = serializers.ListField(
        child=ThoughtRefOut(),
        read_only=True,
        help_text="Your thoughts among the snippets, as thoughts:<uuid>.",
    )
    memories_injected = serializers.ListField(
        child=serializers.CharField(),
        read_only=True,
        help_text="KG memories among the snippets, as kge:<id> or kgo:<id>.",
    )

    class Meta:
        model = DialogueExchange
        fields = [
            "position", "created_at", "synthesis_thought_id", "synthesis", "feedback_thought_id",
            "feedback", "thoughts_provided", "memories_injected", "summarized",
        ]  # fmt: skip

    def get_feedback(self, row: DialogueExchange) -> str | None:
        return row.feedback_thought.content if row.feedback_thought else None


class ExchangePageOut(serializers.Serializer[Any]):
    """A page of a thread's exchanges, in order, shaped like every paginated list."""

    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = ExchangeOut(many=True)


class ThreadDetailOut(ThreadOut):
    exchanges = serializers.SerializerMethodField()

    class Meta(ThreadOut.Meta):
        fields = [*ThreadOut.Meta.fields, "exchanges"]

    @extend_schema_field(ExchangePageOut)
    def get_exchanges(self, thread: DialogueThread) -> dict[str, Any]:
        page: dict[str, Any] = self.context["exchanges"]  # the view pages them
        return page


class ThreadFilters(Input):
    q = StringField(
        max_length=500,
        required=False,
        allow_blank=True,
        help_text="Only threads whose topic or summary, or one of whose stored syntheses or "
        "follow-up questions, contains this (any case).",
    )


THREAD_ID = OpenApiParameter("id", str, OpenApiParameter.PATH, description="The thread's id.")
# The detail pages its exchanges with the paginator every list uses: the same parameters.
EXCHANGE_PAGE = [
    OpenApiParameter(p["name"], p["schema"], OpenApiParameter.QUERY, description=p["description"])
    for p in Pagination().get_schema_operation_parameters(view=None)
]
NOT_FOUND = {404: error("No such thread, or not yours.")}


class ThreadViewSet(viewsets.GenericViewSet):  # type: ignore[type-arg]
    """Your inner-voice dialogue threads. Another user's thread answers 404."""

    serializer_class = ThreadOut
    pagination_class = Pagination  # the default, named: EXCHANGE_PAGE documents it too
    lookup_value_regex = "[^/]+"

    @extend_schema(parameters=[ThreadFilters], responses={200: ThreadOut(many=True)})
    def list(self, request: Request) -> Response:
        query = query_input(request, ThreadFilters, paged=True)
        rows = selectors.threads_list(user=signed_in(request), q=query.validated_data.get("q", ""))
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(ThreadOut(page, many=True).data)

    @extend_schema(
        parameters=[THREAD_ID, *EXCHANGE_PAGE], responses={200: ThreadDetailOut, **NOT_FOUND}
    )
    def retrieve(self, request: Request, pk: str) -> Response:
        thread = selectors.thread_get(user=signed_in(request), thread_id=pk)
        rows = self.paginate_queryset(selectors.thread_exchanges(thread=thread))
        exchanges = self.get_paginated_response(ExchangeOut(rows, many=True).data).data
        return Response(ThreadDetailOut(thread, context={"exchanges": exchanges}).data)

    @extend_schema(parameters=[THREAD_ID], responses={204: None, **NOT_FOUND})
    def destroy(self, request: Request, pk: str) -> Response:
        """Delete one of your threads and its exchanges; their thoughts stay yours."""
        thread_delete(thread=selectors.thread_get(user=signed_in(request), thread_id=pk))
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        request=None,
        parameters=[THREAD_ID],
        responses={
            200: ThreadOut,
            **NOT_FOUND,
            409: error("The thread is closed already."),
        },
    )
    @action(detail=True, methods=["post"])
    def close(self, request: Request, pk: str) -> Response:
        thread = selectors.thread_get(user=signed_in(request), thread_id=pk)
        thread_close(thread=thread)
        return Response(ThreadOut(selectors.thread_get(user=signed_in(request), thread_id=pk)).data)
