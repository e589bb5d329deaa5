// Ref name rules, as `git check-ref-format` applies them.
//
// From git-check-ref-format(1): Git imposes the following rules on how references are named:
//
//   1. They can include slash / for hierarchical (directory) grouping, but no
//      slash-separated component can begin with a dot . or end with the
//      sequence .lock.
//   2. They must contain at least one /. (--allow-onelevel lifts this.)
//   3. They cannot have two consecutive dots .. anywhere.
//   4. They cannot have ASCII control characters (bytes below 040 or 177 DEL),
//      space, tilde ~, caret ^, or colon : anywhere.
//   5. They cannot have question-mark ?, asterisk *, or open bracket [ anywhere.
//      (--refspec-pattern allows a single *.)
//   6. They cannot begin or end with a slash / or contain multiple consecutive slashes.
//   7. They cannot end with a dot.
//   8. They cannot contain a sequence @{.
//   9. They cannot be the single character @.
//  10. They cannot contain a \.

/** Options mirroring `git check-ref-format --allow-onelevel / --refspec-pattern`. */
export interface RefFormatOptions {
  allowOnelevel?: boolean;
  refspecPattern?: boolean;
}

const encoder = new TextEncoder();
const SLASH = 0x2f;
const DOT = 0x2e;
const LOCK = encoder.encode(".lock");

/** True when `name` is a valid ref name by `git check-ref-format [options] <name>`. */
export function checkRefFormat(name: string, opts: RefFormatOptions = {}): boolean {
  const bytes = encoder.encode(name);
  if (name === "@") return false;
  let starAllowed = opts.refspecPattern === true;
  let components = 0;
  let start = 0;
  for (;;) {
    let last = 0;
    let at = start;
    for (; at < bytes.length && bytes[at] !== SLASH; at++) {
      const ch = bytes[at]!;
      if (ch < 0x20 || ch === 0x7f) return false;
      switch (ch) {
        case 0x20: // space
        case 0x7e: // ~
        case 0x5e: // ^
        case 0x3a: // :
        case 0x3f: // ?
        case 0x5b: // [
        case 0x5c: // \
          return false;
        case DOT:
          if (last === DOT) return false;
          break;
        case 0x7b: // {
          if (last === 0x40) return false;
          break;
        case 0x2a: // *
          if (!starAllowed) return false;
          starAllowed = false;
          break;
      }
      last = ch;
    }
    const len = at - start;
    if (len === 0) return false;
    if (bytes[start] === DOT) return false;
    if (len >= LOCK.length && endsWith(bytes, at, LOCK)) return false;
    components++;
    if (at >= bytes.length) break;
    start = at + 1;
  }
  if (bytes[bytes.length - 1] === DOT) return false;
  return components >= 2 || opts.allowOnelevel === true;
}

/** True when a pushed ref name is acceptable: "refs/" followed by a valid name (receive-pack's "funny refname" test). */
export function isValidPushRefName(name: string): boolean {
  return name.startsWith("refs/") && checkRefFormat(name.slice(5));
}

function endsWith(bytes: Uint8Array, end: number, suffix: Uint8Array): boolean {
  for (let i = 0; i < suffix.length; i++) if (bytes[end - suffix.length + i] !== suffix[i]) return false;
  return true;
}
