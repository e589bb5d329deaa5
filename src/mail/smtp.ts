// The smtp transport: a relay spoken to in cleartext. SPEC §5.7 says no STARTTLS, even when the
// relay offers it (the relay is expected on a trusted network, typically loopback).
import nodemailer from "nodemailer";
import type { MailConfig } from "../config.ts";
import type { MailMessage, MailTransport } from "./types.ts";

/** Connect, greeting and idle-socket limits: a dead or silent relay fails within about 10 s. */
const CONNECT_TIMEOUT_MS = 5_000;
const GREETING_TIMEOUT_MS = 5_000;
const SOCKET_TIMEOUT_MS = 10_000;

/** Delivers through the configured relay, one connection per message. */
export function smtpTransport(config: Extract<MailConfig, { transport: "smtp" }>): MailTransport {
  const transport = nodemailer.createTransport({
    host: config.host,
    port: config.port,
    secure: false,
    // Why: the spec fixes cleartext; ignoreTLS stops nodemailer upgrading when STARTTLS is advertised.
    ignoreTLS: true,
    connectionTimeout: CONNECT_TIMEOUT_MS,
    greetingTimeout: GREETING_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
    // Credentials only when configured; config.ts already refused them for a non-loopback host without the opt-in.
    auth: config.user || config.password ? { user: config.user ?? "", pass: config.password ?? "" } : undefined,
  });
  return {
    name: "smtp",
    async send(msg: MailMessage) {
      await transport.sendMail({ from: msg.from ?? config.from, to: msg.to, subject: msg.subject, text: msg.text, html: msg.html, headers: msg.headers });
    },
  };
}
