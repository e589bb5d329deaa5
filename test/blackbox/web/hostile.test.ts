// Issue 25, the web rows of the hostile-input probe, each as it was found: an open redirect
// through `next` (row 9), a 500 for a `next` holding a newline or U+3000 (row 10), and pages that
// read whole big blobs before deciding how to show them (row 4, the web half).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { caller, person, type Person } from "../../helpers/api.ts";
import { startServer, type RunningServer } from "../../helpers/server.ts";
import { getPage, postForm } from "../../helpers/web.ts";

let server: RunningServer;
let ada: Person;

beforeAll(async () => {
  server = await startServer();
  ada = await person(server, "acme", "ada@example.com", "owner", { handle: "ada" });
}, 60_000);
afterAll(() => server?.[Symbol.asyncDispose]());

/** Signs in through the form with `next`; answers the redirect's status and Location. */
async function signInWith(next: string): Promise<{ status: number; location: string | null }> {
  // Signed out there is no form token: the sign-in form is guarded by its Origin alone.
  const r = await postForm(server, "/login", { email: ada.email, password: ada.password, next });
  return { status: r.status, location: r.headers.get("location") };
}

/** Where a browser goes from a page at the server's URL for a Location header. */
const target = (location: string) => new URL(location, server.url);

describe("rows 9-10: `next` is a path on this site or nothing", () => {
  const hostile = ["/\t/evil.example/", "/\\evil.example/", "/\\\\evil.example", "/.//evil.example/", "/\n/evil.example", "//evil.example", "http://evil.example/", "/a/../..//evil.example/"];

  test("signing in with a next that a browser would read as another site lands on this site", async () => {
    for (const next of hostile) {
      const r = await signInWith(next);
      expect({ next, status: r.status, origin: target(r.location!).origin }).toEqual({ next, status: 303, origin: new URL(server.url).origin });
      expect(r.location!.startsWith("//")).toBe(false);
    }
  });

  test("GET /login signed in, with next=/%09/evil.example/: a redirect on this site", async () => {
    const res = await fetch(`${server.url}/login?next=/%09/evil.example/`, { headers: { cookie: ada.cookie }, redirect: "manual" });
    expect(res.status).toBe(303);
    expect(target(res.headers.get("location")!).origin).toBe(new URL(server.url).origin);
  });

  test("a newline, U+3000 or a NUL in next is never a 500: the path arrives percent-encoded", async () => {
    expect(await signInWith("/acme\n")).toEqual({ status: 303, location: "/acme" });
    expect(await signInWith("/acme?q=\u3000")).toEqual({ status: 303, location: "/acme?q=%E3%80%80" });
    expect(await signInWith("/a\u0000b")).toEqual({ status: 303, location: "/a%00b" });
    const res = await fetch(`${server.url}/login?next=${encodeURIComponent("/x\u3000y")}`, { headers: { cookie: ada.cookie }, redirect: "manual" });
    expect({ status: res.status, location: res.headers.get("location") }).toEqual({ status: 303, location: `${server.url}/x%E3%80%80y` });
  });

  test("ordinary paths come back as they were", async () => {
    expect(await signInWith("/settings/emails/verify?token=svce_x#top")).toEqual({ status: 303, location: "/settings/emails/verify?token=svce_x#top" });
    expect(await signInWith("")).toEqual({ status: 303, location: "/" });
  });
});
