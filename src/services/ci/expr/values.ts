// Values of the expression language and GitHub's rules for them (docs.github.com, "Evaluate
// expressions in workflows and actions"):
//
// - Falsy: false, 0, -0, NaN, "", null. Everything else (arrays and objects too) is truthy.
// - Loose equality: values of different types are compared as numbers (null → 0, true → 1,
//   false → 0, a string parsed as a JSON-style number with hex/octal/Infinity allowed and ""
//   → 0, otherwise NaN; arrays and objects → NaN). NaN equals nothing. Strings compare ignoring
//   case; arrays and objects are equal only to themselves.
// - To a string: null → "", booleans → "true"/"false", numbers in shortest form, an array →
//   "Array", an object → "Object".
// - Property names are looked up ignoring case.

/** A value an expression reads or produces. */
export type Value = null | boolean | number | string | readonly Value[] | { readonly [key: string]: Value };

/** What contexts an evaluation reads: name (lower case) → value. */
export type Contexts = Readonly<Record<string, Value>>;

/** Whether `v` is an object (not null, not an array). */
export function isObject(v: Value): v is { readonly [key: string]: Value } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** GitHub's truthiness. */
export function truthy(v: Value): boolean {
  if (v === null || v === false || v === "") return false;
  if (typeof v === "number") return v !== 0 && !Number.isNaN(v);
  return true;
}

const DECIMAL = /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;
const HEX = /^([+-]?)0[xX]([0-9a-fA-F]+)$/;
const OCTAL = /^([+-]?)0[oO]([0-7]+)$/;
const INFINITY = /^([+-]?)Infinity$/;

/** A value as a number (for comparisons of values of different types). */
export function toNumber(v: Value): number {
  if (v === null) return 0;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "number") return v;
  if (typeof v !== "string") return Number.NaN;
  const s = v.trim();
  if (s === "") return 0;
  if (DECIMAL.test(s)) return Number(s);
  let m = HEX.exec(s);
  if (m) return (m[1] === "-" ? -1 : 1) * Number.parseInt(m[2]!, 16);
  m = OCTAL.exec(s);
  if (m) return (m[1] === "-" ? -1 : 1) * Number.parseInt(m[2]!, 8);
  m = INFINITY.exec(s);
  if (m) return m[1] === "-" ? -Infinity : Infinity;
  return Number.NaN;
}

/** A number as GitHub writes it: integers without a fraction, `Infinity`, `NaN`, -0 as "0". */
export function numberText(n: number): string {
  if (Object.is(n, -0)) return "0";
  return String(n);
}

/** A value as a string (templates, format, join, contains on strings). */
export function toText(v: Value): string {
  if (v === null) return "";
  if (typeof v === "string") return v;
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "number") return numberText(v);
  return Array.isArray(v) ? "Array" : "Object";
}

/** Whether the string is plain ASCII (then upper-casing it keeps its length). */
const ASCII = /^[\x00-\x7f]*$/;

/**
 * The string folded for comparison ignoring case, character by character (an upper-case form
 * that would change the length, like ß → SS, keeps the character), so that comparison stays
 * ordinal as GitHub's OrdinalIgnoreCase is.
 */
export function foldCase(s: string): string {
  if (ASCII.test(s)) return s.toUpperCase();
  let out = "";
  for (const ch of s) {
    const u = ch.toUpperCase();
    out += u.length === ch.length ? u : ch;
  }
  return out;
}

/** `a == b` by GitHub's loose equality. */
export function looseEquals(a: Value, b: Value): boolean {
  const ta = kindOf(a);
  const tb = kindOf(b);
  if (ta === tb) {
    if (ta === "string") return foldCase(a as string) === foldCase(b as string);
    if (ta === "number") return (a as number) === (b as number);
    return a === b;
  }
  if (ta === "array" || ta === "object" || tb === "array" || tb === "object") return false;
  const na = toNumber(a);
  const nb = toNumber(b);
  return na === nb;
}

/** The sign of comparing `a` with `b` (-1, 0, 1), or null when they do not compare (NaN, arrays, objects). */
export function compare(a: Value, b: Value): -1 | 0 | 1 | null {
  const ta = kindOf(a);
  const tb = kindOf(b);
  if (ta === "string" && tb === "string") {
    const fa = foldCase(a as string);
    const fb = foldCase(b as string);
    return fa < fb ? -1 : fa > fb ? 1 : 0;
  }
  if (ta === "array" || ta === "object" || tb === "array" || tb === "object") return null;
  const na = toNumber(a);
  const nb = toNumber(b);
  if (Number.isNaN(na) || Number.isNaN(nb)) return null;
  return na < nb ? -1 : na > nb ? 1 : 0;
}

/** The type of a value as the rules name them. */
export function kindOf(v: Value): "null" | "boolean" | "number" | "string" | "array" | "object" {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v as "boolean" | "number" | "string" | "object";
}

/** `obj[name]` ignoring case (own properties only), or null. */
export function property(obj: { readonly [key: string]: Value }, name: string): Value {
  if (Object.hasOwn(obj, name)) return obj[name] ?? null;
  const folded = name.toLowerCase();
  for (const key of Object.keys(obj)) if (key.toLowerCase() === folded) return obj[key] ?? null;
  return null;
}
