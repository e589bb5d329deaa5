// What the notification API answers, and where a thread lives on the web.
import type { SubjectKind } from "../../db/schema/notifications.ts";

/** A notification as the API shows it (DECISIONS §5 Notifications; `repo`, `subject.url`, decided). */
export interface NotificationBody {
  id: string;
  repo: { org: string; name: string };
  subject: { kind: SubjectKind; number: number | null; id: string; title: string; url: string };
  reason: string;
  unread: boolean;
  updated_at: string;
}

/** The web address of a thread: a change or issue by number, a CI run by id. */
export function threadPath(org: string, repo: string, kind: SubjectKind, id: string, number: number | null): string {
  const base = `/${encodeURIComponent(org)}/${encodeURIComponent(repo)}`;
  if (kind === "run") return `${base}/runs/${encodeURIComponent(id)}`;
  return `${base}/${kind === "change" ? "changes" : "issues"}/${number ?? encodeURIComponent(id)}`;
}
