"""The workspace family (DA-Code). Importing it registers its loaders, scorers and figures."""

from daharness.families.workspace import dacode, family, loader, scorers  # noqa: F401  (registration)
