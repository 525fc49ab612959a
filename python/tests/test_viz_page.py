"""`taskgraph viz -o page.html` in a real headless browser: the page loads
without console errors or any request beyond itself, the hover card appears
with the task's key, order position, figure, dependencies and dependents, and
the wheel, a drag and the fit button zoom, pan and reset the picture.

Needs the `taskgraph` binary (`$TASKGRAPH`, else `target/debug/taskgraph`),
Graphviz's `dot`, Chromium (`$CHROMIUM`, else `/usr/bin/chromium`, Debian's
package) and Python's `playwright` package (its own browsers are not used).
Without one of them the tests skip and say which; with
`TASKGRAPH_BROWSER_TEST=require` (as CI sets it) they fail instead.
"""

import os
import subprocess
from pathlib import Path

import pytest
from graphviz_here import has_dot

ROOT = Path(__file__).resolve().parents[2]
TASKGRAPH = os.environ.get("TASKGRAPH") or str(ROOT / "target" / "debug" / "taskgraph")
CHROMIUM = os.environ.get("CHROMIUM") or "/usr/bin/chromium"
REQUIRED = os.environ.get("TASKGRAPH_BROWSER_TEST") == "require"

# Debian's Chromium as root in a container: no sandbox, no GPU, and none of
# the background connections it would otherwise try (and have refused).
# playwright adds --headless and a fresh profile directory itself.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def missing(what):
    """Skips the test, or fails it when the browser test is required."""
    if REQUIRED:
        pytest.fail(f"TASKGRAPH_BROWSER_TEST=require, but {what}")
    pytest.skip(what)


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("Python's playwright is not installed (pip install playwright)")
    if not os.access(CHROMIUM, os.X_OK):
        missing(f"no Chromium at {CHROMIUM} (apt-get install chromium, or set $CHROMIUM)")
    if not os.access(TASKGRAPH, os.X_OK):
        missing(f"no taskgraph binary at {TASKGRAPH} (cargo build -p graph-cli, or set $TASKGRAPH)")
    if not has_dot():
        missing("Graphviz's dot is not installed (apt-get install graphviz)")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """Writes a graph and its pages: by memory pressure, and collapsed."""
    if not os.access(TASKGRAPH, os.X_OK):
        missing(f"no taskgraph binary at {TASKGRAPH}")
    if not has_dot():
        missing("Graphviz's dot is not installed (apt-get install graphviz)")
    work = tmp_path_factory.mktemp("viz-page")
    graph = work / "overlap.json"
    subprocess.run(
        [TASKGRAPH, "generate", "array-overlap", "--tasks", "40", "-o", str(graph)],
        check=True,
        capture_output=True,
    )
    made = {}
    for name, args in {
        "tasks": ["--color", "memorypressure"],
        "groups": ["--collapse", "--color", "ages"],
    }.items():
        out = work / f"{name}.html"
        subprocess.run([TASKGRAPH, "viz", str(graph), "-o", str(out), *args], check=True)
        made[name] = out
    return made


class Page:
    """A page opened in the browser, with what it logged and asked for."""

    def __init__(self, browser, path):
        self.context = browser.new_context(viewport={"width": 1200, "height": 800})
        self.page = self.context.new_page()
        self.errors = []
        self.requests = []
        self.page.on(
            "console",
            lambda m: self.errors.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "warning")
            else None,
        )
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(path.as_uri())
        self.page.wait_for_load_state("load")

    def view_box(self):
        return self.page.get_attribute("#view > svg", "viewBox")

    def close(self):
        self.context.close()


@pytest.fixture
def open_page(browser):
    opened = []

    def open_(path):
        page = Page(browser, path)
        opened.append(page)
        return page

    yield open_
    for page in opened:
        page.close()


def test_loads_without_errors_or_requests(open_page, pages):
    for path in pages.values():
        page = open_page(path)
        assert page.errors == []
        # Only the page itself: no script, style, font or icon from elsewhere.
        assert page.requests == [path.as_uri()]
        assert page.page.locator("#view > svg g.node").count() > 1
        assert page.page.locator("#legend").count() == 1
        assert page.page.locator("#card").is_hidden()


def test_hovering_a_task_shows_its_card(open_page, pages):
    page = open_page(pages["tasks"])
    page.page.hover("#v0")
    card = page.page.locator("#card")
    card.wait_for(state="visible", timeout=2000)
    text = card.inner_text()
    assert "('x', 0, 0)" in text
    assert "order position" in text and "of 37" in text
    assert "held when run" in text
    # ('x', 0, 0) has no dependencies and feeds the halos around it.
    assert "dependencies (0)" in text
    assert "dependents (4)" in text and "('overlap', 1, 1)" in text
    # Its dependents are marked in the picture.
    assert page.page.locator("g.node.out").count() == 4
    # The figure coloured by (memorypressure: held when run) is in bold.
    assert page.page.locator("#card tr.figure").inner_text().startswith("held when run")
    # Leaving the box hides the card.
    page.page.mouse.move(2, 790)
    card.wait_for(state="hidden", timeout=2000)
    assert page.page.locator("g.node.out").count() == 0
    assert page.errors == []


def test_hovering_a_group_shows_its_card(open_page, pages):
    page = open_page(pages["groups"])
    page.page.hover("#v1")
    card = page.page.locator("#card")
    card.wait_for(state="visible", timeout=2000)
    text = card.inner_text()
    assert "overlap" in text and "tasks" in text and "order positions" in text
    assert "dependency groups (1)" in text and "x (" in text
    assert page.errors == []


def test_wheel_zooms_drag_pans_and_fit_resets(open_page, pages):
    page = open_page(pages["tasks"])
    home = page.view_box()
    width = lambda box: float(box.split()[2])  # noqa: E731
    page.page.mouse.move(600, 400)
    page.page.mouse.wheel(0, -400)
    page.page.wait_for_timeout(100)
    zoomed = page.view_box()
    assert width(zoomed) < width(home), (home, zoomed)
    page.page.mouse.move(300, 600)
    page.page.mouse.down()
    page.page.mouse.move(500, 500, steps=5)
    page.page.mouse.up()
    panned = page.view_box()
    assert panned != zoomed and width(panned) == pytest.approx(width(zoomed))
    page.page.click("#fit")
    assert page.view_box() == home
    page.page.click("#zoom-in")
    assert width(page.view_box()) < width(home)
    page.page.keyboard.press("0")
    assert page.view_box() == home
    assert page.errors == []
