"""Dialogue threads and their exchanges in the Django admin (read mostly: the service writes).

As in the Thought admin, a private thought's words are its owner's: exchanges show thoughts by
their ``__str__`` (which hides a private one's words), and a search matches a thought's words
only when that thought is not private."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest

from innervoice.models import DialogueExchange, DialogueThread
from legacymind.admin_search import without_private_words


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
class DialogueThreadAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
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
    readonly_fields = ("id", "started_at", "last_interaction", "closed_at")
    raw_id_fields = ("owner",)
    inlines = [ExchangeInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[DialogueThread]:
        return super().get_queryset(request).annotate(exchange_total=Count("exchanges"))

    @admin.display(description="exchanges", ordering="exchange_total")
    def exchange_count(self, obj: Any) -> int:
        return int(obj.exchange_total)


@admin.register(DialogueExchange)
class DialogueExchangeAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
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
    search_fields = ("thread__id", "thread__topic", "synthesis_thought__content")
    list_select_related = ("thread", "synthesis_thought", "feedback_thought")
    raw_id_fields = ("thread", "synthesis_thought", "feedback_thought")
    readonly_fields = ("created_at",)
    ordering = ("-created_at",)

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
