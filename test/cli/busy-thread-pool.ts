/**
 * Preloaded (`--import`) into a CLI process by run-flags.test.ts, with UV_THREADPOOL_SIZE=1: on
 * SIGTERM it keeps libuv's thread pool busy for about a second, as a loaded machine can, so that
 * a log line waiting there for an asynchronous write would be overtaken at exit by later lines.
 */
import { pbkdf2 } from "node:crypto";

process.on("SIGTERM", () => pbkdf2("busy", "pool", 3_000_000, 64, "sha512", () => {}));
