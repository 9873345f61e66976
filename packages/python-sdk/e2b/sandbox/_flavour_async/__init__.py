"""The async flavour's hand-written half: what `e2b.sandbox_async` does its own way.

Written by hand in both flavours (`e2b.sandbox._flavour_sync` is the other), since the two truly
differ here: how a stream is pumped and a call waited on (`steps`), `watch_dir`'s handle
(`watch_handle`) and `stream_input` (`command_input_handle`). The async sources import this
package; codegen's unasync step renames it to `_flavour_sync` in their sync twins.
"""
