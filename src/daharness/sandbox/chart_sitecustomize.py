"""Installed as `sitecustomize` inside the sandbox: Python programs the agent runs (`python plot.py`)
get the chart capture hook too. Standalone: daharness is not importable there."""

try:
    import chart_capture

    chart_capture.install_from_env()
except Exception:  # never let the hook stop the agent's program
    pass
