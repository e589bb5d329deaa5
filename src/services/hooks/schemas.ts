// Request and response shapes of the hooks domain (SPEC §6.1, §6.2; DECISIONS §2).
import { Type, type Static } from "@sinclair/typebox";
import type { EventKind } from "../events/types.ts";
import { NextCursor, NullableString } from "../schemas.ts";

/** The event kinds a hook can select (every repository event of SPEC §6.1 and DECISIONS §5). */
export const WEBHOOK_EVENT_KINDS = [
  "push",
  "change.landed",
  "change.ejected",
  "change.opened",
  "change.reviewed",
  "change.commented",
  "issue.opened",
  "issue.closed",
  "issue.commented",
] as const satisfies readonly EventKind[];
// Why: a kind added to EventKind without being listed here could never be selected or delivered.
type Unlisted = Exclude<EventKind, (typeof WEBHOOK_EVENT_KINDS)[number]>;
const _allListed: [Unlisted] extends [never] ? true : never = true;
void _allListed;

const Events = Type.Union([Type.Array(Type.String({ maxLength: 100 }), { maxItems: 20 }), Type.Null()], {
  description: `the event kinds delivered to this hook (${WEBHOOK_EVENT_KINDS.join(", ")}); null or absent: every kind`,
  examples: [["push", "change.reviewed"]],
});

export const WebhookCreate = Type.Object({
  url: Type.String({ description: "absolute http(s) URL of a public receiver; no credentials in it", examples: ["https://ci.example.com/hooks/svc"] }),
  events: Type.Optional(Events),
});
export type WebhookCreate = Static<typeof WebhookCreate>;

export const WebhookPatch = Type.Object({ events: Type.Optional(Events) });
export type WebhookPatch = Static<typeof WebhookPatch>;

export const Redelivered = Type.Object(
  { id: Type.String({ description: "the new delivery (its X-Svc-Delivery)" }) },
  { examples: [{ id: "h5n2k8q3x7p4r9s6" }] },
);
export type Redelivered = Static<typeof Redelivered>;

export const WebhookCreated = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    secret: Type.String({ description: "HMAC-SHA256 key of X-Svc-Signature-256; shown only here" }),
    events: Type.Union([Type.Array(Type.String()), Type.Null()], { description: "the kinds delivered; null: every kind" }),
    created_at: Type.Integer({ description: "epoch milliseconds" }),
  },
  {
    examples: [
      { id: "q7k2m9x4p3r8s6t1", url: "https://ci.example.com/hooks/svc", secret: "n4j7q2x9m3k8p6r5t2w7y4z1b6c3d8f5", events: null, created_at: 1795248971422 },
    ],
  },
);
export type WebhookCreated = Static<typeof WebhookCreated>;

export const Delivery = Type.Object(
  {
    id: Type.String({ description: "the delivery (X-Svc-Delivery); the same across its attempts" }),
    event: Type.String({ description: WEBHOOK_EVENT_KINDS.join(", ") }),
    attempt: Type.Integer({ description: "1 for the first try, up to 4 (three retries)" }),
    status_code: Type.Union([Type.Integer(), Type.Null()], { description: "the receiver's HTTP status; null when no answer came" }),
    error: NullableString({ description: "why the attempt failed; null when it succeeded (2xx)" }),
    duration_ms: Type.Integer(),
    delivered_at: Type.Integer({ description: "when the attempt ended, epoch milliseconds" }),
  },
  { examples: [{ id: "d3m8k2q7x4p9r6s1", event: "push", attempt: 1, status_code: 200, error: null, duration_ms: 42, delivered_at: 1795248972000 }] },
);
export type Delivery = Static<typeof Delivery>;

export const Webhook = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    events: Type.Union([Type.Array(Type.String()), Type.Null()], { description: "the kinds delivered; null: every kind" }),
    created_at: Type.Integer(),
    last_delivery: Type.Union([Delivery, Type.Null()], { description: "the latest attempt, or null before the first" }),
  },
  { examples: [{ id: "q7k2m9x4p3r8s6t1", url: "https://ci.example.com/hooks/svc", events: ["push"], created_at: 1795248971422, last_delivery: null }] },
);
export type Webhook = Static<typeof Webhook>;

export const WebhookList = Type.Object(
  { webhooks: Type.Array(Webhook) },
  {
    examples: [
      {
        webhooks: [
          {
            id: "q7k2m9x4p3r8s6t1",
            url: "https://ci.example.com/hooks/svc",
            events: null,
            created_at: 1795248971422,
            last_delivery: { id: "d3m8k2q7x4p9r6s1", event: "push", attempt: 1, status_code: 200, error: null, duration_ms: 42, delivered_at: 1795248972000 },
          },
        ],
      },
    ],
  },
);
export type WebhookList = Static<typeof WebhookList>;

export const DeliveryList = Type.Object(
  { deliveries: Type.Array(Delivery), next_cursor: NextCursor },
  {
    examples: [
      {
        deliveries: [
          { id: "d3m8k2q7x4p9r6s1", event: "push", attempt: 2, status_code: 200, error: null, duration_ms: 42, delivered_at: 1795248982000 },
          {
            id: "d3m8k2q7x4p9r6s1",
            event: "push",
            attempt: 1,
            status_code: 503,
            error: "receiver answered HTTP 503",
            duration_ms: 31,
            delivered_at: 1795248972000,
          },
        ],
        next_cursor: null,
      },
    ],
  },
);
export type DeliveryList = Static<typeof DeliveryList>;
