"""HTTP/1.1 requests the service makes, on trio and h11: pooled keep-alive connections and one exchange on them.

Both the webhook transport (webhooks/transport.py) and the platform's send client (platform/client.py) post
through here rather than through httpx: under py-spy, httpx and httpcore were 19% of a template send's CPU in
`scripts/bench_send.py`, of which h11's own parsing and framing, which stay, were 7%.
"""
