"""The desktop's controller: runs inside a sample's sandbox and is the harness's only eye on its screen.

The host starts it (`sandbox/desktop/session.py`) in the sandbox's namespaces under a user id of its
own, which agent code (another id) can neither signal, trace nor impersonate. It starts the display
(Xvfb), the window manager, the accessibility bus and Chromium as its children, opens its connections
to them before any agent code runs, and keeps them: a screenshot or an accessibility tree comes over
those connections and reaches the host on the controller's own pipe, never through a file the agent
could write. Protocol: one JSON object per line on stdin/stdout, as the kernel's.

Like `daharness_kernel`, it is copied to a read-only folder and imports nothing of daharness; it uses
the sandbox's Python packages of the `desktop` extra (python-xlib, Pillow, jeepney).

Modules: `services` (the processes of the desktop), `screen` (pixels, cursor and windows over X),
`atspi` (the accessibility tree of desktop applications over D-Bus), `browser` (Chromium's pages over
the DevTools protocol), `controller` (start-up and request loop).
"""
