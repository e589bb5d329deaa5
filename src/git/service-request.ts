// How a transport names a git service request: the smart-HTTP URL, the SSH exec command and the
// protocol version, parsed in one place so HTTP and SSH cannot drift apart.
//
// From gitprotocol-http(5):
//
//   GET  $GIT_URL/info/refs?service=$servicename     → application/x-$servicename-advertisement
//   POST $GIT_URL/git-upload-pack    (Content-Type: application/x-git-upload-pack-request)
//   POST $GIT_URL/git-receive-pack   (Content-Type: application/x-git-receive-pack-request)
//                                     → application/x-$servicename-result
//
//   "Dumb HTTP clients MUST make a GET request to $GIT_URL/info/refs, without any search/query
//   parameters." (We serve only the smart protocol, so that request is refused.)
//
// From gitprotocol-pack(5), "SSH Transport": the client runs the service with the path quoted,
//
//   git-upload-pack '/org/repo.git'     (ssh://host/org/repo.git: an absolute path)
//   git-receive-pack 'org/repo.git'     (host:org/repo.git, scp-like: the path as written)
//
// and from gitprotocol-v2(5) with git's protocol.c: a client asks for a protocol version with
//
//   Git-Protocol: version=2             (an HTTP header)
//   GIT_PROTOCOL=version=2              (an SSH environment variable)
//
// both a colon-separated list of `key[=value]` parameters; the server speaks the greatest
// version named by a `version=` key, v0 when there is none (v1 is v0 with a banner: we speak v0).
import type { GitService } from "./advertise.ts";
import { GitError } from "./types.ts";

export type { GitService };

/** The protocol versions the engine speaks. */
export type ProtocolVersion = 0 | 2;

/** Longest parameter list or exec command we read; longer input is refused unparsed. */
const MAX_INPUT = 4096;

/** The protocol version asked for by a `Git-Protocol` header or `GIT_PROTOCOL` value. */
export function protocolVersion(value: string | null | undefined): ProtocolVersion {
  if (!value || value.length > MAX_INPUT) return 0;
  let version: ProtocolVersion = 0;
  for (const item of value.split(":")) {
    // Whitespace around an item is tolerated (some proxies fold or pad header values).
    const param = item.trim();
    if (param === "version=2") version = 2;
  }
  return version;
}

/** The content types of smart HTTP for one service. */
export function smartHttpContentTypes(service: GitService): { advertisement: string; request: string; result: string } {
  return {
    advertisement: `application/x-${service}-advertisement`,
    request: `application/x-${service}-request`,
    result: `application/x-${service}-result`,
  };
}

/** A smart-HTTP request, or why it cannot be served. */
export type SmartHttpRequest =
  | { kind: "advertise"; service: GitService; org: string; repo: string }
  | { kind: "rpc"; service: GitService; org: string; repo: string }
  | { kind: "invalid"; problem: "method" | "dumb-http" | "content-type" | "bad-path"; message: string };

const HTTP_PATH = /^\/([^/]+)\/([^/]+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/;

/**
 * Parses a request for `$GIT_URL/info/refs` or `$GIT_URL/git-{upload,receive}-pack` with
 * `$GIT_URL` = `/{org}/{repo}[.git]`; null when the path is not a git path at all.
 */
export function parseSmartHttpRequest(req: { method: string; path: string; url: string; contentType: string | null }): SmartHttpRequest | null {
  const { path } = req;
  // Cheap test first (the hot path of every API request): git paths end in one of three names.
  if (!path.includes("/info/refs") && !path.endsWith("/git-upload-pack") && !path.endsWith("/git-receive-pack")) return null;
  const m = HTTP_PATH.exec(path);
  if (!m) return null;
  const [, rawOrg, rawRepo, endpoint] = m as unknown as [string, string, string, string];
  let org: string;
  let repo: string;
  try {
    org = decodeURIComponent(rawOrg);
    repo = decodeURIComponent(rawRepo);
  } catch {
    return { kind: "invalid", problem: "bad-path", message: "malformed repository path" };
  }
  if (endpoint === "info/refs") {
    if (req.method !== "GET" && req.method !== "HEAD") return { kind: "invalid", problem: "method", message: "method not allowed" };
    const service = new URL(req.url).searchParams.get("service");
    if (service !== "git-upload-pack" && service !== "git-receive-pack") {
      return { kind: "invalid", problem: "dumb-http", message: "the dumb HTTP protocol is not supported; use a git client with smart HTTP" };
    }
    return { kind: "advertise", service, org, repo };
  }
  const service = endpoint as GitService;
  if (req.method !== "POST") return { kind: "invalid", problem: "method", message: "method not allowed" };
  const expected = smartHttpContentTypes(service).request;
  if (req.contentType !== expected) return { kind: "invalid", problem: "content-type", message: `expected content type ${expected}` };
  return { kind: "rpc", service, org, repo };
}

const SSH_COMMAND = /^(git-upload-pack|git-receive-pack) '?\/?([^'/\s]+)\/([^'/\s]+?)(?:\.git)?\/?'?$/;

/**
 * Parses an SSH exec command into the service and the repository: quoted or not, with or
 * without a leading slash and `.git`. Null for anything else (other commands, other shapes).
 */
export function parseSshCommand(command: string): { service: GitService; org: string; repo: string } | null {
  if (command.length > MAX_INPUT) return null;
  const m = SSH_COMMAND.exec(command.trim());
  if (!m) return null;
  return { service: m[1] as GitService, org: m[2]!, repo: m[3]! };
}

/**
 * The error a transport raises when the request body stops being readable part way (a gzip
 * stream that breaks off, a connection that drops): a protocol error the engine reports to
 * the client in band (an ERR packet, or `unpack <reason>`), like any malformed request.
 */
export function unreadableBody(detail: string): Error {
  return new GitError(`protocol error: ${detail}`, "protocol");
}
