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
