// A person's notifications (DECISIONS §5 Notifications; docs/api.md "Notifications").
import { Elysia } from "elysia";
import type { Ctx } from "../../../services/context.ts";
import { getSettings, listNotifications, muteNotification, patchNotification, putSettings, readAll } from "../../../services/notify/inbox.ts";
import {
  Notification,
  NotificationList,
  NotificationPatch,
  NotificationQuery,
  NotificationSettings,
  NotificationSettingsBody,
  ReadAll,
} from "../../../services/notify/schemas.ts";
import { errors } from "../../../services/schemas.ts";
import { callerOf } from "../../principal.ts";
import { noContent } from "../../responses.ts";

/** Notification routes. */
export function notificationRoutes(ctx: Ctx) {
  return new Elysia({ name: "routes.notifications" })
    .get("/v1/notifications", ({ request, query }) => listNotifications(ctx, callerOf(request), query), {
      query: NotificationQuery,
      response: { 200: NotificationList, ...errors(400, 401, 404) },
      detail: { summary: "Your notifications, newest activity first; only repositories you may read now; paged, with unread_count" },
    })
    .get("/v1/notifications/settings", ({ request }) => getSettings(ctx, callerOf(request)), {
      response: { 200: NotificationSettingsBody, ...errors(401) },
      detail: { summary: "Your notification settings (mail on or off)" },
    })
    .put("/v1/notifications/settings", ({ request, body }) => putSettings(ctx, callerOf(request), body), {
      body: NotificationSettings,
      response: { 200: NotificationSettingsBody, ...errors(400, 401, 403) },
      detail: { summary: "Turn notification mail on or off (the inbox keeps filling either way)" },
    })
    .post(
      "/v1/notifications/read-all",
      async ({ request, body, set }) => {
        await readAll(ctx, callerOf(request), body ?? {});
        return noContent(set);
      },
      {
        body: ReadAll,
        response: { 204: noContent.schema, ...errors(400, 401, 404) },
        detail: { summary: "Mark all your notifications read (of one repository; up to a time)" },
      },
    )
    .patch("/v1/notifications/:id", ({ request, params, body }) => patchNotification(ctx, callerOf(request), params.id, body), {
      body: NotificationPatch,
      response: { 200: Notification, ...errors(400, 401, 404) },
      detail: { summary: "Mark one notification read or unread" },
    })
    .put(
      "/v1/notifications/:id/mute",
      async ({ request, params, set }) => {
        await muteNotification(ctx, callerOf(request), params.id, true);
        return noContent(set);
      },
      {
        response: { 204: noContent.schema, ...errors(401, 404) },
        detail: { summary: "Mute the notification's thread: no more notifications or mail from it" },
      },
    )
    .delete(
      "/v1/notifications/:id/mute",
      async ({ request, params, set }) => {
        await muteNotification(ctx, callerOf(request), params.id, false);
        return noContent(set);
      },
      { response: { 204: noContent.schema, ...errors(401, 404) }, detail: { summary: "Unmute the notification's thread" } },
    );
}
