import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { ManagerClient } from "../../src/nsx/client.ts";
import { EdgeDocument } from "../../src/nsx/edge-document.ts";
import { NsxApiError } from "../../src/nsx/errors.ts";
import { FakeClock } from "../../src/util/clock.ts";
import { clientHarness } from "./client-harness.ts";
import { closedPort, EDGE_XML, reply, type Handler } from "./test-server.ts";

const USER = "svc-nsx@corp";
const PASSWORD = "Zq7!distinctive-PASSWORD-4711";
const BASIC_B64 = Buffer.from(`${USER}:${PASSWORD}`).toString("base64");
const TOKEN_PATH = "/api/2.0/services/auth/token";
const POOLS = "<ipamAddressPools/>";

const { serve, client } = clientHarness({ username: USER, password: PASSWORD });

/** A 6.4 manager: tokens for Basic on POST, AUTHTOKEN required elsewhere; tokens can be revoked. */
function tokenManager(
  tokenXml: (n: number) => string = (n) => `<authToken><value>jwt-${n}</value></authToken>`,
) {
  const state = { issued: 0, valid: new Set<string>() };
  const handler: Handler = (r, res) => {
    if (r.method === "POST" && r.url === TOKEN_PATH) {
      if (r.headers.authorization !== `Basic ${BASIC_B64}`) return reply(res, 401);
      state.issued++;
      state.valid.add(`jwt-${state.issued}`);
      return reply(res, 200, tokenXml(state.issued));
    }
    const auth = r.headers.authorization ?? "";
    if (!auth.startsWith("AUTHTOKEN ") || !state.valid.has(auth.slice(10))) return reply(res, 401);
    return r.method === "PUT" ? reply(res, 204) : reply(res, 200, POOLS);
  };
  return { state, handler };
}

describe("token auth (NSX 6.4)", () => {
  it("gets one token with Basic auth for concurrent calls and sends it as AUTHTOKEN", async () => {
    const manager = tokenManager();
    const server = await serve(manager.handler);
    const { c, events } = client(server.url, { auth: "token" });
    await Promise.all([c.listPools("a"), c.listPools("b"), c.listPools("c")]);
    expect(manager.state.issued).toBe(1);
    expect(server.requests.map((r) => `${r.method} ${r.headers.authorization}`)).toEqual([
      `POST Basic ${BASIC_B64}`,
      "GET AUTHTOKEN jwt-1",
      "GET AUTHTOKEN jwt-1",
      "GET AUTHTOKEN jwt-1",
    ]);
    expect(events[0]).toMatchObject({ method: "POST", route: "token", status: 200 });
  });

  it("renews the token before it expires", async () => {
    const clock = new FakeClock(Date.now());
    const expiresAtMs = clock.now() + 10 * 60_000;
    const manager = tokenManager(
      (n) => `<authToken><value>jwt-${n}</value><expiresOn>${expiresAtMs}</expiresOn></authToken>`,
    );
    const server = await serve(manager.handler);
    const { c } = client(server.url, { auth: "token", clock, tokenRefreshMarginMs: 60_000 });
    await c.listPools("a");
    await clock.advance(8 * 60_000);
    await c.listPools("a");
    expect(manager.state.issued).toBe(1);
    await clock.advance(90_000); // 30 s before expiry: inside the margin
    await c.listPools("a");
    expect(manager.state.issued).toBe(2);
    expect(server.requests.at(-1)?.headers.authorization).toBe("AUTHTOKEN jwt-2");
  });

  it("assumes tokenLifetimeMs for a token that states no expiry", async () => {
    const clock = new FakeClock(Date.now());
    const manager = tokenManager();
    const server = await serve(manager.handler);
    const { c } = client(server.url, {
      auth: "token",
      clock,
      tokenLifetimeMs: 300_000,
      tokenRefreshMarginMs: 60_000,
    });
    await c.listPools("a");
    await clock.advance(230_000);
    await c.listPools("a");
    expect(manager.state.issued).toBe(1);
    await clock.advance(20_000);
    await c.listPools("a");
    expect(manager.state.issued).toBe(2);
  });

  it.each([
    { name: "Get", reason: "a read repeats after renewal", write: false },
    { name: "Put", reason: "a 401 is decided before processing, so a write repeats once too", write: true },
  ])("renews once on a 401 and repeats: $name ($reason)", async ({ write }) => {
    const manager = tokenManager();
    const server = await serve(manager.handler);
    const { c, events } = client(server.url, { auth: "token", maxRetries: 0 });
    await c.listPools("a");
    manager.state.valid.clear(); // the manager restarted and forgot its tokens
    if (write) await c.putEdge("edge-1", EdgeDocument.parse(EDGE_XML()));
    else await c.listPools("a");
    expect(events.map((e) => `${e.route} ${e.status}`).slice(2)).toEqual([
      `${write ? "putEdge" : "listPools"} 401`,
      "token 200",
      `${write ? "putEdge" : "listPools"} ${write ? 204 : 200}`,
    ]);
  });

  it("gives up with the 401 when a fresh token is refused too", async () => {
    const manager = tokenManager();
    const server = await serve((r, res, raw) =>
      r.method === "POST" ? manager.handler(r, res, raw) : reply(res, 401),
    );
    const { c } = client(server.url, { auth: "token" });
    const error = await c.listPools("a").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NsxApiError);
    expect(error).toMatchObject({ status: 401 });
    expect(server.requests.map((r) => r.method)).toEqual(["POST", "GET", "POST", "GET"]);
  });

  it("reports refused credentials as a 401 of the token request", async () => {
    const server = await serve((_r, res) =>
      reply(res, 401, "<error><details>Bad credentials</details></error>"),
    );
    const { c, events } = client(server.url, { auth: "token" });
    const error = await c.listPools("a").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NsxApiError);
    expect((error as Error).message).toBe(`POST ${TOKEN_PATH}: HTTP 401: Bad credentials`);
    expect(events.map((e) => e.route)).toEqual(["token"]);
  });
});

/** every text a log line could get from an error: JSON, inspect (hidden fields, causes), stacks */
function everythingPrinted(error: unknown): string {
  const texts: string[] = [inspect(error, { showHidden: true, depth: null })];
  for (let e: unknown = error, i = 0; e !== undefined && e !== null && i < 10; i++) {
    texts.push(JSON.stringify(e), String(e));
    if (e instanceof Error) {
      texts.push(e.message, e.stack ?? "");
      e = e.cause;
    } else break;
  }
  return texts.join("\n");
}

describe("credentials never leak", () => {
  const echo =
    (status: number, asXml: boolean): Handler =>
    (r, res) => {
      const said = `${r.headers.authorization} user=${USER} password=${PASSWORD}`;
      reply(
        res,
        status,
        asXml
          ? `<error><details>${said}</details><errorData><data><key>k</key><value>${said}</value></data></errorData></error>`
          : said,
      );
    };
  /** answers with `body(authorization)`: the request's Authorization header echoed where a test puts it */
  const echoIn =
    (status: number, body: (authorization: string) => string): Handler =>
    (r, res) =>
      reply(res, status, body(r.headers.authorization ?? ""));
  const edge = (): EdgeDocument => EdgeDocument.parse(EDGE_XML());
  it.each([
    {
      name: "ConnectionRefused",
      reason: "network errors carry socket details",
      setup: async () => `http://127.0.0.1:${await closedPort()}`,
      call: (c: ManagerClient) => c.putEdge("edge-1", edge()),
    },
    {
      name: "Timeout",
      reason: "our own deadline",
      setup: async () => (await serve(() => undefined)).url,
      options: { requestTimeoutMs: 100, maxRetries: 0 },
      call: (c: ManagerClient) => c.listPools("a"),
    },
    {
      name: "XmlEcho",
      reason: "a manager that echoes the request into its error body",
      setup: async () => (await serve(echo(500, true))).url,
      call: (c: ManagerClient) => c.listPools("a"),
    },
    {
      name: "TextEcho",
      reason: "a proxy that echoes headers as text",
      setup: async () => (await serve(echo(502, false))).url,
      options: { maxRetries: 0 },
      call: (c: ManagerClient) => c.releaseAddress("ipaddresspool-1", "10.0.0.1"),
    },
    {
      name: "TokenEcho",
      reason: "the AUTHTOKEN is a credential as well",
      setup: async () => {
        const manager = tokenManager();
        return (
          await serve((r, res, raw) =>
            r.method === "POST" ? manager.handler(r, res, raw) : echo(400, true)(r, res, raw),
          )
        ).url;
      },
      options: { auth: "token" as const },
      call: (c: ManagerClient) => c.listPools("a"),
    },
    {
      name: "ErrorCodeAndModuleEcho",
      reason:
        "every field of the error document is the manager's words, not only details and errorData values",
      setup: async () =>
        (
          await serve(
            echoIn(
              400,
              (a) =>
                `<error><errorCode>${a}</errorCode><moduleName>${a}</moduleName><details>x</details></error>`,
            ),
          )
        ).url,
      call: (c: ManagerClient) => c.listPools("a"),
    },
    {
      name: "SecondErrorAndDataKeyEcho",
      reason: "every <error> of an <errors> list, and errorData keys as well as values",
      setup: async () =>
        (
          await serve(
            echoIn(
              500,
              (a) =>
                `<errors><error><details>first</details></error><error><errorCode>${a}</errorCode><errorData><data><key>${a}</key><value>v</value></data></errorData></error></errors>`,
            ),
          )
        ).url,
      call: (c: ManagerClient) => c.listPools("a"),
    },
    {
      name: "TextEchoCutShort",
      reason: "a plain text answer is cut to a snippet: the header must not survive half-cut",
      setup: async () => (await serve(echoIn(500, (a) => `${"x".repeat(250)} Authorization: ${a}`))).url,
      options: { maxRetries: 0 },
      call: (c: ManagerClient) => c.listPools("a"),
    },
    {
      name: "SuccessEchoQuotedInComplaint",
      reason: "a 200 whose field holds the header: the complaint about the field quotes part of it",
      setup: async () =>
        (
          await serve(
            echoIn(
              200,
              (a) =>
                `<ipamAddressPools><ipamAddressPool><objectId>p</objectId><totalAddressCount>${a}</totalAddressCount><usedAddressCount>1</usedAddressCount></ipamAddressPool></ipamAddressPools>`,
            ),
          )
        ).url,
      call: (c: ManagerClient) => c.listPools("a"),
    },
    {
      name: "ReplacedTokenEcho",
      reason: "an answer may echo a token the client has already replaced after a 401",
      setup: async () => {
        const manager = tokenManager();
        let first = true;
        return (
          await serve((r, res, raw) => {
            if (r.method === "POST") return manager.handler(r, res, raw);
            if (first) {
              first = false;
              return reply(res, 401);
            }
            return reply(
              res,
              400,
              `<error><details>now ${r.headers.authorization}, before jwt-1</details></error>`,
            );
          })
        ).url;
      },
      options: { auth: "token" as const },
      call: (c: ManagerClient) => c.listPools("a"),
    },
    {
      name: "Unauthorized",
      reason: "wrong credentials",
      setup: async () => (await serve((_r, res) => reply(res, 401))).url,
      call: (c: ManagerClient) => c.getEdge("edge-1"),
    },
    {
      name: "BadXml",
      reason: "parse errors",
      setup: async () => (await serve((_r, res) => reply(res, 200, "<ipamAddressPools>"))).url,
      call: (c: ManagerClient) => c.listPools("a"),
    },
    {
      name: "TlsFailure",
      reason: "handshake errors",
      setup: async () => (await serve((_r, res) => reply(res, 200, POOLS), { tls: true })).url,
      call: (c: ManagerClient) => c.listPools("a"),
    },
    {
      name: "TooLarge",
      reason: "size errors",
      setup: async () => (await serve((_r, res) => reply(res, 200, "x".repeat(5_000)))).url,
      options: { maxResponseBytes: 100 },
      call: (c: ManagerClient) => c.getEdge("edge-1"),
    },
  ])("$name: $reason", async ({ setup, options, call }) => {
    const { c } = client(await setup(), options ?? {});
    const error = await call(c).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    const printed = everythingPrinted(error);
    expect(printed).not.toContain(PASSWORD);
    // the first 16 characters encode the user name; from there on, the password
    expect(printed).not.toContain(BASIC_B64.slice(16, 28));
    expect(printed).not.toMatch(/jwt-\d/);
    expect(inspect(c, { showHidden: true, depth: null })).not.toContain(PASSWORD);
  });

  it("redacts a release answer that echoes the request, which is returned rather than thrown", async () => {
    const server = await serve(echoIn(200, (a) => `released? ${a}`));
    const { c } = client(server.url);
    const answer = await c.releaseAddress("ipaddresspool-1", "10.0.0.1");
    expect(answer.released).toBe(false);
    expect(answer.answer).toContain("Basic [REDACTED]");
    expect(answer.answer).not.toContain(BASIC_B64.slice(16, 28));
  });
});
