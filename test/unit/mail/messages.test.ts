// The mail builders (SPEC §4.3, §4.5, §5.4): each message has a text and an HTML part carrying
// the same link under the base URL, names the API route that takes the token, and escapes
// everything it puts into HTML.
import { describe, expect, test } from "bun:test";
import { claimMail, esc, inviteMail, resetMail, verifyMail } from "../../../src/services/mail/messages.ts";

const BASE = "https://git.example.test";

describe("links in both parts", () => {
  const cases = [
    {
      name: "invite",
      msg: inviteMail({
        to: "new@example.com",
        orgName: "acme",
        role: "admin",
        inviter: "Ada",
        token: "svcinv_abc234",
        expiresAt: Date.UTC(2030, 0, 8),
        baseUrl: `${BASE}/`,
      }),
      url: `${BASE}/invite?token=svcinv_abc234`,
      api: /POST \/v1\/auth\/accept-invite with \{ "invite": "svcinv_abc234"/,
    },
    {
      name: "verify",
      msg: verifyMail({ to: "new@example.com", name: "Nia", token: "svcv_abc234", baseUrl: BASE }),
      url: `${BASE}/verify?token=svcv_abc234`,
      api: /POST \/v1\/auth\/verify with \{ "token": "svcv_abc234" \}/,
    },
    {
      name: "reset",
      msg: resetMail({ to: "old@example.com", name: "Oli", token: "svcrs_abc234", baseUrl: BASE }),
      url: `${BASE}/reset-password?token=svcrs_abc234`,
      api: /POST \/v1\/auth\/reset-password with \{ "token": "svcrs_abc234", "new_password"/,
    },
    {
      name: "address claim",
      msg: claimMail({ to: "second@example.com", handle: "oli", token: "svce_abc234", baseUrl: BASE }),
      url: `${BASE}/settings/emails/verify?token=svce_abc234`,
      api: /POST \/v1\/users\/oli\/emails\/verify with \{ "token": "svce_abc234" \}/,
    },
  ];
  for (const c of cases) {
    test(`${c.name}: the link is in the text and in an href; the text names the API route`, () => {
      expect(c.msg.text).toContain(c.url);
      expect(c.msg.html).toContain(`href="${c.url}"`);
      expect(c.msg.text).toMatch(c.api);
      expect(c.msg.subject.length).toBeGreaterThan(0);
      expect(c.msg.html).toMatch(/^<!doctype html>/);
    });
  }

  test("the recipient is the address given", () => {
    expect(cases.map((c) => c.msg.to)).toEqual(["new@example.com", "new@example.com", "old@example.com", "second@example.com"]);
  });

  test("the invitation states org, role, inviter and expiry", () => {
    const m = cases[0]!.msg;
    expect(m.subject).toBe("Ada invited you to join acme");
    expect(m.text).toContain("Ada invited you to join the organization acme on svc as an admin.");
    expect(m.text).toContain("Tue, 08 Jan 2030 00:00:00 GMT");
    expect(m.html).toContain("Tue, 08 Jan 2030 00:00:00 GMT");
  });
});

describe("escaping", () => {
  test("every interpolated value is escaped in HTML", () => {
    const hostile = `<script>alert("x")</script> & 'q'`;
    const invite = inviteMail({ to: "a@example.com", orgName: "acme", role: "member", inviter: hostile, token: "svcinv_t", expiresAt: 0, baseUrl: BASE });
    const verify = verifyMail({ to: "a@example.com", name: hostile, token: "svcv_t", baseUrl: BASE });
    const reset = resetMail({ to: "a@example.com", name: hostile, token: "svcrs_t", baseUrl: BASE });
    for (const m of [invite, verify, reset]) {
      expect(m.html).not.toContain("<script>");
      expect(m.html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;");
    }
    // The text part is plain text: the name appears as written.
    expect(verify.text).toContain(hostile);
  });

  test("a base URL with markup characters cannot break out of the href", () => {
    const m = verifyMail({ to: "a@example.com", name: "N", token: "svcv_t", baseUrl: `https://x.test/a"onclick="b` });
    expect(m.html).toContain(`href="https://x.test/a&quot;onclick=&quot;b/verify?token=svcv_t"`);
    expect(m.html).not.toContain(`"onclick="`);
  });

  test("control characters in an inviter's name cannot add header lines to the subject", () => {
    const m = inviteMail({
      to: "a@example.com",
      orgName: "acme",
      role: "viewer",
      inviter: "Eve\r\nBcc: victim@example.com",
      token: "svcinv_t",
      expiresAt: 0,
      baseUrl: BASE,
    });
    expect(m.subject).toBe("Eve Bcc: victim@example.com invited you to join acme");
  });

  test("esc covers the five HTML metacharacters", () => {
    expect(esc(`&<>"'`)).toBe("&amp;&lt;&gt;&quot;&#39;");
  });
});
