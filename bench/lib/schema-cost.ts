// What the repos routes' schemas cost per request, in-process and in CPU time (so other load on
// the machine matters less): the same handler answered through Elysia with and without its
// response map as the routes declare it (Repo or a 1,000-entry Tree at 200, plus the error
// statuses: a map of several statuses also makes Elysia map the answer with `set`), and the
// commit request body of 10,000 operations checked and cleaned by the TypeBox schema versus the
// loose object schema it replaced.
//
//   bun bench/lib/schema-cost.ts
//
// Prints CPU µs per answer (best of 9 rounds) for each variant.
import { Elysia, t } from "elysia";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { createMirror } from "exact-mirror";
import { CommitRequest, Repo, Tree } from "../../src/services/repos/schemas.ts";
import { errors } from "../../src/services/schemas.ts";

const sha = (i: number) => i.toString(16).padStart(40, "0");
const tree = {
  ref: "main",
  commit: sha(1),
  path: "wide",
  entries: Array.from({ length: 1000 }, (_, i) => ({
    name: `f${i}.txt`,
    path: `wide/f${i}.txt`,
    type: "blob" as const,
    mode: "100644",
    oid: sha(i),
    size: 1000 + i,
  })),
};
const repo = {
  id: "r7k2m9p4q8s1t6v3",
  org_id: "o3x9m2p7q4r8s6t1",
  org: "acme",
  name: "app",
  kind: "native" as const,
  public: false,
  default_branch: "main",
  origin_url: null,
  origin_provider: null,
  origin_installation: null,
  last_sync_at: null,
  last_synced_commit: null,
  sync_error: null,
  created_at: 1795248971422,
  clone_url: "https://git.example.com/acme/app.git",
  ssh_clone_url: null,
  description: "The app",
  homepage: null,
  fork_count: 0,
  watcher_count: 2,
  fork_parent: null,
  viewer_admin: true,
  viewer_write: true,
  write_blocked: null,
};
const app = new Elysia()
  .get("/repo-plain/:org/:repo", async () => repo)
  .get("/repo-schema/:org/:repo", async () => repo, { response: { 200: Repo, ...errors(401, 404) } })
  .get("/tree-plain/:org/:repo", async () => tree)
  .get("/tree-schema/:org/:repo", async () => tree, { response: { 200: Tree, ...errors(400, 401, 404) } });

/** Best-of-9 CPU µs per call of `f`. */
async function cpuPer(n: number, f: () => unknown): Promise<number> {
  let best = Infinity;
  for (let r = 0; r < 9; r++) {
    const c = process.cpuUsage();
    for (let i = 0; i < n; i++) await f();
    const d = process.cpuUsage(c);
    best = Math.min(best, (d.user + d.system) / n);
  }
  return Math.round(best * 100) / 100;
}
const get = (path: string) => async () => (await app.handle(new Request(`http://localhost${path}/acme/app`))).text();

const LooseOperation = t.Object({ op: t.String(), path: t.String(), content: t.Optional(t.String()) });
const LooseCommit = t.Object({
  branch: t.Optional(t.String()),
  expected_parent: t.Optional(t.Nullable(t.String())),
  message: t.String(),
  author: t.Optional(t.Object({ name: t.String(), email: t.String() })),
  context: t.Optional(t.Unknown()),
  operations: t.Array(LooseOperation, { maxItems: 10000 }),
});
const body = {
  message: "m",
  operations: Array.from({ length: 10_000 }, (_, i) => ({ op: "put", path: `new/d${i % 100}/f${i}.txt`, content: "x".repeat(250) })),
};
const bodyCost = (schema: object) => {
  const check = TypeCompiler.Compile(schema as never);
  const clean = createMirror(schema as never, { TypeCompiler } as never);
  return cpuPer(20, () => check.Check(clean(body as never)));
};

console.log(
  JSON.stringify(
    {
      unit: "CPU µs per answer, best of 9",
      get_repo: { without_schema: await cpuPer(5000, get("/repo-plain")), with_schema: await cpuPer(5000, get("/repo-schema")) },
      tree_1000: { without_schema: await cpuPer(200, get("/tree-plain")), with_schema: await cpuPer(200, get("/tree-schema")) },
      commit_body_10000_ops: { loose_schema: await bodyCost(LooseCommit), typed_schema: await bodyCost(CommitRequest) },
    },
    null,
    2,
  ),
);
