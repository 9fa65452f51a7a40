# SPDX-License-Identifier: Apache-2.0
"""Prints the PyPI requirements of the Home Assistant integrations this test
starts (HA's always-loaded sets from bootstrap, plus the names given), with
their dependencies and after-dependencies, read from the installed
manifests, and those of the
core's auth modules (their `REQUIREMENTS` lists, e.g. TOTP). Run by
Tests/HomeAssistant/lock inside a scratch root's venv, which compiles them with
hashes under HA's own constraints into requirements.lock; the test root
installs that lock, so Home Assistant never installs a package at run time."""
import ast
import json
import pathlib
import sys

import homeassistant.bootstrap as bootstrap
import homeassistant.components as components

base = pathlib.Path(components.__file__).parent
wanted = set(sys.argv[1:])
for name, value in vars(bootstrap).items():
    if name.endswith("INTEGRATIONS") and isinstance(value, (set, frozenset, tuple, list)):
        wanted |= {v for v in value if isinstance(v, str) and "." not in v}
seen, todo, reqs = set(), list(wanted), set()
while todo:
    domain = todo.pop()
    if domain in seen:
        continue
    seen.add(domain)
    manifest = base / domain / "manifest.json"
    if not manifest.exists():
        continue
    data = json.loads(manifest.read_text())
    reqs.update(data.get("requirements", []))
    todo.extend(data.get("dependencies", []))
    todo.extend(data.get("after_dependencies", []))
for module in pathlib.Path(components.__file__).parent.parent.joinpath("auth").rglob("*.py"):
    for node in ast.parse(module.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "REQUIREMENTS" for t in node.targets):
            reqs.update(ast.literal_eval(node.value))
print("\n".join(sorted(reqs)))
