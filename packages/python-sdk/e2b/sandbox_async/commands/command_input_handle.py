"""`stream_input`'s part, at the module path e2b 2.x users import it from.

The two flavours differ (a handle to send chunks through, an iterable sent in one call), so each
is written by hand under `e2b.sandbox`; this module and its twin re-export theirs.
"""

from e2b.sandbox._flavour_async.command_input_handle import *  # noqa: F403  # the flavour's module, whole
