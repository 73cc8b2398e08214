"""Which thoughts a memory was drawn from, as a viewer may know them: a source thought is named
only to its owner (to anyone else its id names a thought they cannot open, and says that it
exists). The API's fields and the pages both ask here."""

from __future__ import annotations

import uuid
from typing import Any

from legacymind.users import Viewer


def own_source_ids(viewer: Viewer, *rows: Any) -> set[uuid.UUID]:
    """The source thoughts of ``rows`` (entities, observations, edges) that are ``viewer``'s
    own, found in one query."""
    # Imported here: the thoughts selectors read memories through ``kg.selectors``, which
    # exports this function.
    from thoughts.selectors.visibility import own_thought_ids

    return own_thought_ids(viewer, (row.source_thought_id for row in rows))
