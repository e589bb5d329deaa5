// Mail transports (SPEC §5.7): the configured one is built once at boot and put on the context.
// Services never import this folder's libraries; they see only `MailTransport` (mail/types.ts).
import type { MailConfig } from "../config.ts";
import type { MailTransport } from "./types.ts";
import { captureTransport } from "./capture.ts";
import { cloudmailTransport } from "./cloudmail.ts";
import { smtpTransport } from "./smtp.ts";

/** The transport for a validated mail configuration; null for the null transport (drops every message). */
export function createMailTransport(config: MailConfig): MailTransport | null {
  switch (config.transport) {
    case "null":
      return null;
    case "capture":
      return captureTransport(config);
    case "smtp":
      return smtpTransport(config);
    case "cloudmail":
      return cloudmailTransport(config);
  }
}
