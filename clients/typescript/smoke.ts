// Smoke test of the generated TypeScript client (openapi-typescript types + openapi-fetch) against a live server:
// every operation of the contract, once at least. Run by clients/smoke.sh:
// `node dist/smoke.js BASE_URL DEMO_JSON CONTRACT_JSON`. Requests are the contract's own examples where it has them.
import { readFileSync } from "node:fs";
import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "../../var/clients/typescript/schema.js";

type Schemas = components["schemas"];
interface Operation {
  operationId: string;
  requestBody?: { content: Record<string, { examples?: Record<string, { value: unknown }> }> };
}
interface Contract {
  paths: Record<string, Record<string, Operation>>;
}
interface Demo {
  tokens: { live: string; test: string };
  fixtures: {
    wtta: Record<string, string>;
    passport: { token: string };
    dac7: { authorised_seller: string };
  };
}

const METHODS = ["get", "post", "put", "patch", "delete"];
const [baseUrl, demoPath, contractPath] = process.argv.slice(2) as [string, string, string];
const demo = JSON.parse(readFileSync(demoPath, "utf8")) as Demo;
const contract = JSON.parse(readFileSync(contractPath, "utf8")) as Contract;

const operationIds = new Map<string, string>();
for (const [path, item] of Object.entries(contract.paths)) {
  for (const [method, operation] of Object.entries(item)) {
    if (METHODS.includes(method)) operationIds.set(`${method.toUpperCase()} ${path}`, operation.operationId);
  }
}
const called = new Set<string>();
const recorder: Middleware = {
  onRequest({ request, schemaPath }) {
    called.add(operationIds.get(`${request.method} ${schemaPath}`) ?? `${request.method} ${schemaPath}`);
  },
};

function client(server: string, token: string) {
  const made = createClient<paths>({ baseUrl: server, headers: { Authorization: `Bearer ${token}` } });
  made.use(recorder);
  return made;
}

function expectStatus<T>(result: { data?: T; response: Response }, status: number): T {
  if (result.response.status !== status) {
    throw new Error(`${result.response.url}: expected ${status}, got ${result.response.status}`);
  }
  return result.data as T;
}

function requestExample<T>(path: string, method: string): T {
  const examples = contract.paths[path]?.[method]?.requestBody?.content["application/json"]?.examples ?? {};
  return Object.values(examples)[0]?.value as T;
}

function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

const servers = ((await (await fetch(`${baseUrl}/openapi.json`)).json()) as { servers: { url: string }[] }).servers;
const [production, sandbox] = [servers[0]?.url ?? baseUrl, servers[1]?.url ?? baseUrl];
const business = client(sandbox, demo.tokens.test);
const freelancer = client(sandbox, demo.fixtures.passport.token);
const live = client(production, demo.tokens.live);
const kvk = demo.fixtures.wtta;

expectStatus(await live.GET("/v1/health"), 200);
expectStatus(await business.GET("/v1/health"), 200);
const admitted = expectStatus(await business.GET("/v1/wtta/lookup", { params: { query: { kvk: kvk.admitted ?? "" } } }), 200);
assert(admitted.admission_status === "admitted", "the admitted fixture is admitted");
const notInCache = await business.GET("/v1/wtta/lookup", { params: { query: { kvk: "12345678" } } });
assert(notInCache.response.status === 404 && notInCache.error?.code === "not_in_cache", "an unknown KvK is not_in_cache");
expectStatus(await business.GET("/v1/wtta/{kvk}/history", { params: { path: { kvk: kvk.revoked ?? "" } } }), 200);

const dutch = requestExample<Schemas["ZelfstandigenwetRequest"]>("/v1/classify/zelfstandigenwet", "post");
const verdict = expectStatus(await business.POST("/v1/classify/zelfstandigenwet", { body: dutch }), 200);
const crossBorder = requestExample<Schemas["CrossBorderRequest"]>("/v1/classify/cross-border", "post");
expectStatus(
  await business.POST("/v1/classify/cross-border", { body: crossBorder, params: { header: { "Accept-Language": "de" } } }),
  200,
);
const dutchBatch = requestExample<Schemas["ZelfstandigenwetBatchRequest"]>("/v1/classify/zelfstandigenwet/batch", "post");
const crossBorderBatch = requestExample<Schemas["CrossBorderBatchRequest"]>("/v1/classify/cross-border/batch", "post");
for (const batch of [
  expectStatus(await business.POST("/v1/classify/zelfstandigenwet/batch", { body: dutchBatch }), 200),
  expectStatus(await business.POST("/v1/classify/cross-border/batch", { body: crossBorderBatch }), 200),
]) {
  assert(batch.data.length === 2 && !("index" in batch.data[0]!) && "index" in batch.data[1]!, "a verdict, then a problem");
}
expectStatus(await business.GET("/v1/classify/cross-border/criteria", { params: { query: { country: "BE" } } }), 200);
const catalogue = expectStatus(
  await business.GET("/v1/classify/questions", { params: { query: { test: "DE" }, header: { "Accept-Language": "de" } } }),
  200,
);
assert(catalogue.questions.length > 0 && catalogue.decisive.length > 0, "a test's questions and decisive rules");
const listed = expectStatus(await business.GET("/v1/classifications", { params: { query: { limit: 5 } } }), 200);
assert(listed.data.some((item) => item.id === verdict.id), "the new classification is listed");
const byId = { params: { path: { classification_id: verdict.id } } };
expectStatus(await business.GET("/v1/classifications/{classification_id}", byId), 200);
const update = requestExample<Schemas["ClassificationUpdate"]>("/v1/classifications/{classification_id}", "patch");
expectStatus(await business.PATCH("/v1/classifications/{classification_id}", { ...byId, body: update }), 200);
const signed = expectStatus(await business.GET("/v1/classifications/{classification_id}/dossier", byId), 200);
// The operation answers JSON or a PDF (a string to openapi-fetch); without `Accept: application/pdf` it is JSON.
assert(typeof signed !== "string", "the dossier is JSON by default");
assert(signed.dossier.classification_id === verdict.id && signed.jws.split(".").length === 3, "the dossier is signed");

expectStatus(await business.GET("/v1/rates/benchmark", { params: { query: { sector: "ict", region: "NL" } } }), 200);
expectStatus(await business.GET("/v1/rates/sectors"), 200);

assert(expectStatus(await freelancer.GET("/v1/passport"), 200).verified, "the demo passport is verified");
expectStatus(await freelancer.GET("/api/v1/passport"), 200);
const share = expectStatus(await freelancer.POST("/v1/passport/shares", { body: { ttl_days: 30 } }), 201);
expectStatus(await freelancer.GET("/v1/passport/shares"), 200);
expectStatus(await business.GET("/v1/passport/{token}/verify", { params: { path: { token: share.token } } }), 200);
const shareId = { params: { path: { share_id: share.id } } };
expectStatus(await freelancer.GET("/v1/passport/shares/{share_id}/views", shareId), 200);
expectStatus(await freelancer.DELETE("/v1/passport/shares/{share_id}", shareId), 200);

const seller = demo.fixtures.dac7.authorised_seller;
expectStatus(await business.GET("/v1/dac7/seller/{freelancer_id}", { params: { path: { freelancer_id: seller } } }), 200);
const identityPath = "/v1/dac7/seller/{freelancer_id}/identity";
const sellerId = { params: { path: { freelancer_id: seller } } };
assert(expectStatus(await freelancer.GET(identityPath, sellerId), 200).complete, "the demo seller's identity is complete");
const identity = requestExample<Schemas["SellerIdentity"]>(identityPath, "put"); // the demo's, as found
expectStatus(await freelancer.PUT(identityPath, { ...sellerId, body: identity }), 200);
const grants = expectStatus(await freelancer.GET("/v1/dac7/grants"), 200);
const granteeId = grants.data[0]?.grantee_id ?? "";
const grant = expectStatus(await freelancer.POST("/v1/dac7/grants", { body: { grantee_id: granteeId } }), 201);
expectStatus(await freelancer.DELETE("/v1/dac7/grants/{grant_id}", { params: { path: { grant_id: grant.id } } }), 200);
expectStatus(await freelancer.POST("/v1/dac7/grants", { body: { grantee_id: granteeId } }), 201); // as found

const hook = { url: "http://127.0.0.1:9/smoke", enabled_events: ["classification.created" as const] };
const endpoint = expectStatus(await business.POST("/v1/webhook-endpoints", { body: hook }), 201);
assert(endpoint.secret.startsWith("whsec_"), "the secret is shown at creation");
const endpointId = { params: { path: { endpoint_id: endpoint.id } } };
expectStatus(await business.GET("/v1/webhook-endpoints"), 200);
expectStatus(await business.GET("/v1/webhook-endpoints/{endpoint_id}", endpointId), 200);
expectStatus(await business.PATCH("/v1/webhook-endpoints/{endpoint_id}", { ...endpointId, body: { description: "smoke" } }), 200);
expectStatus(await business.POST("/v1/webhook-endpoints/{endpoint_id}/rotate-secret", endpointId), 200);
const delivery = expectStatus(await business.POST("/v1/webhook-endpoints/{endpoint_id}/test", endpointId), 202);
const since = new Date(Date.now() - 3_600_000).toISOString();
expectStatus(await business.POST("/v1/webhook-endpoints/{endpoint_id}/replay", { ...endpointId, body: { since } }), 202);
const again = { ...endpointId, body: { since, mode: "undelivered" as const } };
const undelivered = expectStatus(await business.POST("/v1/webhook-endpoints/{endpoint_id}/replay", again), 202);
assert(undelivered.already_pending >= 1 && !undelivered.has_more, "the first replay's deliveries are still pending");
expectStatus(await business.GET("/v1/webhook-endpoints/{endpoint_id}/deliveries", endpointId), 200);
const retry = { params: { path: { endpoint_id: endpoint.id, delivery_id: delivery.id } } };
expectStatus(await business.POST("/v1/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/retry", retry), 202);
expectStatus(await business.DELETE("/v1/webhook-endpoints/{endpoint_id}", endpointId), 204);

const events = expectStatus(await business.GET("/v1/events", { params: { query: { limit: 10 } } }), 200);
const eventId = events.data[0]?.id ?? "";
expectStatus(await business.GET("/v1/events/{event_id}", { params: { path: { event_id: eventId } } }), 200);
const requests = expectStatus(await business.GET("/v1/requests", { params: { query: { limit: 10 } } }), 200);
if (!Array.isArray(requests.data)) throw new Error("GET /v1/requests answered no data list");

const missing = [...operationIds.values()].filter((id) => !called.has(id)).sort();
if (missing.length > 0) throw new Error(`the TypeScript smoke test calls no ${missing.join(", ")}`);
console.log(`TypeScript client: ${called.size} operations called against ${baseUrl} (every operation of the contract)`);
