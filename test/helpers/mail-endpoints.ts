// Real mail endpoints for tests: an SMTP relay (`smtp-server` from npm) on port 0 that records
// what it is handed, a stand-in of the SES v2 SendEmail API that checks SigV4 signatures, and a
// parser (`mailparser`) for the RFC 822 text either one receives.
import { createHash, createHmac } from "node:crypto";
import { simpleParser } from "mailparser";
import { SMTPServer, type SMTPServerSession } from "smtp-server";

/** One message as the relay received it. */
export interface Received {
  from: string;
  to: string[];
  raw: Buffer;
  /** Whether the session had been upgraded to TLS (STARTTLS) when DATA arrived. */
  secure: boolean;
  /** SMTP, ESMTP, ESMTPS, ESMTPA, ESMTPSA … as smtp-server reports it. */
  transmissionType: string;
  /** The credentials presented with AUTH, if any. */
  auth: { username: string; password: string } | null;
}

/** A running relay; `refuse` makes it answer 421 to new connections (a relay that is down). */
export interface Relay {
  host: string;
  port: number;
  messages: Received[];
  refuse: boolean;
  /** Connections seen, including refused ones. */
  connections: number;
  /** Resolves with the first message matching `pred` (already received or yet to come), or rejects at the deadline. */
  waitFor(pred?: (m: Received) => boolean, timeoutMs?: number): Promise<Received>;
  /** Resolves when the next connection arrives. */
  nextConnection(timeoutMs?: number): Promise<void>;
  /** Until the returned function is called, DATA is read but not acknowledged (a slow relay). */
  hold(): () => void;
  close(): Promise<void>;
}

/** Starts an SMTP relay on 127.0.0.1, port 0. STARTTLS is offered (built-in certificate) unless `hideStartTls`. */
export async function startRelay(opts: { hideStartTls?: boolean } = {}): Promise<Relay> {
  const listeners = new Set<() => void>();
  const connectionListeners = new Set<() => void>();
  let gate: Promise<void> | null = null;
  const authBySession = new Map<string, { username: string; password: string }>();
  const relay: Relay = {
    host: "127.0.0.1",
    port: 0,
    messages: [],
    refuse: false,
    connections: 0,
    waitFor(pred = () => true, timeoutMs = 15_000) {
      return new Promise<Received>((resolve, reject) => {
        const check = () => {
          const m = relay.messages.find(pred);
          if (!m) return false;
          listeners.delete(check);
          clearTimeout(timer);
          resolve(m);
          return true;
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`no matching message within ${timeoutMs} ms (${relay.messages.length} received)`));
        }, timeoutMs);
        if (!check()) listeners.add(check);
      });
    },
    nextConnection(timeoutMs = 15_000) {
      return new Promise<void>((resolve, reject) => {
        const on = () => {
          connectionListeners.delete(on);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          connectionListeners.delete(on);
          reject(new Error(`no connection within ${timeoutMs} ms`));
        }, timeoutMs);
        connectionListeners.add(on);
      });
    },
    hold() {
      let release!: () => void;
      gate = new Promise<void>((r) => (release = r));
      return () => {
        gate = null;
        release();
      };
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    hideSTARTTLS: opts.hideStartTls ?? false,
    logger: false,
    onConnect(_session, callback) {
      relay.connections++;
      for (const l of [...connectionListeners]) l();
      if (relay.refuse) {
        const err = Object.assign(new Error("relay is down for maintenance"), { responseCode: 421 });
        return callback(err);
      }
      callback();
    },
    onAuth(auth, session, callback) {
      authBySession.set(session.id, { username: auth.username ?? "", password: auth.password ?? "" });
      callback(null, { user: auth.username });
    },
    onData(stream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", async () => {
        const held = gate;
        if (held) await held;
        relay.messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks),
          secure: session.secure,
          transmissionType: session.transmissionType,
          auth: authBySession.get(session.id) ?? null,
        });
        callback();
        for (const l of [...listeners]) l();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  relay.port = (server.server.address() as { port: number }).port;
  return relay;
}

/** A port on 127.0.0.1 with nothing listening (bound and released): connecting to it is refused. */
export function deadPort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/** The parts of a message tests look at. */
export interface ParsedMail {
  /** The From address alone, and its display name ("" when none). */
  from: string;
  fromName: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  contentType: string;
  messageId: string;
  date: Date | null;
}

/** Parses RFC 822 text with mailparser. */
export async function parseMail(raw: Buffer | string): Promise<ParsedMail> {
  const m = await simpleParser(raw);
  const to = Array.isArray(m.to) ? m.to.map((a) => a.text).join(", ") : (m.to?.text ?? "");
  const type = m.headers.get("content-type") as { value: string } | undefined;
  return {
    from: m.from?.value[0]?.address ?? "",
    fromName: m.from?.value[0]?.name ?? "",
    to,
    subject: m.subject ?? "",
    text: m.text ?? "",
    html: typeof m.html === "string" ? m.html : "",
    contentType: type?.value ?? "",
    messageId: m.messageId ?? "",
    date: m.date ?? null,
  };
}

/** One SendEmail call the SES stand-in accepted. */
export interface SesCall {
  body: any;
  /** The RFC 822 message of `Content.Raw.Data`, decoded. */
  raw: Buffer | null;
}

/** A stand-in of the SES v2 API: verifies AWS4-HMAC-SHA256 signatures, answers like SendEmail. */
export interface SesStandin {
  url: string;
  calls: SesCall[];
  rejected: { reason: string }[];
  /** Resolves with the first accepted call after the first `after` ones. */
  waitFor(after?: number, timeoutMs?: number): Promise<SesCall>;
  stop(): void;
}

const sha256hex = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex");
const hmac = (key: string | Buffer, data: string) => createHmac("sha256", key).update(data).digest();

/** Why a request's SigV4 signature does not check out, or null when it does (recomputed from scratch). */
export function sigV4Problem(
  req: { method: string; url: URL; headers: Headers; body: Uint8Array },
  creds: { accessKeyId: string; secretAccessKey: string; region: string; service: string },
): string | null {
  const auth = req.headers.get("authorization") ?? "";
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(
    auth,
  );
  if (!m) return "no AWS4-HMAC-SHA256 authorization header";
  const [, keyId, date, region, service, signedHeaders, signature] = m as unknown as string[];
  if (keyId !== creds.accessKeyId) return "unknown access key";
  if (region !== creds.region) return `scope region ${region}, expected ${creds.region}`;
  if (service !== creds.service) return `scope service ${service}, expected ${creds.service}`;
  const amzDate = req.headers.get("x-amz-date") ?? "";
  if (!amzDate.startsWith(date!)) return "x-amz-date does not match the scope date";
  const names = signedHeaders!.split(";");
  if (!names.includes("host") || !names.includes("x-amz-date")) return "host and x-amz-date must be signed";
  const canonicalHeaders = names.map((n) => `${n}:${(req.headers.get(n) ?? "").trim().replace(/\s+/g, " ")}\n`).join("");
  const query = [...req.url.searchParams.entries()]
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .sort()
    .join("&");
  // The SES paths have no characters that (double) URI-encoding would change.
  const canonical = [req.method, req.url.pathname, query, canonicalHeaders, signedHeaders, sha256hex(req.body)].join("\n");
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256hex(canonical)].join("\n");
  const key = hmac(hmac(hmac(hmac(`AWS4${creds.secretAccessKey}`, date!), region!), service!), "aws4_request");
  const expected = createHmac("sha256", key).update(toSign).digest("hex");
  return expected === signature ? null : "signature mismatch";
}

/** Starts the stand-in on 127.0.0.1, port 0, accepting only requests signed with `creds` for service `ses`. */
export function startSesStandin(creds: { accessKeyId: string; secretAccessKey: string; region: string }): SesStandin {
  const waiters = new Set<() => void>();
  const standin: SesStandin = {
    url: "",
    calls: [],
    rejected: [],
    waitFor(after = 0, timeoutMs = 15_000) {
      return new Promise<SesCall>((resolve, reject) => {
        const check = () => {
          const c = standin.calls[after];
          if (!c) return false;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(c);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no SendEmail call within ${timeoutMs} ms`));
        }, timeoutMs);
        if (!check()) waiters.add(check);
      });
    },
    stop: () => void server.stop(true),
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const body = new Uint8Array(await request.arrayBuffer());
      const problem = sigV4Problem({ method: request.method, url, headers: request.headers, body }, { ...creds, service: "ses" });
      if (problem) {
        standin.rejected.push({ reason: problem });
        return Response.json(
          { message: `The request signature we calculated does not match the signature you provided (${problem})` },
          { status: 403, headers: { "x-amzn-errortype": "SignatureDoesNotMatchException" } },
        );
      }
      if (request.method !== "POST" || url.pathname !== "/v2/email/outbound-emails") {
        return Response.json({ message: "not found" }, { status: 404, headers: { "x-amzn-errortype": "NotFoundException" } });
      }
      const json = JSON.parse(new TextDecoder().decode(body));
      const data = json?.Content?.Raw?.Data;
      standin.calls.push({ body: json, raw: typeof data === "string" ? Buffer.from(data, "base64") : null });
      for (const w of [...waiters]) w();
      return Response.json({ MessageId: `0100-${crypto.randomUUID()}-000000` });
    },
  });
  standin.url = `http://127.0.0.1:${server.port}`;
  return standin;
}
