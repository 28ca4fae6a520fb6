import http from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { jsonAnswer, type ApiAnswer, type ApiRequest } from "./exchange";
import { nulTargetAnswer } from "./malformed-path";
import { acceptsGzip, apiFront, claimsApiRequest, MIN_COMPRESSED_BYTES, shouldCompress } from "./node-front";

// Which requests the Node front answers itself and which it leaves to Next (lib/api/node-front.ts),
// and how it hands a request to a wrapper and writes its answer (here over HTTP with a stand-in
// wrapper); the real wrapper's answers are tested over HTTP against the real server (contract,
// hostile-input and security suites), which the front serves.

describe("the API's Node front", () => {
  it("answers /v2 operations, with any query, method-independent", () => {
    for (const target of ["/v2/pets", "/v2/pets/abc", "/v2/pets/abc:verify", "/v2/fingerprints:upload?sessionId=x", "/v2/nothing", "/v2/pets?x=/..//", "/v2/%E0%A4%A", "/v2/a%2Fb"]) {
      expect(claimsApiRequest(target), target).toBe(true);
    }
  });

  it("leaves to Next what Next answers: other paths, the OpenAPI page, and paths it normalises with 308", () => {
    for (const target of [
      "/",
      "/v2",
      "/v2x/pets",
      "/dashboard",
      "/v2/openapi.json",
      "/v2/openapi.json?x=1",
      "/v2/pets/",
      "/v2//pets",
      "/v2/./pets",
      "/v2/pets/..",
      "/v2/%2e%2E/pets",
      "/v2/pets/%2e",
      "http://host/v2/pets",
    ]) {
      expect(claimsApiRequest(target), target).toBe(false);
    }
  });

  it("refuses a /v2 target with an encoded NUL that it leaves to Next in the API's shape, and leaves others to the door", () => {
    for (const target of ["/v2/verification-jobs/?sessionId=%00", "/v2/pets/%00/", "/v2//x%00"]) {
      const answer = nulTargetAnswer(target);
      expect(answer?.status, target).toBe(400);
      expect(JSON.parse(String(answer?.body)).errors[0]).toEqual({ code: "SERVICEB2B10001", details: { target: ["must not hold a NUL character"] } });
    }
    for (const target of ["/v2/pets/", "/dashboard?q=%00", "/v2/pets?q=%2500"]) expect(nulTargetAnswer(target), target).toBeNull();
  });

  it("gzips JSON answers of some size for clients that accept gzip, and nothing else", () => {
    for (const header of ["gzip", "gzip, deflate, br", "br;q=1, gzip;q=0.5", "*", "deflate, *;q=0.1"]) expect(acceptsGzip(header), header).toBe(true);
    for (const header of [undefined, "", "identity", "br, deflate", "gzip;q=0", "gzip;q=0.0, br", "*;q=0", "br, *;q=0.5, gzip;q=0"]) {
      expect(acceptsGzip(header), String(header)).toBe(false);
    }
    const json = { "content-type": "application/json; charset=utf-8" };
    expect(shouldCompress(json, MIN_COMPRESSED_BYTES)).toBe(true);
    expect(shouldCompress(json, MIN_COMPRESSED_BYTES - 1)).toBe(false);
    expect(shouldCompress({ "content-type": "image/jpeg" }, 100_000)).toBe(false);
    expect(shouldCompress({ "content-type": "application/json", "content-encoding": "br" }, 100_000)).toBe(false);
  });
});

describe("the Node front over a wrapper", () => {
  let server: http.Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  async function frontFor(handle: (request: ApiRequest) => Promise<ApiAnswer>): Promise<number> {
    server = http.createServer(apiFront(handle));
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    return (server.address() as AddressInfo).port;
  }

  interface Received {
    status: number;
    headers: http.IncomingHttpHeaders;
    body: Buffer;
  }

  function receive(res: http.IncomingMessage): Promise<Received> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
  }

  function call(port: number, options: http.RequestOptions, body?: Buffer): Promise<Received> {
    return new Promise((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port, agent: false, ...options }, (res) => receive(res).then(resolve, reject));
      req.on("error", reject);
      req.end(body);
    });
  }

  it("sends /v2/docs to the API reference page with a 308, without the wrapper", async () => {
    const port = await frontFor(async () => {
      throw new Error("the wrapper must not see /v2/docs");
    });
    const res = await call(port, { path: "/v2/docs" });
    expect(res.status).toBe(308);
    expect(res.headers.location).toBe("/api-reference");
  });

  it("hands the wrapper the method, target and headers, and writes its answer with the security headers", async () => {
    const seen: { method: string; target: string; key: unknown; body: number }[] = [];
    const port = await frontFor(async (request) => {
      const body = await request.readBody(100);
      seen.push({ method: request.method, target: request.target, key: request.headers["x-service-api-key"], body: body!.byteLength });
      return jsonAnswer(200, { success: true, data: { id: "p1" } });
    });
    const res = await call(port, { path: "/v2/pets/p1?x=1", headers: { "x-service-api-key": "k" } });
    expect(seen).toEqual([{ method: "GET", target: "/v2/pets/p1?x=1", key: "k", body: 0 }]);
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('{"success":true,"data":{"id":"p1"}}');
    expect(res.headers["content-type"]).toBe("application/json");
    expect(res.headers["content-length"]).toBe(String(res.body.byteLength));
    expect(res.headers["x-frame-options"]).toBe("DENY");
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["content-security-policy"]).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(res.headers["strict-transport-security"]).toBe("max-age=31536000; includeSubDomains");
    expect(res.headers["cache-control"]).toBe("no-store");
    expect(res.headers["referrer-policy"]).toBeUndefined();
    expect(res.headers["content-encoding"]).toBeUndefined();
  });

  it("gzips a JSON answer of 1 KiB or more for a client that accepts gzip, and says it varies", async () => {
    const data = "x".repeat(MIN_COMPRESSED_BYTES);
    const port = await frontFor(async () => jsonAnswer(200, { data }));
    const zipped = await call(port, { path: "/v2/pets", headers: { "accept-encoding": "gzip" } });
    expect(zipped.headers["content-encoding"]).toBe("gzip");
    expect(zipped.headers.vary).toBe("accept-encoding");
    expect(Number(zipped.headers["content-length"])).toBe(zipped.body.byteLength);
    expect(JSON.parse(gunzipSync(zipped.body).toString())).toEqual({ data });
    const plain = await call(port, { path: "/v2/pets" });
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.headers.vary).toBe("accept-encoding");
    expect(JSON.parse(plain.body.toString())).toEqual({ data });
  });

  it("reads a chunked body up to the wrapper's limit", async () => {
    const bodies: (string | null)[] = [];
    const port = await frontFor(async (request) => {
      const body = await request.readBody(1000);
      bodies.push(body && Buffer.from(body).toString());
      return jsonAnswer(201, {});
    });
    const res = await call(port, { method: "POST", path: "/v2/pets", headers: { "transfer-encoding": "chunked" } }, Buffer.from("a".repeat(1000)));
    expect(res.status).toBe(201);
    expect(bodies).toEqual(["a".repeat(1000)]);
  });

  it("past the limit, answers at once and closes a connection: close only once the rest of the body has arrived", async () => {
    const bodies: (Uint8Array | null)[] = [];
    const port = await frontFor(async (request) => {
      bodies.push(await request.readBody(1000));
      return jsonAnswer(400, { errors: [] });
    });
    const events: string[] = [];
    const res = await new Promise<Received>((resolve, reject) => {
      // agent: false sends `connection: close`: the server closes the socket once the answer has ended.
      const req = http.request({ host: "127.0.0.1", port, agent: false, method: "POST", path: "/v2/pets", headers: { "transfer-encoding": "chunked" } }, (res) => {
        events.push("answer started");
        // The rest of the body goes only now that the answer has begun: closing before it arrived would cut the upload.
        setTimeout(() => req.end(Buffer.alloc(200_000), () => events.push("body sent")), 50);
        res.socket.on("close", () => {
          events.push("socket closed");
          receive(res).then(resolve, reject);
        });
      });
      req.on("error", reject);
      req.write(Buffer.alloc(5000));
    });
    expect(bodies).toEqual([null]);
    expect(res.status).toBe(400);
    expect(events).toEqual(["answer started", "body sent", "socket closed"]);
  });

  it("tells the wrapper when the client goes away before the declared length", async () => {
    let failure: unknown;
    const read = new Promise<void>((resolve) => {
      void frontFor(async (request) => {
        failure = await request.readBody(1000).catch((error: unknown) => error);
        resolve();
        return jsonAnswer(400, {});
      }).then((port) => {
        const req = http.request({ host: "127.0.0.1", port, agent: false, method: "POST", path: "/v2/pets", headers: { "content-length": "500" } });
        req.on("error", () => undefined);
        req.write(Buffer.alloc(10), () => setTimeout(() => req.destroy(), 20));
      });
    });
    await read;
    expect(failure).toBeInstanceOf(Error);
  });

  it("answers a path that is not valid percent-encoding itself, without the wrapper", async () => {
    let calls = 0;
    const port = await frontFor(async () => {
      calls++;
      return jsonAnswer(200, {});
    });
    const res = await call(port, { path: "/v2/pets/%E0%A4%A" });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body.toString())).toEqual({ errors: [{ code: "SERVICEB2B10001", details: { path: ["must be valid percent-encoded UTF-8"] } }] });
    expect(calls).toBe(0);
  });

  it("answers a failure of its own as a 500 in the API's shape and closes the connection", async () => {
    // A header Node refuses to write.
    const port = await frontFor(async () => ({ status: 200, headers: { "x-bad": "a\nb" }, body: "{}" }));
    const res = await call(port, { path: "/v2/pets" });
    expect(res.status).toBe(500);
    expect(res.headers.connection).toBe("close");
    expect(JSON.parse(res.body.toString())).toEqual({ errors: [{ code: "SERVICEB2B10500" }] });
  });
});
