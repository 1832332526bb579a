#!/usr/bin/env python3
"""Writes each MCP Apps view's Content-Security-Policy with the hashes of its own script and
style (crates/mcp/views/*.html): run it after editing a view. The test
`apps::tests::every_view_denies_the_network_and_runs_only_its_own_script` checks it was run."""
import base64, hashlib, pathlib, re

for path in sorted(pathlib.Path(__file__).resolve().parent.parent.joinpath("crates/mcp/views").glob("*.html")):
    html = path.read_text()
    digest = lambda tag: base64.b64encode(hashlib.sha256(
        html.split(f"<{tag}>", 1)[1].split(f"</{tag}>", 1)[0].encode()).digest()).decode()
    policy = (f"default-src 'none'; script-src 'sha256-{digest('script')}'; "
              f"style-src 'sha256-{digest('style')}'; base-uri 'none'; form-action 'none'")
    html = re.sub(r'(http-equiv="Content-Security-Policy" content=")[^"]*(")', lambda m: m.group(1) + policy + m.group(2), html, count=1)
    path.write_text(html)
    print(f"{path.name}: {policy}")
