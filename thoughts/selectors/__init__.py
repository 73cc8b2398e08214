"""Reads of thoughts: who may see which, list filters, a thought's links and memories, its chain,
and search. One module per use case; the names below are the public surface."""

from thoughts.selectors.chain import (
    CHAIN_MAX_DEPTH,
    CHAIN_MAX_NODES,
    CHAIN_PREVIEW_CHARS,
    Chain,
    ChainNode,
    thought_chain,
)
from thoughts.selectors.explain import mode_reason
from thoughts.selectors.reads import (
    LINK_FIELDS,
    InjectedMemory,
    Link,
    ThoughtFilters,
    injected_memories,
    thought_get,
    thought_links,
    thoughts_filter,
    thoughts_list,
)
from thoughts.selectors.search import SEARCH_ORDERS, SEARCH_TARGETS, Hit, SearchResult, search
from thoughts.selectors.visibility import (
    own_thought_ids,
    thoughts_visible_to,
)

__all__ = [
    "CHAIN_MAX_DEPTH",
    "CHAIN_MAX_NODES",
    "CHAIN_PREVIEW_CHARS",
    "LINK_FIELDS",
    "SEARCH_ORDERS",
    "SEARCH_TARGETS",
    "Chain",
    "ChainNode",
    "Hit",
    "InjectedMemory",
    "Link",
    "SearchResult",
    "ThoughtFilters",
    "injected_memories",
    "mode_reason",
    "own_thought_ids",
    "search",
    "thought_chain",
    "thought_get",
    "thought_links",
    "thoughts_filter",
    "thoughts_list",
    "thoughts_visible_to",
]
