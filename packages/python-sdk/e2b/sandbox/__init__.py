"""The data plane's flavour-neutral half: types, decoding, checks and URLs that both flavours import.

`e2b.sandbox_async` holds the async source of `sbx.commands`, `sbx.files` and
`sbx.pty`; `e2b.sandbox_sync` is derived from it (codegen's unasync step).
What does not await lives here, once, at the module paths e2b 2.x users
import it from (`e2b.sandbox.commands.command_handle.PtySize`, ...). Nothing
here imports the envd client, so `from e2b import PtySize` stays cheap.
"""
