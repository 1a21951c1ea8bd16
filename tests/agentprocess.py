"""A node agent's process run on a thread for tests: `lens node-agent` as built for `config`, its
ops port on loopback; `stop()` ends it and checks it exited cleanly."""

from __future__ import annotations

import threading

from lens.roles.node_agent import main as agent_main
from lens.roles.node_agent.main import NodeAgent
from lens.runtime.clock import Clock
from lens.runtime.config import Config
from lens.runtime.process import Process


class AgentProcess:
    def __init__(self, config: Config, *, name: str, clock: Clock | None = None) -> None:
        self.process = Process(
            name,
            server=config.server,
            service=config.service,
            clock=clock,
            handle_signals=False,
        )
        self.agent: NodeAgent = agent_main.build(config, self.process)
        self._codes: list[int] = []
        self._thread = threading.Thread(
            target=lambda: self._codes.append(self.process.service.run()), daemon=True
        )
        self._thread.start()
        assert self.process.service.started.wait(15)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.process.http.port}"

    def stop(self) -> None:
        self.process.service.request_stop("test over")
        self._thread.join(15)
        self.agent.cycle.close()
        assert self._codes == [0]
