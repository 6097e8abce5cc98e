"""The shared service layer (docs/architecture.md): what the worker, the producers and the
command line all rely on. Settings, Redis names and the lock token, Redis clients, the event
publisher and the one event-reading step, the queue, and ``resolve_context``.

It may import ``compaction`` and ``store``; nothing here imports ``worker``, ``producers`` or
``cli``.
"""
