"""A verl tool whose code runs in a sandlot session: a trajectory's turns share one kernel.

verl's own SandboxFusionTool runs every call in a fresh process (`/run_code`), so a variable
set in one turn is gone in the next. This tool keeps one session per trajectory: `create` opens
it, `execute` runs the model's code there and returns what it printed (its value, its error)
as the next observation, `release` deletes it. Set an environment up once and every session
starts from it, never set up again: give a snapshot's id (`Session.snapshot()`) as `snapshot`
in the tool's config, or per sample in its `create_kwargs` (verl's `tools_kwargs`). Point
verl's tool config at it:

    tools:
      - class_name: examples.verl_tool.SandlotSessionTool
        config: {sandlot_url: "http://127.0.0.1:8080", language: python, timeout: 30,
                 snapshot: null}
        tool_schema:
          type: function
          function:
            name: code_interpreter
            description: Run Python in a Jupyter kernel that keeps its state between calls
            parameters:
              type: object
              properties: {code: {type: string, description: the code to run}}
              required: [code]

tests/client/test_session_client.py runs it against a real server (with verl's two base classes
stubbed: verl is not installed there).
"""

from __future__ import annotations

from typing import Any
from uuid import uuid4

from verl.tools.base_tool import BaseTool
from verl.tools.schemas import ToolResponse

from sandlot.client import AsyncClient, ToolSessions


class SandlotSessionTool(BaseTool):
    def __init__(self, config: dict, tool_schema: Any) -> None:
        super().__init__(config, tool_schema)
        client = AsyncClient(config.get("sandlot_url", "http://127.0.0.1:8080"))
        self.sessions = ToolSessions(
            client, language=config.get("language", "python"), timeout=config.get("timeout", 30)
        )
        self.snapshot = config.get("snapshot")  # every session starts from it, if given

    async def create(
        self, instance_id: str | None = None, create_kwargs: dict | None = None, **kwargs: Any
    ) -> tuple[str, Any]:
        instance_id = instance_id or str(uuid4())
        snapshot = (create_kwargs or {}).get("snapshot") or self.snapshot
        await self.sessions.create(instance_id, snapshot=snapshot)
        return instance_id, ToolResponse()

    async def execute(
        self, instance_id: str, parameters: dict[str, Any], **kwargs: Any
    ) -> tuple[Any, float, dict]:
        code = str(parameters.get("code", ""))
        text = await self.sessions.execute(instance_id, code, parameters.get("timeout"))
        return ToolResponse(text=text), 0.0, {}

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        await self.sessions.release(instance_id)
