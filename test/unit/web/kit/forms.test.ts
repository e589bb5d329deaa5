// The one refusal policy of posted forms (kit/forms.ts), by code and kind of form.
import { describe, expect, test } from "bun:test";
import { STATUS_OF, type ErrorCode } from "../../../../src/errors.ts";
import { answerTo } from "../../../../src/http/web/kit/forms.ts";

const CODES = Object.keys(STATUS_OF) as ErrorCode[];
const AGAIN: ErrorCode[] = ["invalid", "payment_required", "forbidden", "conflict", "too_large", "unsupported_media_type", "unprocessable", "rate_limited"];

describe("answerTo", () => {
  test("an ordinary form: refusals the person can fix come back as the form; 401 is the sign-in form; 404, 410 and 5xx the page's error page", () => {
    const got = Object.fromEntries(CODES.map((c) => [c, answerTo(c)]));
    expect(got).toEqual({
      ...Object.fromEntries(AGAIN.map((c) => [c, "again"])),
      unauthenticated: "sign-in",
      not_found: "error-page",
      gone: "error-page",
      internal: "error-page",
      upstream: "error-page",
      unavailable: "error-page",
    });
  });

  test("every 4xx but 401, 404 and 410 is drawn again, and no 5xx is", () => {
    for (const c of CODES) {
      const status = STATUS_OF[c];
      const expected = status >= 500 || c === "not_found" || c === "gone" ? "error-page" : c === "unauthenticated" ? "sign-in" : "again";
      expect({ c, a: answerTo(c) }).toEqual({ c, a: expected });
    }
  });

  test("the three kinds differ only where they say", () => {
    for (const c of CODES) {
      const plain = answerTo(c);
      const session = c === "unauthenticated" ? "again" : plain;
      const link = c === "unauthenticated" ? "error-page" : plain;
      const lookup = c === "not_found" || c === "gone" ? "again" : plain;
      expect({ c, session: answerTo(c, "session"), link: answerTo(c, "link"), lookup: answerTo(c, "lookup") }).toEqual({ c, session, link, lookup });
    }
  });
});
