// Benchmark (issue 25): replays every hostile case of the issue's table against one running
// server (started from source, as the black-box tests start it) while a separate process probes
// GET /healthz every 100 ms (bench/lib/healthz-probe.ts), and prints, per case, the worst probe
// latency (the stall) and the p99, with what the server answered (the outcome: refused, leaked,
// redirected…). Target (issue 25): ≤ 100 ms p99 while any single case runs, ≤ 250 ms p99 during
// 20 concurrent clones.
//
//   bun bench/stall.ts [--rows 1,2,4] [--interval 100] [--small] [--root DIR] [--out FILE] [--keep]
//
// --root runs the server of another checkout (e.g. /work/main, for the figures before a fix);
// the cases and the prober stay this checkout's.
// --small shrinks the bombs (64 MiB instead of 1 GiB, 5,000-deep instead of 50,000) for a quick
// look; the recorded figures use the issue's sizes. A case that runs longer than its limit is
// reported as `timeout` (the probe figures still cover the time it ran). Rows 1, 4, 5, 6, 13
// and 15 are other helpers' fixes (reachability, receive and upload caps, threads for packs):
// until those land their rows show the stalls of the finding.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { defaultRepoPath, generate } from "./gen-repo.ts";
import { deltaBomb, deepChain, receivePackBody, zlibBomb } from "./lib/hostile-packs.ts";
import { gitEnv, run as runCmd } from "./lib/git-util.ts";
import { machine, rssOf } from "./lib/machine.ts";
import { BUN, ROOT, cleanEnv, run } from "./lib/proc.ts";
import { startSvc } from "./lib/svc.ts";
import { encodePkt } from "../src/git/pkt-line.ts";

const { values: opt } = parseArgs({
  args: process.argv.slice(2),
  options: {
    rows: { type: "string" },
    interval: { type: "string", default: "100" },
    small: { type: "boolean", default: false },
    out: { type: "string" },
    keep: { type: "boolean", default: false },
    root: { type: "string", default: ROOT },
  },
});
const wanted = opt.rows ? new Set(opt.rows.split(",").map((r) => Number(r.trim()))) : null;
const interval = Number(opt.interval);
const small = opt.small;
const log = (msg: string) => process.stderr.write(`[bench/stall] ${msg}\n`);
const load = () => loadavg().map((x) => Math.round(x * 100) / 100);

const SECRET = "stall-bench-webhook-secret";
const PASSWORD = "correct horse battery staple";
const dir = mkdtempSync(join(tmpdir(), "svc-bench-stall-"));
const home = join(dir, "home");
mkdirSync(home, { recursive: true });
const genv = gitEnv(home);
const loadBefore = load();
const server = await startSvc(
  dir,
  {
    SVC_LOG: "warn",
    SVC_WEBHOOK_SECRET: SECRET,
    // Rows 4-5 are about sizes after inflation: their packs are under 1 MiB either way; 64m lets row 15's repository in.
    SVC_GIT_MAX_PUSH: "64m",
    SVC_SIGNUP_LIMIT_PER_ADDRESS: "1000",
    SVC_SIGNUP_LIMIT_GLOBAL: "100000",
  },
  [],
  opt.root,
);
const base = server.url;
log(`server ${base} (pid ${server.pid}), data ${dir}`);

// ---- the prober ---------------------------------------------------------------------------
interface Sample {
  at: number;
  ms: number;
  error?: string;
}
const samples: Sample[] = [];
const prober = Bun.spawn([BUN, join(ROOT, "bench/lib/healthz-probe.ts"), base, String(interval)], { stdout: "pipe", stderr: "inherit", env: cleanEnv() });
void (async () => {
  let buf = "";
  for await (const chunk of prober.stdout as ReadableStream<Uint8Array>) {
    buf += new TextDecoder().decode(chunk);
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.trim()) samples.push(JSON.parse(line) as Sample);
    }
  }
})();

function windowStats(from: number, to: number) {
  const xs = samples
    .filter((s) => s.at >= from && s.at <= to)
    .map((s) => s.ms)
    .sort((a, b) => a - b);
  if (!xs.length) return { probes: 0, worst_ms: null, p99_ms: null, p50_ms: null };
  const q = (p: number) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
  return { probes: xs.length, worst_ms: xs[xs.length - 1]!, p99_ms: q(0.99), p50_ms: q(0.5) };
}

// ---- the API ------------------------------------------------------------------------------
const JSON_TYPE = { "content-type": "application/json" };

async function api(
  method: string,
  path: string,
  o: { cookie?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const headers: Record<string, string> = { origin: base, ...(o.cookie ? { cookie: o.cookie } : {}), ...(o.body !== undefined ? JSON_TYPE : {}), ...o.headers };
  const res = await fetch(base + path, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body), redirect: "manual" });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body, headers: res.headers };
}

/** A confirmed person (svc user-create) signed in; their cookie and a token of `org`. */
async function person(org: string, email: string, handle: string, role = "owner"): Promise<{ cookie: string; token: string; email: string; handle: string }> {
  const r = await run(
    [
      BUN,
      join(opt.root, "src/main.ts"),
      "user-create",
      "--org",
      org,
      "--email",
      email,
      "--name",
      handle,
      "--handle",
      handle,
      "--password",
      PASSWORD,
      "--role",
      role,
    ],
    { ...cleanEnv(), ...server.env },
  );
  if (r.code !== 0) throw new Error(`user-create: ${r.stderr}`);
  const login = await api("POST", "/v1/auth/login", { body: { email, password: PASSWORD } });
  const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
  const token = (await api("POST", `/v1/orgs/${org}/tokens`, { cookie, body: { scopes: ["repo:write"], label: "bench" } })).body.token;
  return { cookie, token, email, handle };
}

const owner = await person("acme", "owner@acme.example", "ada");
async function repo(name: string, isPublic = true, who = owner, org = "acme"): Promise<void> {
  const r = await api("POST", `/v1/orgs/${org}/repos`, { cookie: who.cookie, body: { name, public: isPublic } });
  if (r.status !== 201) throw new Error(`create ${org}/${name}: ${r.status} ${JSON.stringify(r.body)}`);
}
async function commit(
  name: string,
  files: Record<string, string>,
  branch = "main",
  who = owner,
  org = "acme",
): Promise<{ status: number; sha: string | null; error?: string }> {
  const r = await api("POST", `/v1/orgs/${org}/repos/${name}/commits`, {
    cookie: who.cookie,
    body: { branch, message: "bench", operations: Object.entries(files).map(([path, content]) => ({ op: "put", path, content })) },
  });
  return { status: r.status, sha: r.body?.commit ?? null, error: r.body?.error };
}
async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, ms: number): Promise<T | null> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const v = await probe();
    if (v) return v;
    await Bun.sleep(100);
  }
  log(`gave up waiting for ${what}`);
  return null;
}
const runsOf = async (name: string) => ((await api("GET", `/v1/orgs/acme/repos/${name}/runs`, { cookie: owner.cookie })).body?.runs ?? []) as any[];
const basic = (token: string) => `Basic ${Buffer.from(`x:${token}`).toString("base64")}`;

async function receivePack(name: string, body: Uint8Array, org = "acme", token = owner.token): Promise<string> {
  const res = await fetch(`${base}/${org}/${name}.git/git-receive-pack`, {
    method: "POST",
    headers: { "content-type": "application/x-git-receive-pack-request", authorization: basic(token) },
    body: body as Uint8Array<ArrayBuffer>,
  });
  const text = await res.text();
  return `${res.status} ${text
    .replace(/[\x00-\x1f]+/g, " ")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 160)}`;
}
async function uploadPackV2(name: string, lines: string[]): Promise<string> {
  const parts: Uint8Array[] = [];
  for (const l of lines) parts.push(l === "0001" ? Buffer.from("0001") : encodePkt(l));
  parts.push(Buffer.from("0000"));
  const res = await fetch(`${base}/acme/${name}.git/git-upload-pack`, {
    method: "POST",
    headers: { "content-type": "application/x-git-upload-pack-request", "git-protocol": "version=2" },
    body: Buffer.concat(parts),
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  return `${res.status}, ${bytes.length} bytes${/ERR [^\n]*/.exec(new TextDecoder().decode(bytes.subarray(0, 2000)))?.[0]?.slice(0, 120) ? `: ${/ERR [^\n]*/.exec(new TextDecoder().decode(bytes.subarray(0, 2000)))![0].slice(0, 120)}` : ""}`;
}
const randomOid = () => Buffer.from(crypto.getRandomValues(new Uint8Array(20))).toString("hex");
async function pool<T>(n: number, items: T[], fn: (x: T) => Promise<void>): Promise<void> {
  let i = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (i < items.length) await fn(items[i++]!);
    }),
  );
}
/** One 24 MiB JSON-looking body, made once (making one per request would load this process, not the server). */
const BIG_BODY = new Uint8Array(24 * 1024 * 1024).fill(0x20);
BIG_BODY.set(new TextEncoder().encode('{"email":"a@b.c","password":"'), 0);
async function post24MiB(path: string, headers: Record<string, string>): Promise<string> {
  const body = BIG_BODY;
  try {
    const res = await fetch(base + path, { method: "POST", headers: { ...JSON_TYPE, ...headers }, body });
    await res.arrayBuffer();
    return String(res.status);
  } catch (e) {
    return `closed (${String(e).slice(0, 60)})`;
  }
}
const tally = (xs: string[]) =>
  Object.entries(xs.reduce<Record<string, number>>((m, x) => ((m[x] = (m[x] ?? 0) + 1), m), {}))
    .map(([k, n]) => `${n}× ${k}`)
    .join(", ");

// ---- the cases ----------------------------------------------------------------------------
interface Case {
  row: number;
  name: string;
  limitMs?: number;
  /** Work before the measured window (repositories, history): its probes are not counted. */
  setup?: () => Promise<void>;
  run: () => Promise<string>;
}

const bomb = { delta: small ? 64 * 1024 * 1024 : 1024 ** 3, zlib: small ? 32 * 1024 * 1024 : 256 * 1024 * 1024, depth: small ? 5_000 : 50_000 };
let mainTip = "";
/** The public repository `ci` with one commit, made once for the rows that use it. */
async function ciRepo(): Promise<void> {
  if (mainTip) return;
  await repo("ci");
  mainTip = (await commit("ci", { "README.md": "# ci\n" })).sha!;
}
let bob: Awaited<ReturnType<typeof person>>;
let secretSha = "";
let bigRepo = "";

const cases: Case[] = [
  {
    row: 1,
    name: "land a change from a private fork holding a secret branch, then 4,096 anonymous 4-hex lookups (the prefixes sharing the secret's first digit)",
    limitMs: 300_000,
    setup: async () => {
      await repo("parent");
      await commit("parent", { "README.md": "# parent\n" });
      bob = await person("bobco", "bob@bob.example", "bob");
      const fork = await api("POST", "/v1/orgs/acme/repos/parent/forks", { cookie: bob.cookie, body: { org: "bob" } });
      if (fork.status !== 202) throw new Error(`fork: ${fork.status} ${JSON.stringify(fork.body)}`);
      await until("the fork", async () => (await api("GET", "/v1/orgs/bob/repos/parent", { cookie: bob.cookie })).body?.fork_state === "ready", 60_000);
      await api("PATCH", "/v1/orgs/bob/repos/parent", { cookie: bob.cookie, body: { public: false } });
      // The feature branch starts at main (the commit API would start a new branch from nothing).
      const tip = ((await api("GET", "/v1/orgs/bob/repos/parent/refs", { cookie: bob.cookie })).body.refs as { name: string; target: string }[]).find(
        (r) => r.name === "refs/heads/main",
      )!.target;
      await api("PUT", "/v1/orgs/bob/repos/parent/refs/refs/heads/feature", { cookie: bob.cookie, body: { target: tip, expected: null } });
      await commit("parent", { "feature.txt": "feature\n" }, "feature", bob, "bob");
      secretSha = (await commit("parent", { "SECRET.txt": "the launch code is 0000\n" }, "secret", bob, "bob")).sha!;
    },
    run: async () => {
      const change = await api("POST", "/v1/orgs/acme/repos/parent/changes", {
        cookie: bob.cookie,
        body: { title: "feature", branch: "feature", source: { org: "bob", repo: "parent" } },
      });
      if (change.status !== 201) return `change refused: ${change.status} ${change.body?.error ?? ""}`;
      await api("POST", `/v1/orgs/acme/repos/parent/changes/${change.body.number}/land`, { cookie: owner.cookie });
      const state = await until(
        "the landing",
        async () => {
          const c = (await api("GET", `/v1/orgs/acme/repos/parent/changes/${change.body.number}`, { cookie: owner.cookie })).body;
          return ["landed", "ejected"].includes(c?.state)
            ? `${c.state}${c.verdict ? ` (${c.verdict.kind}: ${String(c.verdict.message).slice(0, 80)})` : ""}`
            : null;
        },
        120_000,
      );
      const found: string[] = [];
      const statuses: string[] = [];
      // The 4,096 four-digit prefixes that share the secret's first digit (1/16 of the space).
      const first = Number.parseInt(secretSha[0]!, 16);
      await pool(
        16,
        Array.from({ length: 4096 }, (_, i) => (first * 4096 + i).toString(16).padStart(4, "0")),
        async (hex) => {
          const r = await fetch(`${base}/v1/orgs/acme/repos/parent/commits/${hex}`);
          statuses.push(String(r.status));
          const b = (await r.json().catch(() => null)) as { sha?: string } | null;
          if (r.status === 200 && b?.sha) found.push(b.sha);
        },
      );
      const page = (await fetch(`${base}/acme/parent/commit/${secretSha}`)).status;
      const byApi = (await fetch(`${base}/v1/orgs/acme/repos/parent/commits/${secretSha}`)).status;
      return `change ${state ?? "not landed"}; lookups ${tally(statuses)}; secret commit ${found.includes(secretSha) ? "FOUND by a 4-hex lookup" : "not found by 4-hex lookups"}; by its full id, anonymously: page ${page}, API ${byApi}`;
    },
  },
  {
    row: 2,
    name: "156 KB workflow: a 10 KB matrix value referenced 10×1,000 times; then anonymous run lists and pages",
    limitMs: 180_000,
    setup: ciRepo,
    run: async () => {
      const refs = Array.from({ length: 1000 }, () => "${{ matrix.v }}").join(" ");
      // The job is named from another dimension, so its key stays short and the expansion itself is what is judged.
      const text = `on: push\njobs:\n  bomb:\n    name: "bomb \${{ matrix.n }}"\n    runs-on: self-hosted\n    strategy: { matrix: { n: [1], v: ["${"x".repeat(10_000)}"] } }\n    steps:\n${Array.from({ length: 10 }, () => `      - run: "${refs}"\n`).join("")}`;
      const c = await commit("ci", { ".svc/workflows/bomb.yml": text });
      mainTip = c.sha ?? mainTip;
      const r = await until("the run", async () => (await runsOf("ci")).find((x) => x.commit === c.sha), 120_000);
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        for (const path of [
          "/v1/orgs/acme/repos/ci/runs",
          `/acme/ci/runs`,
          r ? `/acme/ci/runs/${r.id}` : "/acme/ci/runs",
          r?.jobs?.[0] ? `/acme/ci/runs/${r.id}/jobs/${r.jobs[0].id}` : "/acme/ci/runs",
        ]) {
          const t0 = performance.now();
          await (await fetch(base + path)).arrayBuffer();
          times.push(performance.now() - t0);
        }
      }
      return `${text.length} bytes; run ${r ? `${r.state}, ${r.jobs.length} jobs${r.error ? `: ${String(r.error).slice(0, 90)}` : ""}` : "never appeared"}; slowest list/page ${Math.round(Math.max(...times))} ms`;
    },
  },
  {
    row: 3,
    name: "branch glob *a*a*a*a*a*a*a*a*a*a*b in a workflow and in a protection, then pushes to a 40-character branch of a's",
    limitMs: 180_000,
    setup: async () => {
      await repo("globs");
      await commit("globs", { "README.md": "x\n" });
      await api("PUT", `/v1/orgs/acme/repos/globs/protections/${encodeURIComponent("*a*a*a*a*a*a*a*a*a*a*b")}`, { cookie: owner.cookie, body: {} });
    },
    run: async () => {
      const t0 = performance.now();
      const c = await commit(
        "globs",
        {
          ".svc/workflows/a.yml": `on: { push: { branches: ["*a*a*a*a*a*a*a*a*a*a*b"] } }\njobs: { a: { runs-on: x, steps: [ { run: y } ] } }\n`,
          ".svc/workflows/z.yml": "on: push\njobs: { z: { runs-on: x, steps: [ { run: y } ] } }\n",
        },
        "a".repeat(40),
      );
      const pushMs = performance.now() - t0;
      const r = await until("the z run", async () => (await runsOf("globs")).find((x) => x.commit === c.sha), 120_000);
      return `commit ${c.status} in ${Math.round(pushMs)} ms; trigger ${r ? "done" : "not done"}`;
    },
  },
  {
    row: 4,
    name: `delta bomb: a 337-byte pack resolving to ${bomb.delta / 1024 / 1024} MiB; then its page and raw, anonymously`,
    limitMs: 300_000,
    setup: () => repo("bomb"),
    run: async () => {
      const b = deltaBomb(bomb.delta);
      const pushed = await receivePack("bomb", receivePackBody("refs/heads/main", b.commit, b.pack));
      const page = await fetch(`${base}/acme/bomb/blob/main/zeros.bin`);
      await page.arrayBuffer();
      const raw = await fetch(`${base}/acme/bomb/raw/main/zeros.bin`);
      const rawBytes = (await raw.arrayBuffer()).byteLength;
      return `pack ${b.pack.length} B; push ${pushed.slice(0, 90)}; page ${page.status}; raw ${raw.status} (${rawBytes} B); server RSS ${rssOf(server.pid).peak_mb} MB peak`;
    },
  },
  {
    row: 4,
    name: `zlib bomb: ${bomb.zlib / 1024 / 1024} MiB of zeros in one pack entry; then its page, anonymously`,
    limitMs: 300_000,
    setup: () => repo("zbomb"),
    run: async () => {
      const b = zlibBomb(bomb.zlib);
      const pushed = await receivePack("zbomb", receivePackBody("refs/heads/main", b.commit, b.pack));
      const page = await fetch(`${base}/acme/zbomb/blob/main/zeros.bin`);
      await page.arrayBuffer();
      return `pack ${Math.round(b.pack.length / 1024)} KB; push ${pushed.slice(0, 90)}; page ${page.status}`;
    },
  },
  {
    row: 5,
    name: `a ${bomb.depth.toLocaleString("en")}-deep delta chain; then the first read of its tip`,
    limitMs: 300_000,
    setup: () => repo("deep"),
    run: async () => {
      const b = deepChain(bomb.depth);
      const pushed = await receivePack("deep", receivePackBody("refs/heads/main", b.commit, b.pack));
      const page = await fetch(`${base}/acme/deep/blob/main/deep.txt`);
      await page.arrayBuffer();
      const raw = await fetch(`${base}/acme/deep/raw/main/deep.txt`);
      await raw.arrayBuffer();
      return `pack ${Math.round(b.pack.length / 1024)} KB; push ${pushed.slice(0, 90)}; page ${page.status}; raw ${raw.status}`;
    },
  },
  ...(["have", "want", "shallow", "ref-prefix"] as const).map(
    (kind): Case => ({
      row: 6,
      name: `an upload-pack request with 100,000 ${kind} lines`,
      limitMs: 120_000,
      setup: ciRepo,
      run: async () => {
        const many = Array.from({ length: 100_000 }, () => randomOid());
        if (kind === "ref-prefix")
          return uploadPackV2("ci", ["command=ls-refs\n", "0001", ...many.map((o, i) => `ref-prefix refs/heads/${o.slice(0, 8)}${i}\n`)]);
        if (kind === "have") return uploadPackV2("ci", ["command=fetch\n", "0001", `want ${mainTip}\n`, ...many.map((o) => `have ${o}\n`), "done\n"]);
        if (kind === "want") return uploadPackV2("ci", ["command=fetch\n", "0001", ...many.map((o) => `want ${o}\n`), "done\n"]);
        return uploadPackV2("ci", ["command=fetch\n", "0001", `want ${mainTip}\n`, ...many.map((o) => `shallow ${o}\n`), "deepen 1\n", "done\n"]);
      },
    }),
  ),
  {
    row: 6,
    name: "64 anonymous 4-hex commit lookups at once",
    setup: ciRepo,
    run: async () => {
      const statuses = await Promise.all(
        Array.from({ length: 64 }, (_, i) =>
          fetch(`${base}/v1/orgs/acme/repos/ci/commits/${(i * 1021).toString(16).padStart(4, "0")}`).then(
            async (r) => (await r.arrayBuffer(), String(r.status)),
          ),
        ),
      );
      return tally(statuses);
    },
  },
  { row: 7, name: "one anonymous 24 MiB JSON body to /v1/auth/login", run: async () => post24MiB("/v1/auth/login", {}) },
  {
    row: 7,
    name: "eight 24 MiB login bodies at once",
    run: async () => tally(await Promise.all(Array.from({ length: 8 }, () => post24MiB("/v1/auth/login", {})))),
  },
  {
    row: 7,
    name: "sixteen unsigned 24 MiB posts to /webhooks/generic at once",
    run: async () => tally(await Promise.all(Array.from({ length: 16 }, () => post24MiB("/webhooks/generic", {})))),
  },
  {
    row: 8,
    name: "one push of ten workflows, each 20,000 nested [ (40 KB)",
    limitMs: 180_000,
    setup: () => repo("nest"),
    run: async () => {
      const files: Record<string, string> = {};
      for (let i = 0; i < 10; i++) files[`.svc/workflows/n${i}.yml`] = `on: push\njobs: ${"[".repeat(20_000)}${"]".repeat(20_000)}\n`;
      const c = await commit("nest", files);
      const list = await until(
        "ten runs",
        async () => {
          const rs = (await runsOf("nest")).filter((x) => x.commit === c.sha);
          return rs.length >= 10 ? rs : null;
        },
        150_000,
      );
      return `commit ${c.status}; ${list ? `${list.length} failed runs: ${String(list[0].error).slice(0, 80)}` : "runs not all there"}`;
    },
  },
  {
    row: 9,
    name: "GET /login?next=/%09/evil.example/ signed in; POST /login with that next",
    run: async () => {
      const get = await fetch(`${base}/login?next=/%09/evil.example/`, { headers: { cookie: owner.cookie }, redirect: "manual" });
      const post = await fetch(`${base}/login`, {
        method: "POST",
        redirect: "manual",
        headers: { origin: base, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ email: owner.email, password: PASSWORD, next: "/\t/evil.example/" }).toString(),
      });
      const where = (l: string | null) =>
        l ? (new URL(l, base).origin === new URL(base).origin ? `same site (${l.slice(0, 40)})` : `ANOTHER SITE ${new URL(l, base).origin}`) : "none";
      return `GET ${get.status} → ${where(get.headers.get("location"))}; POST ${post.status} → ${where(post.headers.get("location"))}`;
    },
  },
  {
    row: 10,
    name: "sign-in with next holding a newline, then U+3000",
    run: async () => {
      const out: string[] = [];
      for (const next of ["/acme\n", "/acme\u3000"]) {
        const r = await fetch(`${base}/login`, {
          method: "POST",
          redirect: "manual",
          headers: { origin: base, "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ email: owner.email, password: PASSWORD, next }).toString(),
        });
        out.push(`${r.status} ${r.headers.get("location") ?? ""}`);
      }
      return out.join("; ");
    },
  },
  {
    row: 11,
    name: "signup(X, H) then signup(Y, H), X registered and X new",
    run: async () => {
      const s = (email: string, handle: string) =>
        api("POST", "/v1/auth/signup", { body: { email, handle, name: "Probe", password: "a long enough password" } });
      await s(owner.email, "oracle-one");
      const afterRegistered = (await s("y1@example.com", "oracle-one")).status;
      await s("brand-new@example.com", "oracle-two");
      const afterNew = (await s("y2@example.com", "oracle-two")).status;
      return `second signup after a registered X: ${afterRegistered}; after a new X: ${afterNew} (${afterRegistered === afterNew ? "no oracle" : "ORACLE"})`;
    },
  },
  {
    row: 12,
    name: "webhook URL http://[::ffff:0:7f00:1]/",
    setup: ciRepo,
    run: async () => {
      const r = await api("POST", "/v1/orgs/acme/repos/ci/webhooks", { cookie: owner.cookie, body: { url: "http://[::ffff:0:7f00:1]/" } });
      return `${r.status}${r.body?.error ? ` ${String(r.body.error).slice(0, 100)}` : " (accepted)"}`;
    },
  },
  {
    row: 13,
    name: "push of refs/heads/\\xff\\xfe",
    setup: ciRepo,
    run: async () => {
      const ref = Buffer.concat([Buffer.from("refs/heads/"), Buffer.from([0xff, 0xfe])]);
      const head = Buffer.concat([Buffer.from(`${"0".repeat(40)} ${mainTip} `), ref, Buffer.from("\0report-status\n")]);
      const empty = Buffer.from([0x50, 0x41, 0x43, 0x4b, 0, 0, 0, 2, 0, 0, 0, 0]);
      const body = Buffer.concat([encodePkt(head), Buffer.from("0000"), empty, new Bun.CryptoHasher("sha1").update(empty).digest()]);
      const pushed = await receivePack("ci", body);
      const refs = ((await api("GET", "/v1/orgs/acme/repos/ci/refs", { cookie: owner.cookie })).body?.refs ?? [])
        .map((r: { name: string }) => r.name)
        .filter((n: string) => !n.startsWith("refs/heads/main"));
      return `${pushed.slice(0, 80)}; refs now ${JSON.stringify(refs)}`;
    },
  },
  {
    row: 14,
    name: "profile name with < and >, then an API commit by that person",
    // Its own repository: a commit to `ci` would run row 2's workflow again.
    setup: () => repo("names"),
    run: async () => {
      const patched = await api("PATCH", `/v1/users/${owner.handle}`, { cookie: owner.cookie, body: { name: "Ada <x>" } });
      const c = await commit("names", { "n.txt": String(Date.now()) });
      const author = c.sha ? (await api("GET", `/v1/orgs/acme/repos/names/commits/${c.sha}`, { cookie: owner.cookie })).body?.author?.name : null;
      await api("PATCH", `/v1/users/${owner.handle}`, { cookie: owner.cookie, body: { name: "ada" } });
      return `profile ${patched.status}; commit ${c.status}${c.error ? ` ${c.error.slice(0, 60)}` : ""}${author ? `, author ${JSON.stringify(author)}` : ""}`;
    },
  },
  {
    row: 15,
    name: "20 concurrent full clones of a 34 MiB repository",
    limitMs: 600_000,
    setup: async () => {
      const gen = await generate({ scale: 0.35, seed: 1, out: defaultRepoPath(1, 0.35), extra: 0, quiet: true });
      bigRepo = gen.repo;
      await repo("big");
      await runCmd(["git", "push", "-q", "--all", `http://x:${owner.token}@${new URL(base).host}/acme/big.git`], { cwd: bigRepo, env: genv });
    },
    run: async () => {
      const results = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const r = await runCmd(["git", "clone", "-q", "--bare", `${base}/acme/big.git`, join(dir, `clone-${i}.git`)], { env: genv, check: false });
          return r.code === 0 ? `ok` : `exit ${r.code}`;
        }),
      );
      return tally(results);
    },
  },
];

// ---- running them -------------------------------------------------------------------------
interface Row {
  row: number;
  case: string;
  probes: number;
  worst_ms: number | null;
  p99_ms: number | null;
  p50_ms: number | null;
  seconds: number;
  outcome: string;
}
const results: Row[] = [];
async function measure(row: number, name: string, fn: () => Promise<string>, limitMs: number): Promise<void> {
  log(`row ${row}: ${name}`);
  const from = Date.now();
  let outcome: string;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    outcome = await Promise.race([fn(), new Promise<string>((resolve) => (timer = setTimeout(() => resolve(`timeout after ${limitMs / 1000} s`), limitMs)))]);
  } catch (e) {
    outcome = `error: ${String(e).slice(0, 200)}`;
  } finally {
    clearTimeout(timer);
  }
  const to = Date.now();
  // Probes sent in the case and in the second after it (a stall may outlast the request that caused it).
  await Bun.sleep(1000);
  const stats = windowStats(from, to + 1000);
  results.push({ row, case: name, ...stats, seconds: Math.round((to - from) / 100) / 10, outcome });
  log(`  worst ${stats.worst_ms} ms, p99 ${stats.p99_ms} ms over ${stats.probes} probes; ${outcome}`);
}

try {
  await Bun.sleep(500);
  await measure(0, "idle, 10 s (the noise floor)", async () => (await Bun.sleep(10_000), "nothing sent"), 20_000);
  for (const c of cases) {
    if (wanted && !wanted.has(c.row)) continue;
    if (c.setup) {
      log(`row ${c.row}: setup`);
      await c.setup();
    }
    await measure(c.row, c.name, c.run, c.limitMs ?? 120_000);
  }
} finally {
  prober.kill();
  const rss = rssOf(server.pid);
  await server.stop();
  if (!opt.keep) rmSync(dir, { recursive: true, force: true });
  const summary = {
    when: new Date().toISOString(),
    command: `bun bench/stall.ts ${process.argv.slice(2).join(" ")}`.trim(),
    root: opt.root,
    machine: machine(),
    load_before: loadBefore,
    load_after: load(),
    probe_interval_ms: interval,
    server_rss_mb: rss,
    results,
  };
  if (opt.out) writeFileSync(opt.out, JSON.stringify(summary, null, 2));
  console.log(JSON.stringify(summary, null, 2));
  console.log("\n| Row | Case | Worst stall (ms) | p99 (ms) | Probes | Outcome |\n|---:|---|---:|---:|---:|---|");
  for (const r of results)
    console.log(`| ${r.row || "–"} | ${r.case} | ${r.worst_ms ?? "–"} | ${r.p99_ms ?? "–"} | ${r.probes} | ${r.outcome.replace(/\|/g, "\\|")} |`);
}
