"""OAuth with the official Python MCP client (`mcp` 2.3.0) against Exhale: the SDK discovers
the authorization server from /mcp's 401, registers itself, sends the person to the consent
page and exchanges the code, on its own. The person is played headlessly: sign in, open the
authorization URL, post the consent form, hand the redirect's code, state and iss back.

Run by crates/exhale/tests/it/oauth.rs with EXHALE_MCP_URL, EXHALE_ORIGIN, EXHALE_EMAIL and
EXHALE_PASSWORD in the environment. With EXHALE_CLIENT_METADATA_URL too, the client names
itself by that URL (a Client ID Metadata Document, which the test serves over HTTPS) instead of
registering. Every step asserts; prints `ok` at the end.
"""

import asyncio
import os
import re
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

MCP_URL = os.environ["EXHALE_MCP_URL"]
ORIGIN = os.environ["EXHALE_ORIGIN"]
METADATA_URL = os.environ.get("EXHALE_CLIENT_METADATA_URL")
REDIRECT = "http://127.0.0.1:43117/callback"


class Memory:
    """Token storage, kept between sessions as a client keeps it on disk."""

    def __init__(self):
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


def hidden(html, name):
    found = re.search(rf'name="{name}" value="([^"]*)"', html)
    assert found, f"no {name} field in:\n{html}"
    return found.group(1)


class Person:
    """Signs in once and answers consent pages, like someone at a browser without JavaScript."""

    def __init__(self):
        self.browser = httpx2.AsyncClient(base_url=ORIGIN, follow_redirects=False)
        self.answer: AuthorizationCodeResult | None = None
        self.asked = 0

    async def sign_in(self):
        form = await self.browser.get("/sign-in")
        signed_in = await self.browser.post(
            "/sign-in",
            data={
                "form_token": hidden(form.text, "form_token"),
                "email": os.environ["EXHALE_EMAIL"],
                "password": os.environ["EXHALE_PASSWORD"],
                "next": "/",
            },
        )
        assert signed_in.status_code == 303, signed_in.text

    async def consent(self, authorization_url):
        self.asked += 1
        assert authorization_url.startswith(f"{ORIGIN}/authorize?"), authorization_url
        page = await self.browser.get(authorization_url)
        assert page.status_code == 200, page.text
        assert "Python OAuth test" in page.text, page.text
        decided = await self.browser.post(
            "/authorize",
            data={
                "csrf": hidden(page.text, "csrf"),
                "request_id": hidden(page.text, "request_id"),
                "scope": "write",
                "decision": "approve",
            },
        )
        assert decided.status_code == 303, decided.text
        location = decided.headers["location"]
        assert location.startswith(REDIRECT), location
        query = parse_qs(urlparse(location).query)
        self.answer = AuthorizationCodeResult(code=query["code"][0], state=query["state"][0], iss=query["iss"][0])

    async def callback(self):
        answer, self.answer = self.answer, None
        assert answer is not None, "the consent page was not answered"
        return answer


def provider(storage, person):
    metadata = OAuthClientMetadata(
        client_name="Python OAuth test",
        redirect_uris=[REDIRECT],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(
        server_url=MCP_URL,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=person.consent,
        callback_handler=person.callback,
        client_metadata_url=METADATA_URL,
    )


def transport(auth):
    return streamable_http_client(MCP_URL, http_client=create_mcp_http_client(auth=auth))


async def main():
    storage, person = Memory(), Person()
    await person.sign_in()

    # First connection: discovery, registration (or the document's URL), consent, code
    # exchange, then MCP calls.
    async with Client(transport(provider(storage, person))) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert "list_subscriptions" in names and "create_category" in names, names
        listed = await client.call_tool("list_subscriptions", {})
        assert not listed.is_error
        assert "Netflix" in {item["name"] for item in listed.structured_content["items"]}
        created = await client.call_tool("create_category", {"name": "Added by Python"})
        assert not created.is_error, created
    assert person.asked == 1, person.asked
    if METADATA_URL:
        assert storage.client.client_id == METADATA_URL, storage.client
    else:
        assert storage.client.client_id.startswith("exhclient_"), storage.client
    first = storage.tokens
    assert first.refresh_token and first.scope == "read write", first

    # The access token has expired: the SDK refreshes it without asking the person again.
    refreshing = provider(storage, person)
    refreshing.context.token_expiry_time = 1.0
    async with Client(transport(refreshing)) as client:
        listed = await client.call_tool("list_subscriptions", {"limit": 1})
        assert not listed.is_error
    assert person.asked == 1, "a refresh asks nobody"
    assert storage.tokens.access_token != first.access_token
    assert storage.tokens.refresh_token != first.refresh_token, "refresh tokens rotate"

    # Revoked (RFC 7009): the next call is refused, and the SDK can only ask the person again.
    async with httpx2.AsyncClient() as http:
        revoked = await http.post(
            f"{ORIGIN}/revoke",
            data={"token": storage.tokens.refresh_token, "client_id": storage.client.client_id},
        )
        assert revoked.status_code == 200, revoked.text
        refused = await http.post(
            MCP_URL,
            headers={
                "Authorization": f"Bearer {storage.tokens.access_token}",
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            },
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        )
        assert refused.status_code == 401, refused.text
        assert 'error="invalid_token"' in refused.headers["www-authenticate"], refused.headers
    print("ok")


asyncio.run(main())
