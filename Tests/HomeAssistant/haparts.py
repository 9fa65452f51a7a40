# SPDX-License-Identifier: Apache-2.0
"""The programs Tests/HomeAssistant/check.py starts and drives: the built
speaker (simulated board, FIFO pcm) and Home Assistant in the trixie root,
its onboarding and config flows through the REST API, and registry look-ups
through the websocket API."""
import json
import os
import shutil
import signal
import subprocess
import time

from halib import DrainedFIFO, free_port, http, in_root, wait_for_port

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
INTEGRATION = f"{REPO}/integrations/home-assistant/custom_components/ambient_speaker"
DEVICE = "kitchen"
NAME = "Kitchen speaker"


class Speaker:
    """The built speaker on the simulated board (control socket), FIFO pcm."""

    def __init__(self, binary, work, broker_port):
        self.binary = binary
        self.work = work
        self.socket = f"{work}/control.sock"
        self.config = f"{work}/speaker.json"
        self.proc = None
        os.makedirs(f"{work}/sounds", exist_ok=True)
        os.makedirs(f"{work}/state", exist_ok=True)
        self.fifo = DrainedFIFO(f"{work}/pcm.fifo")
        self.broker_port = broker_port

    def write_config(self, mode, extra=None):
        """The config for volume `mode`, with `extra` top-level keys (mixes, schedules)."""
        with open(self.config, "w") as f:
            json.dump((extra or {}) | {"device": {"id": DEVICE, "name": NAME},
                       "board": {"kind": "simulated", "controlSocket": self.socket},
                       "audio": {"device": f"file:'{self.fifo.path}',raw", "fadeMs": 50, "crossfadeMs": 100,
                                 "soundsDirectory": f"{self.work}/sounds"},
                       "volume": {"mode": mode},
                       "mqtt": {"host": "127.0.0.1", "port": self.broker_port},
                       "stateDirectory": f"{self.work}/state"}, f)

    def start(self):
        self.proc = subprocess.Popen([self.binary, "run", "--config", self.config, "--log-level", "info"],
                                     stdout=subprocess.DEVNULL, stderr=open(f"{self.work}/speaker.log", "ab"))

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(15)


class HomeAssistant:
    """hass in the trixie root: config in WORK/config (/mnt/config inside)."""

    def __init__(self, root, work):
        self.root = root
        self.work = work
        self.port = free_port()
        self.config = f"{work}/config"
        self.log = f"{self.config}/home-assistant.log"
        self.proc = None
        os.makedirs(f"{self.config}/custom_components")
        shutil.copytree(INTEGRATION, f"{self.config}/custom_components/ambient_speaker",
                        ignore=shutil.ignore_patterns("__pycache__"))
        with open(f"{self.config}/configuration.yaml", "w") as f:
            f.write("homeassistant:\n  name: Home\n  time_zone: UTC\n  unit_system: metric\n"
                    "  latitude: 0\n  longitude: 0\n"
                    f"http:\n  server_host: 127.0.0.1\n  server_port: {self.port}\n")

    def start(self):
        started = time.monotonic()
        self.proc = in_root(self.root, self.work, ["hass", "-c", "/mnt/config", "--log-no-color", "--skip-pip"],
                            stdout=open(f"{self.work}/hass.out", "ab"), stderr=subprocess.STDOUT)
        if not wait_for_port(self.port, 300, self.proc):
            raise RuntimeError(f"Home Assistant did not open its port (exit {self.proc.poll()}); see {self.work}/hass.out")
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            status, _ = http(self.port, "GET", "/api/onboarding")
            if status in (200, 404):
                return time.monotonic() - started
            time.sleep(0.2)
        raise RuntimeError("Home Assistant's API did not answer")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def onboard(ha):
    """The onboarding steps through the REST API; returns (access, refresh, client_id)."""
    client_id = f"http://127.0.0.1:{ha.port}/"
    status, user = http(ha.port, "POST", "/api/onboarding/users",
                        {"client_id": client_id, "name": "Test", "username": "test",
                         "password": "ambient-speaker-test", "language": "en"})
    if status != 200:
        raise RuntimeError(f"onboarding/users: {status} {user}")
    status, tokens = http(ha.port, "POST", "/auth/token", {"grant_type": "authorization_code",
                                                           "code": user["auth_code"], "client_id": client_id}, form=True)
    if status != 200:
        raise RuntimeError(f"auth/token: {status} {tokens}")
    token = tokens["access_token"]
    for step, body in (("core_config", {}), ("analytics", {}),
                       ("integration", {"client_id": client_id, "redirect_uri": f"{client_id}?auth_callback=1"})):
        status, reply = http(ha.port, "POST", f"/api/onboarding/{step}", body, token=token)
        if status != 200:
            raise RuntimeError(f"onboarding/{step}: {status} {reply}")
    return token, tokens["refresh_token"], client_id


def flow(ha, token, handler, *steps):
    """A config flow through the REST API: start, then submit each step's input; the replies."""
    status, reply = http(ha.port, "POST", "/api/config/config_entries/flow",
                         {"handler": handler, "show_advanced_options": False}, token=token)
    replies = [reply]
    for data in steps:
        if status != 200 or reply.get("type") != "form":
            break
        status, reply = http(ha.port, "POST", f"/api/config/config_entries/flow/{reply['flow_id']}", data, token=token)
        replies.append(reply)
    return replies


def device_entities(ws, device_identifier):
    devices = ws.call("config/device_registry/list")
    device = next((d for d in devices if ["mqtt", device_identifier] in d["identifiers"]), None)
    if device is None:
        return None, []
    entities = [e for e in ws.call("config/entity_registry/list") if e["device_id"] == device["id"]]
    return device, entities
