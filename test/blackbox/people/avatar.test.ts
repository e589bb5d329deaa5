// People's pictures over real HTTP (issue 33): upload through the settings form (multipart) and
// the API (raw image/*), served at /avatars/{handle} with the sniffed type, nosniff and a
// sandboxing CSP, cacheable for good at the versioned address; refused by declared size before
// the body is read; Remove (and DELETE) brings the identicon back and deletes the stored object.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { connect } from "node:net";
import { client, createUser, login, mintToken, type RunningServer, serverDb, startServer } from "../../helpers/server.ts";
import { GIF, HTML_AS_PNG, JPEG, PNG, pngSized, SVG_WITH_SCRIPT, WEBP } from "../../helpers/images.ts";

let server: RunningServer;
let cookie: string;
let token: string;

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(server.url + path, { headers, redirect: "manual" });
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) };
}

async function csrf(): Promise<string> {
  const text = await (await fetch(`${server.url}/settings/profile`, { headers: { cookie } })).text();
  return /name="csrf" value="([^"]+)"/.exec(text)![1]!;
}

/** Posts the upload form as a browser would: multipart with the token and the file. */
async function upload(bytes: Uint8Array, name = "me.png", type = "image/png", token_?: string) {
  const form = new FormData();
  form.set("csrf", token_ ?? (await csrf()));
  form.set("avatar", new File([bytes as BlobPart], name, { type }));
  const res = await fetch(`${server.url}/settings/profile/avatar`, { method: "POST", headers: { cookie, origin: server.url }, body: form, redirect: "manual" });
  return { status: res.status, location: res.headers.get("location"), text: await res.text() };
}

/** The stored avatar key of ada (null: the identicon). */
function storedKey(): string | null {
  const db = serverDb(server, { readonly: true });
  try {
    return (db.query("select avatar from users where handle = 'ada'").get() as { avatar: string | null }).avatar;
  } finally {
    db.close();
  }
}

const objectPath = (key: string) => join(server.dataDir, "objects", key);

beforeAll(async () => {
  server = await startServer();
  const u = await createUser(server, { org: "acme", handle: "ada", email: "ada@example.com", name: "Ada" });
  cookie = await login(server, u.email, u.password);
  token = await mintToken(server, cookie, "ada", { scopes: ["repo:read"], label: "avatar" });
});

afterAll(async () => {
  await server?.stop();
});

describe("/avatars/{handle}", () => {
  test("without an upload: the identicon as inert SVG, for people, orgs and unknown names alike", async () => {
    for (const name of ["ada", "acme", "nobody-here"]) {
      const r = await get(`/avatars/${name}?v=i`);
      expect({
        status: r.status,
        type: r.headers.get("content-type"),
        csp: r.headers.get("content-security-policy"),
        nosniff: r.headers.get("x-content-type-options"),
        cache: r.headers.get("cache-control"),
      }).toEqual({ status: 200, type: "image/svg+xml", csp: "default-src 'none'; sandbox", nosniff: "nosniff", cache: "public, max-age=31536000, immutable" });
      expect(new TextDecoder().decode(r.bytes)).toStartWith("<svg");
    }
    expect((await get("/avatars/ada")).headers.get("cache-control")).toBe("public, max-age=300");
    expect((await get("/avatars/ada?v=i", { "if-none-match": '"i"' })).status).toBe(304);
    expect((await get("/avatars/not..a..name")).status).toBe(404);
  });
});

describe("upload through the settings form", () => {
  test("a PNG is stored under avatars/{id}/{sha256}.png, served with its type, and the header shows it", async () => {
    const r = await upload(PNG);
    expect({ status: r.status, location: r.location }).toEqual({ status: 303, location: "/settings/profile?done=avatar" });
    const key = storedKey()!;
    expect(key).toMatch(/^avatars\/[a-z0-9]+\/[0-9a-f]{64}\.png$/);
    const v = key.split("/")[2]!.slice(0, 16);
    const served = await get(`/avatars/ada?v=${v}`);
    expect({
      status: served.status,
      type: served.headers.get("content-type"),
      cache: served.headers.get("cache-control"),
      same: Buffer.from(served.bytes).equals(Buffer.from(PNG)),
    }).toEqual({
      status: 200,
      type: "image/png",
      cache: "public, max-age=31536000, immutable",
      same: true,
    });
    // Revalidation by the version: 304 with no body.
    expect(served.headers.get("etag")).toBe(`"${v}"`);
    const again = await get(`/avatars/ada?v=${v}`, { "if-none-match": `"${v}"` });
    expect({ status: again.status, length: again.bytes.length, type: again.headers.get("content-type") }).toEqual({
      status: 304,
      length: 0,
      type: "image/png",
    });
    // An old address of the picture is only kept briefly.
    expect((await get("/avatars/ada?v=i")).headers.get("cache-control")).toBe("public, max-age=300");
    const page = await (await fetch(`${server.url}/settings/profile?done=avatar`, { headers: { cookie } })).text();
    expect(page).toContain(`src="/avatars/ada?v=${v}"`);
    expect(page).toContain("Picture saved.");
  });

  test("a JPEG replaces it; the old object is deleted after the row moved", async () => {
    const before = storedKey()!;
    expect(existsSync(objectPath(before))).toBe(true);
    expect((await upload(JPEG, "me.jpg", "image/jpeg")).status).toBe(303);
    const after = storedKey()!;
    expect(after).toMatch(/\.jpg$/);
    expect(existsSync(objectPath(before))).toBe(false);
    expect((await get("/avatars/ada")).headers.get("content-type")).toBe("image/jpeg");
  });

  test("refusals come back on the form with a reason, and change nothing", async () => {
    const key = storedKey();
    const cases: [Uint8Array, string, number, string][] = [
      [SVG_WITH_SCRIPT, "x.svg", 415, "only PNG, JPEG or WebP pictures are accepted"],
      [GIF, "x.gif", 415, "only PNG, JPEG or WebP pictures are accepted"],
      [HTML_AS_PNG, "x.png", 415, "only PNG, JPEG or WebP pictures are accepted"],
      [PNG.subarray(0, 40), "cut.png", 422, "the PNG picture is damaged or incomplete"],
      [pngSized(5000, 5000), "huge.png", 422, "the picture is 5000×5000 pixels; at most 4096×4096 is accepted"],
    ];
    for (const [bytes, name, status, message] of cases) {
      const r = await upload(bytes, name);
      expect({ name, status: r.status, says: r.text.includes(message) }).toEqual({ name, status, says: true });
    }
    expect(storedKey()).toBe(key);
  });

  test("a form without the session's token is refused (403)", async () => {
    expect((await upload(PNG, "me.png", "image/png", "forged")).status).toBe(403);
  });

  test("over 1 MiB: 413 on the form, decided by the declared length before the body is sent", async () => {
    const big = new Uint8Array(1024 * 1024 + 1);
    big.set(PNG);
    expect((await upload(big)).status).toBe(413);
    // A raw request declaring 50 MiB and sending none of it is answered at once.
    const answer = await new Promise<string>((resolve, reject) => {
      const url = new URL(server.url);
      const sock = connect(Number(url.port), url.hostname, () => {
        sock.write(
          `POST /settings/profile/avatar HTTP/1.1\r\nHost: ${url.host}\r\nCookie: ${cookie}\r\nOrigin: ${server.url}\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n`,
        );
      });
      let got = "";
      sock.on("data", (d) => {
        got += d.toString("latin1");
        if (got.includes("\r\n\r\n")) {
          sock.destroy();
          resolve(got.split("\r\n")[0]!);
        }
      });
      sock.on("error", reject);
    });
    expect(answer).toBe("HTTP/1.1 413 Payload Too Large");
  });

  test("Remove restores the identicon and deletes the object", async () => {
    const key = storedKey()!;
    const form = new URLSearchParams({ csrf: await csrf() });
    const res = await fetch(`${server.url}/settings/profile/avatar/remove`, {
      method: "POST",
      headers: { cookie, origin: server.url, "content-type": "application/x-www-form-urlencoded" },
      body: form.toString(),
      redirect: "manual",
    });
    expect(res.status).toBe(303);
    expect(storedKey()).toBeNull();
    expect(existsSync(objectPath(key))).toBe(false);
    expect((await get("/avatars/ada")).headers.get("content-type")).toBe("image/svg+xml");
  });
});

describe("PUT and DELETE /v1/user/avatar", () => {
  const put = (bytes: Uint8Array, type: string, auth: Record<string, string> = { authorization: `Bearer ${token}` }) =>
    fetch(`${server.url}/v1/user/avatar`, { method: "PUT", headers: { "content-type": type, ...auth }, body: bytes as BodyInit }).then(async (r) => ({
      status: r.status,
      body: await r.json().catch(() => null),
    }));

  test("a WebP is accepted with its size and type; the address is versioned by its hash", async () => {
    const r = await put(WEBP, "image/webp");
    expect(r).toEqual({
      status: 200,
      body: { url: expect.stringMatching(/\/avatars\/ada\?v=[0-9a-f]{16}$/), type: "image/webp", width: 3, height: 2, size: WEBP.length },
    });
    const v = new URL(r.body.url).searchParams.get("v");
    expect((await get(`/avatars/ada?v=${v}`)).headers.get("content-type")).toBe("image/webp");
  });

  test("the bytes decide, not the header: HTML sent as image/png is 415; JSON is 415; too big is 413; anonymous is 401", async () => {
    expect((await put(HTML_AS_PNG, "image/png")).status).toBe(415);
    expect((await put(PNG, "application/json")).status).toBe(415);
    expect((await put(new Uint8Array(1024 * 1024 + 1), "image/png")).status).toBe(413);
    expect((await put(PNG, "image/png", {})).status).toBe(401);
  });

  test("DELETE brings the identicon back; it is idempotent", async () => {
    const api = client(server, { token });
    expect((await api.delete("/v1/user/avatar")).status).toBe(204);
    expect((await api.delete("/v1/user/avatar")).status).toBe(204);
    expect(storedKey()).toBeNull();
    expect(readdirSync(join(server.dataDir, "objects", "avatars")).flatMap((d) => readdirSync(join(server.dataDir, "objects", "avatars", d)))).toEqual([]);
  });
});
