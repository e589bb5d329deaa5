// Serving a stored artifact zip from the fs object store: Bun.file (sendfile), one byte range when
// asked (RFC 9110 §14: a single `bytes=a-b`; several ranges get the whole file).
import { zipDisposition, type ArtifactFile } from "../services/ci/artifacts.ts";

/** One `bytes=` range of a file of `size` bytes: null for none (or several), "invalid" when unsatisfiable. */
function rangeOf(header: string | null, size: number): { start: number; end: number } | "invalid" | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/i.exec(header.trim());
  if (!m) return header.includes(",") ? null : "invalid";
  if (m[1] === "" && m[2] === "") return "invalid";
  const start = m[1] === "" ? Math.max(0, size - Number(m[2])) : Number(m[1]);
  const end = m[1] === "" || m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  return start > end || start >= size ? "invalid" : { start, end };
}

/** The zip as an answer: 200 whole, 206 for a range, 416 for one past the end. */
export function zipAnswer(request: Request, file: ArtifactFile, disposition: boolean): Response {
  const headers: Record<string, string> = { "content-type": "application/zip", "accept-ranges": "bytes", "cache-control": "private, no-store" };
  if (disposition) headers["content-disposition"] = zipDisposition(file.name);
  const range = rangeOf(request.headers.get("range"), file.size);
  if (range === "invalid") return new Response(null, { status: 416, headers: { ...headers, "content-range": `bytes */${file.size}` } });
  const whole = Bun.file(file.path);
  if (!range) return new Response(whole, { status: 200, headers: { ...headers, "content-length": String(file.size) } });
  return new Response(whole.slice(range.start, range.end + 1), {
    status: 206,
    headers: { ...headers, "content-range": `bytes ${range.start}-${range.end}/${file.size}`, "content-length": String(range.end - range.start + 1) },
  });
}
