"""A real Chromium watches dinner-friday grow live while the agents write.

The example page (example_project/dinner/templates/dinner/follow.html) opens an
EventSource on the stream endpoint, served by uvicorn; the agents record the seed's
seven acta one by one, and each appears on the page as it is recorded.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections
from django.test import override_settings

from chronica import services

from .. import scenario
from ..api.test_follow_stream import fast_polls, server  # noqa: F401  (the fixtures)
from ..scenario import CHRONICUM
from .test_browser import browser  # noqa: F401  (the fixture)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.once,
    pytest.mark.django_db(transaction=True),
]

EXAMPLE_TEMPLATES = Path(__file__).resolve().parents[2] / "example_project/dinner/templates"
SCREENSHOT = Path(__file__).resolve().parents[2] / "artifacts" / "follow-live.png"
DEADLINE = 60


@pytest.fixture(autouse=True)
def example_templates():
    templates = [{**settings.TEMPLATES[0], "DIRS": [EXAMPLE_TEMPLATES]}]
    with override_settings(TEMPLATES=templates):
        yield


def test_the_page_grows_while_the_agents_write(browser, server, django_user_model):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    ardian = django_user_model.objects.create_user("ardian", password="pw", is_staff=True)
    owner = str(ardian.pk)
    base = f"http://{server}"
    browser.get(f"{base}/admin/login/?next=/dinner/{CHRONICUM}/follow/")
    browser.find_element(By.NAME, "username").send_keys("ardian")
    browser.find_element(By.NAME, "password").send_keys("pw")
    first = services.record_actum(owner, scenario.acta()[0])  # the session before the page
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()

    wait = WebDriverWait(browser, DEADLINE)
    wait.until(lambda b: b.find_element(By.ID, "status").get_attribute("data-state") == "open")

    def items():
        return browser.find_elements(By.CSS_SELECTOR, "#transcript li.chronica-actum")

    # The session so far is on the page before anything new is written.
    assert [i.get_attribute("data-id") for i in items()] == [first.id]
    stored = [first]
    for n, actum in enumerate(scenario.acta()[1:], start=2):
        stored.append(services.record_actum(owner, actum))
        # Each actum shows up before the next is written: the page grows live.
        wait.until(lambda b, n=n: len(items()) == n)
    seen = items()
    assert [i.get_attribute("data-id") for i in seen] == [a.id for a in stored]
    assert [i.find_element(By.CLASS_NAME, "chronica-actor").text for i in seen] == [
        a.actor for a in stored
    ]
    assert seen[5].find_element(By.CLASS_NAME, "chronica-content").text == "Rumah Teduh."

    SCREENSHOT.parent.mkdir(exist_ok=True)
    assert browser.save_screenshot(str(SCREENSHOT))
    browser.get("about:blank")  # the page's stream ends before the server does


def test_the_page_misses_nothing_written_in_a_burst(browser, server, django_user_model):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    ardian = django_user_model.objects.create_user("ardian", password="pw", is_staff=True)
    owner = str(ardian.pk)
    first = services.record_actum(owner, scenario.acta()[0])
    browser.get(f"http://{server}/admin/login/?next=/dinner/{CHRONICUM}/follow/")
    browser.find_element(By.NAME, "username").send_keys("ardian")
    browser.find_element(By.NAME, "password").send_keys("pw")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    wait = WebDriverWait(browser, DEADLINE)
    wait.until(lambda b: b.find_element(By.ID, "status").get_attribute("data-state") == "open")

    stored: list = []

    def agents() -> None:
        try:
            for i in range(30):
                stored.append(services.record_actum(owner, scenario.booking_reply(f"turn {i}")))
                time.sleep(0.005)
        finally:
            connections.close_all()

    writer = threading.Thread(target=agents)
    writer.start()
    writer.join(DEADLINE)
    wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, "#transcript li")) == 31)
    ids = [
        li.get_attribute("data-id")
        for li in browser.find_elements(By.CSS_SELECTOR, "#transcript li")
    ]
    assert ids == [first.id] + [a.id for a in stored]  # the session so far, then the burst
    browser.get("about:blank")


def test_the_session_so_far_then_live_filtered_like_the_admin_transcript(
    browser,  # noqa: F811
    server,  # noqa: F811
    django_user_model,
):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    ardian = django_user_model.objects.create_user("ardian", password="pw", is_staff=True)
    owner = str(ardian.pk)
    ask, think, search, results = scenario.acta()[:4]
    so_far = services.record_acta(
        owner,
        [
            ask,
            think,
            dataclasses.replace(search, call_id="call-kemang", data={"area": "Kemang"}),
            dataclasses.replace(results, call_id="call-kemang"),
        ],
    )
    browser.get(f"http://{server}/admin/login/?next=/dinner/{CHRONICUM}/follow/")
    browser.find_element(By.NAME, "username").send_keys("ardian")
    browser.find_element(By.NAME, "password").send_keys("pw")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    wait = WebDriverWait(browser, DEADLINE)
    wait.until(lambda b: b.find_element(By.ID, "status").get_attribute("data-state") == "open")

    def shown():
        return [
            li.get_attribute("data-id")
            for li in browser.find_elements(By.CSS_SELECTOR, "#transcript li.chronica-actum")
            if li.is_displayed()
        ]

    assert shown() == [a.id for a in so_far]
    # Kinds coloured as in the admin: four kinds, four backgrounds.
    items = browser.find_elements(By.CSS_SELECTOR, "#transcript li.chronica-actum")
    assert len({li.value_of_css_property("background-color") for li in items}) == 4
    # The tool response links to its request by call_id.
    request, response = items[2], items[3]
    assert request.get_attribute("data-kind") == "tool_request"
    link = response.find_element(By.CLASS_NAME, "chronica-call-link")
    assert link.get_attribute("href").endswith("#" + request.get_attribute("id"))
    assert request.get_attribute("data-call-id") == response.get_attribute("data-call-id") != ""

    Select(browser.find_element(By.ID, "kind-filter")).select_by_value("message")
    assert shown() == [so_far[0].id]
    # Live acta obey the filter too: a thought stays hidden, a message shows.
    thought, message = services.record_acta(owner, scenario.acta()[1:2] + scenario.acta()[4:5])
    wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, "#transcript li")) == 6)
    assert shown() == [so_far[0].id, message.id]
    Select(browser.find_element(By.ID, "kind-filter")).select_by_value("")
    Select(browser.find_element(By.ID, "actor-filter")).select_by_visible_text("concierge")
    assert shown() == [so_far[1].id, thought.id]
    browser.get("about:blank")
