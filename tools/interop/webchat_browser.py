#!/usr/bin/env python3
"""The web chat at /chat in real browsers: headless Chromium driven by
Selenium, two windows against one server.

Usage: webchat_browser.py HOST PORT DOMAIN CA_CERT CHAT_URL SCREENSHOT_DIR [demo]

CHAT_URL is http:// or https:// (then the WebSocket is wss://).
Without `demo`: two people register, one adds the other, the other
accepts, they chat both ways, share a PNG that both see as an image, meet
in a room; one reloads, logs in again and finds the conversation in the
server's archive. Then, in a third browser, ada (an admin: the server
must name her in `admins`) logs in at /admin, finds both chat sessions,
and deletes ben's account: ben's page is disconnected. With `demo`
(against `swiftletd demo`): the Demo button
logs in as alice, who sees her contacts and the messages that waited.

Screenshots of the login page, a conversation and the admin page's
sessions, at desktop (1280x800)
and phone (375x740) width, go to SCREENSHOT_DIR. Prints one `ok   ...`
line per step; exits non-zero at the first failure. Every wait is on
the page's state, bounded; the whole run is bounded by DEADLINE seconds.
Only the browsers this script starts are ended (driver.quit); the
browsers reach nothing but loopback.
"""

import os
import shutil
import signal
import struct
import sys
import tempfile
import time
import zlib

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException, WebDriverException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
DEADLINE = 110
WAIT = 20
# The browsers' profiles and the file shared; removed at the end.
SCRATCH = tempfile.mkdtemp(prefix="swiftlet-webchat-")
DESKTOP = (1280, 800)
PHONE = (375, 740)


class StepFailed(Exception):
    pass


def ok(text):
    print(f"ok   {text}", flush=True)


def browser(name, https):
    """A headless Chromium of its own (profile in a temporary directory)
    that resolves no name but loopback's; for `https`, one that accepts
    the test server's local CA root."""
    options = Options()
    if https:
        options.add_argument("--ignore-certificate-errors")
    options.binary_location = CHROMIUM
    for argument in [
        "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
        f"--window-size={DESKTOP[0]},{DESKTOP[1]}", "--no-first-run", "--no-default-browser-check",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-extensions", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
        f"--user-data-dir={SCRATCH}/profile-{name}", "--lang=en-US",
    ]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(WAIT)
    driver.label = name
    return driver


def wait(driver, what, condition, timeout=WAIT):
    """Waits until `condition(driver)` is truthy; fails with `what` and the status line."""
    try:
        # The page re-renders lists as they change: an element found a moment
        # ago may be gone; the next poll finds its successor.
        return WebDriverWait(
            driver, timeout, poll_frequency=0.1, ignored_exceptions=[StaleElementReferenceException]
        ).until(condition)
    except TimeoutException:
        raise StepFailed(f"{driver.label}: {what} (status line: {status(driver)!r})") from None


def status(driver):
    try:
        return driver.find_element(By.ID, "status").text
    except Exception:
        return "?"


def visible(selector):
    def check(driver):
        found = [e for e in driver.find_elements(By.CSS_SELECTOR, selector) if e.is_displayed()]
        return found[0] if found else None
    return check


def click(driver, what, selector):
    """Clicks the visible element at `selector` once it is there."""
    def attempt(d):
        element = visible(selector)(d)
        if element is None:
            return False
        element.click()
        return True
    wait(driver, what, attempt)


def messages(driver):
    return [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#messages li.message .body")]


def has_message(text, count=1):
    """The open conversation shows `text` exactly `count` times (more: the
    archive and the live copy were not merged)."""
    return lambda driver: messages(driver).count(text) == count


def type_into(driver, element_id, text):
    field = driver.find_element(By.ID, element_id)
    field.clear()
    field.send_keys(text)


def open_page(driver, url):
    driver.get(url)
    wait(driver, "the login form", visible("#login-form"))
    wait(driver, "the page's settings", lambda d: status(d) == "Not connected")


def register(driver, user, password):
    type_into(driver, "jid", user)
    type_into(driver, "password", password)
    driver.find_element(By.ID, "register").click()
    wait(driver, f"{user} registered and logged in", visible("#app-view"))


def log_in(driver, user, password):
    type_into(driver, "jid", user)
    type_into(driver, "password", password)
    driver.find_element(By.ID, "login").click()
    wait(driver, f"{user} logged in", visible("#app-view"))


def contact(jid):
    return f'#contacts li.contact[data-jid="{jid}"]'


def open_chat(driver, jid):
    click(driver, f"{jid} in the contacts", f"{contact(jid)} button")
    wait(driver, f"the chat with {jid}", lambda d: d.find_element(By.ID, "chat-title").text != "No conversation open")


def send(driver, text):
    type_into(driver, "message", text)
    driver.find_element(By.ID, "send").click()


def loaded_image(driver):
    """The open conversation's image previews that the browser decoded."""
    return driver.execute_script(
        "return [...document.querySelectorAll('#messages img.preview')]"
        ".filter(i => i.complete && i.naturalWidth > 0).length")


def png(path, width=240, height=150):
    """Writes an RGB PNG of diagonal stripes in two colours to `path`
    (about 1 KB)."""
    blue, amber = b"\x2f\x6f\xde", b"\xf4\xa2\x26"
    rows = b"".join(b"\x00" + b"".join(blue if (x + y) // 30 % 2 else amber for x in range(width))
                    for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    with open(path, "wb") as file:
        file.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
                   + chunk(b"IEND", b""))


def screenshot(driver, directory, name, size):
    """Saves the viewport at `size` (CSS pixels, scale 1) as NAME.png."""
    width, height = size
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 500})
    try:
        # Layout follows the new width before the picture is taken.
        wait(driver, f"a {width}px layout", lambda d: d.execute_script("return window.innerWidth") == width)
        path = os.path.join(directory, f"{name}.png")
        if not driver.save_screenshot(path):
            raise StepFailed(f"no screenshot {path}")
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def console_errors(driver):
    """Errors the page logged (a CSP violation, an exception, a failed load)."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def conversation(ada, ben, domain, shots, chat_url):
    ada_jid, ben_jid = f"ada@{domain}", f"ben@{domain}"
    open_page(ada, chat_url)
    open_page(ben, chat_url)
    screenshot(ada, shots, "webchat-login-desktop", DESKTOP)
    screenshot(ada, shots, "webchat-login-phone", PHONE)
    ok("the login page loads in two browsers")

    register(ada, "ada", "ada-secret-1")
    register(ben, "ben", "ben-secret-2")
    ok("ada and ben register (XEP-0077 over the WebSocket) and are logged in")

    type_into(ada, "add-contact", "ben")
    ada.find_element(By.CSS_SELECTOR, "#add-contact-form button").click()
    wait(ada, "ben in ada's contacts", visible(contact(ben_jid)))
    click(ben, "ada's request at ben", f'#requests li.request[data-jid="{ada_jid}"] button.accept')
    wait(ada, "ben online in ada's contacts", visible(f"{contact(ben_jid)} .dot.online"))
    wait(ben, "ada online in ben's contacts", visible(f"{contact(ada_jid)} .dot.online"))
    ok("ada adds ben, ben accepts, each sees the other online")

    open_chat(ada, ben_jid)
    send(ada, "Hello Ben, this is Ada.")
    wait(ada, "ada's message in her chat", has_message("Hello Ben, this is Ada."))
    wait(ben, "an unread badge at ben", visible(f"{contact(ada_jid)} .badge"))
    open_chat(ben, ada_jid)
    wait(ben, "ada's message at ben, once", has_message("Hello Ben, this is Ada."))
    send(ben, "Hi Ada! Ben here.")
    wait(ada, "ben's reply at ada", has_message("Hi Ada! Ben here."))
    wait(ben, "ben's reply in his chat, once", has_message("Hi Ada! Ben here."))
    ok("they chat both ways, each message shown once")

    image = os.path.join(SCRATCH, "stripes.png")
    png(image)
    ada.find_element(By.ID, "file").send_keys(image)
    wait(ada, "the PNG shown at ada", lambda d: loaded_image(d) == 1, timeout=30)
    wait(ben, "the PNG shown at ben", lambda d: loaded_image(d) == 1, timeout=30)
    ok("ada shares a PNG (XEP-0363 PUT, XEP-0066 link); both see it as an image")

    for driver, nick in [(ada, "Ada"), (ben, "Ben")]:
        type_into(driver, "room-name", "tea")
        type_into(driver, "room-nick", nick)
        driver.find_element(By.CSS_SELECTOR, "#join-room-form button").click()
        wait(driver, f"{nick} in the room", visible('#rooms li.room[data-jid^="tea@"] .dot.online'))
    send(ben, "Tea at four?")
    wait(ada, "ben's room message at ada", has_message("Tea at four?"))
    wait(ben, "ben's room message in his room, once", has_message("Tea at four?"))
    ok("both join the room tea (XEP-0045) and talk there")

    open_chat(ben, ada_jid)
    wait(ben, "the image at ben again", lambda d: loaded_image(d) == 1)
    screenshot(ben, shots, "webchat-chat-desktop", DESKTOP)
    screenshot(ben, shots, "webchat-chat-phone", PHONE)

    ada.refresh()
    wait(ada, "the login form after reloading", visible("#login-form"))
    wait(ada, "the page's settings after reloading", lambda d: status(d) == "Not connected")
    log_in(ada, "ada", "ada-secret-1")
    wait(ada, "ben still a contact", visible(f"{contact(ben_jid)} .dot.online"))
    open_chat(ada, ben_jid)
    for text in ["Hello Ben, this is Ada.", "Hi Ada! Ben here."]:
        wait(ada, f"'{text}' from the archive", has_message(text))
    wait(ada, "the PNG from the archive", lambda d: loaded_image(d) == 1)
    ok("ada reloads, logs in again and finds the conversation in the archive (XEP-0313)")


def cells(driver):
    return [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "table td")]


def administer(admin, ben, domain, shots, chat_url):
    """ada, an admin, logs in at /admin, sees her and ben's chat sessions,
    and deletes ben's account, which ends ben's session in his page."""
    base = chat_url.rsplit("/chat", 1)[0] + "/admin"
    admin.get(base)
    wait(admin, "the admin login form", visible('form[action$="/admin/login"]'))
    type_into_named(admin, "username", "ada")
    type_into_named(admin, "password", "ada-secret-1")
    admin.find_element(By.CSS_SELECTOR, 'form[action$="/admin/login"] button').click()
    wait(admin, "ada logged in at /admin", lambda d: not d.find_elements(By.CSS_SELECTOR, 'form[action$="/admin/login"]'))
    admin.get(base + "/sessions")
    for user in ["ada", "ben"]:
        wait(admin, f"{user}'s chat session listed", lambda d, user=user: f"{user}@{domain}" in cells(d))
    screenshot(admin, shots, "admin-sessions-desktop", DESKTOP)
    screenshot(admin, shots, "admin-sessions-phone", PHONE)
    ok("ada logs in at /admin and finds both chat sessions")

    admin.get(base + "/accounts/delete?account=ben")
    click(admin, "the Delete button", 'form[action$="/admin/accounts/delete"] button')
    wait(admin, "ben gone from the accounts", lambda d: f"ben@{domain}" not in cells(d) and len(cells(d)) > 0)
    wait(ben, "ben's page disconnected", lambda d: status(d).startswith(("Connection lost", "Disconnected")))
    ok(f"ada deletes ben's account; ben's page says {status(ben)!r}")


def type_into_named(driver, name, text):
    field = driver.find_element(By.NAME, name)
    field.clear()
    field.send_keys(text)


def demo(alice, domain, shots, chat_url):
    open_page(alice, chat_url)
    click(alice, "the Demo button for alice", '#demo-users button[data-user="alice"]')
    wait(alice, "alice logged in", visible("#app-view"))
    for user in ["bob", "carol"]:
        wait(alice, f"{user} in alice's contacts", visible(contact(f"{user}@{domain}")))
    open_chat(alice, f"bob@{domain}")
    wait(alice, "bob's waiting message", lambda d: any("waited offline" in text for text in messages(d)))
    ok("the Demo button logs in as alice, who has bob and carol and bob's waiting message")


def main():
    if len(sys.argv) not in (7, 8):
        sys.exit(__doc__)
    _host, _port, domain, _ca, chat_url, shots = sys.argv[1:7]
    https = chat_url.startswith("https:")
    is_demo = len(sys.argv) == 8 and sys.argv[7] == "demo"
    os.makedirs(shots, exist_ok=True)

    def stop(signum, _frame):
        raise StepFailed(f"stopped by signal {signum} (deadline {DEADLINE} s)")

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGALRM, stop)
    signal.alarm(DEADLINE)
    started = time.monotonic()
    drivers = []
    try:
        if is_demo:
            drivers.append(browser("alice", https))
            demo(drivers[0], domain, shots, chat_url)
        else:
            drivers += [browser("ada", https), browser("ben", https)]
            conversation(drivers[0], drivers[1], domain, shots, chat_url)
            drivers.append(browser("admin", https))
            administer(drivers[2], drivers[1], domain, shots, chat_url)
        for driver in drivers:
            errors = console_errors(driver)
            if errors:
                raise StepFailed(f"{driver.label}: the page logged errors: {errors}")
        ok("no errors in the browsers' consoles (CSP included)")
    except (StepFailed, WebDriverException) as failure:
        print(f"FAIL {str(failure).splitlines()[0]}", flush=True)
        sys.exit(1)
    finally:
        signal.alarm(0)
        for driver in drivers:
            driver.quit()
        shutil.rmtree(SCRATCH, ignore_errors=True)
    ok(f"all web chat browser steps passed: {'demo' if is_demo else 'conversation'} "
       f"in {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
