// The capture transport: each message becomes one RFC 822 file `<dir>/<timestamp>-<sequence>-<id>.eml`.
// Written to a temp name and renamed, so a reader never sees half a message.
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import nodemailer from "nodemailer";
import type { MailConfig } from "../config.ts";
import { now } from "../util/clock.ts";
import type { MailMessage, MailTransport } from "./types.ts";
import { newId } from "../util/ids.ts";

/** Writes every message as an `.eml` file in `config.dir` (created when missing). */
export function captureTransport(config: Extract<MailConfig, { transport: "capture" }>): MailTransport {
  // streamTransport composes exactly what an SMTP relay would be handed, into a buffer.
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "windows" });
  // Why a sequence: two messages in one millisecond keep the order they were handed over in (file names sort).
  let sent = 0;
  return {
    name: "capture",
    async send(msg: MailMessage) {
      const info = await composer.sendMail({
        from: msg.from ?? config.from,
        to: msg.to,
        subject: msg.subject,
        text: msg.text,
        html: msg.html,
        headers: msg.headers,
      });
      await mkdir(config.dir, { recursive: true });
      const name = `${String(now()).padStart(13, "0")}-${String(++sent).padStart(9, "0")}-${newId()}.eml`;
      const tmp = join(config.dir, `.${name}.tmp`);
      try {
        await writeFile(tmp, info.message as Buffer, { mode: 0o600 });
        await rename(tmp, join(config.dir, name));
      } catch (error) {
        await rm(tmp, { force: true });
        throw error;
      }
    },
  };
}
