/**
 * The standing-query helpers of CtxdClient, over SubscriptionService:
 * streams of the items that newly match a query, and durable subscriptions
 * whose matches the daemon keeps in an inbox until read.
 *
 * ```ts
 * for await (const ev of ctxd.subscribe("deploy rollback")) {
 *   if (ev.event.case === "match") console.log(ev.event.value.result?.ref);
 * }
 * ```
 */
import type { Client } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";

import { SearchMode, type SearchFilterSchema } from "./gen/ctxd/v1/search_pb.js";
import type {
  ReadSubscriptionResponse,
  SubscribeResponse,
  Subscription,
  SubscriptionService,
} from "./gen/ctxd/v1/subscription_pb.js";

/** What a standing query matches besides its texts. */
export interface StandingQueryOptions {
  /** BM25 (the default: every term, weighed by rarity), HYBRID (or close in meaning) or VECTOR. */
  mode?: SearchMode;
  /** The least score of a match, in (0, 1]; 0 means 1 for the lexical leg, 0.5 for the vector leg. */
  minScore?: number;
  /** Only items the filter selects. */
  filter?: MessageInitShape<typeof SearchFilterSchema>;
  /** Snippet length of each push in characters; 0 means 300. */
  snippetLength?: number;
}

/** Options of subscribe(). */
export interface SubscribeOptions extends StandingQueryOptions {
  /** The resumeToken of the last push received: the stream starts after it. */
  resumeToken?: string;
  /** Aborting it ends the stream (as does leaving the for-await loop). */
  signal?: AbortSignal;
}

/** The standing-query helpers of CtxdClient. */
export interface SubscriptionMethods {
  /**
   * An async iterator of the items that newly match `queries` (live for the
   * iteration): `ready` first, then `match` events (a search result, the
   * change that caused it and a `resumeToken`) and `gap` events. Call it
   * again with `resumeToken` to get what matched while disconnected.
   */
  subscribe(queries: string | string[], options?: SubscribeOptions): AsyncIterable<SubscribeResponse>;
  /** An async iterator of durable subscription `name`: its inbox first (acknowledged as sent), then live. */
  subscribeDurable(name: string, options?: { signal?: AbortSignal }): AsyncIterable<SubscribeResponse>;
  /** Creates (or with `replace`, replaces) the durable subscription `name`. */
  createSubscription(
    name: string,
    queries: string | string[],
    options?: StandingQueryOptions & { replace?: boolean },
  ): Promise<Subscription>;
  /** The durable subscriptions this token may see, by name. */
  listSubscriptions(): Promise<Subscription[]>;
  /** Deletes a durable subscription and its inbox; resolves to it as it was. */
  deleteSubscription(name: string): Promise<Subscription>;
  /** The oldest matches of a durable subscription's inbox, acknowledged unless `peek`. */
  readSubscription(name: string, options?: { limit?: number; peek?: boolean }): Promise<ReadSubscriptionResponse>;
}

function standingQuery(queries: string | string[], o: StandingQueryOptions) {
  return {
    queries: (typeof queries === "string" ? [queries] : queries).map((text) => ({ text })),
    mode: o.mode ?? SearchMode.BM25,
    minScore: o.minScore,
    filter: o.filter,
    snippetLength: o.snippetLength,
  };
}

/** The helpers over a SubscriptionService client. */
export function subscriptionMethods(client: Client<typeof SubscriptionService>): SubscriptionMethods {
  return {
    subscribe: (queries, options = {}) =>
      client.subscribe(
        { query: standingQuery(queries, options), resumeToken: options.resumeToken },
        { signal: options.signal, timeoutMs: 0 },
      ),
    subscribeDurable: (name, options = {}) => client.subscribe({ name }, { signal: options.signal, timeoutMs: 0 }),
    createSubscription: async (name, queries, options = {}) => {
      const r = await client.createSubscription({ name, query: standingQuery(queries, options), replace: options.replace });
      if (!r.subscription) throw new Error("CreateSubscription returned no subscription");
      return r.subscription;
    },
    listSubscriptions: async () => (await client.listSubscriptions({})).subscriptions,
    deleteSubscription: async (name) => {
      const r = await client.deleteSubscription({ name });
      if (!r.subscription) throw new Error("DeleteSubscription returned no subscription");
      return r.subscription;
    },
    readSubscription: (name, options = {}) => client.readSubscription({ name, ...options }),
  };
}
