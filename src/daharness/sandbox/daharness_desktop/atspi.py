"""The accessibility tree of the desktop's applications, read over the AT-SPI bus with jeepney.

The walk goes level by level and sends each level's calls in one go before reading the answers (an
application answers one call at a time, but the round trips overlap). Like the official server it
stops at depth 50 and at 1024 children of one element; unlike it, it does not descend below an element
that is off screen (its children are too), and an element that manages its descendants (a spreadsheet's
table of a billion cells) is asked for the cells it shows, through its Table interface, rather than for
all of its children.

An application's elements are read once per change: the connection listens to the applications' events
(`object:`, `window:`, `focus:`, registered with the registry so that their toolkits send them) and an
application is walked again only when it sent one since its last walk, or when the screen's windows
moved (the caller passes their geometry: a moved window sends no event, yet its elements' positions
change). A reader thread takes every message off the bus: answers for the walk, events for the marks.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Any

from jeepney import DBusAddress, HeaderFields, Message, MessageType, message_bus, new_method_call
from jeepney.io.blocking import DBusConnection

ACCESSIBLE = "org.a11y.atspi.Accessible"
_PROPERTIES = "org.freedesktop.DBus.Properties"
_REGISTRY = ("org.a11y.atspi.Registry", "/org/a11y/atspi/accessible/root")
_REGISTRATION = ("org.a11y.atspi.Registry", "/org/a11y/atspi/registry", "org.a11y.atspi.Registry")
# the events that tell an application's tree changed: every object, window and focus event
_EVENT_KINDS = ("object:", "window:", "focus:")
_EVENTS = "org.a11y.atspi.Event"
_EVENT_INTERFACES = ("Object", "Window", "Focus")
MAX_DEPTH = 50
MAX_CHILDREN = 1024
MAX_CELLS = 2000  # visible cells of one table (a full-screen spreadsheet shows about 1000)
MAX_TEXT = 4000
_TIMEOUT_S = 5.0
# AtspiStateType, in bit order (atspi-constants.h)
_STATE_NAMES = """invalid active armed busy checked collapsed defunct editable enabled expandable expanded
    focusable focused has_tooltip horizontal iconified modal multi_line multiselectable opaque pressed
    resizable selectable selected sensitive showing single_line stale transient vertical visible
    manages_descendants indeterminate required truncated animated invalid_entry supports_autocompletion
    selectable_text is_default visited checkable has_popup read_only"""
STATES = _STATE_NAMES.split()
_SHOWING = 1 << STATES.index("showing")
_MANAGES = 1 << STATES.index("manages_descendants")


_Ref = tuple[str, str, int, bool]  # bus name, object path, depth, whether it is a table's cell


class AccessibilityBus:
    """A connection to the desktop's accessibility bus, opened once (anonymous authentication)."""

    def __init__(self, socket_path: str, skip_applications: tuple[str, ...] = ()) -> None:
        sock = socket.socket(socket.AF_UNIX)
        sock.settimeout(_TIMEOUT_S)
        sock.connect(socket_path)
        sock.sendall(b"\0AUTH ANONYMOUS\r\n")
        answer = sock.recv(1024)
        if not answer.startswith(b"OK"):
            raise ConnectionError(f"the accessibility bus refused us: {answer[:80]!r}")
        sock.sendall(b"BEGIN\r\n")
        sock.settimeout(None)
        self._bus = DBusConnection(sock)
        self._skip = skip_applications
        self._lock = threading.Condition()
        self._waiting: set[int] = set()
        self._answers: dict[int, Message] = {}
        self._changed: set[str] = set()  # bus names that sent an event since their last walk
        self._cache: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self._screen: Any = None  # the windows' geometry at the last walk
        self._broken: Exception | None = None
        self._probing = False  # `shows_cells`: tables give their corner cells only
        self.walked = 0  # applications walked by the last `elements` (the others came from their last walk)
        self._reader = threading.Thread(target=self._read, name="atspi-reader", daemon=True)
        self._reader.start()
        self._listen()

    def _listen(self) -> None:
        """Have the applications send their events, and the bus pass them to us."""
        calls = [  # (the bus said hello for us when we began)
            new_method_call(message_bus, "AddMatch", "s", (f"type='signal',interface='{_EVENTS}.{kind}'",))
            for kind in _EVENT_INTERFACES
        ]
        calls += [_call(*_REGISTRATION, "RegisterEvent", "sass", (kind, [], "")) for kind in _EVENT_KINDS]
        self._call_all(calls)

    def elements(self, screen: Any = None, fresh: bool = False) -> list[dict[str, Any]]:
        """Every element on screen of every application, in document order, as {tag, name, text, x, y,
        width, height, states, depth, image}. Elements off screen are left out (the table keeps none of them),
        and so is an application that does not answer in time (busy starting, say): the others are
        still seen. An application that sent no event since its last walk, on a screen whose windows
        (`screen`) did not change, gives the elements of that walk; `fresh` walks every one again."""
        if fresh or screen != self._screen:
            self._cache.clear()
        self._screen = screen
        self.walked = 0
        roots = self._call_all([_call(*_REGISTRY, ACCESSIBLE, "GetChildren")])[0]
        found: list[dict[str, Any]] = []
        applications = [(bus, path) for bus, path in (roots[0] if roots else [])]
        for key in set(self._cache) - set(applications):  # gone
            del self._cache[key]
        for bus, path in applications:
            with self._lock:
                changed = bus in self._changed
                self._changed.discard(bus)  # an event from now on marks it again
            if changed or (bus, path) not in self._cache:
                self.walked += 1
                try:
                    self._cache[(bus, path)] = self._application(bus, path)
                except TimeoutError:
                    self._cache.pop((bus, path), None)
                    continue
            found += self._cache[(bus, path)]
        return found

    def shows_cells(self) -> bool:
        """Whether a table of an application shows cells now (a sheet drawn and loaded): a walk that
        reads no more than two cells of a table, far cheaper than `elements` while an application that
        loads a document keeps changing (and answering the walk slows its loading)."""
        self._probing = True
        try:
            roots = self._call_all([_call(*_REGISTRY, ACCESSIBLE, "GetChildren")])[0]
            for bus, path in roots[0] if roots else []:
                with contextlib.suppress(TimeoutError):
                    if any(e["tag"] == "table-cell" for e in self._application(bus, path)):
                        return True
            return False
        finally:
            self._probing = False

    def _application(self, bus: str, path: str) -> list[dict[str, Any]]:
        level: list[_Ref] = [(bus, path, 0, False)]
        found: list[tuple[tuple[int, ...], dict[str, Any]]] = []
        order: dict[tuple[str, str], tuple[int, ...]] = {(bus, path): ()}
        while level:
            following: list[_Ref] = []
            for (bus, path, depth, _), element, children, cells in self._describe(level):
                if depth == 0 and element["name"] in self._skip:
                    return []
                key = order[(bus, path)]
                found.append((key, element))
                for index, (child_bus, child_path) in enumerate(children[:MAX_CHILDREN]):
                    order[(child_bus, child_path)] = (*key, index)
                    following.append((child_bus, child_path, depth + 1, cells))
            level = following
        found.sort(key=lambda pair: pair[0])
        return [element for _, element in found]

    def _describe(self, level: list[_Ref]) -> list[tuple[_Ref, dict[str, Any], list[tuple[str, str]], bool]]:
        """A level of the tree in three rounds of calls: the states of all its elements; then role,
        name, child count and interfaces of those on screen (an application has no position: it counts
        as on screen); then their position, text and children. A table's cells are known to be cells
        with a position and a text, and to have no children, so they skip the second round's questions
        but their name."""
        states = self._call_all(_call(bus, path, ACCESSIBLE, "GetState") for bus, path, *_ in level)
        shown = [
            (ref, bits)
            for ref, state in zip(level, states, strict=True)
            if (bits := _state_bits(state)) & _SHOWING or ref[2] == 0
        ]
        second = self._call_all(
            call
            for (bus, path, _, cell), _ in shown
            for call in (
                [_call(bus, path, _PROPERTIES, "GetAll", "s", (ACCESSIBLE,))]
                if cell
                else [
                    _call(bus, path, _PROPERTIES, "GetAll", "s", (ACCESSIBLE,)),
                    _call(bus, path, ACCESSIBLE, "GetRoleName"),
                    _call(bus, path, ACCESSIBLE, "GetInterfaces"),
                ]
            )
        )
        answers = iter(second)
        elements, third = [], []
        for (bus, path, depth, cell), bits in shown:
            properties = (next(answers) or ({},))[0]
            if cell:
                role, kinds = "table cell", {"Component", "Text"}
            else:
                role = (next(answers) or ("",))[0]
                kinds = {name.rsplit(".", 1)[-1] for name in (next(answers) or ([],))[0]}
            element = {
                "tag": role.replace(" ", "-") or "unknown",
                "name": properties.get("Name", ("s", ""))[1] or "",
                "text": "",
                "x": -1,
                "y": -1,
                "width": 0,
                "height": 0,
                "states": [s for i, s in enumerate(STATES) if bits >> i & 1],
                "depth": depth,
                "image": "Image" in kinds,  # the official table keeps an image without name or text
            }
            children = 0 if cell or depth >= MAX_DEPTH else int(properties.get("ChildCount", ("i", 0))[1])
            walk = bool(children) and not bits & _MANAGES
            elements.append((element, kinds, children, walk))
            if "Component" in kinds:
                third.append(_call(bus, path, "org.a11y.atspi.Component", "GetExtents", "u", (0,)))
            if "Text" in kinds:
                third.append(_call(bus, path, "org.a11y.atspi.Text", "GetText", "ii", (0, -1)))
            if walk:
                third.append(_call(bus, path, ACCESSIBLE, "GetChildren"))
        replies = iter(self._call_all(third))
        described = []
        for ((bus, path, depth, cell), _), (element, kinds, children, walk) in zip(
            shown, elements, strict=True
        ):
            kids: list[tuple[str, str]] = []
            if "Component" in kinds and (extents := next(replies)):
                element["x"], element["y"], element["width"], element["height"] = extents[0]
            if "Text" in kinds and (text := next(replies)):
                element["text"] = text[0][:MAX_TEXT].replace("\ufffc", "").replace("\ufffd", "")
            if walk:
                answer = next(replies)
                kids = list(answer[0]) if answer else []
            elif children and "Table" in kinds and element["width"] > 0:
                kids = self._shown_cells(bus, path, element, corners_only=self._probing)
            described.append(((bus, path, depth, cell), element, kids, bool(kids) and not walk))
        return described

    def _shown_cells(
        self, bus: str, path: str, table: dict[str, Any], corners_only: bool = False
    ) -> list[tuple[str, str]]:
        """The cells a table shows: those between the cells under its top-left and bottom-right corners
        (only those two with `corners_only`)."""
        x, y, width, height = table["x"], table["y"], table["width"], table["height"]
        corners = self._call_all(
            _call(bus, path, "org.a11y.atspi.Component", "GetAccessibleAtPoint", "iiu", (px, py, 0))
            for px, py in ((x + 1, y + 1), (x + width - 2, y + height - 2))
        )
        if not all(corner and corner[0][1] != "/org/a11y/atspi/null" for corner in corners):
            return []
        if corners_only:
            return [tuple(corner[0]) for corner in corners]  # type: ignore[index, misc]
        indexes = self._call_all(_call(*c[0], ACCESSIBLE, "GetIndexInParent") for c in corners)
        table_calls = []
        for answer in indexes:
            index = answer[0] if answer else 0
            table_calls += [
                _call(bus, path, "org.a11y.atspi.Table", "GetRowAtIndex", "i", (index,)),
                _call(bus, path, "org.a11y.atspi.Table", "GetColumnAtIndex", "i", (index,)),
            ]
        (row0,), (column0,), (row1,), (column1,) = (a or (0,) for a in self._call_all(table_calls))
        cells = [(r, c) for r in range(row0, row1 + 1) for c in range(column0, column1 + 1)][:MAX_CELLS]
        answers = self._call_all(
            _call(bus, path, "org.a11y.atspi.Table", "GetAccessibleAt", "ii", cell) for cell in cells
        )
        return [tuple(answer[0]) for answer in answers if answer]  # type: ignore[misc]

    def _call_all(self, calls: Any) -> list[tuple[Any, ...] | None]:
        """Send every call, then wait for the answers, in order (None for an error answer); a
        TimeoutError when none comes for the time limit (a long batch may take longer in all). One
        caller at a time (the controller serves one request after another)."""
        serials = []
        for message in calls:
            serial = next(self._bus.outgoing_serial)
            with self._lock:
                self._waiting.add(serial)
            serials.append(serial)
            self._bus.send(message, serial=serial)
        deadline, left = time.monotonic() + _TIMEOUT_S, len(serials)
        with self._lock:
            try:
                while self._waiting:  # the reader takes each answer out, and wakes us after the last
                    if self._broken is not None:
                        raise ConnectionError(f"the accessibility bus closed: {self._broken}")
                    if len(self._waiting) < left:  # answers are coming
                        deadline, left = time.monotonic() + _TIMEOUT_S, len(self._waiting)
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise TimeoutError("no answer on the accessibility bus in time")
                    self._lock.wait(min(remaining, 0.5))
                replies = [self._answers.pop(serial) for serial in serials]
            finally:
                self._waiting.clear()
                self._answers.clear()
        return [
            reply.body if reply.header.message_type == MessageType.method_return else None
            for reply in replies
        ]

    def _read(self) -> None:
        """Every message of the bus: an answer is handed to the walk waiting for it, an event marks its
        sender's tree as changed."""
        while True:
            try:
                message = self._bus.receive()
            except Exception as exc:  # closed: the walk waiting, if any, is told
                with self._lock:
                    self._broken = exc
                    self._lock.notify_all()
                return
            header = message.header
            with self._lock:
                if header.message_type == MessageType.signal:
                    self._changed.add(header.fields.get(HeaderFields.sender, ""))
                    continue
                serial = header.fields.get(HeaderFields.reply_serial)
                if serial in self._waiting:
                    self._waiting.discard(serial)
                    self._answers[serial] = message
                    if not self._waiting:
                        self._lock.notify_all()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._bus.sock.shutdown(socket.SHUT_RDWR)
        self._bus.close()


def _call(
    bus: str, path: str, interface: str, method: str, signature: str | None = None, body: tuple = ()
) -> Message:
    return new_method_call(DBusAddress(path, bus, interface), method, signature, body)


def _get(bus: str, path: str, name: str) -> Message:
    return _call(bus, path, _PROPERTIES, "Get", "ss", (ACCESSIBLE, name))


def _variant(answer: tuple[Any, ...] | None) -> Any:
    return answer[0][1] if answer else None


def _state_bits(answer: tuple[Any, ...] | None) -> int:
    words = answer[0] if answer else []
    return sum(int(word) << (32 * i) for i, word in enumerate(words))
