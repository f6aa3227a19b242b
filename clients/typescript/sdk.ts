// The hand-written layer over openapi-fetch and the generated types (the `compliance-api-client` npm package's
// entry point; clients/generate.sh builds and packs it beside `schema.d.ts`):
//
// - retries on 429, 500, 502, 503, 504 and network errors, with exponential backoff and full jitter, honouring
//   `Retry-After`, at most `retries` times and never waiting more than `maxWait` ms at once;
// - an Idempotency-Key on every POST that has none, kept across its retries;
// - `paginate`, which yields every item of a list by following `next_cursor`;
// - `error` of every call typed as the API's problem (`code`, `detail`, `request_id`), as openapi-fetch gives it.
//
// Hand-rolled (a few lines) because openapi-fetch has no retry, and a package for it would be one more dependency in
// every integrator's build for a loop that must also clone each attempt's Request (a body is read once) and key a POST
// once for all its attempts.
import createClient, { type Client, type ClientOptions } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, paths };
/** An `application/problem+json` answer: `code` is stable (see /errors), `detail` is for people. */
export type Problem = components["schemas"]["Problem"];

export interface RetryOptions {
  /** Retries after the first attempt (default 3). */
  retries?: number;
  /** The n-th retry waits a random time up to `backoff` × 2ⁿ ms (default 500). */
  backoff?: number;
  /** No single wait is longer, `Retry-After` included (default 30 000 ms). */
  maxWait?: number;
}

const RETRIED_STATUSES = new Set([429, 500, 502, 503, 504]);

function retryAfter(response: Response): number | undefined {
  const value = response.headers.get("Retry-After");
  if (value === null) return undefined;
  const seconds = Number(value);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - Date.now();
  return Number.isNaN(ms) ? undefined : Math.max(ms, 0);
}

/** `fetch` with the layer's retries and Idempotency-Key, for openapi-fetch's `fetch` option. */
export function retryingFetch(
  options: RetryOptions = {},
  send: typeof fetch = globalThis.fetch,
): (request: Request) => Promise<Response> {
  const { retries = 3, backoff = 500, maxWait = 30_000 } = options;
  return async (request) => {
    if (request.method === "POST" && !request.headers.has("Idempotency-Key")) {
      request.headers.set("Idempotency-Key", crypto.randomUUID());
    }
    for (let attempt = 0; ; attempt++) {
      let wait = Math.random() * backoff * 2 ** attempt;
      try {
        const response = await send(request.clone());
        if (!RETRIED_STATUSES.has(response.status) || attempt >= retries) return response;
        wait = retryAfter(response) ?? wait;
        await response.body?.cancel();
      } catch (error) {
        if (attempt >= retries) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(wait, maxWait)));
    }
  };
}

/** An openapi-fetch client of the whole API with the layer's behaviour; `token` is an `sk_live_…` or `sk_test_…`. */
export function createApiClient(
  options: { baseUrl: string; token: string } & RetryOptions & Omit<ClientOptions, "baseUrl" | "fetch">,
): Client<paths> {
  const { token, retries, backoff, maxWait, headers, ...rest } = options;
  const retry: RetryOptions = {
    ...(retries === undefined ? {} : { retries }),
    ...(backoff === undefined ? {} : { backoff }),
    ...(maxWait === undefined ? {} : { maxWait }),
  };
  return createClient<paths>({
    ...rest,
    headers: { ...headers, Authorization: `Bearer ${token}` },
    fetch: retryingFetch(retry),
  });
}

interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor?: string | null;
}

/** Every item of a list: `page(cursor)` asks for one page (the first with `cursor` undefined); a problem throws. */
export async function* paginate<T>(
  page: (cursor: string | undefined) => Promise<{ data?: Page<T>; error?: unknown }>,
): AsyncGenerator<T> {
  let cursor: string | undefined;
  for (;;) {
    const { data, error } = await page(cursor);
    if (data === undefined) throw Object.assign(new Error("the list answered a problem"), { problem: error });
    yield* data.data;
    if (!data.has_more || !data.next_cursor) return;
    cursor = data.next_cursor;
  }
}
