"""The roles diagram of the README (``docs/roles.svg``), drawn from the roster.

Boxes are the roster's roles; an arrow goes from a role to every role that consumes (or
is addressed) a kind it publishes, labelled with those kinds. Bookkeeping kinds every
role shares (model-call records, failures, confirmations, cancels) are left out so the
task's path stays readable. Roles that only watch the bus sit in a band below. The
drawing is deterministic: a test regenerates it and compares (``python -m
artoo._diagram docs/roles.svg`` rewrites it).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from html import escape
from pathlib import Path

__all__ = ["BOOKKEEPING", "PLACES", "edges", "roster_svg"]

BOOKKEEPING = frozenset(
    {
        "LLMCall",
        "StepFailed",
        "RoleFailed",
        "ConfirmationRequest",
        "ConfirmationDecision",
        "TaskCancelled",
        "TicketResolved",
        "MegramRecalled",
        "JudgeObservation",
        "PlanRejected",
    }
)
"""Kinds left out of the drawing (each role's own records and the failure protocol)."""

HOST = "host"


def edges() -> dict[tuple[str, str], list[str]]:
    """``(sender, receiver) → kinds`` from the roster's declarations (bookkeeping left
    out); the host publishes the UserRequest."""
    from artoo.actors.roles.roster import ROSTER

    receivers: dict[str, list[str]] = defaultdict(list)
    for spec in ROSTER:
        for taken in (*spec.role.consumes, *spec.role.addressed):
            receivers[taken.__name__].append(spec.role.name)
    out: dict[tuple[str, str], list[str]] = defaultdict(list)
    senders = [(HOST, ["UserRequest"])] + [
        (spec.role.name, [k.__name__ for k in spec.role.publishes]) for spec in ROSTER
    ]
    for sender, kinds in senders:
        for kind in kinds:
            if kind in BOOKKEEPING:
                continue
            for receiver in receivers.get(kind, []):
                if receiver != sender:
                    out[(sender, receiver)].append(kind)
    return dict(out)


PLACES: dict[str, tuple[int, int]] = {
    HOST: (0, 0),
    "queen": (1, 0),
    "perceiver": (2, 0),
    "planner": (3, 0),
    "dispatcher": (4, 0),
    "executor": (5, 0),
    "memory": (2, 2),
    "ggs": (3, 2),
    "meta_validator": (4, 2),
    "agent_validator": (5, 2),
    "dreamer": (2, 3),
}
"""Where each role of the task's path sits (column, row): the task goes right along the
top, its results come back left along the bottom, and the GGS sends the next round up.
A role missing here is drawn in the band of roles that watch the bus."""
_W, _H, _GAP_X, _GAP_Y, _MARGIN = 130, 36, 96, 74, 24


def _border(cx: float, cy: float, tx: float, ty: float) -> tuple[float, float]:
    """Where the segment from a box's centre towards ``(tx, ty)`` leaves the box."""
    dx, dy = tx - cx, ty - cy
    if dx == 0 and dy == 0:
        return cx, cy
    scale = min(
        (_W / 2) / abs(dx) if dx else float("inf"), (_H / 2) / abs(dy) if dy else float("inf")
    )
    return cx + dx * scale, cy + dy * scale


def roster_svg() -> str:
    """The diagram as SVG text."""
    from artoo.actors.roles.roster import ROSTER

    names = [spec.role.name for spec in ROSTER]
    pairs = {spec.role.name for spec in ROSTER if spec.per_pair}
    links = edges()
    placed = [n for n in [HOST, *names] if n in PLACES]
    watchers = [n for n in names if n not in PLACES]
    rows = 1 + max(PLACES[n][1] for n in placed)
    centre: dict[str, tuple[float, float]] = {}
    for name in placed:
        col, row = PLACES[name]
        centre[name] = (
            _MARGIN + col * (_W + _GAP_X) + _W / 2,
            _MARGIN + row * (_H + _GAP_Y) + _H / 2,
        )
    band_y = _MARGIN + rows * (_H + _GAP_Y)
    for i, name in enumerate(watchers):
        centre[name] = (_MARGIN + i * (_W + _GAP_X) + _W / 2, band_y + 26 + _H / 2)
    columns = 1 + max(PLACES[n][0] for n in placed)
    width = _MARGIN * 2 + max(columns, len(watchers)) * (_W + _GAP_X) - _GAP_X
    height = band_y + 26 + _H + _MARGIN
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif" font-size="12">',
        "<defs><marker id='a' viewBox='0 0 10 10' refX='10' refY='5' markerWidth='7' "
        "markerHeight='7' orient='auto-start-reverse'><path d='M0,0 L10,5 L0,10 z' "
        "fill='#555'/></marker></defs>",
        '<rect width="100%" height="100%" fill="white"/>',
    ]
    for (a, b), kinds in sorted(links.items()):
        (ax, ay), (bx, by) = centre[a], centre[b]
        both = (b, a) in links  # two arrows between the same boxes: bend them apart
        length = max(1.0, ((bx - ax) ** 2 + (by - ay) ** 2) ** 0.5)
        nx, ny = (by - ay) / length, (ax - bx) / length
        bend = 24 if both else 0
        mx, my = (ax + bx) / 2 + nx * bend, (ay + by) / 2 + ny * bend
        x1, y1 = _border(ax, ay, mx, my)
        x2, y2 = _border(bx, by, mx, my)
        lx, ly = (x1 + x2) / 2 + nx * (bend / 2 + 4), (y1 + y2) / 2 + ny * (bend / 2 + 4)
        steep = abs(by - ay) > abs(bx - ax)  # a label beside a steep arrow, not across it
        anchor = ("start" if nx > 0 else "end") if steep else "middle"
        out.append(
            f'<path d="M{x1:.0f},{y1:.0f} Q{mx:.0f},{my:.0f} {x2:.0f},{y2:.0f}" fill="none" '
            'stroke="#555" stroke-width="1.1" marker-end="url(#a)"/>'
        )
        names = sorted(set(kinds))  # one kind a line, the block above the arrow's middle
        top = ly - 3 - 10 * (len(names) - 1)
        lines = "".join(
            f'<tspan x="{lx:.0f}" y="{top + 10 * i:.0f}">{escape(k)}</tspan>'
            for i, k in enumerate(names)
        )
        out.append(f'<text text-anchor="{anchor}" font-size="9" fill="#8a4b00">{lines}</text>')
    out.append(
        f'<text x="{_MARGIN}" y="{band_y + 14:.0f}" fill="#333">watching the bus (a tap, '
        "or the failure protocol), outside the task's path:</text>"
    )
    for name, (cx, cy) in centre.items():
        fill = "#f4f4f4" if name == HOST else "#eef3fb"
        shown = f"{name} ×pairs" if name in pairs else name
        out.append(
            f'<rect x="{cx - _W / 2:.0f}" y="{cy - _H / 2:.0f}" width="{_W}" height="{_H}" '
            f'rx="6" fill="{fill}" stroke="#3d5a80"/>'
        )
        out.append(
            f'<text x="{cx:.0f}" y="{cy + 4:.0f}" text-anchor="middle" font-weight="bold">'
            f"{escape(shown)}</text>"
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":  # python -m artoo._diagram docs/roles.svg
    Path(sys.argv[1]).write_text(roster_svg(), encoding="utf-8")
