// `npm run openapi`: writes docs/openapi.json from the endpoint list and its zod schemas, and the SDK's types
// (packages/sdk/src/schema.ts) from that document.
import fs from "node:fs";
import { buildOpenApiDocument } from "@/lib/api/openapi";
import { schemaSource } from "@/packages/sdk/generate-schema";
import { parseScriptArgs } from "./script-cli";

parseScriptArgs({ name: "openapi", description: "Writes docs/openapi.json from the endpoint list and its zod schemas, and the SDK's types from it.", options: {} });

const document = buildOpenApiDocument();
fs.mkdirSync("docs", { recursive: true });
fs.writeFileSync("docs/openapi.json", `${JSON.stringify(document, null, 2)}\n`);
fs.writeFileSync("packages/sdk/src/schema.ts", await schemaSource(JSON.parse(JSON.stringify(document))));
console.log("wrote docs/openapi.json and packages/sdk/src/schema.ts");
