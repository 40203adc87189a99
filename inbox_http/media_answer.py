"""A customer's file as an HTTP answer, streamed: the Reporting API's media route and the agent inbox's own (a
session's) answer `reports.MEDIA`'s outcome alike."""

from __future__ import annotations

from urllib.parse import quote

from quart import Response

from inbox_actors.use_cases.reports import MessageFile


def media_response(file: MessageFile) -> Response:
    """The file with its type, its name (shown inline) and, when known, its length; a browser may keep it an hour
    (private: it is the workspace's)."""
    headers = {"Cache-Control": "private, max-age=3600"}
    if file.filename:
        headers["Content-Disposition"] = f"inline; filename*=UTF-8''{quote(file.filename)}"
    if file.stream.size is not None:
        headers["Content-Length"] = str(file.stream.size)
    return Response(file.stream.chunks, 200, content_type=file.stream.mime_type, headers=headers)
