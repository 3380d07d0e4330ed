#!/usr/bin/python3
"""Drives the console of a running `gateway serve` in a real headless Chromium (Debian's chromium, chromium-driver and
python3-selenium), as a sender and as an owner, and checks every step on the page's content.

    console_browser.py CONFIG.json

CONFIG names the server (`base`), the tokens (`sender`, `owner`), the emails to test (`valid`, `broken`, `hostile`:
paths), a message to submit while the log is open (`live`: a path), and where screenshots go (`screenshots`). Prints
one line per check passed; exits 1 with the failed check (and a screenshot of the page) on the first failure.

Run by ConsoleBrowserTests (GatewayIntegrationTests), which starts the server and writes the config. With
CONSOLE_DOCS_DIR set, it also writes the README's screenshots there (docs/console-tester.png, docs/console-log.png):

    CONSOLE_DOCS_DIR=$PWD/docs swift test --skip-build --filter ConsoleBrowserTests
"""

import json
import os
import sys
import time
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import (NoAlertPresentException, TimeoutException, UnexpectedAlertPresentException,
                                        WebDriverException)
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait


class CheckFailed(Exception):
    pass


config = json.load(open(sys.argv[1]))
base = config["base"]
shots = config["screenshots"]
os.makedirs(shots, exist_ok=True)


def browser():
    options = Options()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,1000", "--lang=en-US"]:
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


driver = browser()
step = "start"


def check(condition, what):
    if not condition:
        raise CheckFailed(what)
    print("ok  " + what, flush=True)


def shoot(name):
    """The whole page (the window grown to its height for the shot), as a reader scrolls it."""
    path = os.path.join(shots, name + ".png")
    width, height = driver.get_window_size()["width"], driver.get_window_size()["height"]
    full = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(width, min(max(full + 140, height), 6000))
    driver.save_screenshot(path)
    driver.set_window_size(width, height)
    return path


def document(name, width, height):
    """A screenshot of the page's top for the README (only with CONSOLE_DOCS_DIR)."""
    directory = os.environ.get("CONSOLE_DOCS_DIR")
    if not directory:
        return
    size = driver.get_window_size()
    driver.set_window_size(width, height)
    driver.execute_script("window.scrollTo(0, 0)")
    driver.save_screenshot(os.path.join(directory, name + ".png"))
    driver.set_window_size(size["width"], size["height"])


def text():
    return driver.find_element(By.TAG_NAME, "body").text


def submit(selector):
    """Clicks a form's submit button and waits for the page the form loads (a click returns before it has)."""
    driver.execute_script("window.consoleBrowserOldPage = true;")
    driver.find_element(By.CSS_SELECTOR, selector).click()

    def loaded(d):
        try:
            return d.execute_script("return !window.consoleBrowserOldPage && document.readyState === 'complete'")
        except WebDriverException:
            return False  # between the two documents
    WebDriverWait(driver, 30).until(loaded)


def no_dialog(what):
    """No alert, confirm or prompt opened (a payload that ran would have opened one)."""
    try:
        alert = driver.switch_to.alert
        message = alert.text
        alert.dismiss()
        raise CheckFailed(what + ": a dialog opened: " + message)
    except NoAlertPresentException:
        print("ok  " + what + ": no dialog", flush=True)


def sign_in(token):
    driver.get(base + "/console")
    check(driver.current_url.endswith("/console/sign-in"), "/console sends a visitor to the sign-in page")
    field = driver.find_element(By.ID, "token")
    check(driver.find_element(By.CSS_SELECTOR, "label[for=token]").text == "Token", "the token field has its label")
    field.send_keys(token)
    submit("main form button[type=submit]")
    cookies = {cookie["name"]: cookie for cookie in driver.get_cookies()}
    session = cookies.get("__Host-gateway-session")
    check(session is not None and session["httpOnly"] and session["secure"] and session["sameSite"] == "Strict",
          "signing in sets an HttpOnly, Secure, SameSite=Strict session cookie")
    check(driver.execute_script("return document.cookie") == "", "scripts cannot read the session cookie")


def submit_tester(source=None, upload=None):
    driver.get(base + "/console/tester")
    if source is not None:
        area = driver.find_element(By.ID, "source")
        # Typing a whole email is slow; set the textarea's value as a paste would.
        driver.execute_script("arguments[0].value = arguments[1];", area, source)
    if upload is not None:
        driver.find_element(By.ID, "eml").send_keys(upload)
    submit("form.tester button[type=submit]")


def post_message(path):
    body = open(path, "rb").read()
    request = urllib.request.Request(base + "/v1/messages", data=body, method="POST", headers={
        "Authorization": "Bearer " + config["sender"], "Content-Type": "message/rfc822"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


try:
    # --- A sender signs in and tests a valid email (uploaded as a file) -------------------------------------------
    step = "sign in as a sender"
    sign_in(config["sender"])
    check(driver.current_url.endswith("/console/tester") and driver.find_element(By.TAG_NAME, "h1").text == "Markup tester",
          "a sender lands on the markup tester")

    step = "test a valid email"
    submit_tester(upload=config["valid"])
    page = text()
    check("Result: would be admitted" in page, "the valid email would be admitted")
    card = driver.find_elements(By.CSS_SELECTOR, "article.card h3")
    check(len(card) == 4 and card[0].text == "Flight UA110 SFO → JFK", "four reservation cards, the first titled Flight UA110 SFO → JFK")
    first = driver.find_element(By.CSS_SELECTOR, "article.card")
    check("2027-03-04 20:15" in first.text and "UTC-08:00" in first.text and "2027-03-05 04:15 UTC" in first.text,
          "the card shows the departure in its own zone and in UTC")
    check("San Francisco International Airport" in first.text and "Eva Green" in first.text, "the card shows places and passengers")
    rows = driver.find_elements(By.CSS_SELECTOR, "table.signatures tbody tr")
    check(len(rows) == 1 and "sel1" in rows[0].text and "rsa-sha256" in rows[0].text and "2048 bits" in rows[0].text
          and "pass" in rows[0].text, "the DKIM signature: domain, selector, algorithm, key size, result")
    check("aligned a passing signature from skyways.example" in page, "alignment is shown")
    check("skyways.example is approved" in page, "the registration status is shown")
    check("Gmail: meets its required properties" in page and "Apple: meets its required properties" in page,
          "each reservation meets Apple's and Gmail's bars")
    shoot("tester-valid")

    # --- A broken email (its body changed after signing), pasted ------------------------------------------------
    step = "test a broken email"
    submit_tester(source=open(config["broken"], encoding="utf-8").read())
    page = text()
    check("Result: would be rejected" in page, "the broken email would be rejected")
    check("admission.dkim-failed at DKIM-Signature (d=skyways.example, s=sel1)" in page,
          "the refusal names the signature it concerns")
    check("dkim.body-hash-mismatch" in page, "the DKIM code is shown")
    flags = driver.find_elements(By.CSS_SELECTOR, "table.flags tbody tr")
    check(any(row.text.startswith("allow-unverified-sources admitted") for row in flags),
          "what allow-unverified-sources would change is shown")
    shoot("tester-broken")
    document("console-tester", 1000, 1250)

    # --- Hostile markup stays text ------------------------------------------------------------------------------
    step = "test hostile markup"
    submit_tester(source=open(config["hostile"], encoding="utf-8").read())
    no_dialog("hostile markup")
    people = driver.find_element(By.CSS_SELECTOR, "article.card ul.people li").text
    check(people.startswith("<script>alert('name')</script>"), "a name carrying a script tag is shown as text")
    check("<img src=x onerror=alert('airline')>" in text(), "an event-handler payload is shown as text")
    actions = [element.text for element in driver.find_elements(By.CSS_SELECTOR, "ul.actions li")]
    problems = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "table.problems tbody tr")]
    check(not any("javascript:" in action for action in actions)
          and any("markup.url-not-https" in row and "potentialAction.target" in row for row in problems),
          "a javascript: action target is no action: dropped, with markup.url-not-https at potentialAction.target")
    state = driver.execute_script("""
        return {
          scripts: Array.from(document.scripts).map(function (s) { return s.getAttribute('src'); }),
          handlers: document.querySelectorAll('[onerror],[onload],[onclick],[onmouseover]').length,
          javascriptLinks: document.querySelectorAll('a[href^="javascript:"], [src^="javascript:"]').length,
          images: document.images.length,
          svgs: document.querySelectorAll('main svg').length
        };""")
    check(state["scripts"] == ["/console/static/console.js"], "the only script on the page is the console's own")
    check(state["handlers"] == 0 and state["javascriptLinks"] == 0 and state["images"] == 0 and state["svgs"] == 0,
          "no element from the markup became live (no handlers, javascript: links, images or svg)")
    shoot("tester-hostile")

    step = "post a form without its token"
    driver.get(base + "/console/tester")
    driver.execute_script("""
        document.querySelector('#source').value = 'From: a@skyways.example\\r\\n\\r\\nhello';
        document.querySelector('form.tester input[name="form-token"]').remove();""")
    submit("form.tester button[type=submit]")
    check("console.form-token-invalid" in text() and driver.title.startswith("Refused"),
          "a form sent without its token is refused (console.form-token-invalid)")
    status = driver.execute_script("""
        var form = new FormData(); form.append('source', 'x');
        return fetch('/console/sign-out', {method: 'POST', body: form}).then(function (r) { return r.status; });""")
    check(status == 403, "a post without the form token answers 403")

    # --- The domain page: its state and the record that proves control -----------------------------------------
    step = "the domain page"
    driver.get(base + "/console/domain")
    page = text()
    check("skyways.example approved" in page and "_gateway-challenge.skyways.example. IN TXT \"gateway-verification=" in page,
          "the sender's domain page shows its state and the TXT record to publish")
    check(len(driver.find_elements(By.XPATH, "//button[normalize-space()='Check the record now']")) == 1,
          "the domain page offers the record's check")
    shoot("domain")

    # --- The decision log: filter, open an entry, follow new decisions ------------------------------------------
    step = "the log"
    driver.get(base + "/console/log")
    rows = driver.find_elements(By.CSS_SELECTOR, "#log-rows tr")
    check(len(rows) >= 2, "the log lists the sender's decisions")
    ids = [int(row.get_attribute("data-id")) for row in rows]
    check(ids == sorted(ids, reverse=True), "newest first")
    Select(driver.find_element(By.ID, "verdict")).select_by_value("rejected")
    submit("form.filters button[type=submit]")
    check("verdict=rejected" in driver.current_url, "the filter is in the address (shareable)")
    verdicts = [element.text for element in driver.find_elements(By.CSS_SELECTOR, "#log-rows tr td:nth-child(5)")]
    check(len(verdicts) >= 1 and all(verdict == "rejected" for verdict in verdicts), "filtered by verdict: only rejected rows")
    document("console-log", 1000, 900)
    driver.find_element(By.ID, "code").send_keys("dkim.body-hash-mismatch")
    submit("form.filters button[type=submit]")
    codes = [element.text for element in driver.find_elements(By.CSS_SELECTOR, "#log-rows tr td.codes")]
    check(len(codes) >= 1 and all("dkim.body-hash-mismatch" in code for code in codes), "filtered by code")
    shoot("log-filtered")
    submit("#log-rows tr td a")
    check(driver.find_element(By.TAG_NAME, "h1").text.startswith("Decision #") and "dkim.body-hash-mismatch" in text(),
          "an entry opens in full with its codes")

    step = "live updates"
    driver.get(base + "/console/log")
    newest = int(driver.find_element(By.CSS_SELECTOR, "#log-rows tr").get_attribute("data-id"))
    report = post_message(config["live"])
    check(report["logID"] > newest, "a new decision was made while the log is open")
    try:
        WebDriverWait(driver, 20).until(
            lambda d: int(d.find_element(By.CSS_SELECTOR, "#log-rows tr").get_attribute("data-id")) == report["logID"])
    except TimeoutException:
        raise CheckFailed("the new decision did not appear in the open log within 20 s")
    check("fresh" in driver.find_element(By.CSS_SELECTOR, "#log-rows tr").get_attribute("class"),
          "the new decision appears at the top of the open log")
    check("just arrived" in driver.find_element(By.ID, "live-status").text, "the page says a decision arrived")
    shoot("log")

    # --- A phone's width ----------------------------------------------------------------------------------------
    step = "phone width"
    driver.set_window_size(390, 844)
    for path in ["/console/log", "/console/tester"]:
        driver.get(base + path)
        overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        check(overflow <= 0, path + " fits a phone's width (no horizontal scrolling)")
    shoot("phone-log")
    driver.set_window_size(1280, 1000)

    # --- Sign out ------------------------------------------------------------------------------------------------
    step = "sign out"
    driver.get(base + "/console/tester")
    submit("form.sign-out button")
    check(driver.current_url.endswith("/console/sign-in"), "signing out returns to the sign-in page")
    driver.get(base + "/console/log")
    check(driver.current_url.endswith("/console/sign-in"), "after signing out the log is closed")

    # --- An owner --------------------------------------------------------------------------------------------------
    step = "the owner's reservations"
    sign_in(config["owner"])
    check(driver.current_url.endswith("/console/owner"), "an owner lands on their reservations")
    titles = [element.text for element in driver.find_elements(By.CSS_SELECTOR, "article.card h3")]
    check("Flight UA110 SFO → JFK" in titles and "Flight UA111 JFK → SFO" in titles, "upcoming reservations as cards")
    check("/calendars/eva%40guest.example.net.ics?token=YOUR-OWNER-TOKEN" in text(), "the calendar subscription address")
    shoot("owner")
    submit("form.sign-out button")
    check(driver.current_url.endswith("/console/sign-in"), "the owner signs out")

    # The 403s this run provoked on purpose are logged as failed loads; anything else (a CSP violation) is an error.
    severe = [entry for entry in driver.get_log("browser")
              if entry["level"] == "SEVERE" and "Failed to load resource" not in entry["message"]]
    check(not severe, "the browser logged no errors (no CSP violation): " + json.dumps(severe)[:500])
except (CheckFailed, UnexpectedAlertPresentException) as failure:
    try:
        shoot("failed")
    except Exception:
        pass
    print("FAILED at " + step + ": " + str(failure), flush=True)
    print("page: " + driver.current_url, flush=True)
    try:
        print(text()[:3000])
    except Exception:
        pass
    driver.quit()
    sys.exit(1)
driver.quit()
print("all browser checks passed")
