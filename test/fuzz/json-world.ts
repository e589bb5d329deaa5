// The server the JSON-route fuzzer runs against: an owner, a token with every scope, a
// repository with some history, and a local mirror that checks the repository whole with git.
import { gitSandbox, type GitSandbox } from "../helpers/git.ts";
import { client, createUser, login, mintToken, startServer } from "../helpers/server.ts";
import type { JsonWorld } from "./json-targets.ts";

/** Generous limits: the fuzzer presents bad credentials on purpose, and 429s would hide the routes behind. */
export const FUZZ_SERVER_ENV = {
  SVC_LOGIN_LIMIT_PER_SOURCE: "1000000",
  SVC_LOGIN_LIMIT_PER_ACCOUNT: "1000000",
  SVC_AUTH_FAILURE_LIMIT_PER_SOURCE: "1000000",
};

/** Starts the server and fills it; `close` stops it and removes everything. */
export async function openJsonWorld(): Promise<JsonWorld & { g: GitSandbox; serverRss(): number; close(): Promise<void> }> {
  const server = await startServer({ env: FUZZ_SERVER_ENV });
  const u = await createUser(server, { org: "acme", email: "owner@example.com" });
  const cookie = await login(server, u.email, u.password);
  const token = await mintToken(server, cookie, "acme", { scopes: ["repo:read", "repo:write", "org:read", "org:admin"], label: "fuzz" });
  const api = client(server, { token });
  for (const name of ["app", "scratch"]) if ((await api.post("/v1/orgs/acme/repos", { name })).status !== 201) throw new Error("repo create failed");
  for (let i = 0; i < 3; i++) {
    const r = await api.post("/v1/orgs/acme/repos/app/commits", {
      message: `seed ${i}`,
      operations: [{ op: "put", path: `dir${i}/file.txt`, content: `content ${i}\n` }],
    });
    if (r.status !== 201) throw new Error(`seed commit failed: ${r.status}`);
  }
  const g = gitSandbox("svc-fuzz-json-");
  const mirror = g.path("mirror");
  const remote = `${server.url.replace("http://", `http://x:${token}@`)}/acme/app.git`;
  await g.ok(["clone", "-q", "--mirror", remote, mirror]);
  return {
    server,
    org: "acme",
    repo: "app",
    scratch: "scratch",
    handle: u.handle,
    token,
    cookie,
    g,
    async checkRepository() {
      // Every ref the server shows must fetch into a complete, fsck-clean repository.
      await g.ok(["-c", "fetch.fsckObjects=true", "fetch", "-q", "--prune", remote, "+refs/*:refs/*"], { cwd: mirror });
      await g.ok(["fsck", "--strict", "--no-dangling", "--connectivity-only"], { cwd: mirror });
      await g.ok(["fsck", "--strict", "--no-dangling"], { cwd: mirror });
    },
    serverRss() {
      const status = require("node:fs").readFileSync(`/proc/${server.proc.pid}/status`, "utf8") as string;
      return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
    },
    async close() {
      await server[Symbol.asyncDispose]();
      g[Symbol.dispose]();
    },
  };
}
