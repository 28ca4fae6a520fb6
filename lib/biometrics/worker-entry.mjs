// Worker threads run the engine's TypeScript sources directly: tsx compiles them on load, so the same
// files serve the Next server, the CLI scripts and the tests without a separate build step.
import { register } from "tsx/esm/api";

register();
await import("./worker.ts");
