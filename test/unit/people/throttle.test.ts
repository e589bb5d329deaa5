// The doubling-delay counters behind the sign-in and credential limits (throttle.ts), on a
// clock the test moves.
import { describe, expect, test } from "bun:test";
import { Backoff, sourceKey } from "../../../src/services/people/throttle.ts";

const HOUR = 3600_000;

describe("Backoff", () => {
  test("perHour failures in a row are free; then 1 s, 2 s, 4 s … after the last failure, capped", () => {
    const b = new Backoff({ perHour: 3, maxMs: 5000 });
    let t = 1_000_000;
    for (let i = 0; i < 3; i++) {
      expect(b.wait("k", t)).toBe(0);
      b.fail("k", t);
    }
    expect(b.wait("k", t)).toBe(1000);
    expect(b.wait("k", t + 400)).toBe(600);
    t += 1000;
    expect(b.wait("k", t)).toBe(0);
    b.fail("k", t);
    expect(b.wait("k", t)).toBe(2000);
    t += 2000;
    b.fail("k", t);
    expect(b.wait("k", t)).toBe(4000);
    t += 4000;
    b.fail("k", t);
    expect(b.wait("k", t)).toBe(5000); // 8 s, capped at the maximum
  });

  test("failures drain at perHour an hour: an hour of quiet forgets them; a slower pace never waits", () => {
    const b = new Backoff({ perHour: 4, maxMs: 60_000 });
    let t = 0;
    for (let i = 0; i < 10; i++) b.fail("k", (t += 10));
    expect(b.wait("k", t)).toBeGreaterThan(0);
    expect(b.wait("k", t + 2 * HOUR)).toBe(0);
    // One failure every 15 minutes (4 an hour) never waits.
    const slow = new Backoff({ perHour: 4, maxMs: 60_000 });
    for (let i = 0; i < 50; i++) {
      const at = i * (HOUR / 4);
      expect(slow.wait("s", at)).toBe(0);
      slow.fail("s", at);
    }
  });

  test("keys are independent; clear forgets one; memory is bounded", () => {
    const b = new Backoff({ perHour: 1, maxMs: 10_000, capacity: 3 });
    b.fail("a", 0);
    b.fail("b", 0);
    expect(b.wait("a", 0)).toBe(1000);
    expect(b.wait("c", 0)).toBe(0);
    b.clear("a");
    expect(b.wait("a", 0)).toBe(0);
    for (const k of ["c", "d", "e"]) b.fail(k, 1);
    expect(b.wait("b", 1)).toBe(0); // the oldest key was dropped
    expect(b.wait("e", 1)).toBe(1000);
  });
});

describe("sourceKey", () => {
  test("IPv4 as is (mapped or not); IPv6 by its /64", () => {
    expect(sourceKey("203.0.113.9")).toBe("203.0.113.9");
    expect(sourceKey("::ffff:203.0.113.9")).toBe("203.0.113.9");
    expect(sourceKey("2001:db8:1:2:3:4:5:6")).toBe("2001:db8:1:2::/64");
    expect(sourceKey("2001:0db8:0001:0002::9")).toBe("2001:db8:1:2::/64");
    expect(sourceKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(sourceKey("::1")).toBe("0:0:0:0::/64");
    expect(sourceKey("unknown")).toBe("unknown");
  });
});
