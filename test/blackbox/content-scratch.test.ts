import { afterAll, beforeAll, expect, test } from "bun:test";
import { clone, fsck } from "../helpers/git.ts";
import { commitOk, newRepo, put, startWorld, type World } from "../helpers/content.ts";
let w: World;
beforeAll(async () => { w = await startWorld("acme"); });
afterAll(async () => { await w?.close(); });
test("probe", async () => {
  let i = 0;
  for (const p of [".git.", "git~1", "GIT~1", ".git ", "sub/.gIt.", ".gitmodules", ".g\u200cit/x", ".git\u200d", "ok.txt", ".git::$INDEX_ALLOCATION/x", "a\\b", "git~2", ".gitmodules/x", ".gitmodules."]) {
    const repo = await newRepo(w, `probe${i++}`);
    const r = await repo.api.commit({ message: "m", operations: [put(p, "x")] });
    let cl = "";
    if (r.status === 201) { const res = await w.g.run(["clone", repo.url, w.g.path("c")]); cl = res.code === 0 ? "clone ok" : res.stderr.split("\n").find(l => l.startsWith("error")) ?? res.stderr; }
    console.log(JSON.stringify(p), r.status, cl);
  }
});
// 1
// 2
// 3
