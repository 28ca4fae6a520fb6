// The reference for API throughput: a bare Node http server on the same machine answering the same
// JSON the real server answers (captured from it), with no routing, auth, validation or database.
import http from "node:http";

const getBody = process.env.CEILING_GET_BODY ?? "{}";
const postBody = process.env.CEILING_POST_BODY ?? "{}";
const patchBody = process.env.CEILING_PATCH_BODY ?? "{}";
const server = http.createServer((req, res) => {
  if (req.method === "POST" || req.method === "PATCH") {
    req.resume();
    req.on("end", () => {
      res.writeHead(req.method === "POST" ? 201 : 200, { "content-type": "application/json" });
      res.end(req.method === "POST" ? postBody : patchBody);
    });
    return;
  }
  res.writeHead(200, { "content-type": "application/json" });
  res.end(getBody);
});
server.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("ready"));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
