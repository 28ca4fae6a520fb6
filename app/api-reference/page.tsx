import type { Metadata } from "next";
import { TableScroll } from "@/components/dashboard/ui";
import { buildOpenApiDocument } from "@/lib/api/openapi";

// The API reference, rendered on the server from the same OpenAPI document that /v2/openapi.json
// serves (lib/api/openapi.ts): no script, no CDN. /v2/docs redirects here.
export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "API reference · Rhinarium" };

type Schema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  format?: string;
  description?: string;
  $ref?: string;
};
type Parameter = { name: string; in: string; required: boolean; description?: string; schema: Schema };
type Operation = {
  operationId: string;
  summary: string;
  tags: string[];
  parameters?: Parameter[];
  requestBody?: { description?: string; content: Record<string, { schema: Schema; example?: unknown }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: Schema; example?: unknown }> }>;
};

/** One line for a schema: its type and the constraints a client must respect. */
function describeSchema(schema: Schema): string {
  if (schema.$ref) return schema.$ref.split("/").pop() ?? "";
  const parts: string[] = [];
  if (schema.enum) parts.push(schema.enum.map((v) => JSON.stringify(v)).join(" | "));
  else if (schema.const !== undefined) parts.push(JSON.stringify(schema.const));
  else if (schema.type === "array" && schema.items) parts.push(`array of ${schema.items.properties ? "objects" : describeSchema(schema.items)}`);
  else parts.push([schema.type ?? "any"].flat().join(" | "));
  if (schema.format) parts.push(schema.format);
  if (schema.minLength !== undefined || schema.maxLength !== undefined) parts.push(`${schema.minLength ?? 0}–${schema.maxLength ?? "∞"} characters`);
  if (schema.minimum !== undefined || schema.maximum !== undefined) parts.push(`${schema.minimum ?? "−∞"}–${schema.maximum ?? "∞"}`);
  return parts.join(", ");
}

/** The fields of an object schema, nested objects and arrays of objects flattened with dotted names. */
function fieldsOf(schema: Schema, prefix = ""): { name: string; required: boolean; schema: Schema }[] {
  const target = schema.type === "array" && schema.items?.properties ? schema.items : schema;
  return Object.entries(target.properties ?? {}).flatMap(([name, field]) => {
    const full = `${prefix}${name}${field.type === "array" && field.items?.properties ? "[]" : ""}`;
    const nested = field.properties || (field.type === "array" && field.items?.properties) ? fieldsOf(field, `${full}.`) : [];
    return [{ name: full, required: (target.required ?? []).includes(name), schema: field }, ...nested];
  });
}

function FieldTable({ label, rows }: { label: string; rows: { name: string; where?: string; required: boolean; schema: Schema; description?: string }[] }) {
  return (
    <TableScroll label={label}>
      <table className="mt-2 w-full text-left text-sm">
        <thead className="text-slate-600">
          <tr>
            <th className="py-1 pr-4 font-medium">Name</th>
            <th className="py-1 pr-4 font-medium">Type</th>
            <th className="py-1 font-medium">Notes</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={`${row.where}-${row.name}`} className="border-t border-slate-200 align-top">
              <td className="py-1 pr-4 font-mono break-all">
                {row.name}
                {row.required ? <span className="text-red-700"> *</span> : null}
              </td>
              <td className="py-1 pr-4 font-mono text-xs break-all">{describeSchema(row.schema)}</td>
              <td className="py-1 text-slate-700">{[row.where, row.description ?? row.schema.description].filter(Boolean).join(" · ")}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

function curlOf(method: string, path: string, op: Operation): string {
  const lines = [`curl -X ${method.toUpperCase()} "$RHINARIUM_URL${path.replace(/\{(\w+)\}/g, "$$$1")}${op.parameters?.some((p) => p.in === "query") ? `?${op.parameters.filter((p) => p.in === "query").map((p) => `${p.name}=$${p.name}`).join("&")}` : ""}"`, `  -H "x-service-api-key: $RHINARIUM_API_KEY"`];
  const body = op.requestBody?.content;
  if (body?.["multipart/form-data"]) lines.push(`  -F "file=@nose.jpg;type=image/jpeg"`);
  if (body?.["application/json"]) lines.push(`  -H "content-type: application/json"`, `  -d '${JSON.stringify(body["application/json"].example)}'`);
  return lines.join(" \\\n");
}

function OperationSection({ method, path, op }: { method: string; path: string; op: Operation }) {
  const success = Object.entries(op.responses).find(([status]) => status.startsWith("2"));
  const errors = Object.entries(op.responses).filter(([status]) => !status.startsWith("2"));
  const body = op.requestBody?.content;
  const bodySchema = body?.["application/json"]?.schema ?? body?.["multipart/form-data"]?.schema;
  const data = success?.[1].content?.["application/json"]?.schema.properties?.data;
  return (
    <section id={op.operationId} aria-labelledby={`${op.operationId}-title`} className="scroll-mt-4 rounded-lg border border-slate-200 bg-white p-4">
      <h3 id={`${op.operationId}-title`} className="flex flex-wrap items-baseline gap-2 font-mono text-sm">
        <span className="rounded bg-slate-800 px-2 py-0.5 font-semibold text-white">{method.toUpperCase()}</span>
        <span className="break-all">{path}</span>
      </h3>
      <p className="mt-2 text-slate-800">{op.summary}</p>
      {op.parameters?.length ? (
        <>
          <h4 className="mt-4 font-medium">Parameters</h4>
          <FieldTable label={`${op.operationId} parameters`} rows={op.parameters.map((p) => ({ name: p.name, where: p.in, required: p.required, schema: p.schema, description: p.description }))} />
        </>
      ) : null}
      {bodySchema ? (
        <>
          <h4 className="mt-4 font-medium">Body {body?.["multipart/form-data"] ? "(multipart/form-data)" : "(JSON)"}</h4>
          {op.requestBody?.description ? <p className="text-sm text-slate-600">{op.requestBody.description}</p> : null}
          <FieldTable label={`${op.operationId} body`} rows={fieldsOf(bodySchema)} />
        </>
      ) : null}
      {success ? (
        <>
          <h4 className="mt-4 font-medium">
            {success[0]} {success[1].description}
          </h4>
          {data ? <FieldTable label={`${op.operationId} answer`} rows={data.properties || data.items ? fieldsOf(data).map((f) => ({ ...f, name: `data${data.type === "array" ? "[]" : ""}.${f.name}` })) : [{ name: "data", required: true, schema: data }]} /> : null}
        </>
      ) : null}
      <h4 className="mt-4 font-medium">Errors</h4>
      <ul className="mt-1 text-sm text-slate-700">
        {errors.map(([status, response]) => (
          <li key={status}>
            <span className="font-mono">{status}</span> {response.description}
          </li>
        ))}
      </ul>
      <h4 className="mt-4 font-medium">Example</h4>
      <pre tabIndex={0} role="region" aria-label={`${op.operationId} example`} className="mt-1 overflow-x-auto rounded bg-slate-900 p-3 text-xs text-slate-100">{curlOf(method, path, op)}</pre>
      {success ? (
        <pre tabIndex={0} role="region" aria-label={`${op.operationId} example answer`} className="mt-2 overflow-x-auto rounded bg-slate-100 p-3 text-xs text-slate-900">
          {`HTTP ${success[0]}`}
          {success[1].content ? `\n${JSON.stringify(success[1].content["application/json"].example, null, 2)}` : ""}
        </pre>
      ) : null}
    </section>
  );
}

export default function ApiReferencePage() {
  const doc = buildOpenApiDocument() as unknown as {
    info: { title: string; description: string };
    paths: Record<string, Record<string, Operation>>;
    "x-error-codes": { code: string; name: string; status: number; description: string; reachable: boolean }[];
  };
  const operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })));
  const tags = [...new Set(operations.map((o) => o.op.tags[0]))];
  return (
    <main className="mx-auto max-w-4xl p-4 sm:p-8">
      <h1 className="text-2xl font-semibold">{doc.info.title}</h1>
      <p className="mt-2 text-slate-700">{doc.info.description}</p>
      <p className="mt-2 text-sm text-slate-700">
        Every call sends its account&apos;s key in the <code className="font-mono">x-service-api-key</code> header. Answers are{" "}
        <code className="font-mono">{'{"success":true,"data":…}'}</code> or <code className="font-mono">{'{"errors":[{"code":…}]}'}</code>. The machine-readable document:{" "}
        <a className="text-teal-800 underline" href="/v2/openapi.json">
          /v2/openapi.json
        </a>
        .
      </p>
      <nav aria-label="Operations" className="mt-6">
        {tags.map((tag) => (
          <div key={tag} className="mt-2">
            <h2 className="font-medium">{tag}</h2>
            <ul className="ml-4 list-disc text-sm">
              {operations
                .filter((o) => o.op.tags[0] === tag)
                .map((o) => (
                  <li key={o.op.operationId}>
                    <a className="text-teal-800 underline" href={`#${o.op.operationId}`}>
                      {o.op.summary}
                    </a>
                  </li>
                ))}
            </ul>
          </div>
        ))}
      </nav>
      {tags.map((tag) => (
        <div key={tag} className="mt-8">
          <h2 className="text-xl font-semibold">{tag}</h2>
          <div className="mt-3 space-y-4">
            {operations
              .filter((o) => o.op.tags[0] === tag)
              .map((o) => (
                <OperationSection key={o.op.operationId} {...o} />
              ))}
          </div>
        </div>
      ))}
      <h2 id="errors" className="mt-8 text-xl font-semibold">
        Error codes
      </h2>
      <FieldTable
        label="Error codes"
        rows={doc["x-error-codes"].map((e) => ({
          name: e.code,
          required: false,
          schema: { type: String(e.status) },
          description: `${e.name}: ${e.description}${e.reachable ? "" : " (never answered by this service)"}`,
        }))}
      />
    </main>
  );
}
