"""Thoughts in the Django admin: a read-only view for operators, with continuity links to click.

Thoughts are written by the think pipeline with their embedding, so the admin never edits one
(an edited text would no longer match its vector). Private thoughts belong to their owner: the
admin shows their metadata but not their words, and neither a search nor a URL filter ever
matches their content.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.contrib.auth.models import User
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from legacymind.admin.delete import deleted_without_names
from legacymind.admin.lookups import LimitedLookupsAdmin
from legacymind.admin.search import PRIVATE, without_private_words
from thoughts.models import Thought

NEIGHBOURS_SHOWN = 20


def _words(thought: Thought, text: Any, limit: int | None = None) -> str:
    if thought.is_private:
        return PRIVATE
    if text is None or text == "":
        return "—"
    text = text if isinstance(text, str) else json.dumps(text, indent=2, ensure_ascii=False)
    return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"


@admin.register(Thought)
class ThoughtAdmin(LimitedLookupsAdmin):
    list_display = (
        "short_content", "owner", "mode", "origin", "is_private", "session_id", "chain_id",
        "confidence", "embedding_model", "embedding_dim", "created_at",
    )  # fmt: skip
    list_filter = ("mode", "origin", "is_private", "created_at")
    search_fields = ("content", "session_id", "chain_id", "owner__username")
    list_select_related = ("owner",)
    date_hierarchy = "created_at"
    # Metadata only: a URL filter on the words (content, enriched content, analysis,
    # verification…) would answer whether a private thought says something.
    url_filterable = (
        "id", "owner", "session_id", "chain_id", "previous_thought", "revises_thought",
        "branch_from",
    )  # fmt: skip
    ordering = ("-created_at",)
    list_per_page = 50
    show_full_result_count = False  # a second COUNT(*) over every thought on each search
    _groups: tuple[tuple[str | None, tuple[str, ...]], ...] = (
        (None, ("owner", "text", "created_at", "is_private", "status", "tags")),
        ("Mode", ("mode", "submode", "origin", "confidence", "significance")),
        ("Continuity", ("session_id", "chain_id", "links_out", "links_in")),
        ("Embedding", ("embedding_provider", "embedding_model", "embedding_dim", "embedded_at")),
        ("Memory", ("injection_scale", "injected", "enriched", "access_count", "last_accessed")),
        ("Analysis", ("framework_enhanced", "analysis", "verification_result")),
    )
    fieldsets = [(title, {"fields": fields}) for title, fields in _groups]
    # Nothing is editable (see the module docstring).
    readonly_fields = [name for _, fields in _groups for name in fields]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Thought]:
        return super().get_queryset(request).defer("embedding")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> tuple[Any, Any, Any, Any]:
        # Under a private thought, counts only (legacymind.admin.delete).
        deleted, counts, perms, protected = super().get_deleted_objects(objs, request)
        if any(thought.is_private for thought in objs):
            deleted = deleted_without_names(
                objs, request, self.admin_site, hide=lambda thought: thought.is_private
            )
        return deleted, counts, perms, protected

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Thought], search_term: str
    ) -> tuple[QuerySet[Thought], bool]:
        results, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        # A private thought may match on its metadata, never on its words.
        results = without_private_words(
            results,
            search_term,
            words_public=Q(is_private=False),
            metadata=("session_id", "chain_id", "owner__username"),
        )
        return results, may_have_duplicates

    @admin.display(description="content")
    def short_content(self, obj: Thought) -> str:
        return _words(obj, obj.content, limit=80)

    @admin.display(description="content")
    def text(self, obj: Thought) -> str:
        return _words(obj, obj.content)

    @admin.display(description="enriched content")
    def enriched(self, obj: Thought) -> str:
        return _words(obj, obj.enriched_content)

    @admin.display(description="framework analysis")
    def analysis(self, obj: Thought) -> str:
        return _words(obj, obj.framework_analysis)

    @admin.display(description="verification")
    def verification_result(self, obj: Thought) -> str:
        return _words(obj, obj.verification)

    @admin.display(description="injected memories")
    def injected(self, obj: Thought) -> str:
        return _words(obj, obj.injected_memories or None)

    def _link(self, thought: Thought) -> str:
        url = reverse("admin:thoughts_thought_change", args=[thought.pk])
        label = f"{thought.created_at:%Y-%m-%d %H:%M} · {_words(thought, thought.content, 60)}"
        return format_html('<a href="{}">{}</a>', url, label)

    @admin.display(description="links to")
    def links_out(self, obj: Thought) -> str:
        names = ("previous_thought", "revises_thought", "branch_from")
        ids = {name: getattr(obj, f"{name}_id") for name in names}
        found = Thought.objects.defer("embedding").in_bulk([v for v in ids.values() if v])
        rows = []
        for name, pk in ids.items():
            if pk is not None:
                target = found.get(pk)
                shown = self._link(target) if target else format_html("{} (not written yet)", pk)
                rows.append((name.replace("_", " "), shown))
        if not rows:
            return "—"
        return format_html_join(mark_safe("<br>"), "{}: {}", rows)

    @admin.display(description="linked from")
    def links_in(self, obj: Thought) -> str:
        rows = []
        for label, related in (
            ("successor", obj.next_thoughts),
            ("revision", obj.revisions),
            ("branch", obj.branches),
        ):
            for neighbour in related.defer("embedding").order_by("created_at")[:NEIGHBOURS_SHOWN]:
                rows.append((label, self._link(neighbour)))
        if not rows:
            return "—"
        return format_html_join(mark_safe("<br>"), "{}: {}", rows)


admin.site.unregister(User)


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    """Django's user admin, but deleting a user lists only counts under one who has private
    thoughts: the memories drawn from those go too, and their names are the thoughts' words."""

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> tuple[Any, Any, Any, Any]:
        deleted, counts, perms, protected = super().get_deleted_objects(objs, request)
        private = set(
            Thought.objects.filter(owner__in=list(objs), is_private=True).values_list(
                "owner_id", flat=True
            )
        )
        if private:
            deleted = deleted_without_names(
                objs, request, self.admin_site, hide=lambda user: user.pk in private
            )
        return deleted, counts, perms, protected
