// Where the built-ins move artifact and cache bytes: an address the server hands out, either its
// own runner route (fs storage: the job token as bearer) or a presigned bucket URL (S3: the URL is
// its own credential). One rule for both built-ins, so the job token never reaches a bucket.
import type { ActionHost } from "../action-host.ts";

/**
 * `url` resolved against the server, with the headers to send: the job token only for the
 * server's own runner API (same origin and under /v1/runner/). Why the path too: a bucket reached
 * through the same host (SVC_S3_PUBLIC_ENDPOINT behind the same proxy) must not get the token.
 */
export function transferTarget(host: ActionHost, url: string, headers: Record<string, string>): { url: string; headers: Record<string, string> } {
  const base = new URL(host.base);
  const u = new URL(url, `${host.base}/`);
  const own = u.origin === base.origin && u.pathname.startsWith(`${base.pathname.replace(/\/$/, "")}/v1/runner/`) && !u.searchParams.has("X-Amz-Signature");
  return { url: u.toString(), headers: own ? { ...headers, authorization: `Bearer ${host.token}` } : { ...headers } };
}
