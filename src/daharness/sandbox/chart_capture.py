"""Capture what a matplotlib chart shows (its data and metadata) each time it is saved or shown.

This module runs INSIDE the sandbox, where daharness cannot be imported: it uses only the standard
library and matplotlib (with numpy and pillow, which matplotlib requires), and matplotlib only once
the agent's code has imported it. Load it by file path, then::

    chart_capture.install_channel(address)  # in the sandbox: send captures to the kernel's socket
    chart_capture.install("/some/folder")   # elsewhere (gold making, tests): write JSON files

before or after the agent imports matplotlib. From then on every ``Figure.savefig`` (``plt.savefig``
included) and every ``plt.show()`` produces a capture describing the figure, without touching the
agent's code. The agent's plotting never breaks because of the capture: any capture error is
swallowed and noted in the capture's ``errors``. ``install_from_env()`` picks the channel when
``DAHARNESS_CHART_CAPTURE`` is ``@<abstract socket name>`` (the sandbox kernel sets it, see
``daharness_kernel/captures.py``) and a folder otherwise.

In the sandbox a capture goes to the kernel over an abstract Unix socket and the hook waits for the
kernel's acknowledgement, so it has arrived when ``savefig`` returns; the host keeps it outside the
workspace. A saved image's capture carries ``image``: the SHA-256 of the bytes that were written,
their pixel size, format, the dpi used and whether the box was tight, read right after the save; the
scorer accepts a capture only for an image with exactly those bytes.

Where the files go when captures are written to a folder (``capture_dir`` is made absolute when
``install`` is called):

* a save writes ``<capture_dir>/<image path>.json``: the image path relative to the working directory
  when the image lies under it (``out/chart.png`` -> ``out/chart.png.json``), else the image's file
  name. A name without an extension gets the one matplotlib adds (``chart`` -> ``chart.png.json``).
  Saving the same file again overwrites its capture, so it always describes the image on disk. A save
  to a stream without a file name writes ``stream-N.json``.
* ``plt.show()`` writes one ``figure-N.json`` per open figure, N being the next free number.

The JSON (``extract(fig)`` returns the same dict)::

    format "daharness-chart-capture", version 1, event "savefig" | "show" | "extract",
    file (the image path as saved, or null), figure_number, figsize [w, h] (inches), dpi,
    cwd (the working directory at the save), image ({sha256, size [w, h] or null, format, dpi,
    tight} for a save, else null), suptitle, legends [{title, labels}] (figure-level legends),
    current_axes (index of the
    figure's current axes, the one ``plt.gca()`` returns), errors [str],
    axes: one entry per Axes, in ``fig.axes`` order:
        index, type ("bar" | "barh" | "line" | "scatter" | "pie" | "": the main kind of data, by
        the precedence pie > bar > scatter > line, counting data series only), kinds (every kind of
        data series present), colorbar (true for a colorbar's axes), title, title_left, title_right,
        xlabel, ylabel, legend_title, legend_labels (the axes' own legend; "" and [] without one),
        has_legend, xtick_labels, ytick_labels, xlim, ylim, xscale, yscale, colors (distinct colours
        of the data series, "#rrggbb", in drawing order), other (counts of artists not captured as
        series, by class name), series: a list of
        {kind "bar", role, label, orientation "vertical" | "horizontal", x, y (lower-left corners),
            widths, heights, colors (one per bar)}          -- one per bar/barh/hist call
        {kind "line", role, label, x, y, y_numeric, color, colors, linestyle, marker}
        {kind "scatter", role, label, offsets [[x, y], ...], sizes, colors (distinct)}
        {kind "pie", role, label, fractions, labels, colors} -- all wedges of the axes
    Numbers are floats, NaN is null and infinities are "inf" / "-inf". ``role`` is "data" for what
    the agent plotted; "reference" for lines not in data coordinates (axhline, axvline),
    "errorbar" for error-bar caps, "loose" for rectangles drawn outside any bar container. A series
    longer than MAX_POINTS is cut and says ``truncated_from``.

A colour is the visible fill: the face colour, or the edge colour when the face is fully transparent.
Tick labels are read after the figure is laid out (savefig has drawn it; otherwise ``extract`` draws
it without rendering first), so they are the labels seen on the image.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import sys
import threading
from typing import Any

FORMAT = "daharness-chart-capture"
VERSION = 1
MAX_POINTS = 200_000
ENV_VARIABLE = "DAHARNESS_CHART_CAPTURE"

_TARGETS = ("matplotlib.figure", "matplotlib.pyplot")
_MARK = "_daharness_chart_capture"

_state: dict[str, Any] = {"dir": None, "finder": None, "channel": None}
_lock = threading.Lock()
_busy = threading.local()


# ---- installation -----------------------------------------------------------------------------------


def install(capture_dir: str) -> None:
    """Hook matplotlib so that every figure saved or shown is captured as JSON in ``capture_dir``.

    Works whether matplotlib is already imported (it is patched now) or not (it is patched when the
    agent's code first imports it). Calling it again only changes the folder.
    """
    _state["dir"] = os.path.abspath(capture_dir)
    _state["channel"] = None
    _hook_matplotlib()


def install_channel(address: str) -> None:
    """Hook matplotlib so that every capture is sent to the kernel listening on the abstract Unix
    socket ``address`` (see ``daharness_kernel/captures.py``) instead of being written to a file."""
    _state["channel"] = address
    _state["dir"] = None
    _hook_matplotlib()


def _hook_matplotlib() -> None:
    pending = []
    for name in _TARGETS:
        module = sys.modules.get(name)
        if module is None:
            pending.append(name)
        else:
            _patch(name, module)
    if pending and _state["finder"] is None:
        finder = _PostImportFinder(pending)
        _state["finder"] = finder
        sys.meta_path.insert(0, finder)


def install_from_env(variable: str = ENV_VARIABLE) -> bool:
    """Install from ``os.environ[variable]`` when that variable is set (for a ``sitecustomize``, so
    that scripts the agent runs with ``python plot.py`` are captured too): ``@NAME`` is the kernel's
    socket, anything else a folder. Returns whether it installed."""
    target = os.environ.get(variable)
    if not target:
        return False
    if target.startswith("@"):
        install_channel(target[1:])
    else:
        install(target)
    return True


class _PostImportFinder:
    """A ``sys.meta_path`` finder that lets the real finder load a target module, then patches it."""

    def __init__(self, names: list[str]) -> None:
        self.pending = set(names)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in self.pending or getattr(_busy, "finding", False):
            return None
        _busy.finding = True  # the other finders may import; do not intercept our own lookup
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    break
            else:
                return None
        finally:
            _busy.finding = False
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _PatchingLoader(spec.loader, fullname, self)
        return spec


class _PatchingLoader:
    """Delegates everything to the real loader; patches the module once it has run."""

    def __init__(self, loader: Any, name: str, finder: _PostImportFinder) -> None:
        self._loader, self._name, self._finder = loader, name, finder

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        _patch(self._name, module)
        self._finder.pending.discard(self._name)
        if not self._finder.pending:
            with contextlib.suppress(ValueError):
                sys.meta_path.remove(self._finder)
            _state["finder"] = None

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._loader, attribute)


def _patch(name: str, module: Any) -> None:
    try:
        if name == "matplotlib.figure":
            figure_class = module.Figure
            if not getattr(figure_class.savefig, _MARK, False):
                figure_class.savefig = _wrap_savefig(figure_class.savefig)
        elif name == "matplotlib.pyplot" and not getattr(module.show, _MARK, False):
            module.show = _wrap_show(module.show)
    except Exception:  # never break the agent's import of matplotlib
        pass


def _wrap_savefig(original: Any) -> Any:
    @functools.wraps(original)
    def savefig(self: Any, fname: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(self, fname, *args, **kwargs)
        # Only after a successful save: the capture describes an image that exists.
        _capture_saved(self, fname, kwargs)
        return result

    setattr(savefig, _MARK, True)
    return savefig


def _wrap_show(original: Any) -> Any:
    @functools.wraps(original)
    def show(*args: Any, **kwargs: Any) -> Any:
        # Before showing: an interactive or inline backend may close the figures once shown.
        capture_open_figures(event="show")
        return original(*args, **kwargs)

    setattr(show, _MARK, True)
    return show


# ---- writing captures -------------------------------------------------------------------------------


def capture_open_figures(event: str = "show") -> None:
    """Write ``figure-N.json`` for every open pyplot figure (what ``plt.show()`` does when hooked)."""
    try:
        from matplotlib._pylab_helpers import Gcf

        managers = Gcf.get_all_fig_managers()
    except Exception:
        return
    for manager in managers:
        try:
            figure = manager.canvas.figure
        except Exception:
            continue
        _write_capture(figure, event, None, lambda folder: _next_free(folder, "figure"))


def _capture_saved(figure: Any, fname: Any, options: dict[str, Any]) -> None:
    try:
        saved = _saved_path(fname, options.get("format"))
    except Exception:
        saved = None
    try:
        image = _image_info(figure, fname, saved, options)
    except Exception as error:
        image = {"error": f"{type(error).__name__}: {error}"}
    if saved is None:
        _write_capture(figure, "savefig", None, lambda folder: _next_free(folder, "stream"), image)
    else:
        _write_capture(
            figure, "savefig", saved, lambda folder: os.path.join(folder, _relative(saved) + ".json"), image
        )


def _image_info(figure: Any, fname: Any, saved: str | None, options: dict[str, Any]) -> dict[str, Any]:
    """What was written: the bytes' SHA-256, pixel size and format, with the dpi and box used."""
    import hashlib

    import matplotlib

    data = None
    if hasattr(fname, "getvalue"):  # an in-memory stream
        data = bytes(fname.getvalue())
    elif saved is not None and os.path.isfile(saved):
        with open(saved, "rb") as handle:
            data = handle.read()
    dpi = options.get("dpi") or matplotlib.rcParams["savefig.dpi"]
    box = options.get("bbox_inches", matplotlib.rcParams["savefig.bbox"])
    info: dict[str, Any] = {
        "sha256": hashlib.sha256(data).hexdigest() if data is not None else None,
        "size": None,
        "format": None,
        "dpi": float(figure.dpi if dpi == "figure" else dpi),
        "tight": box not in (None, "standard"),
    }
    if data is not None:
        try:
            import io

            from PIL import Image

            with Image.open(io.BytesIO(data)) as picture:
                info["size"], info["format"] = list(picture.size), picture.format
        except Exception:  # a vector format (svg, pdf): no pixels
            info["format"] = os.path.splitext(saved or "")[1].lstrip(".").lower() or None
    return info


def _saved_path(fname: Any, fmt: Any) -> str | None:
    if isinstance(fname, os.PathLike):
        fname = os.fspath(fname)
    if isinstance(fname, bytes):
        fname = os.fsdecode(fname)
    if not isinstance(fname, str):
        name = getattr(fname, "name", None)  # an open file
        return name if isinstance(name, str) else None
    if fmt is None and not os.path.splitext(fname)[1][1:]:
        import matplotlib

        # matplotlib appends the default format to a name without an extension.
        fname = fname.rstrip(".") + "." + str(matplotlib.rcParams["savefig.format"])
    return fname


def _relative(saved: str) -> str:
    absolute = os.path.abspath(saved)
    cwd = os.getcwd()
    if os.path.commonpath([absolute, cwd]) == cwd:
        return os.path.relpath(absolute, cwd)
    return os.path.basename(absolute)


def _next_free(folder: str, stem: str) -> str:
    number = 1
    while os.path.exists(os.path.join(folder, f"{stem}-{number}.json")):
        number += 1
    return os.path.join(folder, f"{stem}-{number}.json")


def _write_capture(
    figure: Any, event: str, saved: str | None, target: Any, image: dict[str, Any] | None = None
) -> None:
    folder, channel = _state["dir"], _state["channel"]
    if folder is None and channel is None:
        return
    try:
        capture = extract(figure)
    except Exception as error:  # extract already guards each part; this is the last resort
        capture = _empty(event, [f"extract failed: {type(error).__name__}: {error}"])
    capture["event"], capture["file"], capture["image"] = event, saved, image
    try:
        capture["cwd"] = os.getcwd()
    except OSError:
        capture["cwd"] = None
    if channel is not None:
        _send(channel, capture)
        return
    try:
        with _lock:
            path = target(folder)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            temporary = f"{path}.{os.getpid()}.tmp"
            with open(temporary, "w", encoding="utf-8") as handle:
                json.dump(capture, handle, allow_nan=False)
            os.replace(temporary, path)
    except Exception:  # an unwritable folder must not break the agent's plotting
        pass


def _send(address: str, capture: dict[str, Any]) -> None:
    """Send one capture to the kernel and wait until it has been received (never raises)."""
    import socket

    try:
        data = json.dumps(capture, allow_nan=False).encode("utf-8")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(60)
            connection.connect("\0" + address)
            connection.sendall(data)
            connection.shutdown(socket.SHUT_WR)
            connection.recv(16)
    except Exception:  # no kernel to send to: the figure is simply not captured
        pass


def _empty(event: str, errors: list[str]) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "event": event,
        "file": None,
        "cwd": None,
        "image": None,
        "figure_number": None,
        "figsize": None,
        "dpi": None,
        "suptitle": "",
        "legends": [],
        "current_axes": None,
        "axes": [],
        "errors": errors,
    }


# ---- extraction -------------------------------------------------------------------------------------


def extract(fig: Any) -> dict[str, Any]:
    """Return the capture dict of a figure (format in the module docstring); never raises for a
    figure: a part that cannot be read is left empty and its error listed in ``errors``."""
    errors: list[str] = []
    capture = _empty("extract", errors)
    if getattr(fig, "stale", False):
        # Lay the figure out (autoscale, tick labels) as it would be drawn, without rendering pixels.
        _guard(errors, "draw", fig.draw_without_rendering)
    capture["figure_number"] = _guard(errors, "figure number", lambda: _figure_number(fig))
    capture["figsize"] = _guard(errors, "figsize", lambda: _floats(fig.get_size_inches()))
    capture["dpi"] = _guard(errors, "dpi", lambda: float(fig.dpi))
    capture["suptitle"] = _guard(errors, "suptitle", lambda: _suptitle(fig)) or ""
    capture["legends"] = _guard(errors, "figure legends", lambda: [_legend(x) for x in fig.legends]) or []
    axes_list = list(getattr(fig, "axes", []))
    capture["current_axes"] = _guard(errors, "current axes", lambda: _current(fig, axes_list))
    for index, ax in enumerate(axes_list):
        try:
            capture["axes"].append(_extract_axes(ax, index, errors))
        except Exception as error:
            errors.append(f"axes {index}: {type(error).__name__}: {error}")
            capture["axes"].append({"index": index, "type": "", "kinds": [], "series": []})
    return capture


def _guard(errors: list[str], what: str, read: Any) -> Any:
    try:
        return read()
    except Exception as error:
        errors.append(f"{what}: {type(error).__name__}: {error}")
        return None


def _figure_number(fig: Any) -> int | None:
    number = getattr(fig, "number", None)
    return int(number) if isinstance(number, int) else None


def _suptitle(fig: Any) -> str:
    if hasattr(fig, "get_suptitle"):
        return fig.get_suptitle()
    text = getattr(fig, "_suptitle", None)
    return text.get_text() if text is not None else ""


def _current(fig: Any, axes_list: list[Any]) -> int | None:
    if not axes_list:
        return None  # fig.gca() would create an axes
    current = fig.gca()
    return axes_list.index(current) if current in axes_list else None


def _legend(legend: Any) -> dict[str, Any]:
    title = legend.get_title()
    return {"title": title.get_text() if title else "", "labels": [t.get_text() for t in legend.get_texts()]}


def _extract_axes(ax: Any, index: int, errors: list[str]) -> dict[str, Any]:
    where = f"axes {index}"
    legend = _guard(errors, f"{where} legend", lambda: ax.get_legend())
    legend_info = _guard(errors, f"{where} legend", lambda: _legend(legend)) if legend else None
    entry: dict[str, Any] = {
        "index": index,
        "type": "",
        "kinds": [],
        "colorbar": hasattr(ax, "_colorbar") or ax.get_label() == "<colorbar>",
        "title": _guard(errors, f"{where} title", lambda: ax.get_title()) or "",
        "title_left": _guard(errors, f"{where} title", lambda: ax.get_title("left")) or "",
        "title_right": _guard(errors, f"{where} title", lambda: ax.get_title("right")) or "",
        "xlabel": _guard(errors, f"{where} xlabel", lambda: ax.get_xlabel()) or "",
        "ylabel": _guard(errors, f"{where} ylabel", lambda: ax.get_ylabel()) or "",
        "legend_title": legend_info["title"] if legend_info else "",
        "legend_labels": legend_info["labels"] if legend_info else [],
        "has_legend": legend_info is not None,
        "xtick_labels": _guard(errors, f"{where} xtick labels", lambda: _texts(ax.get_xticklabels())) or [],
        "ytick_labels": _guard(errors, f"{where} ytick labels", lambda: _texts(ax.get_yticklabels())) or [],
        "xlim": _guard(errors, f"{where} xlim", lambda: _floats(ax.get_xlim())),
        "ylim": _guard(errors, f"{where} ylim", lambda: _floats(ax.get_ylim())),
        "xscale": _guard(errors, f"{where} xscale", lambda: ax.get_xscale()),
        "yscale": _guard(errors, f"{where} yscale", lambda: ax.get_yscale()),
        "colors": [],
        "other": {},
        "series": [],
    }
    series: list[dict[str, Any]] = []
    for reader in (_bar_series, _pie_series, _scatter_series, _line_series):
        found = _guard(
            errors, f"{where} {reader.__name__.strip('_').replace('_', ' ')}", lambda r=reader: r(ax)
        )
        series.extend(found or [])
    entry["series"] = series
    entry["other"] = _guard(errors, f"{where} other artists", lambda: _other(ax)) or {}
    data = [s for s in series if s["role"] == "data"]
    entry["kinds"] = sorted({s["kind"] for s in data})
    entry["type"] = _main_type(data)
    entry["colors"] = _distinct([c for s in data for c in s.get("colors", [])])
    return entry


def _main_type(data: list[dict[str, Any]]) -> str:
    kinds = [s["kind"] for s in data]
    if "pie" in kinds:
        return "pie"
    bars = [s for s in data if s["kind"] == "bar"]
    if bars:
        return "barh" if bars[0]["orientation"] == "horizontal" else "bar"
    if "scatter" in kinds:
        return "scatter"
    return "line" if "line" in kinds else ""


def _bar_series(ax: Any) -> list[dict[str, Any]]:
    from matplotlib.container import BarContainer
    from matplotlib.patches import Rectangle

    found, seen = [], set()
    for container in ax.containers:
        if not isinstance(container, BarContainer):
            continue
        patches = [p for p in container.patches if isinstance(p, Rectangle)]
        seen.update(id(p) for p in patches)
        orientation = getattr(container, "orientation", None) or "vertical"
        found.append(_bars(patches, "data", container.get_label(), orientation))
    loose = [p for p in ax.patches if isinstance(p, Rectangle) and id(p) not in seen]
    if loose:
        found.append(_bars(loose, "loose", "", "vertical"))
    return found


def _bars(patches: list[Any], role: str, label: Any, orientation: str) -> dict[str, Any]:
    return {
        "kind": "bar",
        "role": role,
        "label": _text(label),
        "orientation": orientation,
        "x": _floats([p.get_x() for p in patches]),
        "y": _floats([p.get_y() for p in patches]),
        "widths": _floats([p.get_width() for p in patches]),
        "heights": _floats([p.get_height() for p in patches]),
        "colors": [_hex(_visible(p.get_facecolor(), p.get_edgecolor())) for p in patches],
    }


def _pie_series(ax: Any) -> list[dict[str, Any]]:
    from matplotlib.patches import Wedge

    wedges = [p for p in ax.patches if isinstance(p, Wedge)]
    if not wedges:
        return []
    return [
        {
            "kind": "pie",
            "role": "data",
            "label": "",
            "fractions": _floats([abs(w.theta2 - w.theta1) / 360.0 for w in wedges]),
            "labels": [_text(w.get_label()) for w in wedges],
            "colors": [_hex(_visible(w.get_facecolor(), w.get_edgecolor())) for w in wedges],
        }
    ]


def _scatter_series(ax: Any) -> list[dict[str, Any]]:
    import numpy as np
    from matplotlib.collections import PathCollection

    found = []
    for collection in ax.collections:
        if not isinstance(collection, PathCollection):
            continue
        offsets = np.ma.asarray(collection.get_offsets(), dtype=float).filled(np.nan).reshape(-1, 2)
        if len(offsets) == 0:
            continue
        faces, edges = collection.get_facecolor(), collection.get_edgecolor()
        colors = faces if len(faces) and any(c[3] > 0 for c in faces) else edges
        series = {
            "kind": "scatter",
            "role": "data",
            "label": _text(collection.get_label()),
            "offsets": [_floats(point) for point in offsets[:MAX_POINTS]],
            "sizes": _floats(collection.get_sizes()[:MAX_POINTS]),
            "colors": _distinct([_hex(c) for c in colors]),
        }
        if len(offsets) > MAX_POINTS:
            series["truncated_from"] = len(offsets)
        found.append(series)
    return found


def _line_series(ax: Any) -> list[dict[str, Any]]:
    import numpy as np
    from matplotlib.container import ErrorbarContainer

    caps = set()
    for container in ax.containers:
        if isinstance(container, ErrorbarContainer):
            caplines = container.lines[1]  # (data line, caps, bar line collections)
            caps.update(id(line) for line in caplines or ())
    found = []
    for line in ax.get_lines():
        if id(line) in caps:
            role = "errorbar"
        elif not line.get_transform().contains_branch(ax.transData):
            role = "reference"
        else:
            role = "data"
        xy = np.ma.asarray(line.get_xydata(), dtype=float).filled(np.nan).reshape(-1, 2)
        raw_y = np.asarray(line.get_ydata())
        color = _hex(line.get_color())
        series = {
            "kind": "line",
            "role": role,
            "label": _text(line.get_label()),
            "x": _floats(xy[:MAX_POINTS, 0]),
            "y": _floats(xy[:MAX_POINTS, 1]),
            "y_numeric": bool(np.issubdtype(raw_y.dtype, np.number)),
            "color": color,
            "colors": [color],
            "linestyle": _text(line.get_linestyle()),
            "marker": _text(line.get_marker()),
        }
        if len(xy) > MAX_POINTS:
            series["truncated_from"] = len(xy)
        found.append(series)
    return found


def _other(ax: Any) -> dict[str, int]:
    from matplotlib.collections import PathCollection
    from matplotlib.patches import Rectangle, Wedge

    counts: dict[str, int] = {}
    others = [c for c in ax.collections if not isinstance(c, PathCollection)]
    others += [p for p in ax.patches if not isinstance(p, Rectangle | Wedge)]
    others += list(ax.images)
    for artist in others:
        name = type(artist).__name__
        counts[name] = counts.get(name, 0) + 1
    return counts


# ---- values -----------------------------------------------------------------------------------------


def _texts(labels: Any) -> list[str]:
    return [label.get_text() for label in labels]


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _number(value: float) -> float | str | None:
    if math.isnan(value):
        return None
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def _floats(values: Any) -> list[float | str | None]:
    import numpy as np

    array = np.ma.asarray(values, dtype=float).filled(np.nan).ravel()
    return [_number(v) for v in array.tolist()]


def _visible(face: Any, edge: Any) -> Any:
    """The face colour, or the edge colour when the face is fully transparent (``fill=False``)."""
    from matplotlib.colors import to_rgba

    face_rgba = to_rgba(face)
    return edge if face_rgba[3] == 0 else face_rgba


def _hex(color: Any) -> str:
    from matplotlib.colors import to_hex

    return to_hex(color, keep_alpha=False)


def _distinct(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))
