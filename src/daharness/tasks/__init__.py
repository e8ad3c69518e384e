"""The Task model and the loaders of official benchmark formats."""

from daharness.tasks.model import Conjunction, Family, Task, task_json_schema

__all__ = ["Conjunction", "Family", "Task", "task_json_schema"]
