// `git http-backend` behind a local HTTP server, in a process of its own (so a benchmark's CPU
// accounting of its own children covers the client under test, not the origin): prints
// `listening http=<url>` and serves until killed. Usage: bun bench/lib/http-backend-server.ts <root>
import { startHttpBackend } from "../../test/helpers/git-http-backend.ts";

const root = process.argv[2];
if (!root) throw new Error("usage: http-backend-server.ts <project root>");
const backend = startHttpBackend({ root });
process.stdout.write(`listening http=${backend.url}\n`);
process.on("SIGTERM", () => {
  backend.stop();
  process.exit(0);
});
