// The mail the service sends (SPEC §4.3, §4.5, §5.4): pure builders of MailMessage. Each has a
// plain-text and an HTML part with the same link under the public base URL; the text part also
// names the API route that takes the token, for people who drive svc without a browser.
import type { MailMessage } from "../context.ts";

/** An invitation to an org: link `${baseUrl}/invite?token=svcinv_…`, valid once until `expiresAt`. */
export function inviteMail(input: {
  to: string;
  orgName: string;
  role: string;
  inviter: string;
  token: string;
  expiresAt: number;
  baseUrl: string;
}): MailMessage {
  const url = link(input.baseUrl, "/invite", input.token);
  const expires = new Date(input.expiresAt).toUTCString();
  const lead = `${input.inviter} invited you to join the organization ${input.orgName} on svc as ${article(input.role)} ${input.role}.`;
  return {
    to: input.to,
    subject: oneLine(`${input.inviter} invited you to join ${input.orgName}`),
    text: [
      "Hello,",
      "",
      lead,
      "",
      "Accept the invitation here (the link works once and expires " + expires + "):",
      "",
      url,
      "",
      `Using the API instead? POST /v1/auth/accept-invite with { "invite": "${input.token}", "name": "...", "password": "..." }.`,
      "",
      "If you did not expect this invitation, you can ignore this message.",
    ].join("\n"),
    html: page([
      `<p>Hello,</p>`,
      `<p>${esc(lead)}</p>`,
      button(url, "Accept the invitation"),
      `<p>The link works once and expires ${esc(expires)}.</p>`,
      `<p>If you did not expect this invitation, you can ignore this message.</p>`,
    ]),
  };
}

/** Confirms a new account's address: link `${baseUrl}/verify?token=svcv_…`, one day. */
export function verifyMail(input: { to: string; name: string; token: string; baseUrl: string }): MailMessage {
  const url = link(input.baseUrl, "/verify", input.token);
  return {
    to: input.to,
    subject: "Confirm your email address for svc",
    text: [
      `Hello ${input.name},`,
      "",
      "Confirm your email address to finish creating your svc account (the link works once and expires in 24 hours):",
      "",
      url,
      "",
      `Using the API instead? POST /v1/auth/verify with { "token": "${input.token}" }.`,
      "",
      "If you did not sign up, you can ignore this message.",
    ].join("\n"),
    html: page([
      `<p>Hello ${esc(input.name)},</p>`,
      `<p>Confirm your email address to finish creating your svc account.</p>`,
      button(url, "Confirm my address"),
      `<p>The link works once and expires in 24 hours.</p>`,
      `<p>If you did not sign up, you can ignore this message.</p>`,
    ]),
  };
}

/** A password reset: link `${baseUrl}/reset-password?token=svcrs_…`, one hour. */
export function resetMail(input: { to: string; name: string; token: string; baseUrl: string }): MailMessage {
  const url = link(input.baseUrl, "/reset-password", input.token);
  return {
    to: input.to,
    subject: "Reset your svc password",
    text: [
      `Hello ${input.name},`,
      "",
      "Someone asked to reset the password of your svc account. Choose a new password here (the link works once and expires in 1 hour):",
      "",
      url,
      "",
      `Using the API instead? POST /v1/auth/reset-password with { "token": "${input.token}", "new_password": "..." }.`,
      "",
      "If you did not ask for this, ignore this message: your password stays as it is.",
    ].join("\n"),
    html: page([
      `<p>Hello ${esc(input.name)},</p>`,
      `<p>Someone asked to reset the password of your svc account.</p>`,
      button(url, "Choose a new password"),
      `<p>The link works once and expires in 1 hour.</p>`,
      `<p>If you did not ask for this, ignore this message: your password stays as it is.</p>`,
    ]),
  };
}

/** Confirms an address added to an account: link `${baseUrl}/settings/emails/verify?token=svce_…`. */
export function claimMail(input: { to: string; handle: string; token: string; baseUrl: string }): MailMessage {
  const url = link(input.baseUrl, "/settings/emails/verify", input.token);
  const lead = `The svc account ${input.handle} added ${input.to} as one of its email addresses.`;
  return {
    to: input.to,
    subject: "Confirm your email address for svc",
    text: [
      "Hello,",
      "",
      lead,
      "Confirm that the address is yours here (the link works once, signed in as " + input.handle + "):",
      "",
      url,
      "",
      `Using the API instead? POST /v1/users/${input.handle}/emails/verify with { "token": "${input.token}" }, signed in as ${input.handle}.`,
      "",
      "If this was not you, you can ignore this message: the address stays unconfirmed.",
    ].join("\n"),
    html: page([
      `<p>Hello,</p>`,
      `<p>${esc(lead)}</p>`,
      button(url, "Confirm this address"),
      `<p>The link works once, signed in as ${esc(input.handle)}.</p>`,
      `<p>If this was not you, you can ignore this message: the address stays unconfirmed.</p>`,
    ]),
  };
}

/** `${base}${path}?token=…` with the base's trailing slashes dropped. */
function link(baseUrl: string, path: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, "")}${path}?token=${encodeURIComponent(token)}`;
}

/** Escapes text for HTML element content and double-quoted attributes. */
export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** Why: a subject is a header; a control character from a name must not start a new header line. */
function oneLine(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
}

function article(word: string): string {
  return /^[aeiou]/i.test(word) ? "an" : "a";
}

function button(url: string, label: string): string {
  const href = esc(url);
  return `<p><a href="${href}" style="display:inline-block;padding:8px 16px;background:#1f6feb;color:#ffffff;text-decoration:none;border-radius:6px">${esc(label)}</a></p>\n<p style="font-size:12px;color:#57606a">Or paste this address into your browser: <a href="${href}">${href}</a></p>`;
}

function page(body: string[]): string {
  return `<!doctype html>\n<html><body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;font-size:14px;line-height:1.5;color:#1f2328">\n${body.join("\n")}\n</body></html>\n`;
}

/** One activity of a thread as a notification mail shows it. */
export interface MailActivity {
  /** The actor's handle (null: the service, e.g. CI). */
  actor: string | null;
  kind: string;
  summary: Record<string, unknown>;
}

/** The line an activity gets: "bo approved with 20 comments", "ada pushed patchset 3". */
export function activityLine(a: MailActivity): string {
  const who = a.actor ?? "svc";
  const s = a.summary;
  const n = typeof s.comments === "number" ? s.comments : 0;
  const withComments = n > 0 ? ` with ${n} comment${n === 1 ? "" : "s"}` : "";
  switch (a.kind) {
    case "opened":
      return `${who} opened it`;
    case "commented":
      return `${who} commented`;
    case "reviewed": {
      const v = s.verdict === "approve" ? "approved" : s.verdict === "request_changes" ? "requested changes" : "reviewed";
      return `${who} ${v}${withComments}`;
    }
    case "review_requested":
      return `${who} requested your review`;
    case "assigned":
      return `${who} assigned you`;
    case "patchset":
      return typeof s.patchset === "number" ? `${who} pushed patchset ${s.patchset}` : `${who} pushed`;
    case "landed":
      return `${who} landed it`;
    case "ejected":
      return typeof s.verdict_kind === "string" ? `it was taken out of the queue: ${s.verdict_kind}` : "it was taken out of the queue";
    case "closed":
      return `${who} closed it`;
    case "reopened":
      return `${who} reopened it`;
    case "run_failed":
      return "the CI run failed";
    default:
      return `${who}: ${a.kind}`;
  }
}

/** Why the person gets the mail, from the notification's reason (the footer; `X-Svc-Reason` carries the word). */
function reasonLine(reason: string, org: string, repo: string): string {
  switch (reason) {
    case "author":
      return "you opened this thread";
    case "review_requested":
      return "your review was requested";
    case "assign":
      return "you were assigned";
    case "mention":
      return "you were mentioned";
    case "review":
      return "you reviewed it";
    case "comment":
      return "you commented on it";
    case "ci_activity":
      return "you pushed the commit the run was for";
    default:
      return `you watch ${org}/${repo}`;
  }
}

/**
 * A notification mail (plan §3.6): every activity since the last mail of the thread, the link to
 * the thread, and the list headers that let mail clients file it and unsubscribe in one click.
 */
export function notificationMail(input: {
  to: string;
  /** The sender (notify/mail.ts notificationSender); null: the transport's. */
  from?: string | null;
  org: string;
  repo: string;
  subject: { kind: string; number: number | null; title: string };
  /** The notification's reason (author, comment, review, review_requested, assign, mention, ci_activity, watching). */
  reason: string;
  threadUrl: string;
  unsubscribeUrl: string;
  host: string;
  activities: MailActivity[];
}): MailMessage {
  const number = input.subject.number !== null ? ` (#${input.subject.number})` : "";
  const subject = oneLine(`[${input.org}/${input.repo}] ${input.subject.title}${number}`);
  const lines = input.activities.map((a) => ({ line: activityLine(a), excerpt: typeof a.summary.excerpt === "string" ? a.summary.excerpt : null }));
  const text = [
    ...lines.flatMap((l) => (l.excerpt ? [`${l.line}:`, "", ...l.excerpt.split("\n").map((x) => `> ${x}`), ""] : [l.line, ""])),
    `View it on the web: ${input.threadUrl}`,
    "",
    "Reply on the web; replies to this address are not read.",
    "",
    `You are getting this because ${reasonLine(input.reason, input.org, input.repo)}. Mute this thread: ${input.unsubscribeUrl}`,
  ].join("\n");
  const html = page([
    ...lines.map(
      (l) =>
        `<p><strong>${esc(l.line)}</strong></p>${l.excerpt ? `\n<blockquote style="margin:0 0 12px;padding-left:12px;border-left:3px solid #d0d7de;color:#57606a;white-space:pre-wrap">${esc(l.excerpt)}</blockquote>` : ""}`,
    ),
    `<p><a href="${esc(input.threadUrl)}">View it on the web</a></p>`,
    `<p style="font-size:12px;color:#57606a">Reply on the web; replies to this address are not read. You are getting this because ${esc(reasonLine(input.reason, input.org, input.repo))}. <a href="${esc(input.unsubscribeUrl)}">Mute this thread</a>.</p>`,
  ]);
  const listHost = input.host.replace(/:\d+$/, "");
  return {
    to: input.to,
    ...(input.from ? { from: input.from } : {}),
    subject,
    text,
    html,
    headers: {
      "List-Id": `<${oneLine(input.repo)}.${oneLine(input.org)}.${listHost}>`,
      "List-Unsubscribe": `<${input.unsubscribeUrl}>`,
      "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
      "Auto-Submitted": "auto-generated",
      "X-Svc-Reason": oneLine(input.reason),
    },
  };
}
