// The built-in `actions/upload-artifact` and `actions/download-artifact` (issue 30), any version:
// the inputs GitHub's v4 takes, against svc's artifact calls (job token). Upload: the files zipped
// once on the runner, the zip's size and SHA-256 reserved, its bytes PUT where the server says
// (S3: a presigned bucket URL, no credential; fs: svc with the job token), then confirmed.
// Download: the run's artifacts listed, each zip fetched where the listing says and extracted
// with bounds (artifacts-zip.ts).
import { rm } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import type { ActionHost, ActionResult, ActionStep } from "../action-host.ts";
import { call } from "../client.ts";
import { extractZip, uploadFiles, writeZip } from "./artifacts-zip.ts";
import { transferTarget } from "./transfer.ts";

/** Attempts of a byte transfer (PUT or GET) on network errors and 5xx answers. */
const TRANSFER_ATTEMPTS = 3;

const fail = (error: string): ActionResult => ({ exit: 1, outputs: {}, error });

/** A boolean input as GitHub reads one (`true`/`false`, any case); `fallback` when empty. */
function boolInput(v: string | undefined, fallback: boolean): boolean {
  if (v === undefined || v.trim() === "") return fallback;
  return v.trim().toLowerCase() === "true";
}

/** `fetch` retried on network errors and 5xx (the body made again for each attempt). */
async function transfer(url: string, init: () => RequestInit): Promise<Response> {
  let last = "";
  for (let i = 1; i <= TRANSFER_ATTEMPTS; i++) {
    try {
      const res = await fetch(url, { ...init(), redirect: "follow" });
      if (res.status < 500) return res;
      last = `${res.status} ${(await res.text().catch(() => "")).slice(0, 200)}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await Bun.sleep(250 * 2 ** i);
  }
  throw new Error(`the transfer failed: ${last}`);
}

/** Why a call failed, for the log (the server's message, never a URL: a presigned one is a credential). */
const errorOf = (body: unknown, status: number) =>
  body && typeof body === "object" && "error" in body ? String((body as { error: unknown }).error) : `HTTP ${status}`;

/** `actions/upload-artifact`: inputs name, path, if-no-files-found, retention-days, compression-level, overwrite, include-hidden-files. */
export async function uploadArtifact(host: ActionHost, step: ActionStep): Promise<ActionResult> {
  const input = step.inputs;
  const name = input.name?.trim() || "artifact";
  const path = input.path ?? "";
  if (!path.trim()) return fail("upload-artifact: the path input is required");
  const ifNone = (input["if-no-files-found"] || "warn").trim().toLowerCase();
  if (!["warn", "error", "ignore"].includes(ifNone))
    return fail(`upload-artifact: if-no-files-found must be warn, error or ignore, not ${JSON.stringify(ifNone)}`);
  const level = input["compression-level"]?.trim() ? Number(input["compression-level"]) : 6;
  if (!Number.isInteger(level) || level < 0 || level > 9) return fail("upload-artifact: compression-level must be a whole number from 0 to 9");
  const retention = input["retention-days"]?.trim() ? Number(input["retention-days"]) : 0;
  if (!Number.isFinite(retention) || retention < 0) return fail("upload-artifact: retention-days must be a number of days");
  let found: Awaited<ReturnType<typeof uploadFiles>>;
  try {
    found = await uploadFiles(path, host.workspace, { includeHidden: boolInput(input["include-hidden-files"], false) });
  } catch (e) {
    return fail(`upload-artifact: ${(e as Error).message}`);
  }
  if (!found.files.length) {
    const msg = `No files were found with the provided path: ${path.trim().split("\n").join(", ")}. No artifacts will be uploaded.`;
    if (ifNone === "error") return fail(msg);
    if (ifNone === "warn") host.log(`##[warning]${msg}\n`);
    return { exit: 0, outputs: {} };
  }
  host.log(`With the provided path, there will be ${found.files.length} file(s) uploaded (root ${found.root})\n`);
  const zipPath = join(host.temp, `artifact-${crypto.randomUUID()}.zip`);
  try {
    const zip = await writeZip(found.files, zipPath, level);
    const base = `${host.base}/v1/runner/jobs/${encodeURIComponent(host.job.job_id)}/artifacts`;
    const reserved = await call(base, {
      token: host.token,
      method: "POST",
      body: {
        name,
        size: zip.size,
        sha256: zip.sha256,
        overwrite: boolInput(input.overwrite, false),
        ...(retention > 0 ? { retention_days: Math.ceil(retention) } : {}),
      },
      what: "upload-artifact",
      attempts: TRANSFER_ATTEMPTS,
    });
    if (reserved.status !== 201) return fail(`upload-artifact: ${errorOf(reserved.body, reserved.status)}`);
    const { artifact_id: id, upload } = reserved.body as { artifact_id: string; upload: { url: string; method: string; headers: Record<string, string> } };
    const put = await transfer(upload.url, () => ({
      method: upload.method,
      headers: { ...transferTarget(host, upload.url, upload.headers).headers, "content-length": String(zip.size) },
      body: Bun.file(zipPath),
    }));
    if (!put.ok) return fail(`upload-artifact: the upload was refused (${put.status}): ${(await put.text()).slice(0, 300)}`);
    const done = await call(`${base}/${encodeURIComponent(id)}/commit`, {
      token: host.token,
      method: "POST",
      what: "upload-artifact",
      attempts: TRANSFER_ATTEMPTS,
    });
    if (done.status !== 200) return fail(`upload-artifact: ${errorOf(done.body, done.status)}`);
    host.log(`Artifact ${name} has been successfully uploaded! Final size is ${zip.size} bytes. Artifact ID is ${id}\n`);
    return { exit: 0, outputs: { "artifact-id": id, "artifact-digest": zip.sha256, "artifact-url": `${host.base}/${host.job.repo}/runs/${host.job.run_id}` } };
  } catch (e) {
    return fail(`upload-artifact: ${(e as Error).message}`);
  } finally {
    await rm(zipPath, { force: true });
  }
}

/** A listed artifact as the agent's listing answers it. */
interface Listed {
  id: string;
  name: string;
  size: number;
  download: { url: string; headers: Record<string, string> };
}

/** `actions/download-artifact`: inputs name, path, pattern, merge-multiple (and artifact-ids). */
export async function downloadArtifact(host: ActionHost, step: ActionStep): Promise<ActionResult> {
  const input = step.inputs;
  const name = input.name?.trim() ?? "";
  const raw = input.path?.trim() || ".";
  const expanded = raw === "~" || raw.startsWith("~/") ? join(homedir(), raw.slice(1)) : raw;
  const dest = isAbsolute(expanded) ? resolve(expanded) : resolve(host.workspace, expanded);
  const merge = boolInput(input["merge-multiple"], false);
  const ids = (input["artifact-ids"] ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const listing = await call(`${host.base}/v1/runner/jobs/${encodeURIComponent(host.job.job_id)}/artifacts`, {
    token: host.token,
    what: "download-artifact",
    attempts: TRANSFER_ATTEMPTS,
  });
  if (listing.status !== 200) return fail(`download-artifact: ${errorOf(listing.body, listing.status)}`);
  let chosen = (listing.body as { artifacts: Listed[] }).artifacts;
  if (name) {
    chosen = chosen.filter((a) => a.name === name);
    if (!chosen.length) return fail(`download-artifact: Artifact not found: no artifact named ${JSON.stringify(name)} in this run`);
  } else {
    if (ids.length) chosen = chosen.filter((a) => ids.includes(a.id));
    if (input.pattern?.trim()) {
      const g = new Bun.Glob(input.pattern.trim());
      chosen = chosen.filter((a) => g.match(a.name));
    }
    if (!chosen.length) host.log("##[warning]No artifacts matched; nothing was downloaded\n");
  }
  // One named artifact (GitHub's rule): straight into the path; several: each into path/<name>/ unless merged.
  const single = !!name;
  for (const a of chosen) {
    const target = single || merge ? dest : join(dest, a.name);
    const zipPath = join(host.temp, `download-${crypto.randomUUID()}.zip`);
    try {
      const res = await transfer(a.download.url, () => ({ headers: transferTarget(host, a.download.url, a.download.headers).headers }));
      if (res.status !== 200) return fail(`download-artifact: ${a.name}: the download answered ${res.status}`);
      const got = await Bun.write(zipPath, res);
      if (got !== a.size) return fail(`download-artifact: ${a.name}: got ${got} bytes, the artifact has ${a.size}`);
      const out = await extractZip(zipPath, target);
      host.log(`Artifact ${a.name} (${a.size} bytes) extracted to ${target}: ${out.files} file(s)\n`);
    } catch (e) {
      return fail(`download-artifact: ${a.name}: ${(e as Error).message}`);
    } finally {
      await rm(zipPath, { force: true });
    }
  }
  return { exit: 0, outputs: { "download-path": dest } };
}
