"""The web playground: `/playground/` and its pages, files and language templates; `/` redirects.
The API docs, `/docs`: Swagger UI from the playground's files, under the same policy.

Every page is one shell (static/playground.html) whose script picks the page from the path.
The pages are served with a strict Content-Security-Policy: scripts and styles from this origin
only (no inline script, no eval), nothing from any other origin, no framing. What a program
prints reaches the page as text, never as markup (static/js/dom.js).
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse, RedirectResponse

from sandlot.errors import NotFound
from sandlot.playground import StaticFile, as_json, static_files

PAGES = ("tests", "datasets", "notebook", "status")  # besides the Run page at /playground/
CSP = "; ".join((
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
))  # fmt: skip
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",  # revalidated by ETag: an upgraded server's files show at once
}
FILES = static_files()
SHELL = FILES["playground.html"]
DOCS = FILES["docs.html"]

router = APIRouter(include_in_schema=False)


def _send(file: StaticFile, request: Request) -> Response:
    headers = {**HEADERS, "ETag": file.etag}
    if request.headers.get("if-none-match") == file.etag:
        return Response(status_code=304, headers=headers)
    return Response(file.body, media_type=file.media_type, headers=headers)


@router.get("/")
async def root() -> RedirectResponse:
    return RedirectResponse("playground/")  # relative: right behind a proxy's path prefix too


@router.get("/playground")
async def playground_bare() -> RedirectResponse:
    return RedirectResponse("playground/")  # the pages' relative links need the slash


@router.get("/playground/")
async def run_page(request: Request) -> Response:
    return _send(SHELL, request)


@router.get("/playground/templates.json")
async def language_templates() -> JSONResponse:
    """Each language's editor mode and hello world (sandlot/playground/templates.py)."""
    return JSONResponse(as_json(), headers=HEADERS)


@router.get("/playground/static/{name:path}")
async def static(name: str, request: Request) -> Response:
    file = FILES.get(name)
    if file is None:
        raise NotFound(f"the playground has no file {name[:200]!r}")
    return _send(file, request)


@router.get("/playground/{page}")
async def page(page: str, request: Request) -> Response:
    if page not in PAGES:
        raise NotFound(f"no playground page {page[:100]!r}; pages: run (/playground/), "
                       + ", ".join(PAGES))  # fmt: skip
    return _send(SHELL, request)


@router.get("/docs")
async def docs(request: Request) -> Response:
    """Swagger UI, vendored (static/vendor/swagger-ui/): nothing from a CDN, and no script of
    another origin beside the API key the playground keeps in this origin's sessionStorage."""
    return _send(DOCS, request)


@router.get("/redoc")
async def redoc() -> RedirectResponse:
    return RedirectResponse("docs")  # FastAPI's other docs page, which loaded ReDoc from a CDN
