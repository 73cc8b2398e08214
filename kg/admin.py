"""The moderation queue in the Django admin. Users with ``kg.moderate`` decide; everyone else
with view rights sees a read-only queue. The lists filter by URL only on their own filters and
ids (``LimitedLookupsAdmin``), never on words drawn from a thought."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.widgets import ForeignKeyRawIdWidget
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import (
    BooleanField,
    Case,
    ExpressionWrapper,
    ForeignKey,
    IntegerField,
    Q,
    QuerySet,
    Value,
    When,
)
from django.forms import ModelChoiceField, ModelForm
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html

from kg import selectors, services
from kg.models import (
    Blocklist,
    CandidateStatus,
    Edge,
    EdgeCandidate,
    Entity,
    EntityCandidate,
    Observation,
    ObservationCandidate,
)
from kg.selectors.visibility import memories_visible_to
from legacymind.admin.lookups import LimitedLookupsAdmin
from legacymind.admin.search import PRIVATE, without_private_words
from legacymind.users import signed_in

MODERATE = "kg.moderate"
PENDING_FIRST = Case(
    When(status=CandidateStatus.PENDING, then=Value(0)),
    default=Value(1),
    output_field=IntegerField(),
)


class ConfidenceFilter(admin.SimpleListFilter):
    title = "confidence"
    parameter_name = "confidence"
    BANDS = {"high": (0.8, 1.01), "medium": (0.5, 0.8), "low": (0.0, 0.5)}

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("high", "≥ 0.8"), ("medium", "0.5 to 0.8"), ("low", "< 0.5")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        band = self.BANDS.get(self.value() or "")
        if band is None:
            return queryset
        return queryset.filter(confidence__gte=band[0], confidence__lt=band[1])


class CandidateAdmin(LimitedLookupsAdmin):
    kind = "entity"
    list_filter = ("status", "origin", ConfidenceFilter, "created_at")
    date_hierarchy = "created_at"
    url_filterable = ("id", "staged_by_thought", "promoted")
    ordering = (PENDING_FIRST.asc(), "-created_at")
    list_select_related = ("staged_by_thought", "reviewed_by", "promoted")
    actions = ["approve_selected", "reject_selected"]
    list_per_page = 50

    def has_moderate_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm(MODERATE)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # candidates come from extraction, not from a form

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_moderate_permission(request)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Not kg.moderate: a deletion leaves no review record, so it takes the real delete
        # permission, which the "KG moderators" group does not have (superusers do).
        return super().has_delete_permission(request, obj)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        # Decisions go through the review page so they promote and blocklist consistently.
        return [f.name for f in self.model._meta.fields] + ["source_thought", "review_link"]

    @admin.display(description="source thought")
    def source_thought(self, obj: Any) -> str:
        thought = obj.staged_by_thought
        if thought is None:
            return "—"
        return "(a private thought)" if thought.is_private else thought.content[:2000]

    @admin.display(description="review")
    def review_link(self, obj: Any) -> str:
        url = reverse(f"admin:kg_{self.model._meta.model_name}_review", args=[obj.pk])
        return format_html('<a href="{}">review</a>', url)

    def _decide(self, request: HttpRequest, queryset: QuerySet[Any], decision: str) -> None:
        items = [services.DecisionItem(c.pk, self.kind, decision) for c in queryset]
        outcomes = services.candidates_decide(items=items, reviewer=signed_in(request))
        done = [o for o in outcomes if o.ok]
        if done:
            self.message_user(request, f"{decision}: {len(done)} candidate(s).", messages.SUCCESS)
        for failed in (o for o in outcomes if not o.ok):
            self.message_user(request, failed.detail, messages.ERROR)

    @admin.action(description="Approve selected candidates", permissions=["moderate"])
    def approve_selected(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        self._decide(request, queryset, "approve")

    @admin.action(description="Reject selected candidates (blocklist)", permissions=["moderate"])
    def reject_selected(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        self._decide(request, queryset, "reject")

    def get_urls(self) -> list[URLPattern]:
        name = f"kg_{self.model._meta.model_name}_review"
        review = self.admin_site.admin_view(self.review_view)
        return [path("<int:pk>/review/", review, name=name), *super().get_urls()]

    def review_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        cand = get_object_or_404(
            self.model.objects.select_related("staged_by_thought", "reviewed_by"), pk=pk
        )
        can_moderate = self.has_moderate_permission(request)
        if request.method == "POST":
            if not can_moderate:
                raise PermissionDenied
            return self._review_post(request, cand)
        suggestions: list[Any] = []
        if self.kind == "entity" and cand.status == CandidateStatus.PENDING:
            found = selectors.suggestions_for([cand], viewer=request.user)
            suggestions = found.get(cand.pk, [])
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"Review {cand}",
            "candidate": cand,
            "kind": self.kind,
            "thought": cand.staged_by_thought,
            # A private thought stays with its owner; moderators see only that it exists.
            "thought_hidden": bool(
                cand.staged_by_thought
                and cand.staged_by_thought.is_private
                and cand.staged_by_thought.owner_id != request.user.pk
            ),
            "suggestions": suggestions,
            "can_moderate": can_moderate,
            "is_pending": cand.status == CandidateStatus.PENDING,
        }
        return TemplateResponse(request, "admin/kg/candidate_review.html", context)

    def _review_post(self, request: HttpRequest, cand: Any) -> HttpResponse:
        decision = request.POST.get("decision", "")
        canonical = request.POST.get("canonical_id", "").strip()
        if decision not in ("approve", "reject", "alias") or (
            canonical and not canonical.isdigit()
        ):
            self.message_user(request, "Choose approve, reject or alias (with a canonical id).",
                              messages.ERROR)  # fmt: skip
            return HttpResponseRedirect(request.path)
        try:
            outcome = services.candidate_decide(
                kind=self.kind,
                candidate_id=cand.pk,
                decision=decision,
                reviewer=signed_in(request),
                note=request.POST.get("note", ""),
                canonical_id=int(canonical) if canonical else None,
            )
        except services.DecisionError as exc:
            self.message_user(request, exc.detail, messages.ERROR)
            return HttpResponseRedirect(request.path)
        self.message_user(request, outcome.detail, messages.SUCCESS)
        changelist = reverse(f"admin:kg_{self.model._meta.model_name}_changelist")
        return HttpResponseRedirect(changelist)


@admin.register(EntityCandidate)
class EntityCandidateAdmin(CandidateAdmin):
    kind = "entity"
    # The review link (the only way to alias) next to the name: last, it fell off a laptop's
    # screen on the wider edge list.
    list_display = (
        "name", "review_link", "entity_type", "status", "confidence", "origin", "provider",
        "created_at", "reviewed_by",
    )  # fmt: skip
    search_fields = ("name", "entity_type", "review_note")


@admin.register(EdgeCandidate)
class EdgeCandidateAdmin(CandidateAdmin):
    kind = "edge"
    list_display = (
        "source_name", "rel_type", "target_name", "evidence", "review_link", "status",
        "confidence", "origin", "provider", "created_at", "reviewed_by",
    )  # fmt: skip
    search_fields = ("source_name", "target_name", "rel_type", "evidence", "review_note")


@admin.register(ObservationCandidate)
class ObservationCandidateAdmin(CandidateAdmin):
    kind = "observation"
    list_display = (
        "entity_name", "description", "review_link", "status", "confidence", "origin",
        "created_at", "reviewed_by",
    )  # fmt: skip
    search_fields = ("name", "entity_name", "description", "review_note")


class VisibleEntityIdWidget(ForeignKeyRawIdWidget):
    """A raw id box that names the entity only for someone who may see it. Django's widget
    looks the name up among all entities, so ``observation/add/?entity=<id>`` named one drawn
    from another user's private thought; a hidden id now gets no name, like a missing one."""

    def __init__(self, *args: Any, visible: QuerySet[Entity], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.visible = visible

    def label_and_url_for_value(self, value: Any) -> tuple[str, str]:
        try:
            self.visible.get(pk=value)
        except (ValueError, ValidationError, Entity.DoesNotExist):
            return "", ""
        return super().label_and_url_for_value(value)


class EntityAdminForm(ModelForm):  # type: ignore[type-arg]
    """Refuses a name and type another entity has, as the API does (``entity_clash``)."""

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.instance.pk is None or {"name", "entity_type"} & set(self.changed_data):
            clash = services.entity_clash(
                name=data.get("name") or "",
                entity_type=data.get("entity_type") or "concept",
                entity_id=self.instance.pk,
            )
            if clash is not None:
                raise ValidationError(clash.detail)
        return data


class MemoryAdmin(LimitedLookupsAdmin):
    """A memory drawn from a private thought is its owner's alone, in the admin as in the API:
    staff (superusers included, as the thoughts admin never shows private words either) see
    only the memories the API would show them, and may point a memory only at an entity they
    can see (a hidden one is refused like a missing id, as the API's ``VisibleEntity`` does)."""

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        model = self.model
        visible = (
            selectors.visible_edges(request.user)
            if model is Edge
            else memories_visible_to(request.user, model)
        )
        return super().get_queryset(request).filter(pk__in=visible.values("pk"))

    def formfield_for_foreignkey(
        self, db_field: ForeignKey[Any, Any], request: HttpRequest, **kwargs: Any
    ) -> ModelChoiceField[Any] | None:
        if db_field.related_model is Entity:
            visible = memories_visible_to(request.user, Entity)
            kwargs["queryset"] = visible
            kwargs["widget"] = VisibleEntityIdWidget(
                db_field.remote_field, self.admin_site, using=kwargs.get("using"), visible=visible
            )
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


@admin.register(Entity)
class EntityAdmin(MemoryAdmin):
    list_display = ("name", "entity_type", "significance", "embedding_dim", "created_at")
    list_filter = ("entity_type", "embedding_dim", "created_at")
    search_fields = ("name", "description")
    list_select_related = ("source_thought",)
    url_filterable = ("id", "source_thought")
    readonly_fields = (
        "embedding", "embedding_provider", "embedding_model", "embedding_dim", "embedded_at",
    )  # fmt: skip
    raw_id_fields = ("source_thought",)
    form = EntityAdminForm

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        """Through the API's services: the name is cleaned and may not clash, and a new entity
        or one whose text ("name (entity_type)") changed is embedded after commit."""
        changes = {name: form.cleaned_data[name] for name in form.changed_data}
        if change:
            entity = services.entity_update(entity=Entity.objects.get(pk=obj.pk), **changes)
        else:
            entity, _ = services.entity_upsert(
                name=changes.pop("name"),
                entity_type=changes.pop("entity_type", "concept"),
                upsert=False,
                viewer=request.user,
            )
            if changes:
                entity = services.entity_update(entity=entity, **changes)
        obj.pk = entity.pk
        obj.refresh_from_db()


@admin.register(Observation)
class ObservationAdmin(MemoryAdmin):
    """An observation the user may see can belong to an entity they may not (drawn from
    someone's private thought): that entity is named by a placeholder, and its name is not
    searched. Its form, like any, takes no hidden entity, so saving it means choosing another
    entity or none (the API's PATCH, which may leave the entity out, keeps it)."""

    list_display = ("name", "entity_shown", "confidence", "created_at")
    list_filter = ("created_at",)
    search_fields = ("name", "description", "entity__name")
    list_select_related = ("entity", "source_thought")
    url_filterable = ("id", "entity", "source_thought")
    readonly_fields = ("embedding", "embedding_provider", "embedding_model", "embedding_dim")
    raw_id_fields = ("entity", "source_thought")

    def _entity_visible(self, request: HttpRequest) -> Q:
        return Q(entity_id__in=memories_visible_to(request.user, Entity).values("pk"))

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        seen = ExpressionWrapper(self._entity_visible(request), output_field=BooleanField())
        return super().get_queryset(request).annotate(entity_visible=seen)

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Any], search_term: str
    ) -> tuple[QuerySet[Any], bool]:
        results, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        results = without_private_words(
            results,
            search_term,
            words_public=Q(entity__isnull=True) | self._entity_visible(request),
            metadata=("name", "description"),
        )
        return results, may_have_duplicates

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if not change or {"name", "description"} & set(form.changed_data):  # as EntityAdmin
            services.observation_embed_on_commit(observation_id=obj.pk)

    # Not sortable: ordering by the entity's name would place a hidden name among the others.
    @admin.display(description="entity")
    def entity_shown(self, obj: Any) -> str | None:
        if obj.entity_id is None:
            return None  # the admin's empty value
        return str(obj.entity) if obj.entity_visible else PRIVATE


@admin.register(Edge)
class EdgeAdmin(MemoryAdmin):
    list_display = ("source", "rel_type", "target", "confidence", "created_at")
    list_filter = ("rel_type", "created_at")
    search_fields = ("source__name", "target__name", "rel_type")
    list_select_related = ("source", "target")
    url_filterable = ("id", "source", "target", "source_thought")
    raw_id_fields = ("source", "target", "source_thought")


@admin.register(Blocklist)
class BlocklistAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    list_display = ("item", "kind", "created_by", "created_at")
    list_filter = ("kind", "created_at")
    search_fields = ("item", "reason")
    list_select_related = ("created_by",)
