"""Spider2-V's cloud warehouses (issue 44): BigQuery and Snowflake tasks run with the user's own accounts
(`--cloud-settings DIR`, the release's settings layout) or against local emulators (`--cloud-settings local`).

`tasks.py` reads a task's cloud steps and getters (and why it cannot run), `session.py` is what the
family does around the agent (the accounts' setup, the sandbox's way out through `egress.py`, the getters
after the agent), `metrics.py` the metrics only these tasks use. See docs/cloud.md.
"""

from daharness.families.workflow.cloud import metrics  # noqa: F401  (registration)
