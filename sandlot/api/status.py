"""What the server is and can do: `/v1/ping`, `/health`, `/languages`, `/metrics`."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response

from sandlot import telemetry
from sandlot.api.deps import ServiceDep

router = APIRouter(tags=["status"])

MECHANISM = {
    "zygote": "namespaces built by a per-slot zygote + cgroups + seccomp",
    "bwrap": "bubblewrap + cgroups + seccomp",
}
NETWORK = {
    True: "loopback only; a box's namespace goes to its slot's next box if its run left no trace",
    False: "loopback only; a new namespace per box",
}


@router.get("/v1/ping")
async def ping() -> str:
    return "pong"


@router.get("/health")
async def health(service: ServiceDep) -> JSONResponse:
    """Whether isolation is ready, slot use, queue length and the usable languages; 503 when
    the server runs no code, or is shutting down (a load balancer then stops sending)."""
    h = service.health()
    body = {
        "status": "draining" if h.draining else "ok" if h.ready else "unavailable",
        "isolation": {
            "ready": h.ready,
            "problem": h.problem,
            "mechanism": MECHANISM[service.config.boxes],
            "network": NETWORK[service.config.reuse_netns],
            "cgroup_version": h.cgroup_version,
            "cgroup": h.cgroup,
        },
        "slots": h.slots,
        "slot_cpus": h.slot_cpus,
        "busy": h.busy,
        "queued": h.queued,
        "languages": [row["name"] for row in service.languages() if row["available"]],
        "sessions": service.session_status(),
        "repositories": service.repos_status(),
        "worker": {"index": h.worker, "of": h.workers, "pid": h.pid},
    }
    return JSONResponse(body, status_code=200 if h.ready and not h.draining else 503)


@router.get("/languages")
@router.get("/v1/languages")
async def languages(service: ServiceDep) -> list[dict[str, object]]:
    """Every language this server knows, whether it can run it, and the toolchain version."""
    return service.languages()


@router.get("/metrics", response_class=Response, responses={200: {"content": {"text/plain": {}}}})
async def metrics() -> Response:
    """Prometheus' text format, summed over every server process (see sandlot/telemetry.py)."""
    body, media_type = telemetry.exposition()
    return Response(body, media_type=media_type)
