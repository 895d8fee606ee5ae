"""A small DevTools-protocol client for Debian's headless Chromium: open a file, collect
console errors, exceptions and network requests, evaluate JS, take screenshots."""

import base64
import contextlib
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Self

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--remote-debugging-port=0",
    "--remote-allow-origins=*",
]


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class BrowserError(RuntimeError):
    pass


class Chromium:
    """One browser process with a fresh profile; pages are opened as targets over one socket."""

    def __init__(self, timeout: float = 30.0) -> None:
        import websocket  # websocket-client, from the test extra

        path = chromium_path()
        if path is None:
            raise BrowserError("chromium is not installed")
        self.timeout = timeout
        self.profile = Path(tempfile.mkdtemp(prefix="ironbench-chromium-"))
        self.process = subprocess.Popen(
            [path, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while not (port_file.exists() and len(port_file.read_text().splitlines()) >= 2):
            if self.process.poll() is not None or time.monotonic() > deadline:
                error = self.process.stderr.read().decode(errors="replace")[-2000:] if self.process.poll() else ""
                self.close()
                raise BrowserError(f"chromium did not start its DevTools endpoint: {error}")
            time.sleep(0.05)
        port, ws_path = port_file.read_text().splitlines()[:2]
        self.socket = websocket.create_connection(
            f"ws://127.0.0.1:{port}{ws_path}", timeout=timeout, suppress_origin=True
        )
        self._next_id = 0
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.socket.send(json.dumps(message))
        while True:
            reply = json.loads(self.socket.recv())
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, session: str, timeout: float | None = None) -> dict:
        deadline = time.monotonic() + (timeout or self.timeout)
        seen = 0
        while True:
            for event in self.events[seen:]:
                if event.get("method") == method and event.get("sessionId") == session:
                    return event
            seen = len(self.events)
            if time.monotonic() > deadline:
                raise BrowserError(f"timed out waiting for {method}")
            self.socket.settimeout(max(0.05, deadline - time.monotonic()))
            self.events.append(json.loads(self.socket.recv()))

    def open(self, path: Path | str, scripts: bool = True, width: int = 1280, isolated: bool = False) -> "Page":
        """A file, or an http:// address (the viewer's pages). `isolated`: in a browser
        context of its own, as if in another browser (its own cookies and connections: a
        browser keeps at most six connections to one server, whatever the tabs)."""
        context = self.send("Target.createBrowserContext")["browserContextId"] if isolated else None
        params = {"url": "about:blank", **({"browserContextId": context} if context else {})}
        target = self.send("Target.createTarget", params)["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable", session=session)
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            session,
        )
        if not scripts:
            self.send("Emulation.setScriptExecutionDisabled", {"value": True}, session)
        start = len(self.events)
        url = path if isinstance(path, str) and path.startswith("http") else Path(path).resolve().as_uri()
        self.send("Page.navigate", {"url": url}, session)
        self.wait_for("Page.loadEventFired", session)
        return Page(self, session, target, start, context)

    def close(self) -> None:
        socket = getattr(self, "socket", None)
        if socket is not None:
            with contextlib.suppress(Exception):  # closing: whatever the socket raises, the browser goes next
                socket.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Page:
    def __init__(
        self, browser: Chromium, session: str, target: str, first_event: int, context: str | None = None
    ) -> None:
        self.browser, self.session, self.target, self.first_event = browser, session, target, first_event
        self.context = context

    def evaluate(self, expression: str):
        result = self.browser.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, self.session)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def _events(self) -> list[dict]:
        return [e for e in self.browser.events[self.first_event :] if e.get("sessionId") == self.session]

    def problems(self) -> list[str]:
        """Console errors and warnings, uncaught exceptions and browser-logged errors (CSP refusals too)."""
        self.evaluate("1")  # flush events that arrived with the load
        found = []
        for event in self._events():
            params = event.get("params", {})
            if event["method"] == "Runtime.consoleAPICalled" and params["type"] in ("error", "warning", "assert"):
                found.append("console: " + " ".join(str(a.get("value", a.get("description"))) for a in params["args"]))
            elif event["method"] == "Runtime.exceptionThrown":
                found.append("exception: " + json.dumps(params["exceptionDetails"])[:500])
            elif event["method"] == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
                found.append(f"log: {params['entry'].get('text')} {params['entry'].get('url', '')}".rstrip())
        return found

    def requests(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self._events() if e["method"] == "Network.requestWillBeSent"]

    def screenshot(self, path: Path, height: int | None = None) -> None:
        """The whole page (up to 16,000 px), or its top `height` pixels."""
        height = height or self.evaluate("document.documentElement.scrollHeight")
        width = self.evaluate("document.documentElement.scrollWidth")
        data = self.browser.send(
            "Page.captureScreenshot",
            {
                "format": "png",
                "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": width, "height": min(height, 16000), "scale": 1},
            },
            self.session,
        )["data"]
        Path(path).write_bytes(base64.b64decode(data))

    def close(self) -> None:
        self.browser.send("Target.closeTarget", {"targetId": self.target})
        if self.context is not None:
            self.browser.send("Target.disposeBrowserContext", {"browserContextId": self.context})
