// Serves a data dir kept by `bench/git.ts --real … --keep` (for client-side experiments):
//   bun bench/lib/serve-kept.ts DATA_DIR   → prints the clone URL of bench/<repo>, runs until killed.
import { gitUrl, startSvc } from "./git-svc.ts";

const dataDir = process.argv[2]!;
const repo = process.argv[3] ?? "steps";
const svc = await startSvc({ dataDir, log: "warn" });
const login = await fetch(`${svc.url}/v1/auth/login`, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ email: "bench@example.com", password: "correct horse battery staple" }),
});
const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
const mint = await fetch(`${svc.url}/v1/orgs/bench/tokens`, {
  method: "POST",
  headers: { "content-type": "application/json", cookie },
  body: JSON.stringify({ scopes: ["repo:read"], label: "kept" }),
});
const token = ((await mint.json()) as { token: string }).token;
process.stdout.write(`${gitUrl(svc, { org: "bench", token, cookie }, repo)} pid=${svc.pid}\n`);
process.on("SIGTERM", async () => {
  await svc.stop();
  process.exit(0);
});
await new Promise(() => {});
