// The notification pages (issue 28): the inbox at /notifications (grouped by repository; mark
// read or unread, mark all read, mute a thread), the mail setting at /settings/notifications, and
// the page a mail's unsubscribe link opens. Every form posts through `postForm` (CSRF, the one
// refusal policy) and calls the same services as the API; the one-click unsubscribe POST comes
// from a mail client with no session and carries only its token.
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { getSettings, listNotifications, muteNotification, patchNotification, putSettings, readAll } from "../../../services/notify/inbox.ts";
import type { NotificationBody } from "../../../services/notify/schemas.ts";
import { unsubscribe, unsubscribeTarget } from "../../../services/notify/unsubscribe.ts";
import { CSRF_FIELD } from "../kit/csrf.ts";
import { HIDE, pageDrawer, queryParam } from "../kit/draw.ts";
import { field, postForm, signInRequired } from "../kit/forms.ts";
import { html, seg, type Html } from "../kit/html.ts";
import { layout, page, pageHeaders } from "../kit/layout.ts";

const REASON_TEXT: Readonly<Record<string, string>> = {
  author: "you opened it",
  comment: "you commented",
  review: "you reviewed",
  review_requested: "review requested",
  assign: "assigned to you",
  mention: "you were mentioned",
  watching: "you watch the repository",
  ci_activity: "your push",
};

const NOTICES: Readonly<Record<string, string>> = { read: "Marked read.", unread: "Marked unread.", muted: "Thread muted.", all: "All marked read." };

function hidden(csrf: string | null): Html {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${csrf ?? ""}">`;
}

function button(action: string, label: string, csrf: string | null, extra: Html | "" = ""): Html {
  return html`<form class="inline" method="post" action="${action}">${hidden(csrf)}${extra}<button class="link" type="submit">${label}</button></form>`;
}

/** The inbox page: notifications grouped by repository, newest first. */
function inboxPage(o: {
  list: NotificationBody[];
  unreadCount: number;
  filter: "unread" | "all";
  next: string | null;
  csrf: string | null;
  notice: string | null;
}): Html {
  const groups = new Map<string, NotificationBody[]>();
  for (const n of o.list) {
    const key = `${n.repo.org}/${n.repo.name}`;
    groups.set(key, [...(groups.get(key) ?? []), n]);
  }
  const back = o.filter === "all" ? "?filter=all" : "";
  const rows = [...groups].map(
    ([repo, items]) => html`<section aria-label="${repo}"><h2><a href="/${seg(items[0]!.repo.org)}/${seg(items[0]!.repo.name)}">${repo}</a></h2>
<ul class="notifications">${items.map(
      (
        n,
      ) => html`<li class="${n.unread ? "unread" : "read"}"><a href="${n.unread ? `/notifications/${seg(n.id)}/open` : new URL(n.subject.url).pathname}">${n.subject.title}${n.subject.number !== null ? ` #${n.subject.number}` : ""}</a>
<span class="muted">${n.unread ? "Unread · " : ""}${REASON_TEXT[n.reason] ?? n.reason} · ${n.updated_at.slice(0, 16).replace("T", " ")}</span>
${button(`/notifications/${seg(n.id)}/${n.unread ? "read" : "unread"}${back}`, n.unread ? "Mark read" : "Mark unread", o.csrf)}
${button(`/notifications/${seg(n.id)}/mute${back}`, "Mute thread", o.csrf)}</li>`,
    )}</ul></section>`,
  );
  return html`<h1>Notifications</h1>
${o.notice ? html`<p class="notice" role="status">${o.notice}</p>` : ""}
<p><a href="/notifications"${o.filter === "unread" ? html` aria-current="page"` : ""}>Unread (${o.unreadCount})</a> · <a href="/notifications?filter=all"${o.filter === "all" ? html` aria-current="page"` : ""}>All</a> · <a href="/settings/notifications">Mail settings</a></p>
${o.unreadCount > 0 ? button("/notifications/read-all", "Mark all as read", o.csrf) : ""}
${o.list.length ? rows : html`<p class="muted">${o.filter === "unread" ? "Nothing unread." : "No notifications yet."}</p>`}
${o.next ? html`<p><a href="/notifications?filter=${o.filter}&amp;cursor=${seg(o.next)}">Older</a></p>` : ""}`;
}

function settingsPage(email: boolean, csrf: string | null, saved: boolean): Html {
  return html`<h1>Notification settings</h1>
${saved ? html`<p class="notice" role="status">Saved.</p>` : ""}
<form method="post" action="/settings/notifications">${hidden(csrf)}
<p><label><input type="checkbox" name="email" value="on"${email ? html` checked` : ""}> Send me notification mail (one mail per thread per burst of activity)</label></p>
<p><button type="submit">Save</button></p></form>
<p><a href="/notifications">Back to notifications</a></p>`;
}

/** The notification pages. */
export function notifyWebRoutes(ctx: Ctx) {
  const draw = pageDrawer(ctx);
  const mark = (id: string, request: Request, body: unknown, query: unknown, what: "read" | "unread" | "mute") =>
    postForm(ctx, request, body, {
      act: async (i) => {
        if (what === "mute") await muteNotification(ctx, i.actor, id, true);
        else await patchNotification(ctx, i.actor, id, { unread: what === "unread" });
        const filter = queryParam(query, "filter") === "all" ? "filter=all&" : "";
        return `/notifications?${filter}done=${what === "mute" ? "muted" : what}`;
      },
    });
  return new Elysia({ name: "routes.web.notify" })
    .get(
      "/notifications",
      ({ request, query }) =>
        draw(request, async (actor, frame) => {
          if (!frame.viewer) return signInRequired(request, frame);
          const filter = queryParam(query, "filter") === "all" ? "all" : "unread";
          const r = await listNotifications(ctx, actor, {
            unread: filter === "unread" ? "true" : undefined,
            reason: queryParam(query, "reason") || undefined,
            cursor: queryParam(query, "cursor") || undefined,
          });
          const notice = NOTICES[queryParam(query, "done") ?? ""] ?? null;
          return page(
            layout(
              { ...frame, unread: r.unread_count },
              "Notifications",
              inboxPage({ list: r.notifications, unreadCount: r.unread_count, filter, next: r.next_cursor, csrf: frame.csrf, notice }),
            ),
            200,
            { "cache-control": "no-store" },
          );
        }),
      HIDE,
    )
    .get(
      "/notifications/:id/open",
      ({ request, params }) =>
        draw(request, async (actor, frame) => {
          if (!frame.viewer) return signInRequired(request, frame);
          // An unread row's link in the inbox: opening the thread reads it (as GitHub's inbox does).
          // A GET that writes, but only the caller's own row's read flag; someone else's id is 404.
          const n = await patchNotification(ctx, actor, params.id, { unread: false });
          return new Response(null, { status: 303, headers: { location: new URL(n.subject.url).pathname } });
        }),
      HIDE,
    )
    .post(
      "/notifications/read-all",
      ({ request, body }) =>
        postForm(ctx, request, body, {
          act: async (i) => {
            await readAll(ctx, i.actor, {});
            return "/notifications?done=all";
          },
        }),
      HIDE,
    )
    .get(
      "/notifications/unsubscribe",
      ({ request, query }) =>
        draw(request, async (_actor, frame) => {
          // Changes nothing: mail scanners fetch every link of a message.
          const token = queryParam(query, "token") ?? "";
          const t = await unsubscribeTarget(ctx, token);
          if (!t) return page(layout(frame, "Unsubscribe", html`<h1>Unsubscribe</h1><p class="error">This link is not valid any more.</p>`), 404);
          const action = `/notifications/unsubscribe?token=${seg(token)}`;
          return page(
            layout(
              frame,
              "Unsubscribe",
              html`<h1>Unsubscribe</h1>
<p>From notification mail about <strong>${t.title ?? "this thread"}</strong>${t.repoName ? html` in ${t.repoName}` : ""}.</p>
<form method="post" action="${action}"><button type="submit">Mute this thread</button></form>
<form method="post" action="${action}&amp;what=mail"><button type="submit">Turn off all notification mail</button></form>`,
            ),
            200,
            { "cache-control": "no-store" },
          );
        }),
      HIDE,
    )
    .post(
      "/notifications/unsubscribe",
      async ({ query }) => {
        // RFC 8058 one-click: the mail client posts `List-Unsubscribe=One-Click` with no session; the token is the authority.
        const what = queryParam(query, "what") === "mail" ? "mail" : "thread";
        const done = await unsubscribe(ctx, queryParam(query, "token") ?? "", what);
        const text = !done
          ? "This link is not valid any more.\n"
          : what === "mail"
            ? "Notification mail is off. Turn it back on at /settings/notifications.\n"
            : "This thread is muted: no more notifications or mail about it.\n";
        return new Response(text, {
          status: done ? 200 : 404,
          headers: { ...pageHeaders(), "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
        });
      },
      HIDE,
    )
    .post("/notifications/:id/read", ({ request, body, params, query }) => mark(params.id, request, body, query, "read"), HIDE)
    .post("/notifications/:id/unread", ({ request, body, params, query }) => mark(params.id, request, body, query, "unread"), HIDE)
    .post("/notifications/:id/mute", ({ request, body, params, query }) => mark(params.id, request, body, query, "mute"), HIDE)
    .get(
      "/settings/notifications",
      ({ request, query }) =>
        draw(request, async (actor, frame) => {
          if (!frame.viewer) return signInRequired(request, frame);
          const s = await getSettings(ctx, actor);
          return page(layout(frame, "Notification settings", settingsPage(s.email, frame.csrf, queryParam(query, "done") === "saved")), 200, {
            "cache-control": "no-store",
          });
        }),
      HIDE,
    )
    .post(
      "/settings/notifications",
      ({ request, body }) =>
        postForm(ctx, request, body, {
          act: async (i) => {
            await putSettings(ctx, i.actor, { email: field(i.form, "email") === "on" });
            return "/settings/notifications?done=saved";
          },
        }),
      HIDE,
    );
}
