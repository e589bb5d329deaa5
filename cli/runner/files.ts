// The files a step writes to talk to the runner (GitHub's "workflow commands" by file), read after
// each step: `$GITHUB_OUTPUT` (the step's outputs) and `$GITHUB_ENV` (environment for later
// steps) hold entries in one of two forms,
//
//   NAME=value                 one line
//   NAME<<DELIMITER            a value of any number of lines, ended by a line that is exactly
//   line 1                     DELIMITER (the writer picks one that is not in the value)
//   DELIMITER
//
// and `$GITHUB_PATH` holds one directory a line, prepended to PATH for later steps (the last one
// written comes first). Pure and bounded: the caller reads at most FILE_COMMAND_LIMITS.bytes; an
// error names the file and line, never a value (a value may hold a secret).

/** Bounds on what one step may write. */
export const FILE_COMMAND_LIMITS = Object.freeze({
  /** Bytes of one file read after a step (GitHub caps a job's outputs at 1 MB). */
  bytes: 1024 * 1024,
  /** Entries in one file. */
  entries: 1000,
  /** Characters of a name. */
  nameChars: 256,
});

/** What a file holds: its entries in order (a later entry of the same name wins), or why it is malformed. */
export type FileCommands = { ok: true; entries: [string, string][] } | { ok: false; error: string };

const OUTPUT_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Parses `$GITHUB_OUTPUT` (`kind: "output"`) or `$GITHUB_ENV` (`kind: "env"`). */
export function parseFileCommands(text: string, kind: "output" | "env"): FileCommands {
  const file = kind === "output" ? "GITHUB_OUTPUT" : "GITHUB_ENV";
  if (text.length > FILE_COMMAND_LIMITS.bytes) return { ok: false, error: `${file} is larger than ${FILE_COMMAND_LIMITS.bytes} bytes` };
  const lines = text.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  if (lines[lines.length - 1] === "") lines.pop();
  const valid = kind === "output" ? OUTPUT_NAME : ENV_NAME;
  const entries: [string, string][] = [];
  const named = (name: string, at: number): string | null => {
    if (!name) return `${file} line ${at}: an entry without a name`;
    if (name.length > FILE_COMMAND_LIMITS.nameChars || !valid.test(name))
      return `${file} line ${at}: ${JSON.stringify(name.slice(0, 60))} is not a valid ${kind === "output" ? "output" : "environment variable"} name`;
    return null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === "") continue;
    if (entries.length >= FILE_COMMAND_LIMITS.entries) return { ok: false, error: `${file} has more than ${FILE_COMMAND_LIMITS.entries} entries` };
    const eq = line.indexOf("=");
    const heredoc = line.indexOf("<<");
    if (eq >= 0 && (heredoc < 0 || eq < heredoc)) {
      const name = line.slice(0, eq);
      const bad = named(name, i + 1);
      if (bad) return { ok: false, error: bad };
      entries.push([name, line.slice(eq + 1)]);
      continue;
    }
    if (heredoc < 0) return { ok: false, error: `${file} line ${i + 1}: expected NAME=value or NAME<<DELIMITER` };
    const name = line.slice(0, heredoc);
    const delimiter = line.slice(heredoc + 2);
    const bad = named(name, i + 1);
    if (bad) return { ok: false, error: bad };
    if (!delimiter) return { ok: false, error: `${file} line ${i + 1}: ${name}<< names no delimiter` };
    const end = lines.indexOf(delimiter, i + 1);
    if (end < 0) return { ok: false, error: `${file} line ${i + 1}: no line ends the value of ${name} (expected a line that is exactly the delimiter)` };
    entries.push([name, lines.slice(i + 1, end).join("\n")]);
    i = end;
  }
  return { ok: true, entries };
}

/** The directories of `$GITHUB_PATH`, in the order they go in front of PATH (the last written first, each once). */
export function parsePathFile(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.slice(0, FILE_COMMAND_LIMITS.bytes).split("\n").slice(0, FILE_COMMAND_LIMITS.entries)) {
    const dir = raw.trim();
    if (!dir) continue;
    const seen = out.indexOf(dir);
    if (seen >= 0) out.splice(seen, 1);
    out.push(dir);
  }
  return out.reverse();
}
