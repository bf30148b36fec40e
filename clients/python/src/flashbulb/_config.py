"""Where a client connects and with which key: the arguments, else ``FLASHBULB_URL``,
``FLASHBULB_API_KEY`` and ``FLASHBULB_WORKSPACE``, else the local default server; and the hints an
error carries about where each came from and how to set it.

The URL defaults to ``http://localhost:6381`` (the port ``flashbulb serve`` listens on) rather than
being required: the first thing a new user runs is a local server, as with other local-first
services' clients. A client that cannot reach the default says so, naming the variable.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

DEFAULT_URL = "http://localhost:6381"
URL_VAR = "FLASHBULB_URL"
KEY_VAR = "FLASHBULB_API_KEY"
WORKSPACE_VAR = "FLASHBULB_WORKSPACE"


def _env(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


@dataclass(frozen=True)
class Origin:
    """Where the URL and the key came from: ``argument``, the variable's name, ``default`` or ``none``."""

    url: str
    key: str


def resolve(base_url: str | None, api_key: str | None, workspace: str | None) -> tuple[str, str | None, str | None, Origin]:
    """The URL, key and workspace a client uses, and where the first two came from."""
    if base_url:
        url, url_from = base_url, "argument"
    elif _env(URL_VAR):
        url, url_from = _env(URL_VAR) or "", URL_VAR
    else:
        url, url_from = DEFAULT_URL, "default"
    if not url.startswith(("http://", "https://")):
        where = "base_url" if url_from == "argument" else URL_VAR
        raise ValueError(f"{where} must be an http:// or https:// URL such as {DEFAULT_URL}, not {url!r}")
    if api_key is None and _env(KEY_VAR):
        api_key, key_from = _env(KEY_VAR), KEY_VAR
    else:
        key_from = "argument" if api_key else "none"
    if workspace is None:
        workspace = _env(WORKSPACE_VAR)
    return url, api_key, workspace, Origin(url_from, key_from)


def unreachable_hint(url: str, origin: Origin) -> str:
    if origin.url == "default":
        return (f"cannot reach Flashbulb at {url}, the default: no base_url was given and {URL_VAR} is not set. "
                f"Start a server there (flashbulb serve) or point the client at yours: base_url=... or {URL_VAR}=...")
    where = "base_url" if origin.url == "argument" else URL_VAR
    return f"cannot reach Flashbulb at {url} (from {where})"


def unauthenticated_hint(origin: Origin) -> str:
    if origin.key == "none":
        return (f"no API key was given: pass api_key=... or set {KEY_VAR} (the server prints an admin key "
                "the first time it starts; admins make more with keys_create)")
    where = "api_key" if origin.key == "argument" else KEY_VAR
    return f"the key came from {where}"
