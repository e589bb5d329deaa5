// Reads what the capture mail transport wrote (one RFC 822 `.eml` file per message) and the
// server's mail outbox, for tests of the mail-sending routes (SPEC §4.2, §4.3, §5.7).
import { Database } from "bun:sqlite";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** One captured message, with its parts decoded. */
export interface CapturedMail {
  file: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Every `…?token=svc…_…` link of the text part, in order: the whole URL and the token. */
  links: { url: string; token: string }[];
  /** Every top-level header field, lower-case names, folded lines joined (encoded words left as they are). */
  headers: Map<string, string>;
}

/** Decodes a quoted-printable body: soft line breaks dropped, `=XX` octets joined as UTF-8. */
export function decodeQuotedPrintable(body: string): string {
  const joined = body.replace(/=\r?\n/g, "");
  const bytes: number[] = [];
  for (let i = 0; i < joined.length; i++) {
    const c = joined[i]!;
    if (c === "=" && /^[0-9A-Fa-f]{2}$/.test(joined.slice(i + 1, i + 3))) {
      bytes.push(parseInt(joined.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      for (const b of new TextEncoder().encode(c)) bytes.push(b);
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/** Decodes a header value's RFC 2047 encoded words (`=?UTF-8?Q?…?=`, `=?UTF-8?B?…?=`). */
function decodeHeader(value: string): string {
  return value.replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=\s*/g, (_, _charset: string, enc: string, text: string) =>
    enc.toUpperCase() === "B" ? Buffer.from(text, "base64").toString("utf8") : decodeQuotedPrintable(text.replace(/_/g, " ")),
  );
}

function splitHead(raw: string): { headers: Map<string, string>; body: string } {
  const at = raw.search(/\r?\n\r?\n/);
  const head = at < 0 ? raw : raw.slice(0, at);
  const body = at < 0 ? "" : raw.slice(at).replace(/^\r?\n\r?\n/, "");
  const headers = new Map<string, string>();
  // Folded header lines continue with whitespace.
  for (const line of head.replace(/\r?\n[ \t]+/g, " ").split(/\r?\n/)) {
    const i = line.indexOf(":");
    if (i > 0) headers.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  return { headers, body };
}

function decodePart(headers: Map<string, string>, body: string): string {
  const enc = (headers.get("content-transfer-encoding") ?? "7bit").toLowerCase();
  if (enc === "quoted-printable") return decodeQuotedPrintable(body);
  if (enc === "base64") return Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8");
  return body;
}

/** Parses one captured message. */
export function parseMail(file: string, raw: string): CapturedMail {
  const { headers, body } = splitHead(raw);
  let text = "";
  let html = "";
  const type = headers.get("content-type") ?? "text/plain";
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (boundary) {
    for (const chunk of body.split(`--${boundary}`).slice(1)) {
      if (chunk.startsWith("--")) break;
      const part = splitHead(chunk.replace(/^\r?\n/, ""));
      const partType = (part.headers.get("content-type") ?? "text/plain").toLowerCase();
      const decoded = decodePart(part.headers, part.body.replace(/\r?\n$/, ""));
      if (partType.startsWith("text/plain")) text = decoded;
      else if (partType.startsWith("text/html")) html = decoded;
    }
  } else if (type.toLowerCase().startsWith("text/html")) html = decodePart(headers, body);
  else text = decodePart(headers, body);
  const links = [...text.matchAll(/(https?:\/\/[^\s"<>]+?\?token=(svc[a-z]*_[A-Za-z0-9]+))/g)].map((m) => ({ url: m[1]!, token: decodeURIComponent(m[2]!) }));
  const to = decodeHeader(headers.get("to") ?? "")
    .replace(/^.*<([^>]+)>.*$/, "$1")
    .trim();
  return { file, to, subject: decodeHeader(headers.get("subject") ?? ""), text, html, links, headers };
}

/** Every message in the capture directory, oldest first (the file names start with the time). */
export function readMails(dir: string): CapturedMail[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".eml") && !f.startsWith("."))
    .sort()
    .map((f) => parseMail(f, readFileSync(join(dir, f), "utf8")));
}

/** The messages addressed to `address` (case-insensitive), oldest first. */
export function mailsTo(dir: string, address: string): CapturedMail[] {
  return readMails(dir).filter((m) => m.to.toLowerCase() === address.toLowerCase());
}

/**
 * Waits until at least `count` messages to `address` exist, with a deadline; returns them all.
 * Polls the directory (the transport renames complete files into place, so a file is never half-written).
 */
export async function waitForMails(dir: string, address: string, count = 1, timeoutMs = 15_000): Promise<CapturedMail[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = mailsTo(dir, address);
    if (found.length >= count) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} message(s) to ${address}; have ${found.length}`);
    await Bun.sleep(20);
  }
}

/** Waits for the `count`-th message to `address` carrying a `prefix` link (e.g. `svcv_`) and returns that link. */
export async function waitForLink(
  dir: string,
  address: string,
  prefix: string,
  count = 1,
  timeoutMs = 15_000,
  /** Tokens already seen (a resend's mail is the one with a new token: two mails sent together may be captured in either order). */
  except: readonly string[] = [],
): Promise<{ url: string; token: string; mail: CapturedMail }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = mailsTo(dir, address).filter((m) => m.links.some((l) => l.token.startsWith(prefix) && !except.includes(l.token)));
    const mail = found[count - 1];
    if (mail) return { ...mail.links.find((l) => l.token.startsWith(prefix) && !except.includes(l.token))!, mail };
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} message(s) with a ${prefix} link to ${address}; have ${found.length}`);
    await Bun.sleep(20);
  }
}

/** Opens the server's SQLite file (`<dataDir>/svc.db`) for a quick peek or poke, then closes it. */
export function withDb<T>(dataDir: string, fn: (db: Database) => T): T {
  const db = new Database(join(dataDir, "svc.db"));
  try {
    db.exec("PRAGMA busy_timeout = 10000");
    return fn(db);
  } finally {
    db.close();
  }
}

/**
 * How many messages to `address` the server has ever queued. Mail is queued in the same
 * transaction as the request that causes it, so after the answer a zero here means no mail will go.
 */
export function queuedTo(dataDir: string, address: string): number {
  return withDb(dataDir, (db) => (db.query("SELECT count(*) AS n FROM mail_outbox WHERE lower(to_address) = lower(?)").get(address) as { n: number }).n);
}

/** Marks an account disabled directly in the database (no API does it). */
export function disableAccount(dataDir: string, address: string): void {
  withDb(dataDir, (db) => db.query("UPDATE users SET disabled_at = ? WHERE lower(email) = lower(?)").run(Date.now(), address));
}
