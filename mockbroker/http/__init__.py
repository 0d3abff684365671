"""The broker's HTTP endpoint: the JSON control API, the web console and its live events, on aiohttp.

Imported only when the endpoint is enabled (`mockbroker --http-port`), so a broker without it never
loads aiohttp; without aiohttp (the `http` extra) importing this package raises MissingExtraError. Modules: app.py (server, routing, limits), json_api.py (the endpoints), records.py
(reading records for the API), request.py (request helpers, JSON conversion), events.py (server-sent
events, rates), openapi.py (the API's description), static/ (the console's HTML, CSS and JS).
"""

from mockbroker.extras import require

require("aiohttp", "the HTTP endpoint")  # before app.py imports it: one line naming the extra

from mockbroker.http.app import ControlServer, start_control_server  # noqa: E402
from mockbroker.http.request import HttpError, encoded, jsonable  # noqa: E402

__all__ = ["ControlServer", "start_control_server", "HttpError", "encoded", "jsonable"]
