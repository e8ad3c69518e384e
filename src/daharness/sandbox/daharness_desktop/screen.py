"""The screen over X: its pixels with the mouse cursor drawn in, and its top-level windows.

The controller's X connection is opened as soon as the display is up, before any agent code runs, and
kept. Pixels are read with Pillow's XCB grabber (several times faster than python-xlib's GetImage),
which connects anew each time: to the display's abstract socket, a name the display holds as long as it
lives. The display is the controller's own child, so `grab` first checks that it still runs; no other
process can then answer on that name.
"""

from __future__ import annotations

import array
import io
from collections.abc import Callable
from typing import Any

from PIL import Image, ImageGrab
from Xlib import X, Xatom, display
from Xlib.error import XError
from Xlib.protocol import event

_PNG_LEVEL = 1  # fastest zlib level: a desktop screenshot is mostly flat colour and compresses well anyway


class ScreenGone(RuntimeError):
    """The display stopped; nothing can be seen any more."""


class Screen:
    def __init__(self, name: str, display_alive: Callable[[], bool]) -> None:
        self.name = name
        self._display_alive = display_alive
        self._x = display.Display(name)
        self._root = self._x.screen().root
        self._atoms: dict[str, int] = {}
        self.width = self._x.screen().width_in_pixels
        self.height = self._x.screen().height_in_pixels
        self._last = (b"", b"")  # the last screenshot's pixels and PNG
        self._cursor = self._x.has_extension("XFIXES")
        if self._cursor:
            self._x.xfixes_query_version()

    def grab(self) -> bytes:
        """The screen as PNG, the mouse cursor drawn where it is."""
        if not self._display_alive():
            raise ScreenGone("the display stopped")
        image = ImageGrab.grab(xdisplay=self.name)
        if image.size != (self.width, self.height):
            raise ScreenGone(f"the display answered with a {image.size} image")
        self._draw_cursor(image)
        pixels = image.tobytes()
        if (
            pixels == self._last[0]
        ):  # nothing moved since the last one: its PNG (encoding is most of the cost)
            return self._last[1]
        buffer = io.BytesIO()
        image.save(buffer, "PNG", compress_level=_PNG_LEVEL)
        self._last = (pixels, buffer.getvalue())
        return self._last[1]

    def _draw_cursor(self, image: Image.Image) -> None:
        if not self._cursor:
            return
        try:
            cursor = self._x.xfixes_get_cursor_image(self._root)
        except XError:
            return
        if not cursor.width or not cursor.height:
            return
        pixels = array.array("I", cursor.cursor_image).tobytes()  # ARGB words, little-endian: B G R A
        sprite = Image.frombuffer("RGBA", (cursor.width, cursor.height), pixels, "raw", "BGRA", 0, 1)
        image.paste(sprite, (cursor.x - cursor.xhot, cursor.y - cursor.yhot), sprite)

    # ---- windows ---------------------------------------------------------------------------------

    def windows(self) -> list[dict[str, Any]]:
        """The window manager's client windows, bottom to top: title, class, geometry, active."""
        active = self._property(self._root, "_NET_ACTIVE_WINDOW")
        active_id = active[0] if active else None
        found = []
        for window_id in self._property(self._root, "_NET_CLIENT_LIST_STACKING") or []:
            window = self._x.create_resource_object("window", window_id)
            try:
                geometry = window.get_geometry()
                origin = window.translate_coords(self._root, 0, 0)
                classes = window.get_wm_class() or ("", "")
                found.append(
                    {
                        "id": window_id,
                        "title": self._title(window),
                        "class": classes[1] if len(classes) > 1 else classes[0],
                        "x": -origin.x,
                        "y": -origin.y,
                        "width": geometry.width,
                        "height": geometry.height,
                        "active": window_id == active_id,
                    }
                )
            except XError:  # closed while we looked
                continue
        return found

    def activate(self, window_id: int) -> None:
        """Ask the window manager to raise and focus a window (as a pager would)."""
        window = self._x.create_resource_object("window", window_id)
        message = event.ClientMessage(
            window=window,
            client_type=self._atom("_NET_ACTIVE_WINDOW"),
            data=(32, [2, X.CurrentTime, 0, 0, 0]),
        )
        self._root.send_event(message, event_mask=X.SubstructureRedirectMask | X.SubstructureNotifyMask)
        self._x.sync()

    def _title(self, window: Any) -> str:
        name = self._property(window, "_NET_WM_NAME", self._atom("UTF8_STRING"))
        if name:
            return bytes(name).decode("utf-8", "replace")
        legacy = window.get_wm_name()
        return legacy if isinstance(legacy, str) else ""

    def _property(self, window: Any, name: str, kind: int = X.AnyPropertyType) -> Any:
        reply = window.get_full_property(self._atom(name), kind)
        return reply.value if reply is not None else None

    def _atom(self, name: str) -> int:
        if name not in self._atoms:
            self._atoms[name] = Xatom.STRING if name == "STRING" else self._x.intern_atom(name)
        return self._atoms[name]
