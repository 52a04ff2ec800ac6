#!/usr/bin/env python3
"""The viewer in a real browser: headless Chromium through chromium-driver and selenium.

`make test-viewer` runs it (and `make test` runs that). It starts `coffer serve --no-auth` on a
SQLite store in a temporary folder (the "other process" that seeds rows and later changes them),
then `coffer ui` on the same file, opens the one-time link in Chromium and goes through the
scenarios, each saving a PNG under .build/viewer-screenshots. Exit status 0 when all pass.

    python3 Tests/Browser/viewer_browser_test.py [--coffer PATH] [--screenshots DIR]
"""

import argparse
import base64
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request
import uuid

from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

BOOKS = 10_000
AUTHORS = 50
HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>&amp;'


def field(name, kind, optional=False):
    return {"name": name, "kind": kind, "isOptional": optional}


AUTHOR = {
    "name": "Author",
    "fields": [field("id", "int"), field("name", "string"), field("email", "string", True), field("avatar", "bytes", True)],
    "idField": "id",
    "indexes": [],
}
BOOK = {
    "name": "Book",
    "fields": [
        field("id", "int"),
        field("title", "string"),
        field("authorID", "int"),
        field("price", "double"),
        field("published", "date"),
        field("isbn", "uuid"),
        field("inStock", "bool"),
        field("pages", "int", True),
        field("details", "document", True),
    ],
    "idField": "id",
    "indexes": [{"fields": ["title"], "isUnique": False}, {"fields": ["authorID"], "isUnique": False}],
    "references": [{"field": "authorID", "entity": "Author", "onDelete": "deny"}],
}


def title(i):
    return HOSTILE if i == 7 else f"Book {i:05d}"


def book_row(i):
    details = json.dumps({"edition": i % 3 + 1, "notes": ["first", "second"]}, separators=(",", ":"))
    return [
        {"int": i},
        {"string": title(i)},
        {"int": i % AUTHORS + 1},
        {"double": round(5 + (i * 37 % 1000) / 10, 2)},
        {"date": 1_700_000_000_000_000 + i * 86_400_000_000},
        {"uuid": str(uuid.UUID(int=i)).upper()},
        {"bool": i % 2 == 0},
        {"int": 100 + i % 400} if i % 10 else {"null": True},
        {"document": base64.b64encode(details.encode()).decode()} if i % 5 == 0 else {"null": True},
    ]


class API:
    """The seeding process's JSON API (coffer serve --no-auth)."""

    def __init__(self, base):
        self.base = base

    def post(self, path, body):
        request = urllib.request.Request(
            self.base + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            raise RuntimeError(f"{path}: {error.code} {error.read()[:300]!r}") from None

    def get_row(self, entity, id):
        rows = self.post("/v1/get", {"entity": entity, "ids": [{"int": id}]})["rows"]
        return rows[0] if rows else None

    def update(self, entity, row):
        self.post("/v1/apply", {"operations": [{"update": {"entity": entity, "row": row}}]})


def start(command, pattern, env=None):
    """Starts a process and waits for a line of its output matching `pattern`."""
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True
    )
    deadline = time.time() + 60
    lines = []
    while time.time() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
        match = re.search(pattern, line)
        if match:
            return process, match
    stop(process)
    raise RuntimeError(f"{command[:2]} did not start: {''.join(lines)[-2000:]}")


def stop(process):
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


class Viewer:
    def __init__(self, driver, shots):
        self.driver = driver
        self.shots = shots
        self.wait = WebDriverWait(driver, 20)

    def shot(self, name):
        path = os.path.join(self.shots, name + ".png")
        self.driver.save_screenshot(path)
        return path

    def find(self, css):
        return self.wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, css)))

    def click(self, css):
        element = self.wait.until(EC.element_to_be_clickable((By.CSS_SELECTOR, css)))
        element.click()
        return element

    def click_until(self, xpath, done, what):
        """Clicks the element `xpath` finds until `done(driver)` holds: the live change stream may
        draw the table anew between finding a button and clicking it."""
        for _ in range(6):
            try:
                self.driver.find_element(By.XPATH, xpath).click()
                WebDriverWait(self.driver, 3).until(done)
                return
            except (StaleElementReferenceException, NoSuchElementException, TimeoutException):
                time.sleep(0.3)
        raise AssertionError("could not " + what)

    def open_row(self, id):
        self.click_until(
            f"//table[@id='rows']//button[@class='open-row' and text()='{id}']",
            lambda d: d.execute_script("return document.getElementById('detail-title').textContent").endswith(f" {id}"),
            f"open row {id}",
        )

    def text_is(self, css, text):
        self.wait.until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, css), text))

    def cells(self, column):
        """The text of a column's cells, read in one step (the table may be drawn anew any time)."""
        return self.driver.execute_script(
            "return Array.from(document.querySelectorAll('#rows tbody tr td:nth-child(' + arguments[0] + ')'),"
            " td => td.textContent)",
            column,
        )

    def wait_first_id(self, expected):
        self.wait.until(lambda d: self.cells(1)[:1] == [expected])


def scenarios(viewer, api, link):
    driver = viewer.driver
    results = []

    def scenario(name):
        def register(function):
            results.append((name, function))
            return function

        return register

    @scenario("open on a seeded store")
    def open_store():
        driver.get(link)
        viewer.find('[data-count-for="Book"]')
        viewer.text_is('[data-count-for="Book"]', "10,000")
        assert "token" not in driver.current_url, "the token stayed in the address: " + driver.current_url
        cookies = driver.get_cookies()
        session = [c for c in cookies if c["name"].startswith("coffer_session_")]
        assert session and session[0]["httpOnly"] and session[0].get("sameSite") == "Strict", cookies
        viewer.click('[data-entity="Book"]')
        viewer.wait_first_id("1")
        viewer.shot("01-open")

    @scenario("page through 10,000 rows")
    def paging():
        Select(viewer.find("#page-size")).select_by_visible_text("1000")
        viewer.text_is("#range", "Rows 1–1,000 of 10,000")
        pages = 1
        while viewer.find("#next").is_enabled():
            expected = str(pages * 1000 + 1)
            viewer.click("#next")
            viewer.wait_first_id(expected)
            pages += 1
        viewer.text_is("#range", "Rows 9,001–10,000 of 10,000")
        assert viewer.cells(1)[-1] == "10000", viewer.cells(1)[-1]
        assert pages == 10, pages
        viewer.shot("02-last-page")
        viewer.click("#prev")
        viewer.wait_first_id("8001")
        viewer.click("#first")
        viewer.wait_first_id("1")
        Select(viewer.find("#page-size")).select_by_visible_text("25")
        viewer.text_is("#range", "Rows 1–25 of 10,000")

    @scenario("sort by a column")
    def sort():
        viewer.click('[data-sort="title"]')
        viewer.wait.until(lambda d: viewer.cells(2)[:1] == [HOSTILE])  # '<' sorts before 'B'
        viewer.text_is("#range", "of 10,000")  # the total stays: sorting changes only the order
        viewer.click('[data-sort="title"]')
        viewer.wait.until(lambda d: viewer.cells(2)[:1] == ["Book 10000"])
        titles = viewer.cells(2)
        assert titles == sorted(titles, reverse=True), titles[:5]
        header = driver.find_element(By.CSS_SELECTOR, 'th[aria-sort="descending"]')
        assert "title" in header.text
        viewer.click("#next")
        viewer.wait.until(lambda d: viewer.cells(2)[:1] == ["Book 09975"])
        viewer.shot("03-sorted")
        viewer.click('[data-sort="title"]')  # back to no sort
        viewer.wait_first_id("1")

    @scenario("filter")
    def filter_rows():
        viewer.click(".add-condition")
        Select(viewer.find(".cond-field")).select_by_value("title")
        Select(viewer.find(".cond-op")).select_by_value("containsIgnoringCase")
        value = viewer.find(".cond-value")
        value.send_keys("BOOK 0012")
        viewer.click(".add-condition")
        fields = driver.find_elements(By.CSS_SELECTOR, ".cond-field")
        Select(fields[1]).select_by_value("pages")
        ops = driver.find_elements(By.CSS_SELECTOR, ".cond-op")
        Select(ops[1]).select_by_value("isNotNull")
        viewer.click("#filter-apply")
        # The count and the page answer separately: wait for both (the page of 9 rows, the count 9).
        viewer.text_is("#range", "Rows 1–9 of 9")  # Book 00120..00129 less 00120 (pages null)
        ids = viewer.cells(1)
        assert ids == [str(i) for i in range(121, 130)], ids
        viewer.shot("04-filtered")
        viewer.click("#filter-clear")
        viewer.text_is("#range", "of 10,000")

    @scenario("full-text search")
    def search():
        Select(viewer.find("#search-field")).select_by_value("title")
        viewer.find("#search-query").send_keys("0012*")
        viewer.find("#search-query").send_keys(Keys.ENTER)
        viewer.text_is("#range", "Rows 1–10 of 10")
        assert viewer.cells(1) == [str(i) for i in range(120, 130)], viewer.cells(1)
        viewer.shot("05-search")
        viewer.find("#search-query").clear()
        viewer.find("#search-query").send_keys(Keys.ENTER)
        viewer.text_is("#range", "of 10,000")

    @scenario("follow a reference and back")
    def follow():
        viewer.click_until(  # Book 3 → Author 4
            "//table[@id='rows']/tbody/tr[3]//button[@class='follow']",
            lambda d: d.execute_script("return document.getElementById('detail-title').textContent") == "Author 4",
            "follow Book 3's author",
        )
        viewer.text_is("#entity-title", "Author")
        viewer.shot("06-reference")
        viewer.click('.referring-rows[data-entity="Book"]')
        viewer.text_is("#entity-title", "Book")
        viewer.text_is("#range", "of 200")
        assert set(viewer.cells(3)) == {"→ 4"}, set(viewer.cells(3))
        viewer.shot("07-referring-rows")

    @scenario("edit a value")
    def edit():
        viewer.click('[data-entity="Book"]')
        viewer.wait_first_id("1")
        viewer.open_row(2)
        viewer.click("#edit")
        box = viewer.find('#detail-form .edit[data-field="title"]')
        box.clear()
        box.send_keys("Edited in the browser")
        viewer.click("#save")
        viewer.text_is("#status", "Saved.")
        stored = api.get_row("Book", 2)
        assert stored[1] == {"string": "Edited in the browser"}, stored
        viewer.wait.until(lambda d: viewer.cells(2)[1] == "Edited in the browser")
        viewer.shot("08-edited")

    @scenario("a concurrent change shows as a conflict with both values")
    def conflict():
        viewer.open_row(3)
        viewer.click("#edit")
        # Another process changes the row while the form is open.
        row = api.get_row("Book", 3)
        row[1] = {"string": "Changed by another process"}
        api.update("Book", row)
        box = viewer.find('#detail-form .edit[data-field="title"]')
        box.clear()
        box.send_keys("Changed in the browser")
        viewer.click("#save")
        viewer.find("#conflict")
        theirs = viewer.find('#conflict tr[data-field="title"] .theirs').text
        mine = viewer.find('#conflict tr[data-field="title"] .mine').text
        assert theirs == "Changed by another process" and mine == "Changed in the browser", (theirs, mine)
        assert api.get_row("Book", 3)[1] == {"string": "Changed by another process"}, "the conflict overwrote"
        viewer.shot("09-conflict")
        viewer.click("#overwrite")
        viewer.text_is("#status", "Saved.")
        assert api.get_row("Book", 3)[1] == {"string": "Changed in the browser"}

    @scenario("another process's change appears")
    def live():
        viewer.find("#live.on")
        row = api.get_row("Book", 1)
        row[1] = {"string": "Live from another process"}
        api.update("Book", row)
        viewer.wait.until(lambda d: viewer.cells(2)[:1] == ["Live from another process"])
        api.post("/v1/apply", {"operations": [{"insert": {"entity": "Book", "row": book_row(BOOKS + 1)}}]})
        viewer.text_is("#range", "of 10,001")
        viewer.shot("10-live")

    @scenario("a hostile value shows as text")
    def hostile():
        viewer.open_row(7)
        cell = viewer.cells(2)[6]
        assert cell == HOSTILE, cell
        detail = viewer.find('#detail dd[data-field="title"]').text
        assert detail == HOSTILE, detail
        assert driver.execute_script("return window.__pwned === undefined"), "the stored script ran"
        assert not driver.find_elements(By.CSS_SELECTOR, "#rows img, #detail img, #rows script"), "markup was parsed"
        viewer.shot("11-hostile-value")

    @scenario("a write with the session cookie but without its CSRF header changes nothing")
    def csrf():
        status = driver.execute_async_script(
            """
            const done = arguments[arguments.length - 1];
            fetch('/v1/apply', {method: 'POST', headers: {'Content-Type': 'application/json'},
              body: JSON.stringify({operations: [{delete: {entity: 'Book', id: {int: 5}}}]})})
              .then(r => done(r.status), e => done(String(e)));
            """
        )
        assert status == 403, status
        assert api.get_row("Book", 5) is not None

    @scenario("a read-only viewer shows no way to change data")
    def read_only():
        ui, match = start([viewer.coffer, "ui", viewer.store, "--read-only"], r"open (http://\S+/ui/login\?token=\S+)")
        try:
            driver.get(match.group(1))
            viewer.text_is("#mode", "read only")
            viewer.click('[data-entity="Book"]')
            viewer.wait_first_id("1")
            viewer.open_row(1)
            assert not driver.find_elements(By.CSS_SELECTOR, "#edit, #delete, #save"), "edit controls shown"
            assert not viewer.find("#insert").is_displayed(), "the New row button is shown"
            viewer.shot("12-read-only")
        finally:
            stop(ui)
        driver.get(viewer.link_base + "/ui")

    @scenario("phone width")
    def narrow():
        driver.set_window_size(390, 844)
        viewer.click('[data-entity="Author"]')
        viewer.wait_first_id("1")
        viewer.shot("13-phone-width")
        driver.set_window_size(1280, 800)

    @scenario("the README's screenshot")
    def readme():
        driver.get(viewer.link_base + "/ui")
        viewer.click('[data-entity="Book"]')
        viewer.wait_first_id("1")
        viewer.click('[data-sort="title"]')
        viewer.wait.until(lambda d: viewer.cells(2)[:1] == [HOSTILE])
        viewer.open_row(10)
        viewer.find('#detail dd[data-field="details"] pre')
        viewer.shot("14-readme")

    return results


def measure(viewer, api, total, link):
    """Prints how long the viewer takes per page (fetch, decode and drawing, as the page measures
    it) on `total` rows: a measurement, not a test, so it asserts no time."""
    driver = viewer.driver
    driver.get(link)
    viewer.click('[data-entity="Book"]')
    viewer.wait_first_id("1")

    def pages(label, count):
        times = []
        for page in range(1, count + 1):
            viewer.click("#next")
            viewer.wait.until(lambda d: d.execute_script("return document.getElementById('rows').dataset.page") == str(page))
            times.append(int(driver.execute_script("return document.getElementById('rows').dataset.loadedMs")))
        times.sort()
        print(f"{label}: {count} pages of 100 rows: median {times[len(times) // 2]} ms, "
              f"p90 {times[int(len(times) * 0.9)]} ms, max {times[-1]} ms", flush=True)

    def sort_by(column):
        # The table's header is drawn anew with every page: find the button again if it went stale.
        for _ in range(6):
            try:
                viewer.click(f'[data-sort="{column}"]')
                return
            except StaleElementReferenceException:
                time.sleep(0.3)
        raise AssertionError(f"could not click the {column} header")

    pages("by id", 30)
    for column in ["title", "price"]:
        started = time.time()
        sort_by(column)
        viewer.wait.until(lambda d: d.execute_script("return document.getElementById('rows').dataset.page") == "0")
        time.sleep(0.5)
        first = driver.execute_script("return document.getElementById('rows').dataset.loadedMs")
        print(f"sort by {column}: first page {first} ms ({time.time() - started:.1f} s to click and see)", flush=True)
        pages(f"by {column} ({'indexed' if column == 'title' else 'no index'})", 10 if column == "price" else 30)
        sort_by(column)
        sort_by(column)
    raw_sqlite(viewer.store)
    return 0


def raw_sqlite(store):
    """Prints how long SQLite itself (Python's sqlite3 module, the same C library) takes for a page
    of 100 rows ordered by the column without an index: the floor under the viewer's page, since
    the engine reads every row for it."""
    import sqlite3

    connection = sqlite3.connect(store.removeprefix("sqlite://"))
    columns = "id, title, authorID, price, published, isbn, inStock, pages, details"
    queries = {
        "first page": f"SELECT {columns} FROM Book ORDER BY price, id LIMIT 101",
        "a later page": f"SELECT {columns} FROM Book WHERE price > 50.0 OR (price = 50.0 AND id > 500) "
        "ORDER BY price, id LIMIT 101",
        "reading every price, no sort": "SELECT max(price) FROM Book",
    }
    for name, query in queries.items():
        times = []
        for _ in range(9):
            started = time.perf_counter()
            connection.execute(query).fetchall()
            times.append((time.perf_counter() - started) * 1000)
        times.sort()
        print(f"raw SQLite {sqlite3.sqlite_version}, {name}: median {times[4]:.0f} ms, "
              f"fastest {times[0]:.0f} ms", flush=True)
    connection.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--coffer", default=".build/debug/coffer")
    parser.add_argument("--screenshots", default=".build/viewer-screenshots")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument(
        "--measure", type=int, default=0, metavar="ROWS",
        help="instead of the scenarios, seed ROWS books and print how long pages take in the browser")
    arguments = parser.parse_args()
    coffer = os.path.abspath(arguments.coffer)
    shots = os.path.abspath(arguments.screenshots)
    os.makedirs(shots, exist_ok=True)
    folder = tempfile.mkdtemp(prefix="coffer-viewer-test.")
    store = f"sqlite://{folder}/books.sqlite"
    processes = []
    driver = None
    passed, failed = 0, 0
    try:
        seeder, match = start([coffer, "serve", store, "--no-auth", "--listen", "127.0.0.1:0"], r"listening on (http://\S+)")
        processes.append(seeder)
        api = API(match.group(1))
        api.post("/v1/prepare", {"schemas": [AUTHOR, BOOK]})
        authors = [
            [{"int": a}, {"string": f"Author {a}"}, {"string": f"a{a}@example.com"} if a % 2 else {"null": True},
             {"bytes": base64.b64encode(bytes([a, 0, 255])).decode()}]
            for a in range(1, AUTHORS + 1)
        ]
        api.post("/v1/apply", {"operations": [{"insertMany": {"entity": "Author", "rows": authors}}]})
        total = arguments.measure or BOOKS
        for first in range(1, total + 1, 50_000):
            rows = [book_row(i) for i in range(first, min(first + 50_000, total + 1))]
            api.post("/v1/apply", {"operations": [{"insertMany": {"entity": "Book", "rows": rows}}]})
        api.post("/v1/admin/changes/record", {"retention": "all"})

        ui, match = start([coffer, "ui", store], r"open (http://\S+/ui/login\?token=\S+)")
        processes.append(ui)
        link = match.group(1)

        options = webdriver.ChromeOptions()
        for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,800", "--disable-gpu"]:
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
        driver = webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"))
        driver.set_script_timeout(20)
        viewer = Viewer(driver, shots)
        viewer.coffer, viewer.store = coffer, store
        viewer.link_base = link.split("/ui/")[0]
        if arguments.measure:
            return measure(viewer, api, arguments.measure, link)
        for name, function in scenarios(viewer, api, link):
            started = time.time()
            try:
                function()
                passed += 1
                print(f"PASS {name} ({time.time() - started:.1f} s)", flush=True)
            except Exception:
                failed += 1
                print(f"FAIL {name}", flush=True)
                traceback.print_exc()
                try:
                    viewer.shot("failed-" + re.sub(r"\W+", "-", name))
                    for entry in driver.get_log("browser")[-10:]:
                        print("  browser:", entry.get("message", "")[:300])
                    sent = []
                    for entry in driver.get_log("performance"):
                        message = json.loads(entry["message"])["message"]
                        if message["method"] == "Network.requestWillBeSent" and "/v1/" in message["params"]["request"]["url"]:
                            request = message["params"]["request"]
                            sent.append(request["url"].split("/v1/")[1] + " " + str(request.get("postData", ""))[:300])
                    for line in sent[-5:]:
                        print("  sent:", line)
                except Exception:
                    pass
                if name == "open on a seeded store":
                    break
    finally:
        if driver:
            driver.quit()
        for process in processes:
            stop(process)
        if not arguments.keep:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"Screenshots: {shots}")
    print(f"viewer: {passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
