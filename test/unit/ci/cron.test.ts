// `on.schedule` cron texts (issue 29): the five fields, names, ranges and steps, the POSIX rule
// for the two day fields, UTC, and refusals with the offset of the problem.
import { describe, expect, test } from "bun:test";
import { CronError, cronMatches, parseCron } from "../../../src/services/ci/cron.ts";

const at = (iso: string) => Date.parse(iso);
const on = (cron: string, iso: string) => cronMatches(parseCron(cron), at(iso));

describe("matching (UTC)", () => {
  test.each([
    ["* * * * *", "2026-11-27T16:17:00Z", true],
    ["*/15 * * * *", "2026-11-27T16:45:59Z", true],
    ["*/15 * * * *", "2026-11-27T16:46:00Z", false],
    ["0 0 * * *", "2026-11-27T00:00:30Z", true],
    ["0 0 * * *", "2026-11-27T01:00:00Z", false],
    ["30 5 * * 1,3", "2026-11-25T05:30:00Z", true], // a Wednesday
    ["30 5 * * 1,3", "2026-11-27T05:30:00Z", false], // a Friday
    ["30 5 * * MON-FRI", "2026-11-27T05:30:00Z", true],
    ["30 5 * * mon-fri", "2026-11-28T05:30:00Z", false], // Saturday
    ["0 12 * * 0", "2026-11-29T12:00:00Z", true], // Sunday as 0
    ["0 12 * * 7", "2026-11-29T12:00:00Z", true], // Sunday as 7
    ["0 12 * * 5-7", "2026-11-29T12:00:00Z", true],
    ["0 0 1 * *", "2026-12-01T00:00:00Z", true],
    ["0 0 1 JAN,jul *", "2026-07-01T00:00:00Z", true],
    ["0 0 1 JAN,jul *", "2026-06-01T00:00:00Z", false],
    ["5/20 * * * *", "2026-11-27T16:45:00Z", true],
    ["5/20 * * * *", "2026-11-27T16:05:00Z", true],
    ["5/20 * * * *", "2026-11-27T16:20:00Z", false],
    ["10-20/5 8-9 * * *", "2026-11-27T09:15:00Z", true],
    ["10-20/5 8-9 * * *", "2026-11-27T09:16:00Z", false],
    // Both day fields restricted: either matches (the 13th, or any Friday).
    ["0 0 13 * 5", "2026-11-13T00:00:00Z", true],
    ["0 0 13 * 5", "2026-11-27T00:00:00Z", true],
    ["0 0 13 * 5", "2026-11-26T00:00:00Z", false],
    // A day field written with `*`: both must match.
    ["0 0 */2 * 5", "2026-11-27T00:00:00Z", true], // the 27th is odd (1, 3, … match */2 from 1) and a Friday
    ["0 0 */2 * 5", "2026-11-20T00:00:00Z", false], // a Friday, but the 20th is even
    ["0 0 * * *\t", "2026-11-27T00:00:00Z", true],
    ["  0   0 * * *", "2026-11-27T00:00:00Z", true],
  ])("%p at %s → %p", (cron, iso, want) => {
    expect(on(cron, iso)).toBe(want);
  });
});

describe("refusals name the offset of the problem", () => {
  const refusal = (text: string) => {
    try {
      parseCron(text);
    } catch (e) {
      if (e instanceof CronError) return `${e.offset}: ${e.message}`;
      throw e;
    }
    throw new Error("no error");
  };
  test.each([
    ["@daily", "0: macros like @daily are not supported; write the five fields (e.g. 0 0 * * *)"],
    ["* * * *", "7: a cron text has 5 fields (minute hour day-of-month month day-of-week), not 4"],
    ["* * * * * *", "10: a cron text has 5 fields (minute hour day-of-month month day-of-week), not 6"],
    ["60 * * * *", "0: minute 60 is outside 0-59"],
    ["0 24 * * *", "2: hour 24 is outside 0-23"],
    ["0 0 0 * *", "4: day of month 0 is outside 1-31"],
    ["0 0 * 13 *", "6: month 13 is outside 1-12"],
    ["0 0 * * 8", "8: day of week 8 is outside 0-7"],
    ["0 0 * FOO *", '6: "FOO" is not a month (a number or JAN-DEC)'],
    ["0 0 * * MON-XYZ", '12: "XYZ" is not a day of week (a number or SUN-SAT)'],
    ["*/0 * * * *", '2: the step "0" in the minute field must be a number from 1 to 99'],
    ["1,,2 * * * *", "2: an empty item in the minute field"],
    ["30-10 * * * *", "0: the range 30-10 of the minute field runs backwards"],
    ["-5 * * * *", '0: "-5" is not a minute'],
    ["a * * * *", '0: "a" is not a minute'],
    [`${"1,".repeat(150)}1 * * * *`, "0: the cron text is longer than 200 characters"],
  ])("%p", (text, want) => {
    expect(refusal(text)).toBe(want);
  });
});
