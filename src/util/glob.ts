// Branch globs, shared by workflow branch filters and branch protections (DECISIONS §3):
//
//   *    any run of characters except `/` (within one path segment)
//   **   any run of characters, `/` included
//   ?    one character except `/`
//   anything else matches itself
//
// Why not a RegExp: `*a*a*a*a*a*a*a*a*a*a*b` against forty `a`s made the backtracking engine
// try every way to split the name, 11-13 s of one thread (issue 25 row 3). This is a Thompson
// simulation of the pattern's automaton: one pass over the name carrying the set of pattern
// positions reached so far, so the cost is at most (pattern tokens + 1) × (name length) steps,
// whatever the pattern.

/** One token of a compiled pattern. */
type Token = { kind: "char"; code: number } | { kind: "any1" } | { kind: "star" } | { kind: "globstar" };

const SLASH = 0x2f;

/** A compiled glob: `match(value)` runs in O(tokens × value length). */
export interface Glob {
  readonly pattern: string;
  match(value: string): boolean;
}

function tokensOf(pattern: string): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern.charCodeAt(i);
    if (c === 0x2a /* * */) {
      if (pattern.charCodeAt(i + 1) === 0x2a) {
        i++;
        // `***` and longer are `**`: a run of stars that includes `**` crosses slashes.
        while (pattern.charCodeAt(i + 1) === 0x2a) i++;
        if (out.at(-1)?.kind === "star") out.pop();
        if (out.at(-1)?.kind !== "globstar") out.push({ kind: "globstar" });
      } else if (out.at(-1)?.kind !== "star" && out.at(-1)?.kind !== "globstar") out.push({ kind: "star" });
    } else if (c === 0x3f /* ? */) out.push({ kind: "any1" });
    else out.push({ kind: "char", code: c });
  }
  return out;
}

/** Compiles `pattern` once for many matches. */
export function compileGlob(pattern: string): Glob {
  const tokens = tokensOf(pattern);
  const n = tokens.length;
  // Patterns without wildcards (most protections, `main`) are a string comparison.
  if (tokens.every((t) => t.kind === "char")) return { pattern, match: (value) => value === pattern };
  let cur = new Uint8Array(n + 1);
  let next = new Uint8Array(n + 1);
  /** Adds state `s` and, through stars that may match nothing, every state after it. */
  const add = (set: Uint8Array, s: number) => {
    while (s <= n && !set[s]) {
      set[s] = 1;
      const t = tokens[s];
      if (!t || (t.kind !== "star" && t.kind !== "globstar")) return;
      s++;
    }
  };
  return {
    pattern,
    match(value: string): boolean {
      cur.fill(0);
      add(cur, 0);
      for (let i = 0; i < value.length; i++) {
        const c = value.charCodeAt(i);
        next.fill(0);
        let any = false;
        for (let s = 0; s < n; s++) {
          if (!cur[s]) continue;
          const t = tokens[s]!;
          switch (t.kind) {
            case "char":
              if (t.code === c) add(next, s + 1), (any = true);
              break;
            case "any1":
              if (c !== SLASH) add(next, s + 1), (any = true);
              break;
            case "star":
              if (c !== SLASH) add(next, s), (any = true);
              break;
            case "globstar":
              add(next, s), (any = true);
              break;
          }
        }
        if (!any) return false;
        [cur, next] = [next, cur];
      }
      return cur[n] === 1;
    },
  };
}

/** Whether `value` matches `pattern` (compiles it each time; compile once for many values). */
export function globMatch(pattern: string, value: string): boolean {
  return compileGlob(pattern).match(value);
}
