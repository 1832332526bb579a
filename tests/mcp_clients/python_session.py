"""An agent session with the official Python MCP client (`mcp` 2.3.0) against Exhale.

Run by crates/exhale/tests/it/mcp.rs with the server's URL and tokens in the environment:
EXHALE_MCP_URL, EXHALE_REST_URL, EXHALE_WRITE_TOKEN, EXHALE_READ_TOKEN, EXHALE_TRUSTED_TOKEN.
Every step asserts; the script exits non-zero on the first failure and prints `ok` at the end.
"""

import asyncio
import json
import os
import urllib.request

import anyio
from mcp import Client
from mcp import types
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

MCP_URL = os.environ["EXHALE_MCP_URL"]
REST_URL = os.environ["EXHALE_REST_URL"]


def transport(token):
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return streamable_http_client(MCP_URL, http_client=http)


def text_of(result):
    return "\n".join(block.text for block in result.content if getattr(block, "text", None))


def confirmation_id(result):
    assert result.is_error, text_of(result)
    body = text_of(result)
    assert body.startswith("confirmation_required"), body
    start = body.index("cf_")
    end = start
    while end < len(body) and (body[end].isalnum() or body[end] == "_"):
        end += 1
    return body[start:end]


def rest(op, token, body):
    request = urllib.request.Request(
        f"{REST_URL}/api/v1/ops/{op}",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read())


async def confirm_id_path(mode):
    """A client without elicitation: preview, confirmation_id, confirm_change, undo."""
    async with Client(transport(os.environ["EXHALE_WRITE_TOKEN"]), mode=mode) as client:
        context = await client.call_tool("get_context", {})
        assert not context.is_error and "How Exhale works" in context.structured_content["markdown"]
        briefing = await client.read_resource("exhale://context")
        assert "How Exhale works" in briefing.contents[0].text
        listed = await client.call_tool("list_subscriptions", {})
        assert listed.structured_content["total"] >= 1
        created = await client.call_tool(
            "create_subscription",
            {"name": f"Python {mode}", "amount": "4.99", "cycle": "monthly", "next_charge_on": "2026-12-20"},
        )
        created = await client.call_tool("confirm_change", {"confirmation_id": confirmation_id(created)})
        assert not created.is_error, text_of(created)
        new_id = created.structured_content["id"]
        deleted = await client.call_tool("delete_subscription", {"id": new_id})
        deleted = await client.call_tool("confirm_change", {"confirmation_id": confirmation_id(deleted)})
        assert not deleted.is_error, text_of(deleted)
        undo = await client.call_tool("undo", {"batch_id": deleted.structured_content["batch_id"]})
        undone = await client.call_tool("confirm_change", {"confirmation_id": confirmation_id(undo)})
        assert not undone.is_error, text_of(undone)
        back = await client.call_tool("get_subscription", {"id": new_id})
        assert back.structured_content["name"] == f"Python {mode}"


async def elicitation_path(mode):
    """A client with an elicitation callback: the person is asked and says yes."""
    asked = []

    async def person(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": True})

    async with Client(transport(os.environ["EXHALE_WRITE_TOKEN"]), mode=mode, elicitation_callback=person) as client:
        created = await client.call_tool(
            "create_subscription",
            {"name": f"Asked {mode}", "amount": "2.00", "cycle": "yearly", "next_charge_on": "2027-01-05"},
        )
        assert not created.is_error, text_of(created)
        assert asked and f"Added Asked {mode}" in asked[0], asked


async def scopes():
    async with Client(transport(os.environ["EXHALE_READ_TOKEN"])) as reader:
        names = {tool.name for tool in (await reader.list_tools()).tools}
        assert "get_context" in names and "create_subscription" not in names, names
        refused = await reader.call_tool("create_category", {"name": "Pets"})
        assert refused.is_error and text_of(refused).startswith("forbidden"), text_of(refused)
    async with Client(transport(os.environ["EXHALE_TRUSTED_TOKEN"])) as trusted:
        created = await trusted.call_tool(
            "create_subscription", {"name": "Trusted", "amount": "1.00", "cycle": "weekly", "next_charge_on": "2026-12-01"}
        )
        assert not created.is_error, "a trusted token creates without confirmation: " + text_of(created)
        deleted = await trusted.call_tool("delete_subscription", {"id": created.structured_content["id"]})
        confirmation_id(deleted)  # but still confirms a delete


async def notification_after_rest_write():
    async with Client(transport(os.environ["EXHALE_READ_TOKEN"]), mode="2026-07-28") as client:
        listed = await client.call_tool("list_subscriptions", {"limit": 1})
        first = listed.structured_content["items"][0]
        uri = f"exhale://subscriptions/{first['id']}"
        async with client.listen(resource_subscriptions=[uri]) as subscription:
            rest("update_subscription", os.environ["EXHALE_TRUSTED_TOKEN"], {"id": first["id"], "notes": "changed over REST"})
            with anyio.fail_after(20):
                async for event in subscription:
                    assert getattr(event, "uri", None) == uri, event
                    break


async def main():
    for mode in ("legacy", "2026-07-28"):
        await confirm_id_path(mode)
        await elicitation_path(mode)
    await scopes()
    await notification_after_rest_write()
    print("ok")


asyncio.run(main())
