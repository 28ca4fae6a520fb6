// `npm run openapi`: writes docs/openapi.json from the endpoint list and its zod schemas.
import fs from "node:fs";
import { buildOpenApiDocument } from "@/lib/api/openapi";
import { parseScriptArgs } from "./script-cli";

parseScriptArgs({ name: "openapi", description: "Writes docs/openapi.json from the endpoint list and its zod schemas.", options: {} });

fs.mkdirSync("docs", { recursive: true });
fs.writeFileSync("docs/openapi.json", `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
console.log("wrote docs/openapi.json");
