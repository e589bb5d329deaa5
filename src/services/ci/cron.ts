// `on.schedule: [{ cron }]` (issue 29): POSIX cron's five fields, in UTC, as GitHub reads them:
//
//   minute (0-59)  hour (0-23)  day-of-month (1-31)  month (1-12 or JAN-DEC)  day-of-week (0-6 or SUN-SAT; 7 is Sunday)
//
// Each field is a comma-separated list of `*`, `N`, `A-B`, each optionally `/STEP` (`N/STEP` means
// N to the field's end). Names are case-insensitive. When both day fields are restricted a day
// matching either runs (POSIX); when either is written with `*` (also `*/2`), both must match.
// Macros (`@daily`) are refused, as GitHub refuses them. Pure and bounded (the text's length, the
// number of items); errors carry the offset of the problem in the text.

/** At most this many characters in one cron text. */
export const CRON_MAX_CHARS = 200;

/** A malformed cron text, at `offset` (0-based). */
export class CronError extends Error {
  override readonly name = "CronError";
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

/** A parsed schedule: the allowed values of each field, and whether the day fields were `*`. */
export interface Cron {
  source: string;
  minutes: Uint8Array;
  hours: Uint8Array;
  days: Uint8Array;
  months: Uint8Array;
  weekdays: Uint8Array;
  daysStar: boolean;
  weekdaysStar: boolean;
}

const MONTHS: readonly string[] = Object.freeze(["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]);
const WEEKDAYS: readonly string[] = Object.freeze(["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]);

interface FieldRule {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
  /** The first name's value (1 for months, 0 for weekdays). */
  namesFrom?: number;
}

const FIELDS: readonly FieldRule[] = Object.freeze([
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12, names: MONTHS, namesFrom: 1 },
  // 7 is Sunday too (folded into 0 below).
  { name: "day of week", min: 0, max: 7, names: WEEKDAYS, namesFrom: 0 },
]);

/** One value of a field (a number or, where the field has them, a name) at `at`. */
function fieldValue(text: string, at: number, rule: FieldRule): number {
  if (/^[0-9]{1,2}$/.test(text)) {
    const n = Number(text);
    if (n < rule.min || n > rule.max) throw new CronError(`${rule.name} ${n} is outside ${rule.min}-${rule.max}`, at);
    return n;
  }
  const i = rule.names?.indexOf(text.toUpperCase()) ?? -1;
  if (i >= 0) return i + rule.namesFrom!;
  throw new CronError(
    `${JSON.stringify(text.slice(0, 20))} is not a ${rule.name}${rule.names ? ` (a number or ${rule.names[0]}-${rule.names[rule.names.length - 1]})` : ""}`,
    at,
  );
}

/** Parses one field starting at `at`; answers its allowed values and whether it was written with `*`. */
function parseField(text: string, at: number, rule: FieldRule): { set: Uint8Array; star: boolean } {
  const set = new Uint8Array(rule.max + 1);
  let offset = at;
  for (const item of text.split(",")) {
    if (item === "") throw new CronError(`an empty item in the ${rule.name} field`, offset);
    const slash = item.indexOf("/");
    const range = slash < 0 ? item : item.slice(0, slash);
    let step = 1;
    if (slash >= 0) {
      const s = item.slice(slash + 1);
      if (!/^[0-9]{1,2}$/.test(s) || Number(s) < 1)
        throw new CronError(`the step ${JSON.stringify(s.slice(0, 20))} in the ${rule.name} field must be a number from 1 to 99`, offset + slash + 1);
      step = Number(s);
    }
    let lo: number;
    let hi: number;
    if (range === "*") {
      lo = rule.min;
      hi = rule.max;
    } else {
      const dash = range.indexOf("-", 1);
      lo = fieldValue(dash < 0 ? range : range.slice(0, dash), offset, rule);
      hi = dash < 0 ? (slash >= 0 ? rule.max : lo) : fieldValue(range.slice(dash + 1), offset + dash + 1, rule);
      if (hi < lo) throw new CronError(`the range ${range} of the ${rule.name} field runs backwards`, offset);
    }
    for (let v = lo; v <= hi; v += step) set[v] = 1;
    offset += item.length + 1;
  }
  return { set, star: text.startsWith("*") };
}

/** Parses a cron text; throws CronError at the offset of the problem. */
export function parseCron(source: string): Cron {
  if (source.length > CRON_MAX_CHARS) throw new CronError(`the cron text is longer than ${CRON_MAX_CHARS} characters`, 0);
  if (source.trimStart().startsWith("@"))
    throw new CronError("macros like @daily are not supported; write the five fields (e.g. 0 0 * * *)", source.indexOf("@"));
  const fields: { text: string; at: number }[] = [];
  for (const m of source.matchAll(/[^ \t]+/g)) fields.push({ text: m[0], at: m.index });
  if (fields.length !== 5) {
    const at = fields.length > 5 ? fields[5]!.at : source.length;
    throw new CronError(`a cron text has 5 fields (minute hour day-of-month month day-of-week), not ${fields.length}`, at);
  }
  const parsed = fields.map((f, i) => parseField(f.text, f.at, FIELDS[i]!));
  const weekdays = parsed[4]!.set;
  // Sunday is both 0 and 7.
  if (weekdays[7]) weekdays[0] = 1;
  return {
    source,
    minutes: parsed[0]!.set,
    hours: parsed[1]!.set,
    days: parsed[2]!.set,
    months: parsed[3]!.set,
    weekdays: weekdays.subarray(0, 7),
    daysStar: parsed[2]!.star,
    weekdaysStar: parsed[4]!.star,
  };
}

/** Whether the schedule runs in the UTC minute that contains `epochMs`. */
export function cronMatches(cron: Cron, epochMs: number): boolean {
  const d = new Date(epochMs);
  if (!cron.minutes[d.getUTCMinutes()] || !cron.hours[d.getUTCHours()] || !cron.months[d.getUTCMonth() + 1]) return false;
  const day = cron.days[d.getUTCDate()] === 1;
  const weekday = cron.weekdays[d.getUTCDay()] === 1;
  // Vixie cron's rule: with either day field written as `*…`, both must match; else either.
  return cron.daysStar || cron.weekdaysStar ? day && weekday : day || weekday;
}
