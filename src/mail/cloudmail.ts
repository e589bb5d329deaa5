// The cloudmail transport: the AWS SES v2 SendEmail API over HTTPS, signed with the instance's
// own credentials (the SDK's default provider chain: environment, shared files, SSO, web
// identity, container and instance metadata). Nothing secret is configured in svc itself.
import nodemailer from "nodemailer";
import type { MailConfig } from "../config.ts";
import type { MailMessage, MailTransport } from "./types.ts";

/** Connect and whole-request limits for one API call (the SDK retries throttling itself). */
const CONNECT_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 15_000;

/** Delivers through SES v2 in `config.region` (or at `config.endpoint`, for a stand-in). */
export function cloudmailTransport(config: Extract<MailConfig, { transport: "cloudmail" }>): MailTransport {
  // The SDK is loaded on first use: servers on the other transports never pay for it.
  let transport: Promise<ReturnType<typeof nodemailer.createTransport>> | null = null;
  const load = async () => {
    const { SESv2Client, SendEmailCommand } = await import("@aws-sdk/client-sesv2");
    const sesClient = new SESv2Client({
      region: config.region,
      endpoint: config.endpoint,
      maxAttempts: 3,
      requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS },
    });
    return nodemailer.createTransport({ SES: { sesClient, SendEmailCommand } });
  };
  return {
    name: "cloudmail",
    async send(msg: MailMessage) {
      transport ??= load();
      // A failed SDK load is not cached: the next attempt tries again.
      const t = await transport.catch((error) => {
        transport = null;
        throw error;
      });
      await t.sendMail({ from: msg.from ?? config.from, to: msg.to, subject: msg.subject, text: msg.text, html: msg.html, headers: msg.headers });
    },
  };
}
