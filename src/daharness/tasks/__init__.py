"""Loaders of suite formats (official files and our own folders) into the one Task schema.

Importing this package registers the formats: `dabench`, `workspace`, `interactive` (and what later modules
add).
"""
