#!/usr/bin/env python3
"""Opens an HTML report in headless Chromium through the DevTools protocol and checks it as a
reader's browser would see it:

* no console error, no uncaught exception, no failed load (a missing image or file);
* no request leaves the machine (only file: and data: URLs are allowed);
* every <img> loaded; the findings section starts within the first screen;

then saves a full-page screenshot (and SCREENSHOT-first-screen.png, the first 900 px). Exit
status 1 with the problems listed, 0 if clean.

    browser_check.py CHROMIUM REPORT.html SCREENSHOT.png
"""
import base64
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket  # websocket-client

WIDTH, FIRST_SCREEN = 1280, 900


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Page:
    def __init__(self, ws_url):
        self.ws = websocket.create_connection(ws_url, timeout=60)
        self.next_id = 0
        self.events = []

    def call(self, method, **params):
        self.next_id += 1
        my = self.next_id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_for(self, event, timeout=60):
        deadline = time.time() + timeout
        for e in self.events:
            if e["method"] == event:
                return e
        while time.time() < deadline:
            msg = json.loads(self.ws.recv())
            if "method" in msg:
                self.events.append(msg)
                if msg["method"] == event:
                    return msg
        raise TimeoutError(f"no {event} within {timeout} s")


def main():
    chromium, report, shot = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    port = free_port()
    profile = tempfile.mkdtemp(prefix="sifter-chromium-")
    proc = subprocess.Popen(
        [
            chromium,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--remote-allow-origins=*",
            f"--remote-debugging-port={port}",
            f"--user-data-dir={profile}",
            f"--window-size={WIDTH},{FIRST_SCREEN}",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    problems = []
    try:
        targets = None
        for _ in range(200):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=2) as r:
                    targets = [t for t in json.load(r) if t.get("type") == "page"]
                if targets:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        if not targets:
            print("browser check: Chromium did not start", file=sys.stderr)
            return 2
        page = Page(targets[0]["webSocketDebuggerUrl"])
        for domain in ("Page", "Runtime", "Log", "Network"):
            page.call(f"{domain}.enable")
        page.call("Page.navigate", url="file://" + report)
        page.wait_for("Page.loadEventFired")
        time.sleep(0.5)  # late console messages
        # Anything still queued on the socket.
        page.ws.settimeout(0.5)
        try:
            while True:
                msg = json.loads(page.ws.recv())
                if "method" in msg:
                    page.events.append(msg)
        except (websocket.WebSocketTimeoutException, TimeoutError):
            pass
        page.ws.settimeout(60)
        for e in page.events:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                args = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
                problems.append(f"console error: {args}")
            elif m == "Runtime.exceptionThrown":
                problems.append(f"uncaught exception: {p['exceptionDetails'].get('text')}")
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                problems.append(f"browser error: {p['entry'].get('text')} {p['entry'].get('url', '')}")
            elif m == "Network.loadingFailed":
                problems.append(f"failed load: {p.get('errorText')} (request {p.get('requestId')})")
            elif m == "Network.requestWillBeSent":
                url = p["request"]["url"]
                if not url.startswith(("file:", "data:", "about:")):
                    problems.append(f"external request: {url}")
        check = page.call(
            "Runtime.evaluate",
            returnByValue=True,
            expression="""({
                broken: Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src),
                findings: (document.getElementById('findings') || {getBoundingClientRect: () => ({top: 1e9})}).getBoundingClientRect().top,
                svgs: document.querySelectorAll('svg').length,
                height: document.documentElement.scrollHeight,
            })""",
        )["result"]["value"]
        for src in check["broken"]:
            problems.append(f"image did not load: {src}")
        if check["findings"] > FIRST_SCREEN:
            problems.append(f"the findings start at {check['findings']:.0f} px, below the first screen")
        if check["svgs"] == 0:
            problems.append("no plot on the page")
        height = int(check["height"])
        page.call(
            "Emulation.setDeviceMetricsOverride",
            width=WIDTH,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        png = page.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        with open(shot, "wb") as f:
            f.write(base64.b64decode(png))
        # The first screen alone: what a reader sees on opening the page.
        first = page.call(
            "Page.captureScreenshot",
            format="png",
            clip={"x": 0, "y": 0, "width": WIDTH, "height": FIRST_SCREEN, "scale": 1},
        )["data"]
        with open(shot.removesuffix(".png") + "-first-screen.png", "wb") as f:
            f.write(base64.b64decode(first))
        print(f"browser check: {report}: {check['svgs']} plots, page {WIDTH}x{height} px, screenshot {shot}")
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
    for p in problems:
        print(f"browser check: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
