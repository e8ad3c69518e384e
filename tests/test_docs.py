"""The documentation as a reader meets it: the README's first commands (CI and users run them), its length,
every relative link of the docs pointing at a file (and heading) of the checkout, and a command-line
reference that says what the commands are now."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
README = ROOT / "README.md"
PAGES = [
    README,
    ROOT / "CONTRIBUTING.md",
    ROOT / "CHANGELOG.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "src" / "daharness" / "families").glob("*/README.md")),
]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)


def test_the_readme_opens_with_the_two_commands_ci_and_users_run() -> None:
    lines = README.read_text().splitlines()
    assert lines[2:6] == [
        "```bash",
        "python -m pip install -e . && daharness run --suite closed-form --agent reference",
        "python -m pip install -e '.[test]' && python -m pytest",
        "```",
    ]


def test_the_readme_is_short_and_names_the_setup_scripts_a_fresh_machine_needs() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    for script in ("scripts/setup-browser.sh", "scripts/setup-desktop.sh", "scripts/setup-apps.sh"):
        assert f"bash {script}" in text, script
        assert (ROOT / script).is_file(), script


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    for heading in re.findall(r"^#{1,6} (.+)$", FENCE.sub("", page.read_text()), re.MULTILINE):
        base = slug(heading)
        name, n = base, 0
        while name in found:  # a repeated heading gets -1, -2, ...
            n += 1
            name = f"{base}-{n}"
        found.add(name)
    return found


def broken_links(page: Path) -> list[str]:
    """The relative links of `page` (outside code blocks) whose file, or heading, does not exist."""
    broken = []
    for target in LINK.findall(FENCE.sub("", page.read_text())):
        if re.match(r"^[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading #{anchor} in {linked.name}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_points_at_a_file_and_heading_of_the_checkout(page: Path) -> None:
    assert broken_links(page) == []


def test_a_broken_link_or_anchor_is_found(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other\n\n## Two words\n\n## Two words\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#two-words-1) [gone](missing.md) [bad](other.md#three) [web](https://x.org/a.md)\n"
        "```\n[in code](nowhere.md)\n```\n"
    )
    assert [line.split(":")[0] for line in broken_links(page)] == ["missing.md", "other.md#three"]


def test_the_cli_reference_is_what_the_command_definitions_make() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_cli_reference.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
