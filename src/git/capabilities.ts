// Capability lists: what this server offers, and parsing of what a client asks for.
//
// From gitprotocol-capabilities(5): "Client sends space separated list of capabilities
// it wants ... The client MUST NOT ask for capabilities the server did not say it supports."
// A capability is a word, optionally with a value: "agent=git/2.39.5".

/** What this server calls itself in agent=. */
export const AGENT = "svc/0.1.0";

/** Protocol v0 upload-pack capabilities, in the order git advertises them. */
export const UPLOAD_PACK_CAPABILITIES: readonly string[] = [
  "multi_ack",
  "thin-pack",
  "side-band",
  "side-band-64k",
  "ofs-delta",
  "shallow",
  "deepen-since",
  "deepen-not",
  "deepen-relative",
  "no-progress",
  "include-tag",
  "multi_ack_detailed",
  "allow-tip-sha1-in-want",
  "allow-reachable-sha1-in-want",
  "no-done",
];

/** Protocol v0 receive-pack capabilities. */
export const RECEIVE_PACK_CAPABILITIES: readonly string[] = [
  "report-status",
  "report-status-v2",
  "delete-refs",
  "side-band-64k",
  "quiet",
  "atomic",
  "ofs-delta",
  "push-options",
];

/** Protocol v2 capability advertisement lines (after "version 2"). */
export const V2_CAPABILITIES: readonly string[] = [
  `agent=${AGENT}`,
  "ls-refs=unborn",
  "fetch=shallow wait-for-done filter",
  "server-option",
  "object-format=sha1",
  "object-info",
];

/** Capabilities a client requested: words and key=value pairs. */
export class CapabilitySet {
  private readonly map = new Map<string, string | null>();

  constructor(list = "") {
    this.add(list);
  }

  /** Add a space separated list (later values win). */
  add(list: string): void {
    for (const word of list.split(" ")) {
      if (word === "") continue;
      const eq = word.indexOf("=");
      if (eq < 0) this.map.set(word, null);
      else this.map.set(word.slice(0, eq), word.slice(eq + 1));
    }
  }

  /** True when the capability was requested (with or without a value). */
  has(name: string): boolean {
    return this.map.has(name);
  }

  /** The value of key=value, or null. */
  value(name: string): string | null {
    return this.map.get(name) ?? null;
  }
}
