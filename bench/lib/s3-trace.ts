// Where a clone, fetch or push from svc on S3 waits: a timeline of every S3 request (from the
// fault proxy's trace: start, first byte, end, bytes, key) beside the git response's bytes over
// time, for one operation on a state prepared once and kept (bench/work/s3-trace/).
//
//   bun bench/lib/s3-trace.ts setup [--tag v2.24.0] [--steps 2]
//       the repository pushed in --steps to svc on fs and svc on S3 (s3rver kept in the state
//       directory), `svc gc` on both
//   bun bench/lib/s3-trace.ts clone|fetch|push|push10 [--side s3|fs|both] [--delay 20] [--reps 1]
//       clone: a raw upload-pack request for every ref (no client work: the server's send time),
//              then `git clone --bare`; fetch: the raw request with the old tip as have, then
//              `git fetch` into a clone at the old tip; push: the whole repository in --steps to a
//              new repository; push10: the 10 commits of refs/heads/next onto main of a new
//              repository that holds the old tip (pushed first, untimed)
//   --cpu-prof DIR: the timed svc process runs with `bun --cpu-prof` and writes its profile
//   under DIR/<op>-<side>/ when it stops (summarise with bench/lib/content-profile.ts).
//   Each run starts fresh svc processes (cold caches). Writes bench/work/s3-trace/<op>-<side>.json
//   (timeline) and prints a summary: wall, S3 requests by kind, time with no S3 request in
//   flight, peak and mean requests in flight, requests per MiB sent.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { spawnFaultProxy, type TraceEntry } from "../../test/helpers/fault-proxy.ts";
import { startS3rver } from "../../test/helpers/s3rver.ts";
import { bootstrap, createRepo, gitUrl, ROOT, startSvc, type SvcAccount, type SvcServer } from "./git-svc.ts";
import { gitEnv, procCpu, round, run } from "./git-util.ts";

const argv = process.argv.slice(2);
const op = argv[0] ?? "clone";
const get = (n: string, d: string) => {
  const i = argv.indexOf(`--${n}`);
  return i >= 0 ? argv[i + 1]! : d;
};
const STATE = join(ROOT, "bench/work/s3-trace");
const tag = get("tag", "v2.24.0");
const steps = Number(get("steps", "2"));
const delay = Number(get("delay", "20"));
const reps = Number(get("reps", "1"));
const sides = get("side", "both") === "both" ? ["fs", "s3"] : [get("side", "s3")];
const repoPath = join(ROOT, "bench/work/repos", `git-${tag}.git`);
const home = join(STATE, "home");
mkdirSync(home, { recursive: true });
const env = gitEnv(home);
const git = (args: string[], opts: { cwd?: string; check?: boolean } = {}) => run(["git", ...args], { env, ...opts });
const log = (s: string) => process.stderr.write(`[s3-trace ${new Date().toISOString().slice(11, 19)}] ${s}\n`);

interface State {
  acct: Record<string, SvcAccount>;
  tip: string;
  nextTip: string;
  chain: string[];
  serial: number;
  fetchRepo?: Record<string, boolean>;
}

const s3 = await startS3rver({ directory: join(STATE, "s3rver") });
mkdirSync(join(STATE, "s3rver"), { recursive: true });
const proxy = await spawnFaultProxy(s3.endpoint, { delayMs: delay, trace: true });
const s3Env = {
  SVC_STORAGE: "s3",
  SVC_S3_ENDPOINT: proxy.endpoint,
  SVC_S3_BUCKET: s3.bucket,
  SVC_S3_ACCESS_KEY: s3.accessKey,
  SVC_S3_SECRET_KEY: s3.secretKey,
};
const svcs: SvcServer[] = [];
const cpuProf = argv.includes("--cpu-prof") ? get("cpu-prof", "") : "";
const start = async (side: string, profile = false): Promise<SvcServer> => {
  const dataDir = join(STATE, `svc-${side}`);
  mkdirSync(dataDir, { recursive: true });
  const profDir = profile && cpuProf ? join(cpuProf, `${op}-${side}`) : "";
  if (profDir) mkdirSync(profDir, { recursive: true });
  const bunFlags = profDir ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`] : [];
  const svc = await startSvc({ dataDir, log: "warn", env: side === "s3" ? s3Env : {}, bunFlags });
  svcs.push(svc);
  return svc;
};

async function pushSteps(svc: SvcServer, acct: SvcAccount, name: string, st: State): Promise<number[]> {
  const walls: number[] = [];
  for (let k = 1; k <= steps; k++) {
    const at = st.chain[Math.ceil((st.chain.length * k) / steps) - 1]!;
    const refspecs = k === steps ? ["refs/heads/main:refs/heads/main", "refs/tags/*:refs/tags/*"] : [`${at}:refs/heads/main`];
    const r = await git(["push", "--quiet", gitUrl(svc, acct, name), ...refspecs], { cwd: repoPath });
    walls.push(round(r.wall));
  }
  return walls;
}

try {
  if (op === "setup") {
    if (!existsSync(join(repoPath, "refs/heads/next"))) throw new Error(`make ${repoPath} first (bun bench/s3.ts makes it)`);
    const old = existsSync(join(STATE, "state.json")) ? (JSON.parse(readFileSync(join(STATE, "state.json"), "utf8")) as State) : null;
    const st: State = {
      acct: old?.acct ?? {},
      tip: (await git(["rev-parse", "refs/heads/main"], { cwd: repoPath })).stdout.trim(),
      nextTip: (await git(["rev-parse", "refs/heads/next"], { cwd: repoPath })).stdout.trim(),
      chain: (await git(["rev-list", "--first-parent", "--reverse", "refs/heads/main"], { cwd: repoPath })).stdout.trim().split("\n"),
      serial: 0,
    };
    for (const side of sides) {
      if (existsSync(join(STATE, `template-${side}.git`))) {
        if (!st.acct[side]) {
          const svc = await start(side);
          st.acct[side] = await signIn(svc);
          await svc.stop();
        }
        continue;
      }
      // --resume: the pushes went through, the rest did not.
      const resume = argv.includes("--resume") && existsSync(join(STATE, `svc-${side}`));
      if (!resume) rmSync(join(STATE, `svc-${side}`), { recursive: true, force: true });
      const svc = await start(side);
      try {
        const acct = resume ? await signIn(svc) : await bootstrap(svc);
        st.acct[side] = acct;
        if (!resume) {
          await createRepo(svc, acct, "git");
          log(`${side}: pushes ${JSON.stringify(await pushSteps(svc, acct, "git", st))}`);
        }
        const g = await svc.cli(["gc", "--repo", `${acct.org}/git`]);
        if (g.code !== 0) throw new Error(g.stderr);
        await git(["clone", "--quiet", "--bare", gitUrl(svc, acct, "git"), join(STATE, `template-${side}.git`)]);
      } finally {
        await svc.stop();
        writeFileSync(join(STATE, `svc-${side}.log`), svc.logs());
      }
      writeFileSync(join(STATE, "state.json"), JSON.stringify(st));
    }
  } else {
    const st = JSON.parse(readFileSync(join(STATE, "state.json"), "utf8")) as State;
    // The fetch source: a fork of the repository (sharing its GC pack) with main 10 commits on.
    if (op === "fetch") {
      for (const side of sides) {
        if (st.fetchRepo?.[side]) continue;
        const svc = await start(side);
        await fork(svc, st.acct[side]!, "f");
        await git(["push", "--quiet", gitUrl(svc, st.acct[side]!, "f"), "refs/heads/next:refs/heads/main"], { cwd: repoPath });
        (st.fetchRepo ??= {})[side] = true;
        await svc.stop();
        svcs.splice(0);
        writeFileSync(join(STATE, "state.json"), JSON.stringify(st));
      }
    }
    for (let rep = 0; rep < reps; rep++) {
      for (const side of rep % 2 ? [...sides].reverse() : sides) {
        const svc = await start(side, op !== "push10");
        const acct = st.acct[side]!;
        await proxy.trace();
        const cpu0 = procCpu(svc.pid).self;
        const load = round(loadavg()[0]!, 2);
        const t0 = performance.now();
        const marks: Record<string, number> = {};
        const mark = (k: string) => (marks[k] = round(performance.now() - t0, 1));
        let response: { firstByte: number; end: number; bytes: number; curve: [number, number][] } | null = null;
        if (op === "clone" || op === "fetch") {
          const dst = join(STATE, `work-${side}.git`);
          rmSync(dst, { recursive: true, force: true });
          if (op === "clone") {
            response = await rawUploadPack(svc, acct, "git", [], t0);
            mark("raw");
            if (argv.includes("--raw-only")) {
              // A second request in the same process: the idx and peeled tags are cached.
              const again = await rawUploadPack(svc, acct, "git", [], performance.now());
              marks["raw warm"] = again.end;
              marks["raw warm first byte"] = again.firstByte;
            } else {
              await git(["clone", "--quiet", "--bare", gitUrl(svc, acct, "git"), dst]);
              mark("git clone");
            }
          } else {
            // Twice: cold (fresh process), then warm; into copies of a clone at the old tip.
            const r0 = (await proxy.stats()).requests;
            for (const round_ of ["cold", "warm"]) {
              rmSync(dst, { recursive: true, force: true });
              await git(["clone", "--quiet", "--bare", "--local", join(STATE, "template-s3.git"), dst]);
              const t1 = performance.now();
              await git(["fetch", "--quiet", gitUrl(svc, acct, "f"), "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"], { cwd: dst });
              marks[`git fetch ${round_}`] = round(performance.now() - t1, 1);
              if (round_ === "cold") marks["cold requests"] = (await proxy.stats()).requests - r0;
            }
          }
          rmSync(dst, { recursive: true, force: true });
        } else if (op === "push") {
          const name = `p${++st.serial}`;
          await createRepo(svc, acct, name);
          const walls = await pushSteps(svc, acct, name, st);
          walls.forEach((w, i) => {
            marks[`step ${i + 1}`] = w * 1000;
          });
        } else if (op === "push10") {
          const name = `q${++st.serial}`;
          await fork(svc, acct, name);
          await svc.stop();
          const again = await start(side, true);
          await proxy.trace();
          const c1 = procCpu(again.pid).self;
          const t1 = performance.now();
          await git(["push", "--quiet", gitUrl(again, acct, name), "refs/heads/next:refs/heads/main"], { cwd: repoPath });
          marks["push10"] = round(performance.now() - t1, 1);
          // The server's CPU over the push alone (serverCpu below also counts the fork and startup).
          marks["push10 cpu ms"] = round((procCpu(again.pid).self - c1) * 1000);
        }
        const wall = performance.now() - t0;
        const cpu = round(procCpu(svcs.at(-1)!.pid).self - cpu0, 2);
        // The server's peak RSS (VmHWM) over its whole life, this operation included.
        marks["peak rss MB"] = Math.round(Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${svcs.at(-1)!.pid}/status`, "utf8"))?.[1] ?? 0) / 1024);
        const { entries } = await proxy.trace();
        const summary = summarize(entries, wall, response);
        log(`${op} ${side}: ${JSON.stringify({ marks, serverCpu: cpu, load, ...(side === "s3" ? summary : {}) })}`);
        writeFileSync(
          join(STATE, `${op}-${side}.json`),
          JSON.stringify(
            {
              marks,
              response,
              entries: entries.map((e) => ({
                ...e,
                start: e.start - entries[0]!.start,
                firstByte: e.firstByte - entries[0]!.start,
                end: e.end - entries[0]!.start,
              })),
            },
            null,
            0,
          ),
        );
        for (const s of svcs.splice(0)) {
          await s.stop();
          writeFileSync(join(STATE, `svc-${side}-${op}.log`), s.logs());
        }
      }
    }
    writeFileSync(join(STATE, "state.json"), JSON.stringify(st));
  }
} finally {
  for (const s of svcs) await s.stop();
  await proxy.stop();
  await s3.stop();
}

/** Forks bench/git into bench/<name> and waits until it is ready. */
async function fork(svc: SvcServer, acct: SvcAccount, name: string): Promise<void> {
  const headers = { "content-type": "application/json", authorization: `Bearer ${acct.token}` };
  const r = await fetch(`${svc.url}/v1/orgs/${acct.org}/repos/git/forks`, { method: "POST", headers, body: JSON.stringify({ org: acct.org, name }) });
  if (r.status !== 202) throw new Error(`fork: ${r.status} ${await r.text()}`);
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await Bun.sleep(100)) {
    const repo = (await (await fetch(`${svc.url}/v1/orgs/${acct.org}/repos/${name}`, { headers })).json()) as { fork_state: string };
    if (repo.fork_state === "ready") return;
    if (repo.fork_state === "failed") throw new Error("fork failed");
  }
  throw new Error("fork not ready in time");
}

/** A new token for the account bootstrap() made (its password is the one bootstrap uses). */
async function signIn(svc: SvcServer, org = "bench"): Promise<SvcAccount> {
  const login = await fetch(`${svc.url}/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "bench@example.com", password: "correct horse battery staple" }),
  });
  const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
  const mint = await fetch(`${svc.url}/v1/orgs/${org}/tokens`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie },
    body: JSON.stringify({ scopes: ["repo:read", "repo:write", "org:read", "org:admin"], label: "trace" }),
  });
  const json = (await mint.json()) as { token: string };
  return { org, token: json.token, cookie };
}

/** v0 upload-pack by hand: refs from info/refs, wants for all of them, `haves`, done; the response drained and timed. */
async function rawUploadPack(svc: SvcServer, acct: SvcAccount, name: string, haves: string[], t0: number) {
  const base = `${svc.url}/${acct.org}/${name}.git`;
  const auth = { authorization: `Basic ${btoa(`x:${acct.token}`)}` };
  const adv = new Uint8Array(await (await fetch(`${base}/info/refs?service=git-upload-pack`, { headers: auth })).arrayBuffer());
  const oids = new Set<string>();
  const text = new TextDecoder().decode(adv);
  for (const m of text.matchAll(/([0-9a-f]{40}) (refs\/[^\s\0]+)/g)) if (!m[2]!.endsWith("^{}")) oids.add(m[1]!);
  const pkt = (s: string) => `${(s.length + 4).toString(16).padStart(4, "0")}${s}`;
  const wants = [...oids];
  let body = pkt(`want ${wants[0]} multi_ack_detailed side-band-64k thin-pack ofs-delta no-progress include-tag\n`);
  for (const w of wants.slice(1)) body += pkt(`want ${w}\n`);
  body += "0000";
  for (const h of haves) body += pkt(`have ${h}\n`);
  body += pkt("done\n");
  const res = await fetch(`${base}/git-upload-pack`, { method: "POST", headers: { ...auth, "content-type": "application/x-git-upload-pack-request" }, body });
  let bytes = 0;
  let firstByte = 0;
  const curve: [number, number][] = [];
  let nextMark = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    const t = performance.now() - t0;
    if (!firstByte) firstByte = t;
    bytes += chunk.length;
    if (bytes >= nextMark) {
      curve.push([round(t, 1), bytes]);
      nextMark += 4 << 20;
    }
  }
  return { firstByte: round(firstByte, 1), end: round(performance.now() - t0, 1), bytes, curve };
}

/** Requests by kind, the time with none in flight, concurrency, and requests per MiB of response. */
function summarize(entries: TraceEntry[], wallMs: number, response: { bytes: number } | null) {
  const byKind: Record<string, number> = {};
  for (const e of entries) byKind[`${e.method}${e.range ? " range" : ""}`] = (byKind[`${e.method}${e.range ? " range" : ""}`] ?? 0) + 1;
  const sorted = [...entries].sort((a, b) => a.start - b.start);
  let busy = 0;
  let curStart = -1;
  let curEnd = -1;
  let inFlightMs = 0;
  for (const e of sorted) {
    inFlightMs += e.end - e.start;
    if (e.start > curEnd) {
      if (curEnd > curStart) busy += curEnd - curStart;
      curStart = e.start;
      curEnd = e.end;
    } else curEnd = Math.max(curEnd, e.end);
  }
  if (curEnd > curStart) busy += curEnd - curStart;
  const down = entries.reduce((n, e) => n + e.bytesDown, 0);
  const up = entries.reduce((n, e) => n + e.bytesUp, 0);
  return {
    requests: entries.length,
    byKind,
    mibDown: round(down / 2 ** 20, 1),
    mibUp: round(up / 2 ** 20, 1),
    s3BusyMs: round(busy),
    meanInFlightWhileBusy: busy ? round(inFlightMs / busy, 2) : 0,
    requestsPerMiBSent: response ? round(entries.length / (response.bytes / 2 ** 20), 3) : null,
    wallMs: round(wallMs),
  };
}
