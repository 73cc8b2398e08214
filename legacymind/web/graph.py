"""A small graph drawn as server-rendered SVG: the pages' chain and neighbourhood pictures.

Each node is a link, so the picture works without script and every node is reachable with the
keyboard (Tab) like any other link. The apps lay their graphs out (a tree, rings around an
entity); this module only holds the shapes and scales them to the picture."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

NODE_R = 16
MARGIN = 90  # room for a label of ~22 characters centred under an edge node


@dataclass
class Node:
    key: str
    label: str
    href: str | None  # None: shown, but not a page one can open (an unresolved link)
    title: str = ""
    classes: str = ""
    x: float = 0.0
    y: float = 0.0


@dataclass
class Edge:
    source: str
    target: str
    label: str = ""
    classes: str = ""
    # Filled by ``drawing``: the end points, shortened to the circles' rims.
    x1: float = 0.0
    y1: float = 0.0
    x2: float = 0.0
    y2: float = 0.0
    lx: float = 0.0
    ly: float = 0.0


@dataclass
class Drawing:
    nodes: list[Node]
    edges: list[Edge]
    width: float
    height: float
    label: str = ""
    node_r: int = NODE_R
    extra: dict[str, str] = field(default_factory=dict)


def drawing(nodes: list[Node], edges: list[Edge], *, label: str, step: float = 110) -> Drawing:
    """``nodes`` placed on a grid of ``step`` units (their x, y are grid positions, shifted so
    the smallest is 0), with the edges between placed nodes clipped to the circles."""
    left = min((n.x for n in nodes), default=0.0)
    top = min((n.y for n in nodes), default=0.0)
    for node in nodes:
        node.x, node.y = MARGIN + (node.x - left) * step, MARGIN / 2 + (node.y - top) * step
    at = {node.key: node for node in nodes}
    kept = [edge for edge in edges if edge.source in at and edge.target in at]
    for edge in kept:
        a, b = at[edge.source], at[edge.target]
        length = math.hypot(b.x - a.x, b.y - a.y) or 1.0
        dx, dy = (b.x - a.x) / length * NODE_R, (b.y - a.y) / length * NODE_R
        edge.x1, edge.y1, edge.x2, edge.y2 = a.x + dx, a.y + dy, b.x - dx, b.y - dy
        edge.lx, edge.ly = (a.x + b.x) / 2, (a.y + b.y) / 2 - 4
    width = max((n.x for n in nodes), default=0) + MARGIN
    height = max((n.y for n in nodes), default=0) + MARGIN / 2 + 20
    return Drawing(nodes, kept, width, height, label)


def ring(count: int, radius: float, *, offset: float = 0.0) -> list[tuple[float, float]]:
    """``count`` grid positions evenly around a circle of ``radius`` grid units."""
    return [
        (
            radius * math.cos(2 * math.pi * i / max(count, 1) + offset),
            radius * math.sin(2 * math.pi * i / max(count, 1) + offset),
        )
        for i in range(count)
    ]
