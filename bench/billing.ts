// Billing on the hot paths, side by side in one run (issue 17): svc without a payment provider
// (A) against svc with one (B, a paid org, the provider a local stand-in): a 1-op commit and a
// GET of a private repository (both decide write blocking), GET billing against GET members, and
// signed provider events (applied, then repeated). Prints one JSON summary.
// Run: bun bench/billing.ts [--commits 60] [--reads 500] [--events 300]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { BUN, ROOT, cleanEnv, run } from "./lib/proc.ts";
import { machine } from "./lib/machine.ts";
import { startSvc, type SvcServer } from "./lib/svc.ts";
import { providerEvent, signature, startStandin } from "../test/helpers/stripe-standin.ts";

const arg = (name: string, d: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : d;
};
const COMMITS = arg("commits", 60);
const READS = arg("reads", 500);
const EVENTS = arg("events", 300);
const SECRET = "whsec_bench";

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 100) / 100;
};
async function timed(f: () => Promise<Response>, expect: number): Promise<number> {
  const t = performance.now();
  const r = await f();
  await r.arrayBuffer();
  const ms = performance.now() - t;
  if (r.status !== expect) throw new Error(`expected ${expect}, got ${r.status}`);
  return ms;
}

/** Owner, session, token; in B the org is made paid by a signed subscription event first. */
async function setup(s: SvcServer, paid: boolean, standin?: ReturnType<typeof startStandin>) {
  const made = await run(
    [
      BUN,
      join(ROOT, "src/main.ts"),
      "user-create",
      "--org",
      "acme",
      "--email",
      "b@example.com",
      "--name",
      "B",
      "--password",
      "correct horse battery staple",
      "--role",
      "owner",
    ],
    { ...cleanEnv(), ...s.env },
  );
  if (made.code !== 0) throw new Error(made.stderr);
  const json = { "content-type": "application/json" };
  const login = await fetch(`${s.url}/v1/auth/login`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ email: "b@example.com", password: "correct horse battery staple" }),
  });
  const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
  const token = (
    (await (
      await fetch(`${s.url}/v1/orgs/acme/tokens`, {
        method: "POST",
        headers: { ...json, cookie },
        body: JSON.stringify({ scopes: ["repo:write", "org:admin"], label: "b" }),
      })
    ).json()) as any
  ).token as string;
  let sub: any = null;
  if (paid) {
    const db = new Database(join(s.dataDir, "svc.db"), { readonly: true });
    const orgId = (db.query("SELECT id FROM orgs WHERE name = 'acme'").get() as any).id;
    db.close();
    sub = standin!.subscribe("cus_bench", 1, { orgId });
    const e = providerEvent("customer.subscription.created", sub, { created: Math.floor(Date.now() / 1000) - 100_000 });
    const r = await fetch(`${s.url}/webhooks/billing`, { method: "POST", headers: { ...json, "stripe-signature": signature(e.body, SECRET) }, body: e.body });
    if (r.status !== 200) throw new Error(await r.text());
  }
  const auth = { ...json, authorization: `Bearer ${token}` };
  const repo = await fetch(`${s.url}/v1/orgs/acme/repos`, { method: "POST", headers: auth, body: JSON.stringify({ name: "app" }) });
  if (repo.status !== 201) throw new Error(await repo.text());
  return { auth, sub };
}

const root = mkdtempSync(join(tmpdir(), "svc-bench-billing-"));
const standin = startStandin();
const a = await startSvc(join(root, "a"), { SVC_LOG: "warn" });
const b = await startSvc(join(root, "b"), {
  SVC_LOG: "warn",
  SVC_BILLING_PROVIDER: "stripe",
  SVC_STRIPE_SECRET_KEY: "sk_bench",
  SVC_STRIPE_WEBHOOK_SECRET: SECRET,
  SVC_STRIPE_PRICE_ID: "price_seat",
  SVC_STRIPE_API_BASE: standin.url,
});
try {
  const A = await setup(a, false);
  const B = await setup(b, true, standin);
  const commit = (s: SvcServer, auth: Record<string, string>, i: number) => () =>
    fetch(`${s.url}/v1/orgs/acme/repos/app/commits`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ branch: "main", message: `c${i}`, operations: [{ op: "put", path: "f.txt", content: `${i}\n` }] }),
    });
  const get = (s: SvcServer, auth: Record<string, string>, path: string) => () => fetch(`${s.url}${path}`, { headers: auth });
  const ca: number[] = [],
    cb: number[] = [],
    ga: number[] = [],
    gb: number[] = [],
    bill: number[] = [],
    mem: number[] = [];
  for (let i = 0; i < COMMITS; i++) {
    // Alternating order so drift in the machine's load falls on both sides alike.
    if (i % 2) {
      ca.push(await timed(commit(a, A.auth, i), 201));
      cb.push(await timed(commit(b, B.auth, i), 201));
    } else {
      cb.push(await timed(commit(b, B.auth, i), 201));
      ca.push(await timed(commit(a, A.auth, i), 201));
    }
  }
  for (let i = 0; i < READS; i++) {
    ga.push(await timed(get(a, A.auth, "/v1/orgs/acme/repos/app"), 200));
    gb.push(await timed(get(b, B.auth, "/v1/orgs/acme/repos/app"), 200));
    bill.push(await timed(get(b, B.auth, "/v1/orgs/acme/billing"), 200));
    mem.push(await timed(get(b, B.auth, "/v1/orgs/acme/members"), 200));
  }
  const applied: number[] = [],
    repeated: number[] = [];
  const bodies: { body: string; header: string }[] = [];
  const t0 = Math.floor(Date.now() / 1000) - 10_000;
  for (let i = 0; i < EVENTS; i++) {
    const e = providerEvent("customer.subscription.updated", { ...B.sub, status: i % 2 ? "active" : "past_due" }, { created: t0 + i });
    bodies.push({ body: e.body, header: signature(e.body, SECRET) });
  }
  const send = (x: { body: string; header: string }) => () =>
    fetch(`${b.url}/webhooks/billing`, { method: "POST", headers: { "content-type": "application/json", "stripe-signature": x.header }, body: x.body });
  const tApplied = performance.now();
  for (const x of bodies) applied.push(await timed(send(x), 200));
  const appliedS = (performance.now() - tApplied) / 1000;
  for (const x of bodies) repeated.push(await timed(send(x), 200));
  const out = {
    machine: machine(),
    load_avg: (await Bun.file("/proc/loadavg").text()).trim(),
    commit_1op_p50_ms: { without_provider: pct(ca, 50), with_provider_paid_org: pct(cb, 50), ratio: Math.round((pct(cb, 50) / pct(ca, 50)) * 100) / 100 },
    get_private_repo_p50_ms: { without_provider: pct(ga, 50), with_provider_paid_org: pct(gb, 50), ratio: Math.round((pct(gb, 50) / pct(ga, 50)) * 100) / 100 },
    get_billing_vs_members_p50_ms: { billing: pct(bill, 50), members: pct(mem, 50), ratio: Math.round((pct(bill, 50) / pct(mem, 50)) * 100) / 100 },
    provider_events: {
      applied_p50_ms: pct(applied, 50),
      applied_p99_ms: pct(applied, 99),
      applied_per_s: Math.round(EVENTS / appliedS),
      duplicate_p50_ms: pct(repeated, 50),
      duplicate_p99_ms: pct(repeated, 99),
    },
    n: { commits: COMMITS, reads: READS, events: EVENTS },
  };
  console.log(JSON.stringify(out, null, 2));
} finally {
  await a.stop();
  await b.stop();
  await standin.stop();
  rmSync(root, { recursive: true, force: true });
}
