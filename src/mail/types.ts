// What a mail transport is: the one interface services see (SPEC §5.7).

/** One outgoing message: plain-text and HTML parts of the same content. */
export interface MailMessage {
  to: string;
  /** The sender (`addr` or `"Name" <addr>`); unset: the transport's configured one (SVC_MAIL_FROM). */
  from?: string;
  subject: string;
  text: string;
  html: string;
  /** Extra header fields (List-Id, List-Unsubscribe, List-Unsubscribe-Post, Auto-Submitted). */
  headers?: Record<string, string>;
}

/** A configured mail transport; null on the service context means the null transport. */
export interface MailTransport {
  /** `capture`, `smtp` or `cloudmail`. */
  readonly name: string;
  /** Delivers one message; throws with a readable reason on failure. */
  send(msg: MailMessage): Promise<void>;
}
