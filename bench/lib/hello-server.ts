// The baseline: a bare Bun.serve answering every request with a small JSON body.
// Run as a child process; prints `listening http=<url>` once bound.
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: () => Response.json({ hello: "world" }),
});
process.stdout.write(`listening http=http://127.0.0.1:${server.port}\n`);
process.once("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
