"""The nine tools of ``@modelcontextprotocol/server-memory``, same names and argument shapes,
backed by the KG: an entity is a KG entity, an observation a KG observation of it (named
"<entity>: <text>", so the same text on two entities is two observations), a relation a KG
edge. Writes go through ``mcpserver.kgwrites`` (direct, or staged for the moderators); reads
show what the caller may see, plus the caller's own pending items, marked pending (pending
observations under their entity's ``pendingObservations``)."""

from __future__ import annotations

from typing import Any

from mcpserver.registry import Tool, register
from mcpserver.tools.memory_server.common import observation_name
from mcpserver.tools.memory_server.inputs import (
    GRAPH,
    PAGE,
    RESULTS,
    AddObservations,
    CreateEntities,
    CreateRelations,
    DeleteEntities,
    DeleteObservations,
    DeleteRelations,
    OpenNodes,
    ReadGraph,
    SearchNodes,
)
from mcpserver.tools.memory_server.reads import open_nodes, read_graph, search_nodes
from mcpserver.tools.memory_server.writes import (
    add_observations,
    create_entities,
    create_relations,
    delete_entities,
    delete_observations,
    delete_relations,
)

__all__ = ["observation_name"]


def _drop_in(name: str, description: str, **kwargs: Any) -> None:
    register(Tool(name=name, description=description, drop_in=True, **kwargs))


_WRITES = (
    " A non-moderator's items are staged for the moderators (status pending); your reads show"
    " them marked pending (observations under pendingObservations)."
)
_drop_in("create_entities", "Create entities with observations." + _WRITES,
         input=CreateEntities, output=RESULTS, run=create_entities, idempotent=True)  # fmt: skip
_drop_in("create_relations", "Create relations (from, to, relationType) between entities." + _WRITES,
         input=CreateRelations, output=RESULTS, run=create_relations, idempotent=True)  # fmt: skip
_drop_in("add_observations", "Add observations to existing entities." + _WRITES,
         input=AddObservations, output=RESULTS, run=add_observations, idempotent=True)  # fmt: skip
_drop_in("delete_entities", "Delete entities and their relations (moderators).",
         input=DeleteEntities, output=RESULTS, run=delete_entities, destructive=True)  # fmt: skip
_drop_in("delete_observations", "Delete observations of entities (moderators).",
         input=DeleteObservations, output=RESULTS, run=delete_observations, destructive=True)  # fmt: skip
_drop_in("delete_relations", "Delete relations (moderators).",
         input=DeleteRelations, output=RESULTS, run=delete_relations, destructive=True)  # fmt: skip
_drop_in("read_graph", "The knowledge graph a page at a time (limit, cursor = nextCursor); "
         "your own pending items are on the first page, marked pending.",
         input=ReadGraph, output=PAGE, run=read_graph, read_only=True)  # fmt: skip
_drop_in("search_nodes", "Entities semantically nearest to a query (names, types, observations); "
         "your own pending items match by a word of the query.",
         input=SearchNodes, output=GRAPH, run=search_nodes, read_only=True)  # fmt: skip
_drop_in("open_nodes", "Entities by name, with their observations and the relations among them.",
         input=OpenNodes, output=GRAPH, run=open_nodes, read_only=True)  # fmt: skip
