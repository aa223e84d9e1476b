"""A real Chromium signs in to the admin and reads dinner-friday's transcript, and
reads the API's operations in Swagger UI and Redoc served by example_project.

The browser has no way out but to 127.0.0.1 (its proxy is a closed port), so a
page that loads anything from the internet fails here as it would offline.

Debian's chromium and chromium-driver are installed by scripts/ensure-chromium.sh
(``make test`` runs it). Where they are missing the test skips and says why,
except in CI, where a missing browser is a failure.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from chronica import services

from .. import scenario
from ..exampleproject import PYTHON, free_port, serving
from ..scenario import CHRONICUM, OWNER

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
SCREENSHOT = Path(__file__).resolve().parents[2] / "artifacts" / "admin-transcript.png"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.once,
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def browser() -> Iterator[object]:
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        reason = (
            f"{' and '.join(missing)} not installed: run scripts/ensure-chromium.sh"
            " (apt-get install chromium chromium-driver)"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(f"the browser test must run in CI, but {reason}")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="chronica-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        # Everything but loopback goes to a proxy that is not there: offline.
        "--proxy-server=http://127.0.0.1:9",
        "--window-size=1280,1800",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait_for(browser, by: str, value: str):
    """The element, once the page that has it is there (a deadline, not a measurement)."""
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, 60).until(
        expected_conditions.presence_of_element_located((by, value))
    )


def test_an_operator_reads_dinner_friday_in_the_admin(browser, live_server, django_user_model):
    from selenium.webdriver.common.by import By

    django_user_model.objects.create_superuser("operator", "operator@example.com", "pw")
    stored = [services.record_actum(OWNER, a) for a in scenario.acta()]

    browser.get(f"{live_server.url}/admin/login/?next=/admin/chronica/chronicum/")
    browser.find_element(By.NAME, "username").send_keys("operator")
    browser.find_element(By.NAME, "password").send_keys("pw")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    wait_for(browser, By.LINK_TEXT, CHRONICUM).click()
    wait_for(browser, By.ID, "transcript")

    acta = browser.find_elements(By.CSS_SELECTOR, "#transcript li.chronica-actum")
    assert [a.get_attribute("data-kind") for a in acta] == [a.kind.value for a in stored]
    assert [a.find_element(By.CLASS_NAME, "chronica-actor").text for a in acta] == [
        a.actor for a in stored
    ]
    contents = [a.find_element(By.CLASS_NAME, "chronica-content").text for a in acta]
    assert contents[0] == scenario.SEVEN[0][3]
    assert contents[2].splitlines() == [
        "{",
        '  "area": "Kemang",',
        '  "party": 4,',
        '  "quiet": true',
        "}",
    ]
    assert contents[3].splitlines()[:3] == ["[", "  {", '    "name": "Rumah Teduh",']
    assert contents[-1] == scenario.SEVEN[-1][3]
    badge = acta[1].find_element(By.CLASS_NAME, "chronica-badge")
    message_badge = acta[0].find_element(By.CLASS_NAME, "chronica-badge")
    assert badge.value_of_css_property("background-color") != message_badge.value_of_css_property(
        "background-color"
    )

    SCREENSHOT.parent.mkdir(exist_ok=True)
    assert browser.save_screenshot(str(SCREENSHOT))


@pytest.fixture
def example_server(tmp_path: Path) -> Iterator[str]:
    """example_project under uvicorn, with DEBUG off as it would be deployed."""
    port = free_port()
    command = [PYTHON, "-m", "uvicorn", "example_project.asgi:application", "--port", str(port)]
    with serving([*command, "--host", "127.0.0.1"], port, tmp_path / "uvicorn.log") as base:
        yield base


def loaded_from(browser) -> set[str]:
    """The origins the current page loaded its code, styles, fonts and data from.

    Images are left out: Redoc's sidebar badge is an image on its maker's site,
    missing offline and harmless.
    """
    entries = browser.execute_script(
        "return performance.getEntriesByType('resource')"
        ".filter(e => e.initiatorType !== 'img').map(e => e.name)"
    )
    return {"/".join(url.split("/")[:3]) for url in [browser.current_url, *entries]}


ACTA_PATH = "/api/chronica/{chronicum_id}/acta/"


def test_swagger_ui_shows_the_api_operations_offline(browser, example_server):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{example_server}/api/docs/")
    # A deadline for a page that never renders, not a measurement.
    WebDriverWait(browser, 60).until(
        expected_conditions.presence_of_element_located((By.CSS_SELECTOR, ".opblock"))
    )

    operations = {
        (
            block.find_element(By.CLASS_NAME, "opblock-summary-method").text,
            block.find_element(By.CLASS_NAME, "opblock-summary-path").get_attribute("data-path"),
        )
        for block in browser.find_elements(By.CSS_SELECTOR, ".opblock")
    }
    assert {("GET", ACTA_PATH), ("POST", ACTA_PATH)} <= operations
    assert loaded_from(browser) == {example_server}
    assert browser.save_screenshot(str(SCREENSHOT.with_name("swagger-ui.png")))


def test_redoc_shows_the_api_operations_offline(browser, example_server):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{example_server}/api/redoc/")
    WebDriverWait(browser, 60).until(
        expected_conditions.presence_of_element_located(
            (By.CSS_SELECTOR, "[data-section-id^='operation/']")
        )
    )

    assert ACTA_PATH in browser.find_element(By.TAG_NAME, "body").text
    assert loaded_from(browser) == {example_server}
