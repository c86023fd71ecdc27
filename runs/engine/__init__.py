"""The run engine: the kernel that decides, in plain Python, with no database.

``policy`` is the one door every tool call passes (``gates`` inside it); ``turn`` runs an agent
turn and ``flow`` a flow, both over the journal folded into ``state`` and a ``recorder`` the
driver implements (``runs.journal``, through ``runs.executor``). The engine never imports
``runs.actions``, models or selectors, nor anything of HTTP, the API or WebSockets.
"""
