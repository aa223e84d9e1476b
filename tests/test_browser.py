"""A real Chromium signs in to the admin and reads dinner-friday's transcript.

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

from . import scenario
from .scenario import CHRONICUM, OWNER

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
SCREENSHOT = Path(__file__).resolve().parent.parent / "artifacts" / "admin-transcript.png"

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


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


def test_an_operator_reads_dinner_friday_in_the_admin(browser, live_server, django_user_model):
    from selenium.webdriver.common.by import By

    django_user_model.objects.create_superuser("operator", "operator@example.com", "pw")
    stored = [services.record_actum(OWNER, a) for a in scenario.acta()]

    browser.get(f"{live_server.url}/admin/login/?next=/admin/chronica/chronicum/")
    browser.find_element(By.NAME, "username").send_keys("operator")
    browser.find_element(By.NAME, "password").send_keys("pw")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    browser.find_element(By.LINK_TEXT, CHRONICUM).click()

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
