"""Dialogue threads and their exchanges in the Django admin: read-only, as the inner-voice
service writes them (an exchange links two thoughts of the thread's owner; an admin-made link
could put one user's private thought into another's dialogue history).

As in the Thought admin, a private thought's words are its owner's: exchanges show thoughts by
their ``__str__`` (which hides a private one's words), and a search matches a thought's words
only when that thought is not private. A thread's summary is folded from its syntheses, so it
is shown and searched only when none of them is private. A list's URL filters take only its
filters and ids (``LimitedLookupsAdmin``): ``?summary__startswith=`` would read a summary
folded from a private thought without showing it."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest

from innervoice.models import DialogueExchange, DialogueThread
from legacymind.admin.lookups import LimitedLookupsAdmin
from legacymind.admin.search import without_private_words

PRIVATE_SUMMARY = "(folded from a private thought: visible only to its owner)"
# A thread none of whose syntheses is private: only then may its summary's words be searched.
_SUMMARY_PUBLIC = ~Q(exchanges__synthesis_thought__is_private=True)


class ExchangeInline(admin.TabularInline):  # type: ignore[type-arg]
    model = DialogueExchange
    extra = 0
    fields = ("position", "synthesis_thought", "feedback_thought", "significance", "summarized")
    readonly_fields = fields
    ordering = ("position",)
    show_change_link = True
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Exchanges come from the inner-voice service, which links the two thoughts it wrote.
        return False


@admin.register(DialogueThread)
class DialogueThreadAdmin(LimitedLookupsAdmin):
    list_display = (
        "__str__",
        "owner",
        "status",
        "exchange_count",
        "started_at",
        "last_interaction",
        "close_reason",
    )
    list_filter = ("status", "close_reason", "started_at")
    search_fields = ("id", "topic", "summary", "owner__username")
    list_select_related = ("owner",)
    date_hierarchy = "last_interaction"
    url_filterable = ("id", "owner")
    fields = (
        "id", "owner", "topic", "status", "summary_shown", "started_at", "last_interaction",
        "closed_at", "close_reason",
    )  # fmt: skip
    readonly_fields = fields
    inlines = [ExchangeInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[DialogueThread]:
        return super().get_queryset(request).annotate(exchange_total=Count("exchanges"))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[DialogueThread], search_term: str
    ) -> tuple[QuerySet[DialogueThread], bool]:
        results, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        results = without_private_words(
            results,
            search_term,
            words_public=_SUMMARY_PUBLIC,
            metadata=("id", "topic", "owner__username"),
        )
        return results, may_have_duplicates

    @admin.display(description="exchanges", ordering="exchange_total")
    def exchange_count(self, obj: Any) -> int:
        return int(obj.exchange_total)

    @admin.display(description="summary")
    def summary_shown(self, obj: DialogueThread) -> str:
        if obj.exchanges.filter(synthesis_thought__is_private=True).exists():
            return PRIVATE_SUMMARY
        return obj.summary or "—"


@admin.register(DialogueExchange)
class DialogueExchangeAdmin(LimitedLookupsAdmin):
    list_display = (
        "__str__",
        "thread",
        "position",
        "synthesis_thought",
        "feedback_thought",
        "significance",
        "summarized",
        "created_at",
    )
    list_filter = ("summarized", "thread__status", "created_at")
    url_filterable = ("id", "thread", "synthesis_thought", "feedback_thought")
    search_fields = ("thread__id", "thread__topic", "synthesis_thought__content")
    list_select_related = ("thread", "synthesis_thought", "feedback_thought")
    ordering = ("-created_at",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[DialogueExchange], search_term: str
    ) -> tuple[QuerySet[DialogueExchange], bool]:
        results, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        # A word found only in a private synthesis thought's words must not count.
        results = without_private_words(
            results,
            search_term,
            words_public=Q(synthesis_thought__is_private=False),
            metadata=("thread__id", "thread__topic"),
        )
        return results, may_have_duplicates
