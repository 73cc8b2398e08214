"""``manage.py inner_voice "question" --user NAME``: ask the inner voice from a terminal, through
the same validation and service as the API and the MCP tool. The question is never stored."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from mcpserver import tools  # noqa: F401  registers the tools
from mcpserver.management.commands.mcp import USER_VARIABLE, mcp_user
from mcpserver.registry import ToolError, tool_call


class Command(BaseCommand):
    help = "Ask the inner voice: prints the answer, its sources and the follow-up question."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("question")
        parser.add_argument("--user", help=f"username to ask as (or {USER_VARIABLE})")
        thread = parser.add_mutually_exclusive_group()
        thread.add_argument("--thread", help="continue this thread of yours (its id)")
        thread.add_argument("--new-thread", metavar="TOPIC", help="start a thread on TOPIC")
        parser.add_argument("--json", action="store_true", help="print the whole answer as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        user = mcp_user(options.get("user"))
        arguments: dict[str, Any] = {"query": options["question"]}
        if options.get("thread"):
            arguments["thread_id"] = options["thread"]
        if options.get("new_thread"):
            arguments["new_thread"] = options["new_thread"]
        try:
            result = tool_call(user=user, name="inner_voice", arguments=arguments)
        except ToolError as exc:
            raise CommandError(str(exc)) from None
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False))
            return
        self.stdout.write(result["answer"])
        self.stdout.write(f"\nSources: {result['sources_compact'] or 'none'}")
        if result.get("feedback"):
            self.stdout.write(f"Next: {result['feedback']}")
        thread = result["thread"]
        self.stdout.write(
            f"Thread: {thread['topic']} ({thread['id']}, exchange {thread['position']})"
        )
