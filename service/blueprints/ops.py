"""Operations: ``/healthz``, ``/readyz``, ``/metrics``, ``/openapi.yaml`` (+ ``.json``) and ``/docs``."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import yaml
from flask import Blueprint, Response

from service.blueprints._common import services
from service.errors import StoreUnavailable
from service.rendering import markdown_html

bp = Blueprint("ops", __name__)

ROOT = Path(__file__).resolve().parents[2]
STATIC = Path(__file__).resolve().parents[1] / "static"


def spec_path() -> Path:
    for candidate in (ROOT / "openapi.yaml", STATIC.parent / "openapi.yaml"):
        if candidate.exists():
            return candidate
    raise FileNotFoundError("openapi.yaml")


@functools.lru_cache(maxsize=1)
def spec_text() -> str:
    return spec_path().read_text()


@functools.lru_cache(maxsize=1)
def spec_json() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(spec_text())
    return data


@bp.get("/healthz")
def healthz() -> Any:
    return {"status": "ok"}


@bp.get("/readyz")
def readyz() -> Any:
    try:
        services().store.ping()
    except Exception as exc:
        raise StoreUnavailable(str(exc)) from None
    return {"status": "ok", "checks": {"store": "ok"}}


@bp.get("/metrics")
def metrics() -> Response:
    payload, content_type = services().metrics.exposition()
    return Response(payload, content_type=content_type)


@bp.get("/openapi.yaml")
def openapi_yaml() -> Response:
    return Response(spec_text(), content_type="application/yaml; charset=utf-8")  # no guessing by clients


@bp.get("/openapi.json")
def openapi_json() -> Any:
    return spec_json()


@functools.lru_cache(maxsize=1)
def docs_page() -> str:
    """``static/docs.html`` with the spec's descriptions rendered from Markdown to HTML on the server (the page
    shows them; the spec itself stays as written)."""
    spec = spec_json()
    rendered = {"info": str(markdown_html(spec["info"].get("description", "")))}
    for path, item in spec.get("paths", {}).items():
        for method, op in item.items():
            if isinstance(op, dict) and op.get("description"):
                rendered[f"{method.upper()} {path}"] = str(markdown_html(op["description"]))
    payload = json.dumps(rendered).replace("</", "<\\/")  # safe inside <script>
    page = (STATIC / "docs.html").read_text(encoding="utf-8")
    return page.replace("<!--DESCRIPTIONS-->",
                        f'<script type="application/json" id="descriptions">{payload}</script>', 1)


@bp.get("/docs")
def docs() -> Response:
    return Response(docs_page(), mimetype="text/html")
