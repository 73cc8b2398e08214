"""Services of the thoughts app: the think pipeline, the one write of a thought, its delete and
its KG extraction. The names below are the public surface."""

from thoughts.services.extract import thought_extract, thought_extract_on_commit
from thoughts.services.think import ThinkResult, thought_think
from thoughts.services.write import thought_create, thought_delete

__all__ = [
    "ThinkResult",
    "thought_create",
    "thought_delete",
    "thought_extract",
    "thought_extract_on_commit",
    "thought_think",
]
