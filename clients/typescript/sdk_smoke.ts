// Smoke test of the hand-written layer (the `compliance-api-client` package), after smoke.ts has filled the sandbox.
// Run by clients/smoke.sh: `node dist/sdk_smoke.js BASE_URL DEMO_JSON`. Against a stand-in server that answers 429,
// then 503, then drops the connection, then 201: the call succeeds, each attempt carries the same Idempotency-Key,
// and `Retry-After` is honoured. Against the live server: `error` is the typed problem, and `paginate` reads every
// item of a list one page at a time.
import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { createApiClient, paginate, type Problem, retryingFetch } from "compliance-api-client";

const [baseUrl, demoPath] = process.argv.slice(2) as [string, string];
const demo = JSON.parse(readFileSync(demoPath, "utf8")) as { tokens: { test: string } };
const RETRY_AFTER = 1; // seconds the stand-in's 429 asks for

function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(message);
}

const script: (number | null)[] = [429, 503, null, 201];
const seen: { headers: IncomingHttpHeaders; at: number }[] = [];
const flaky = createServer((request, response) => {
  const status = script[seen.length];
  seen.push({ headers: request.headers, at: performance.now() });
  if (status === null || status === undefined) {
    request.socket.destroy();
    return;
  }
  const retryAfter = status === 429 ? { "Retry-After": `${RETRY_AFTER}` } : {};
  response.writeHead(status, { "Content-Type": "application/json", ...retryAfter });
  response.end(JSON.stringify({ ok: status < 400 }));
});
await new Promise<void>((resolve) => flaky.listen(0, "127.0.0.1", resolve));
const flakyUrl = `http://127.0.0.1:${(flaky.address() as AddressInfo).port}/v1/things`;
const answer = await retryingFetch({ backoff: 10 })(new Request(flakyUrl, { method: "POST", body: "{}" }));
flaky.close();
check(answer.status === 201, `429, 503, a dropped connection, then 201: got ${answer.status}`);
check(seen.length === 4, `four attempts, not ${seen.length}`);
const keys = new Set(seen.map((attempt) => attempt.headers["idempotency-key"]));
check(keys.size === 1 && !keys.has(undefined), `one Idempotency-Key across the retries, not ${[...keys].join(", ")}`);
const waited = (seen[1]?.at ?? 0) - (seen[0]?.at ?? 0);
check(waited >= RETRY_AFTER * 900, `Retry-After: ${RETRY_AFTER} honoured, waited ${waited.toFixed(0)} ms`);

const servers = ((await (await fetch(`${baseUrl}/openapi.json`)).json()) as { servers: { url: string }[] }).servers;
const api = createApiClient({ baseUrl: servers[1]?.url ?? "", token: demo.tokens.test });
const { error } = await api.GET("/v1/wtta/lookup", { params: { query: { kvk: "12345678" } } });
const problem: Problem | undefined = error;
check(problem?.code === "not_in_cache", `a typed problem: ${JSON.stringify(problem)}`);
check(Boolean(problem?.detail) && (problem?.request_id ?? "").startsWith("req_"), "its detail and request id");

const whole = await api.GET("/v1/classifications", { params: { query: { limit: 100 } } });
const expected = (whole.data?.data ?? []).map((item) => item.id);
check(expected.length >= 3, "smoke.ts classified several engagements");
const paged: string[] = [];
for await (const item of paginate((cursor) =>
  api.GET("/v1/classifications", { params: { query: { limit: 1, ...(cursor === undefined ? {} : { cursor }) } } }),
)) {
  paged.push(item.id);
}
check(JSON.stringify(paged) === JSON.stringify(expected), `paginate read ${paged.length} of ${expected.length}`);
console.log("typescript sdk: retries, Idempotency-Key, problems and paging ok");
