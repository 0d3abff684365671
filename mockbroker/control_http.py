"""The control endpoint's old home, kept so `from mockbroker.control_http import ControlServer` goes on
working: the endpoint now lives in mockbroker.http (aiohttp, the JSON API, the console)."""

from mockbroker.http import ControlServer, HttpError, encoded, jsonable, start_control_server

__all__ = ["ControlServer", "start_control_server", "HttpError", "encoded", "jsonable"]
