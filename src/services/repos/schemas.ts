// Request and response shapes of the repos domain: repositories, the commit API, refs, content
// reads and branch protections (SPEC §2.1, §2.3, §4.6; DECISIONS §2, §3). Types, optionality,
// lengths and limits are checked here; domain rules (names, ref formats, paths, URLs, base64)
// and statuses other than 400 (422 for an enumeration, 409 with `current`) stay in the services.
import { Type, type Static } from "@sinclair/typebox";
import { NextCursor, NullableString, PageQuery } from "../schemas.ts";

/** The most operations one commit may carry (SPEC §8). */
export const MAX_OPERATIONS = 10_000;

const SHA_PATTERN = "^[0-9a-f]{40}$";
const EXAMPLE_SHA = "9fceb02d0ae598e95dc970b74767f19372d61af8";
const EXAMPLE_PARENT = "a11bef06a3f659402fe7563abf99ad00de2209e6";
const EXAMPLE_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
const MAX_DESCRIPTION = 2000;

/** A description: at most 2,000 characters (on the string: a bound on the union is not checked), or null. */
const Description = (description: string) => Type.Union([Type.String({ maxLength: MAX_DESCRIPTION }), Type.Null()], { description });

/** A full object id: 40 lowercase hex digits. */
const Sha = (options: Record<string, unknown> = {}) => Type.String({ pattern: SHA_PATTERN, examples: [EXAMPLE_SHA], ...options });

// ---- Repositories ------------------------------------------------------------------------------

export const RepoCreate = Type.Object({
  name: Type.String({
    description: "1-100 characters of A-Z a-z 0-9 . - _; not . or ..; not ending in .git; unique per org, case-insensitive",
    examples: ["app"],
  }),
  public: Type.Optional(Type.Boolean({ description: "default false" })),
  description: Type.Optional(Description("at most 2,000 characters; blank is stored as null")),
  homepage: Type.Optional(NullableString({ description: "absolute http:// or https:// URL; blank is stored as null" })),
  default_branch: Type.Optional(Type.String({ description: "default main", examples: ["main"] })),
  kind: Type.Optional(Type.String({ description: "`native` (default) or `mirror`; anything else is 422", examples: ["native"] })),
  origin_url: Type.Optional(NullableString({ description: "a mirror's origin: a fetchable URL (generic) or owner/name (app)" })),
  origin_provider: Type.Optional(NullableString({ description: "`generic` (default for a mirror) or `app`; anything else is 422" })),
  origin_installation: Type.Optional(NullableString({ description: "app installation id; required when origin_provider is app" })),
});
export type RepoCreate = Static<typeof RepoCreate>;

export const RepoPatch = Type.Object({
  name: Type.Optional(Type.String({ description: "rename (the old name stops resolving)" })),
  public: Type.Optional(Type.Boolean()),
  default_branch: Type.Optional(Type.String({ description: "moves HEAD" })),
  description: Type.Optional(Description("at most 2,000 characters; blank or null clears it")),
  homepage: Type.Optional(NullableString({ description: "absolute http:// or https:// URL, or null" })),
});
export type RepoPatch = Static<typeof RepoPatch>;

const REPO_EXAMPLE = {
  id: "r7k2m9p4q8s1t6v3",
  org_id: "o3x9m2p7q4r8s6t1",
  org: "acme",
  name: "app",
  kind: "native",
  public: false,
  default_branch: "main",
  origin_url: null,
  origin_provider: null,
  origin_installation: null,
  last_sync_at: null,
  last_synced_commit: null,
  sync_error: null,
  created_at: 1795248971422,
  clone_url: "https://git.example.com/acme/app.git",
  ssh_clone_url: "ssh://git@git.example.com:2222/acme/app.git",
  description: "The app",
  homepage: "https://app.example.com",
  fork_count: 0,
  watcher_count: 2,
  fork_parent: null,
  viewer_admin: true,
  viewer_write: true,
  write_blocked: null,
} as const;

/** The Repo resource (SPEC §2.1). */
export const Repo = Type.Object(
  {
    id: Type.String(),
    org_id: Type.String(),
    org: Type.String({ description: "namespace name of the repository" }),
    name: Type.String(),
    kind: Type.Union([Type.Literal("native"), Type.Literal("mirror")]),
    public: Type.Boolean({ description: "public repositories allow anonymous reads" }),
    default_branch: Type.String(),
    origin_url: NullableString({ description: "mirror origin; null for native" }),
    origin_provider: Type.Union([Type.Literal("app"), Type.Literal("generic"), Type.Null()], { description: "null for native" }),
    origin_installation: NullableString({ description: "null unless origin_provider is app" }),
    last_sync_at: Type.Union([Type.Integer(), Type.Null()], { description: "epoch milliseconds" }),
    last_synced_commit: NullableString(),
    sync_error: NullableString(),
    created_at: Type.Integer({ description: "epoch milliseconds" }),
    clone_url: Type.String({ description: "HTTPS git remote" }),
    ssh_clone_url: NullableString({ description: "null when no SSH front door is configured" }),
    description: NullableString(),
    homepage: NullableString(),
    fork_count: Type.Integer({ description: "public repositories forked directly from this one" }),
    watcher_count: Type.Integer({ description: "subscriptions at the `all` level" }),
    fork_state: Type.Optional(
      Type.Union([Type.Literal("pending"), Type.Literal("ready"), Type.Literal("failed"), Type.Null()], {
        description: "absent for a repository that is not a fork",
      }),
    ),
    fork_parent: NullableString({ description: "owner/name of the parent when the viewer may see it" }),
    viewer_admin: Type.Boolean(),
    viewer_write: Type.Boolean({ description: "false whenever write_blocked is set" }),
    write_blocked: NullableString({ description: "a sentence beginning `quota:` when nobody may write now" }),
  },
  { description: "a repository (SPEC §2.1)", examples: [REPO_EXAMPLE] },
);
export type Repo = Static<typeof Repo>;

export const RepoList = Type.Object(
  { repos: Type.Array(Repo), next_cursor: NextCursor },
  { description: "the repositories the caller may see, by name", examples: [{ repos: [REPO_EXAMPLE], next_cursor: null }] },
);
export type RepoList = Static<typeof RepoList>;

/** POST …/forks (DECISIONS §3). */
export const ForkCreate = Type.Object(
  {
    org: Type.Optional(
      Type.String({ description: "namespace to fork into (an org or a handle); default the caller's personal namespace", examples: ["alice"] }),
    ),
    name: Type.Optional(Type.String({ description: "the fork's name; default the parent's name", examples: ["app"] })),
  },
  { description: "where the fork goes; both optional", examples: [{ org: "alice", name: "app" }] },
);
export type ForkCreate = Static<typeof ForkCreate>;

// ---- Commit API --------------------------------------------------------------------------------

const OpPath = Type.String({ description: "relative, `/`-separated; no empty, `.`, `..` or `.git` parts", examples: ["src/main.ts"] });

/** One operation of a commit, discriminated by `op` (SPEC §2.3). */
export const CommitOperation = Type.Union([
  Type.Object({ op: Type.Literal("put"), path: OpPath, content: Type.String({ description: "the file's text (UTF-8)" }) }, { title: "put" }),
  Type.Object({ op: Type.Literal("put_base64"), path: OpPath, content: Type.String({ description: "the file's bytes, base64" }) }, { title: "put_base64" }),
  Type.Object({ op: Type.Literal("delete"), path: OpPath }, { title: "delete" }),
]);
export type CommitOperation = Static<typeof CommitOperation>;

/** The commit API request (SPEC §2.3). */
export const CommitRequest = Type.Object(
  {
    branch: Type.Optional(Type.String({ description: "default main", examples: ["main"] })),
    expected_parent: Type.Optional(
      Type.Union([Sha(), Type.Null()], { description: "the branch must be here; null: the branch must not exist; omitted: commit on the current tip" }),
    ),
    message: Type.String({ minLength: 1, description: "not blank; no NUL byte" }),
    author: Type.Optional(
      Type.Object(
        { name: Type.String({ minLength: 1, maxLength: 200 }), email: Type.String({ minLength: 1, maxLength: 200 }) },
        { description: "default: the calling person; no <, > or newlines" },
      ),
    ),
    context: Type.Optional(Type.Unknown({ description: "any JSON, recorded immutably with the commit" })),
    operations: Type.Array(CommitOperation, { minItems: 1, maxItems: MAX_OPERATIONS }),
  },
  {
    examples: [
      {
        branch: "main",
        expected_parent: EXAMPLE_PARENT,
        message: "Update the readme",
        context: { ticket: "OPS-12" },
        operations: [
          { op: "put", path: "README.md", content: "# App\n" },
          { op: "put_base64", path: "logo.png", content: "iVBORw0KGgo=" },
          { op: "delete", path: "old.txt" },
        ],
      },
    ],
  },
);
export type CommitRequest = Static<typeof CommitRequest>;

/** The commit API's answer. */
export const CommitCreated = Type.Object(
  {
    commit: Sha(),
    branch: Type.String(),
    parent: Type.Union([Sha(), Type.Null()], { description: "null for the first commit of a branch" }),
    tree: Sha(),
  },
  { description: "the commit made", examples: [{ commit: EXAMPLE_SHA, branch: "main", parent: EXAMPLE_PARENT, tree: EXAMPLE_TREE }] },
);
export type CommitCreated = Static<typeof CommitCreated>;

/** A 409 of the commit and ref APIs: where the branch or ref is now (DECISIONS §2). */
export const RefConflict = Type.Object(
  {
    error: Type.String(),
    current: Type.Union([Sha(), Type.Null()], { description: "where the branch or ref is now; null when it does not exist" }),
  },
  {
    additionalProperties: true,
    description: "conflict: the branch or ref is not where the request expected it",
    examples: [{ error: "branch main is not at a11bef06a3f659402fe7563abf99ad00de2209e6", current: EXAMPLE_SHA }],
  },
);

// ---- Refs --------------------------------------------------------------------------------------

export const Ref = Type.Object(
  { name: Type.String({ description: "full ref name" }), target: Sha() },
  { description: "a ref and the object it names", examples: [{ name: "refs/heads/main", target: EXAMPLE_SHA }] },
);
export type Ref = Static<typeof Ref>;

export const RefList = Type.Object(
  { refs: Type.Array(Ref) },
  { description: "every ref, by name", examples: [{ refs: [{ name: "refs/heads/main", target: EXAMPLE_SHA }] }] },
);
export type RefList = Static<typeof RefList>;

export const RefPut = Type.Object(
  {
    target: Sha({ description: "a commit (a tag ref may also name a tag object) present in the repository" }),
    expected: Type.Optional(
      Type.Union([Sha(), Type.Null()], { description: "compare-and-swap: the ref must be here; null: must not exist; omitted: unconditional" }),
    ),
  },
  { examples: [{ target: EXAMPLE_SHA, expected: EXAMPLE_PARENT }] },
);
export type RefPut = Static<typeof RefPut>;

export const RefDeleteQuery = Type.Object({ expected: Type.Optional(Sha({ description: "compare-and-swap: the ref must be here" })) });

// ---- Content reads -----------------------------------------------------------------------------

export const PathQuery = Type.Object({
  path: Type.Optional(Type.String({ description: "a directory or file path; empty or / is the root", examples: ["src"] })),
});

export const TreeEntry = Type.Object({
  name: Type.String(),
  path: Type.String({ description: "from the root of the tree" }),
  type: Type.Union([Type.Literal("tree"), Type.Literal("blob"), Type.Literal("commit")], { description: "commit: a submodule" }),
  mode: Type.String({ description: "git's octal mode (40000, 100644, 100755, 120000, 160000)" }),
  oid: Sha(),
  size: Type.Union([Type.Integer(), Type.Null()], { description: "bytes, for blobs; null otherwise" }),
});

export const Tree = Type.Object(
  { ref: Type.String(), commit: Sha(), path: Type.String(), entries: Type.Array(TreeEntry) },
  {
    description: "a directory's entries, in git's order",
    examples: [
      {
        ref: "main",
        commit: EXAMPLE_SHA,
        path: "src",
        entries: [
          { name: "lib", path: "src/lib", type: "tree", mode: "40000", oid: EXAMPLE_TREE, size: null },
          { name: "main.ts", path: "src/main.ts", type: "blob", mode: "100644", oid: EXAMPLE_PARENT, size: 1204 },
        ],
      },
    ],
  },
);
export type Tree = Static<typeof Tree>;

/** How a blob's Content-Type is chosen (never active content on our origin). */
const BLOB_CONTENT_TYPE =
  "from the file's extension (text types with charset=utf-8; HTML, SVG and XML are served as text/plain); otherwise text/plain; charset=utf-8 for text and application/octet-stream for binary";

/** The raw bytes of a file (GET …/blob/{ref}?path=); documented here, answered as a byte stream. */
export const BlobBytes = Type.String({
  format: "binary",
  description: `The file's raw bytes. Content-Type: ${BLOB_CONTENT_TYPE}. ETag is the quoted blob id; Range (one bytes range) answers 206.`,
  headers: {
    "content-type": Type.String({ description: BLOB_CONTENT_TYPE }),
    etag: Type.String({ description: "the quoted blob id", examples: [`"${EXAMPLE_SHA}"`] }),
    "accept-ranges": Type.Literal("bytes"),
    "x-content-type-options": Type.Literal("nosniff"),
    "content-security-policy": Type.String({ examples: ["default-src 'none'; sandbox"] }),
  },
});

/** A single range of a file's bytes (206). */
export const BlobRange = Type.String({
  format: "binary",
  description: "the requested range of the file's bytes",
  headers: { "content-range": Type.String({ examples: ["bytes 0-99/1204"] }), etag: Type.String() },
});

export const Signature = Type.Object({
  name: Type.String(),
  email: Type.String(),
  date: Type.Integer({ description: "epoch milliseconds" }),
  timezone: Type.String({ examples: ["+0000"] }),
});

export const CommitSummary = Type.Object({
  sha: Sha(),
  message: Type.String(),
  author: Signature,
  committer: Signature,
  parents: Type.Array(Sha()),
});
export type CommitSummary = Static<typeof CommitSummary>;

const SUMMARY_EXAMPLE = {
  sha: EXAMPLE_SHA,
  message: "Update the readme\n",
  author: { name: "Ada", email: "ada@example.com", date: 1795248971000, timezone: "+0100" },
  committer: { name: "svc", email: "svc@git.example.com", date: 1795248971000, timezone: "+0000" },
  parents: [EXAMPLE_PARENT],
} as const;

export const CommitsQuery = Type.Object({
  ref: Type.Optional(Type.String({ description: "where history starts: a branch, tag, full ref name or sha; default the default branch" })),
  path: Type.Optional(Type.String({ description: "only commits that changed this path (git's default history simplification)" })),
  ...PageQuery.properties,
});

export const CommitListItem = Type.Object({
  ...CommitSummary.properties,
  checks_state: Type.Union([Type.String({ enum: ["success", "failure", "pending"] }), Type.Null()], {
    description:
      "the rollup of the commit's checks: failure when any failed or was cancelled, pending while any runs, success when all passed; null without checks",
  }),
});
export type CommitListItem = Static<typeof CommitListItem>;

export const CommitList = Type.Object(
  { commits: Type.Array(CommitListItem), next_cursor: NextCursor },
  {
    description: "commits, newest first by committer date",
    examples: [{ commits: [{ ...SUMMARY_EXAMPLE, checks_state: "success" }], next_cursor: "WyI5ZmNlYjAyZDBhZTU5OGU5NWRjOTcwYjc0NzY3ZjE5MzcyZDYxYWY4IiwzMF0" }],
  },
);
export type CommitList = Static<typeof CommitList>;

export const ChangedPath = Type.Object({
  path: Type.String(),
  status: Type.Union([Type.Literal("added"), Type.Literal("modified"), Type.Literal("deleted")]),
});
export type ChangedPath = Static<typeof ChangedPath>;

export const CommitDetail = Type.Object(
  {
    ...CommitSummary.properties,
    tree: Sha(),
    context: Type.Unknown({ description: "the context sent with the commit API (any JSON); null otherwise" }),
    changed_paths: Type.Array(ChangedPath, { description: "against the first parent" }),
  },
  {
    description: "one commit with its context and the paths it changed",
    examples: [{ ...SUMMARY_EXAMPLE, tree: EXAMPLE_TREE, context: { ticket: "OPS-12" }, changed_paths: [{ path: "README.md", status: "modified" }] }],
  },
);
export type CommitDetail = Static<typeof CommitDetail>;

// ---- Branch protections ------------------------------------------------------------------------

export const ProtectionPut = Type.Object(
  {
    allow_force_push: Type.Optional(Type.Boolean({ description: "default false" })),
    allow_deletion: Type.Optional(Type.Boolean({ description: "default false" })),
    require_change: Type.Optional(Type.Boolean({ description: "default false: when true, only the lander moves the branch" })),
    required_checks: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { description: "check names a change needs before landing; duplicates are dropped" }),
    ),
    required_approvals: Type.Optional(
      Type.Integer({ description: "0-10, default 0: approvals from people with write access a change needs before landing (another value answers 422)" }),
    ),
    dismiss_stale_approvals: Type.Optional(Type.Boolean({ description: "default true: a push to a change dismisses its approvals" })),
  },
  {
    examples: [
      { allow_force_push: false, allow_deletion: false, require_change: true, required_checks: ["test"], required_approvals: 1, dismiss_stale_approvals: true },
    ],
  },
);
export type ProtectionPut = Static<typeof ProtectionPut>;

export const Protection = Type.Object(
  {
    pattern: Type.String({ description: "a branch name, `*` matching within one path segment" }),
    allow_force_push: Type.Boolean(),
    allow_deletion: Type.Boolean(),
    require_change: Type.Boolean(),
    required_checks: Type.Array(Type.String()),
    required_approvals: Type.Integer({ description: "approvals from people with write access a change needs before landing" }),
    dismiss_stale_approvals: Type.Boolean({ description: "whether a push to a change dismisses its approvals" }),
  },
  {
    description: "a branch protection",
    examples: [
      {
        pattern: "release/*",
        allow_force_push: false,
        allow_deletion: false,
        require_change: true,
        required_checks: ["test"],
        required_approvals: 1,
        dismiss_stale_approvals: true,
      },
    ],
  },
);
export type Protection = Static<typeof Protection>;

export const ProtectionList = Type.Object(
  { protections: Type.Array(Protection) },
  {
    description: "the repository's branch protections, by pattern",
    examples: [
      {
        protections: [
          {
            pattern: "main",
            allow_force_push: false,
            allow_deletion: false,
            require_change: false,
            required_checks: [],
            required_approvals: 0,
            dismiss_stale_approvals: true,
          },
        ],
      },
    ],
  },
);
export type ProtectionList = Static<typeof ProtectionList>;
