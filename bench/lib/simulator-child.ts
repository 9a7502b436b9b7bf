/**
 * Runs the manager simulator in its own process for the benchmarks (simulator-process.ts starts
 * it): a simulator in the benchmark's process would compete with the client for the event loop
 * and the measured figures would be the sum of both. Protocol over the IPC channel: the parent
 * sends one `{ state, settings }`; the child answers `{ url }` or `{ error }`; on `"close"` or
 * when the parent goes away, it closes the server and exits.
 */
import {
  startSimulator,
  type SimulatorSettings,
  type SimulatorStateInput,
} from "../../src/simulator/index.ts";

interface StartMessage {
  state: SimulatorStateInput;
  settings?: Partial<SimulatorSettings>;
}

if (process.send === undefined) {
  console.error("simulator-child.ts is started by bench/lib/simulator-process.ts over IPC");
  process.exit(2);
}

process.once("message", (message: StartMessage) => {
  startSimulator({ state: message.state, ...(message.settings ? { settings: message.settings } : {}) }).then(
    (sim) => {
      const stop = (): void => void sim.close().finally(() => process.exit(0));
      process.on("message", (m) => {
        if (m === "close") stop();
      });
      process.once("disconnect", stop);
      process.send?.({ url: sim.url, rssBytes: process.memoryUsage().rss });
    },
    (error: unknown) => {
      process.send?.({ error: error instanceof Error ? error.message : String(error) }, () =>
        process.exit(1),
      );
    },
  );
});
