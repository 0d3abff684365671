"""Starting and stopping a broker's Schema Registry with the broker, on its loop: MockBroker.start calls
`start_registry` (nothing unless its settings ask for a registry: `MockBroker(schema_registry=True)`, a
port, `--schema-registry-port`), MockBroker.stop calls `stop_registry`. aiohttp and fastavro are imported
only here, when a registry is asked for, so a broker without one never loads them."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mockbroker.registry.http import RegistryServer


async def start_registry(port: int | None, host: str = "127.0.0.1") -> RegistryServer | None:
    """The registry's server started on `port` (0: a free one), or None when no registry was asked for."""
    if port is None:
        return None
    from mockbroker.registry.http import RegistryServer
    return await RegistryServer().start(host, port)


async def stop_registry(server: RegistryServer | None) -> None:
    if server is not None:
        await server.stop()
