# SPDX-License-Identifier: Apache-2.0
"""Screenshots of the Home Assistant under test: a dashboard with the
speaker's media card and its entities, rendered by headless Chromium (the
root's Debian `chromium`) through the DevTools protocol, logged in by putting
a fresh token pair in localStorage `hassTokens` as the frontend itself does."""
import base64
import json
import time

from halib import WebSocket, free_port, http, in_root, wait_for_port

DASHBOARD = "ambient-speaker"

# Finds an element by tag name through every shadow root (HA's frontend is
# made of nested web components).
_DEEP_FIND = """(tag) => { const walk = (n) => { if (!n) return null;
  if (n.tagName && n.tagName.toLowerCase() === tag) return n;
  for (const c of [...(n.shadowRoot ? n.shadowRoot.children : []), ...n.children]) { const f = walk(c); if (f) return f; }
  return null; }; return !!walk(document.documentElement); }"""


def dashboard(ws, media_player, entity_ids):
    """A dashboard of its own: media card, a tile with the volume features
    (a slider shows only for an absolute speaker, buttons only for a relative
    one) and the device's entities."""
    others = sorted(e for e in entity_ids if e != media_player)
    if not any(d["url_path"] == DASHBOARD for d in ws.call("lovelace/dashboards/list")):
        ws.call("lovelace/dashboards/create", url_path=DASHBOARD, title="Ambient speaker", mode="storage",
                show_in_sidebar=True, require_admin=False, icon="mdi:speaker")
    ws.call("lovelace/config/save", url_path=DASHBOARD, config={"title": "Ambient speaker", "views": [{
        "title": "Ambient speaker", "path": "speaker", "type": "masonry", "cards": [
            {"type": "vertical-stack", "cards": [
                {"type": "media-control", "entity": media_player},
                {"type": "tile", "entity": media_player, "features_position": "bottom", "features": [
                    {"type": "media-player-volume-slider"}, {"type": "media-player-volume-buttons"}]}]},
            {"type": "entities", "title": "Entities", "state_color": True,
             "entities": [media_player] + others}]}]})


class DevTools:
    def __init__(self, port, path):
        self.ws = WebSocket(port, path)
        self.next_id = 1

    def call(self, method, **params):
        mid = self.next_id
        self.next_id += 1
        self.ws.send({"id": mid, "method": method, "params": params})
        while True:
            msg = self.ws.recv()
            if msg.get("id") == mid:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def evaluate(self, expression):
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                         awaitPromise=True).get("result", {}).get("value")


def take(root, work, ha_port, token, refresh_token, client_id, path, width=1100, height=1700):
    """Renders the dashboard into the PNG `path`; (ok, detail)."""
    status, tokens = http(ha_port, "POST", "/auth/token", {"grant_type": "refresh_token", "refresh_token": refresh_token,
                                                           "client_id": client_id}, form=True)
    if status != 200:
        return False, f"token refresh: {status} {tokens}"
    port = free_port()
    proc = in_root(root, work, ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                "--disable-dev-shm-usage", "--no-first-run", f"--remote-debugging-port={port}",
                                "--user-data-dir=/tmp/chromium-profile", f"--window-size={width},{height}",
                                "about:blank"], stdout=open(f"{work}/chromium.log", "ab"), stderr=open(f"{work}/chromium.log", "ab"))
    try:
        if not wait_for_port(port, 60, proc):
            return False, "chromium did not open its DevTools port"
        status, targets = http(port, "GET", "/json/list")
        page = next(t for t in targets if t.get("type") == "page")
        tools = DevTools(port, page["webSocketDebuggerUrl"].split(f":{port}", 1)[1])
        tools.call("Page.enable")
        tools.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        base = f"http://127.0.0.1:{ha_port}"
        tools.call("Page.navigate", url=f"{base}/manifest.json")
        time.sleep(1)
        stored = {"hassUrl": base, "clientId": client_id, "access_token": tokens["access_token"],
                  "refresh_token": refresh_token, "token_type": "Bearer", "expires_in": tokens["expires_in"],
                  "expires": int(time.time() * 1000) + tokens["expires_in"] * 1000}
        tools.evaluate(f"localStorage.setItem('hassTokens', {json.dumps(json.dumps(stored))}); "
                       "localStorage.setItem('dockedSidebar', JSON.stringify('always_hidden')); true")
        tools.call("Page.navigate", url=f"{base}/{DASHBOARD}/speaker")
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if tools.evaluate(f"({_DEEP_FIND})('hui-media-control-card') && ({_DEEP_FIND})('hui-entities-card')"):
                break
            time.sleep(0.5)
        else:
            shot = tools.call("Page.captureScreenshot", format="png")
            with open(path + ".failed.png", "wb") as f:
                f.write(base64.b64decode(shot["data"]))
            return False, f"the dashboard did not render its cards within 90 s (what it showed: {path}.failed.png)"
        time.sleep(3)  # images and transitions settle
        shot = tools.call("Page.captureScreenshot", format="png")
        data = base64.b64decode(shot["data"])
        with open(path, "wb") as f:
            f.write(data)
        return len(data) > 10000, f"{path} ({len(data) // 1024} KiB)"
    finally:
        proc.terminate()
        proc.wait(30)
