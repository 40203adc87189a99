"""The inbox's use cases, protocol-neutral: each takes the dependencies, a `Caller` and its arguments and returns
a typed outcome. REST routes, MCP tools and the connectors are adapters that turn outcomes into their own answers;
a rule an action applies (the cloud API switched on, a member limited to assigned chats, a reason's length) is
stated here once.

`catalog` declares the actions MCP and the connectors expose; `run` runs one for a caller.
"""
