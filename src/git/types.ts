// Shared vocabulary of the git engine. src/git imports nothing from the rest of svc:
// it is handed byte sources (pack files in object storage) and streams.

/** A SHA-1 object id: 40 lowercase hex characters. */
export type Oid = string;

/** The four object types of git. */
export type ObjectType = "commit" | "tree" | "blob" | "tag";

/** A fully resolved object (never a delta). */
export interface RawObject {
  type: ObjectType;
  data: Uint8Array;
}

/** Random access to the bytes of one immutable stored file (a .pack or .idx). */
export interface ByteSource {
  readonly size: number;
  /** Exactly `length` bytes from `offset` (throws past the end). */
  read(offset: number, length: number): Promise<Uint8Array>;
  /** Optional: `[offset, offset + length)` in order, with reads issued ahead (object storage hides its latency so). */
  stream?(offset: number, length: number): AsyncIterable<Uint8Array>;
  /** Optional hint: these bytes will be read soon; the source may fetch them in the background (true when it will). */
  prefetch?(offset: number, length: number): boolean;
}

/** Read-only view of a repository's objects, taken as one snapshot per request. */
export interface ObjectReader {
  has(oid: Oid): Promise<boolean>;
  /** The resolved object, or null when absent. */
  read(oid: Oid): Promise<RawObject | null>;
  /** Type and inflated size without materializing the data where possible. */
  readHeader(oid: Oid): Promise<{ type: ObjectType; size: number } | null>;
  /** Optional hint: these objects will be read soon (a walk names what it reads next). */
  prefetch?(oids: readonly Oid[]): void;
}

/** A ref as stored: full name and target. HEAD is not a ref here but a symref (see RepoSnapshot). */
export interface Ref {
  name: string;
  oid: Oid;
}

/** A ref update requested by a push: zero oid for create (old) or delete (new). */
export interface RefCommand {
  ref: string;
  oldOid: Oid;
  newOid: Oid;
}

export const ZERO_OID: Oid = "0000000000000000000000000000000000000000";

/** The byte streams of one service invocation (smart HTTP request/response, or an SSH channel). */
export interface ServiceIO {
  input: AsyncIterable<Uint8Array>;
  write(chunk: Uint8Array): void | Promise<void>;
}

/**
 * What kind of failure a GitError is:
 * - invalid: malformed objects or requests in general (the default);
 * - protocol: the client broke the wire protocol (bad pkt-line, unexpected line);
 * - corrupt: stored data is damaged (a tree that should exist does not parse);
 * - missing: an object or path the request needs does not exist;
 * - conflict: an edit contradicts the tree (a file used as a directory, a path created twice);
 * - not-our-ref: a fetch asked for an object no ref reaches.
 */
export type GitErrorCode = "invalid" | "protocol" | "corrupt" | "missing" | "conflict" | "not-our-ref" | "too-large";

/** Every engine failure the client should see carries a message meant for the git user. */
export class GitError extends Error {
  constructor(
    message: string,
    readonly code: GitErrorCode = "invalid",
  ) {
    super(message);
    this.name = "GitError";
  }
}
