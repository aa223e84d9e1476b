"""A real Chromium in the admin: the structured search call, an erasure, the owner filter.

Uses the ``browser`` fixture of tests/browser/test_browser.py (it skips, saying why, where
Chromium is missing).
"""

from __future__ import annotations

import json

import pytest

from chronica import Actum, models, services

from ..scenario import CHRONICUM, OWNER, REQ, RES, A
from .test_browser import browser  # noqa: F401  (the fixture)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.once,
    pytest.mark.django_db(transaction=True),
]

SEARCH = {"area": "Kemang", "party": 4, "quiet": True}


def sign_in(driver, live_server, username: str, next_url: str) -> None:
    from selenium.webdriver.common.by import By

    driver.get(f"{live_server.url}/admin/login/?next={next_url}")
    driver.find_element(By.NAME, "username").send_keys(username)
    driver.find_element(By.NAME, "password").send_keys("pw")
    driver.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    wait_for_page(driver, next_url)


def wait_for_page(driver, path: str) -> None:
    """Until the browser shows ``path``, fully loaded (a deadline, not a measurement)."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        WebDriverWait(driver, 60).until(
            lambda d: (
                path in d.current_url
                and "/login/" not in d.current_url
                and d.execute_script("return document.readyState") == "complete"
            )
        )
    except TimeoutException:
        raise AssertionError(
            f"waited for {path}, the browser shows {driver.current_url}:"
            f" {driver.find_element('tag name', 'body').text[:500]}"
        ) from None


def record_search(owner: str = OWNER) -> list[Actum]:
    return services.record_acta(
        owner,
        [
            Actum(
                chronicum_id=CHRONICUM,
                kind=REQ,
                actor_kind=A,
                actor="search",
                call_id="call-kemang",
                data=SEARCH,
            ),
            Actum(
                chronicum_id=CHRONICUM,
                kind=RES,
                actor_kind=A,
                actor="search",
                content="Rumah Teduh and Kayu Manis both have a quiet table.",
                call_id="call-kemang",
                data=[{"name": "Rumah Teduh"}, {"name": "Kayu Manis"}],
            ),
        ],
    )


def test_data_unfolds_and_a_response_leads_to_its_request(
    browser,  # noqa: F811
    live_server,
    django_user_model,
):
    from selenium.webdriver.common.by import By

    django_user_model.objects.create_superuser("operator", "operator@example.com", "pw")
    request, _ = record_search()
    sign_in(browser, live_server, "operator", f"/admin/chronica/chronicum/{CHRONICUM}/change/")

    acta = browser.find_elements(By.CSS_SELECTOR, "#transcript li.chronica-actum")
    data = acta[0].find_element(By.CSS_SELECTOR, "details.chronica-data")
    pretty = data.find_element(By.TAG_NAME, "pre")
    assert not pretty.is_displayed()  # folded
    data.find_element(By.TAG_NAME, "summary").click()
    assert json.loads(pretty.text) == SEARCH
    assert pretty.text.splitlines()[0] == "{"  # pretty-printed, one key a line

    acta[1].find_element(By.CLASS_NAME, "chronica-call-link").click()
    seq = models.Actum.objects.get(id=request.id).seq
    assert browser.current_url.endswith(f"#actum-{seq}")
    target = browser.execute_script("return document.querySelector(':target')")
    assert target.get_attribute("data-kind") == "tool_request"


def test_an_eraser_deletes_dinner_friday_from_its_page(
    browser,  # noqa: F811
    live_server,
    django_user_model,
):
    from django.contrib.auth.models import Permission
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    eraser = django_user_model.objects.create_user("dpo", password="pw", is_staff=True)
    eraser.user_permissions.set(
        Permission.objects.filter(codename__in=["view_chronicum", "delete_chronicum"])
    )
    record_search()
    sign_in(browser, live_server, "dpo", f"/admin/chronica/chronicum/{CHRONICUM}/change/")

    browser.find_element(By.CSS_SELECTOR, "a.deletelink").click()
    wait_for_page(browser, "/delete/")
    assert "2 acta" in browser.find_element(By.ID, "content").text
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    # Without the change permission, Django sends the eraser to the admin's index.
    wait_for_page(browser, "/admin/")
    messages = WebDriverWait(browser, 60).until(
        expected_conditions.presence_of_element_located((By.CSS_SELECTOR, ".messagelist"))
    )
    assert "was deleted successfully" in messages.text
    assert not models.Chronicum.objects.filter(id=CHRONICUM).exists()
    assert not models.Actum.objects.exists()


def test_staff_type_a_user_name_to_see_that_owners_chronica(
    browser,  # noqa: F811
    live_server,
    django_user_model,
):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    django_user_model.objects.create_superuser("operator", "operator@example.com", "pw")
    ardian = django_user_model.objects.create_user("ardian", password="pw")
    record_search(owner=str(ardian.pk))
    services.record_actum(
        "rafa",
        Actum(
            chronicum_id="lunch-saturday",
            kind="message",
            actor_kind="human",
            actor="rafa",
            content="Sushi?",
        ),
    )
    sign_in(browser, live_server, "operator", "/admin/chronica/chronicum/")

    box = browser.find_element(By.CSS_SELECTOR, ".chronica-owner-filter input[name=owner]")
    box.send_keys("ardian", Keys.ENTER)
    wait_for_page(browser, "owner=ardian")
    rows = browser.find_elements(By.CSS_SELECTOR, "#result_list tbody tr")
    assert [r.find_element(By.CSS_SELECTOR, "th").text for r in rows] == [CHRONICUM]
    owner = rows[0].find_element(By.CSS_SELECTOR, "td.field-owner").text
    assert owner == f"{ardian.pk} (ardian)"
