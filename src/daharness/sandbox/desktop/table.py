"""The accessibility tree as the paper's table: which elements are rows, and how they are written.

The pruning is the official agent's node filter (`mm_agents/accessibility_tree_wrap/heuristic_retrieve.py`,
`filter_nodes` with `check_image=True` on Ubuntu), so that set-of-mark numbers are the official ones on
the same tree: an element is kept when its tag is one a user acts on or reads, it is showing and visible,
enabled (or editable, expandable, checkable), has a name, a text (whitespace counts) or is an image, and
has a position of at least (0, 0) and a size (a position past the screen's edge counts too).
"""

from __future__ import annotations

from daharness.core.desktop import ScreenElement

_KEPT_TAGS = {
    "alert", "canvas", "check-box", "combo-box", "entry", "icon", "image", "paragraph", "scroll-bar",
    "section", "slider", "static", "table-cell", "terminal", "text",
    # Windows' UI Automation names, in the official list too (an Ubuntu tree has none of them)
    "netuiribbontab", "start", "trayclockwclass", "traydummysearchcontrol", "uiimage", "uiproperty",
    "uiribboncommandbar",
}  # fmt: skip
_KEPT_ENDINGS = ("item", "button", "heading", "label", "scrollbar", "searchbox", "textbox", "link",
                 "tabelement", "textfield", "textarea", "menu")  # fmt: skip
_ACTIONABLE = {"enabled", "editable", "expandable", "checkable"}
TABLE_HEADER = "TAG\tNAME\tPOSITION (top-left x & y)\tSIZE (width & height)\tTEXT"


def keeps(element: ScreenElement) -> bool:
    """Whether an element is a row of the table (the official agent's node filter, see the module doc)."""
    tag = element.tag
    kept_tag = tag.startswith("document") or tag.endswith(_KEPT_ENDINGS) or tag in _KEPT_TAGS
    states = set(element.states)
    return (
        kept_tag
        and {"showing", "visible"} <= states
        and bool(states & _ACTIONABLE)
        and bool(element.name or element.text or element.image)
        and element.x >= 0
        and element.y >= 0
        and element.width > 0
        and element.height > 0
    )


def linearize(elements: list[ScreenElement], *, index: bool = False) -> str:
    """The paper's table, one element per line, tab-separated; with `index`, numbered from 1 (som)."""
    lines = [("INDEX\t" if index else "") + TABLE_HEADER]
    for number, element in enumerate(elements, start=1):
        text = repr(element.text.strip())
        row = f"{element.tag}\t{element.name}\t({element.x}, {element.y})\t({element.width}, {element.height})\t{text}"
        lines.append(f"{number}\t{row}" if index else row)
    return "\n".join(lines)
