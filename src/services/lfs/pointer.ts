// Git LFS pointer files (git-lfs docs/spec.md): what a repository's tree holds in place of a big
// file. The grammar, from the specification:
//
//   version https://git-lfs.github.com/spec/v1
//   oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393
//   size 12345
//   (ending \n)
//
// "Pointer files must be less than 1024 bytes in size, including the line endings": key-value
// lines, `version` first and the rest sorted by key, each `key value\n`. We read what the client
// writes (an extension line `ext-N-name` is skipped); anything else is not a pointer.

/** The largest pointer file (the specification's bound): a bigger blob is never read as one. */
export const MAX_POINTER_BYTES = 1023;

/** The version line's value (older clients wrote the hawser URL, still accepted). */
const VERSIONS: ReadonlySet<string> = new Set(["https://git-lfs.github.com/spec/v1", "https://hawser.github.com/spec/v1"]);

/** A parsed pointer: the object's SHA-256 (64 lower-case hex digits) and its size. */
export interface LfsPointer {
  oid: string;
  size: number;
}

/** Whether `oid` is a SHA-256 in the form LFS names objects: 64 lower-case hex digits. */
export function isLfsOid(oid: unknown): oid is string {
  return typeof oid === "string" && /^[0-9a-f]{64}$/.test(oid);
}

/** The pointer `bytes` hold, or null when they are not a pointer file. */
export function parsePointer(bytes: Uint8Array): LfsPointer | null {
  if (bytes.length > MAX_POINTER_BYTES || bytes.length < 20) return null;
  // Cheap test first: every pointer starts with "version ".
  if (bytes[0] !== 0x76 || bytes[7] !== 0x20) return null;
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  if (!text.endsWith("\n")) return null;
  const lines = text.slice(0, -1).split("\n");
  let oid: string | null = null;
  let size: number | null = null;
  for (const [i, line] of lines.entries()) {
    const space = line.indexOf(" ");
    if (space <= 0) return null;
    const key = line.slice(0, space);
    const value = line.slice(space + 1);
    if (i === 0) {
      if (key !== "version" || !VERSIONS.has(value)) return null;
    } else if (key === "oid") {
      if (!value.startsWith("sha256:") || !isLfsOid(value.slice(7))) return null;
      oid = value.slice(7);
    } else if (key === "size") {
      if (!/^[0-9]{1,16}$/.test(value)) return null;
      size = Number(value);
    } else if (!/^ext-[0-9]-[a-z0-9]+$/.test(key)) return null;
  }
  return oid !== null && size !== null && Number.isSafeInteger(size) ? { oid, size } : null;
}

/** The pointer file of an object, as `git lfs` writes it. */
export function formatPointer(p: LfsPointer): string {
  return `version https://git-lfs.github.com/spec/v1\noid sha256:${p.oid}\nsize ${p.size}\n`;
}
