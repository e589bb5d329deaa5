// The shared vocabulary of the black-box API tests: people with a session, a caller that behaves
// as a same-site browser (or a bearer client, or nobody), and the uniform error answer.
import { expect } from "bun:test";
import { client, createUser, login, type RunningServer } from "./server.ts";

/** A confirmed user (as `svc user-create` printed it) with a signed-in `svc_session=…` cookie. */
export type Person = Awaited<ReturnType<typeof createUser>> & { cookie: string };
/** A person (session cookie), a bearer token, or nobody. */
export type Who = { cookie: string } | string | undefined;

/** Creates a confirmed user in `org` with `role` and signs them in. */
export async function person(
  server: RunningServer,
  org: string,
  email: string,
  role: string,
  extra: { name?: string; password?: string; handle?: string } = {},
): Promise<Person> {
  const u = await createUser(server, { ...extra, org, email, role });
  return { ...u, cookie: await login(server, u.email, u.password) };
}

/**
 * A JSON client for `who` that sends our own Origin on every request, as a same-site browser
 * would (so cookie callers pass the CSRF rule for unsafe methods). `headers` add to or override it.
 */
export function caller(server: RunningServer, who?: Who) {
  const c = client(server, typeof who === "string" ? { token: who } : who ? { cookie: who.cookie } : undefined);
  const h = (headers: Record<string, string> = {}) => ({ origin: server.url, ...headers });
  return {
    get: (p: string, headers?: Record<string, string>) => c.get(p, h(headers)),
    post: (p: string, b?: unknown, headers?: Record<string, string>) => c.post(p, b, h(headers)),
    put: (p: string, b?: unknown, headers?: Record<string, string>) => c.put(p, b, h(headers)),
    patch: (p: string, b?: unknown, headers?: Record<string, string>) => c.patch(p, b, h(headers)),
    delete: (p: string, headers?: Record<string, string>) => c.delete(p, h(headers)),
  };
}

/** An error answer: exactly `{ error: <non-empty string> }` with the status, and the message if given. */
export function expectError(r: { status: number; body: any }, status: number, message?: string | RegExp) {
  expect({ status: r.status, keys: r.body && typeof r.body === "object" ? Object.keys(r.body) : r.body }).toEqual({ status, keys: ["error"] });
  expect(typeof r.body.error).toBe("string");
  expect(r.body.error.length).toBeGreaterThan(0);
  if (message !== undefined) expect(r.body.error).toMatch(message);
}
