// A local stand-in for the payment provider's REST API (the parts svc uses), started on port 0,
// recording every request it was asked; and provider events signed the way the provider signs
// them (`Stripe-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`).
import { createHmac } from "node:crypto";

/** One request the stand-in received: method, path, and the form body flattened (`items[0][quantity]`). */
export interface Asked {
  method: string;
  path: string;
  form: Record<string, string>;
  auth: string | null;
}

/** A subscription the stand-in holds. */
export interface StandinSubscription {
  id: string;
  object: "subscription";
  customer: string;
  status: string;
  metadata: Record<string, string>;
  items: { object: "list"; data: { id: string; quantity: number; current_period_end: number; price: { id: string } }[] };
}

export interface Standin {
  url: string;
  asked: Asked[];
  subscriptions: Map<string, StandinSubscription>;
  /** Adds a subscription as the provider would create it at checkout. */
  subscribe(customer: string, quantity: number, o?: { status?: string; orgId?: string; periodEnd?: number }): StandinSubscription;
  /** Requests to `path` (prefix match), in order. */
  calls(method: string, path: string): Asked[];
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const error = (status: number, message: string) => Response.json({ error: { type: "invalid_request_error", message } }, { status });

/** Starts the stand-in; `priceCents` is the seat price it reports. */
export function startStandin(o: { priceCents?: number } = {}): Standin {
  const asked: Asked[] = [];
  const subscriptions = new Map<string, StandinSubscription>();
  let n = 0;
  const next = (prefix: string) => `${prefix}_${(++n).toString().padStart(6, "0")}`;
  const subscribe: Standin["subscribe"] = (customer, quantity, s = {}) => {
    const sub: StandinSubscription = {
      id: next("sub"),
      object: "subscription",
      customer,
      status: s.status ?? "active",
      metadata: s.orgId ? { org_id: s.orgId } : {},
      items: {
        object: "list",
        data: [{ id: next("si"), quantity, current_period_end: s.periodEnd ?? Math.floor(Date.now() / 1000) + 30 * 86400, price: { id: "price_seat" } }],
      },
    };
    subscriptions.set(sub.id, sub);
    return sub;
  };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      const text = req.method === "POST" ? await req.text() : url.search.slice(1);
      const form = Object.fromEntries(new URLSearchParams(text));
      asked.push({ method: req.method, path: url.pathname, form, auth: req.headers.get("authorization") });
      const p = url.pathname;
      let m: RegExpExecArray | null;
      if (req.method === "POST" && p === "/v1/customers") return Response.json({ id: next("cus"), object: "customer", name: form.name ?? null, metadata: {} });
      if (req.method === "POST" && p === "/v1/checkout/sessions") {
        const id = next("cs");
        return Response.json({ id, object: "checkout.session", url: `https://checkout.standin.test/c/pay/${id}`, customer: form.customer, mode: form.mode });
      }
      if (req.method === "POST" && p === "/v1/billing_portal/sessions") {
        const id = next("bps");
        return Response.json({
          id,
          object: "billing_portal.session",
          url: `https://billing.standin.test/p/session/${id}`,
          customer: form.customer,
          return_url: form.return_url,
        });
      }
      if (req.method === "GET" && (m = /^\/v1\/prices\/([^/]+)$/.exec(p)))
        return Response.json({ id: m[1], object: "price", unit_amount: o.priceCents ?? 900, currency: "usd" });
      if ((m = /^\/v1\/subscriptions\/([^/]+)$/.exec(p))) {
        const sub = subscriptions.get(m[1]!);
        if (!sub) return error(404, `No such subscription: '${m[1]}'`);
        if (req.method === "POST") {
          const q = form["items[0][quantity]"];
          if (form["items[0][id]"] !== sub.items.data[0]!.id || !q) return error(400, "bad items");
          sub.items.data[0]!.quantity = Number(q);
        }
        return Response.json(sub);
      }
      return error(404, `Unrecognized request URL (${req.method}: ${p})`);
    },
  });
  const stop = async () => {
    await server.stop(true);
  };
  return {
    url: `http://127.0.0.1:${server.port}`,
    asked,
    subscriptions,
    subscribe,
    calls: (method, path) => asked.filter((a) => a.method === method && a.path.startsWith(path)),
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/** A provider event envelope. `created` is unix seconds (default now). */
export function providerEvent(type: string, object: unknown, o: { id?: string; created?: number } = {}): { id: string; body: string } {
  const id = o.id ?? `evt_${crypto.randomUUID().replaceAll("-", "")}`;
  return { id, body: JSON.stringify({ id, object: "event", type, created: o.created ?? Math.floor(Date.now() / 1000), data: { object } }) };
}

/** The provider's signature header over `body` at unix time `t` (default now). */
export function signature(body: string, secret: string, t = Math.floor(Date.now() / 1000)): string {
  return `t=${t},v1=${createHmac("sha256", secret).update(`${t}.${body}`).digest("hex")}`;
}

/** Delivers `body` to POST /webhooks/billing with `header` as the signature (null: none). */
export async function deliver(serverUrl: string, body: string, header: string | null): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (header !== null) headers["stripe-signature"] = header;
  const r = await fetch(`${serverUrl}/webhooks/billing`, { method: "POST", headers, body });
  const text = await r.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: r.status, body: parsed };
}
