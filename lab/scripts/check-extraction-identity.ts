/**
 * npm run check:extraction-identity -- --images DIR [--record FILE | --compare FILE]
 * Extracts every JPEG under DIR (also a 640 px re-encode of each, as bench:engine times) and writes one
 * line per image: the sha256 of the serialized template and the exact JSON of the quality report (or the
 * rejection). With --record the lines go to FILE; with --compare they are checked against FILE and any
 * difference fails. A speed change to extraction must leave every line identical: the vocabulary and
 * the score calibration were fitted to these exact features.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { parseScriptArgs } from "@/scripts/script-cli";
import sharp from "sharp";
import { extractNoseImage } from "@/lib/biometrics/extract";
import { serializeTemplate } from "@/lib/biometrics/template";

const { values } = parseScriptArgs({
  name: "check:extraction-identity",
  description: "Extracts every JPEG under --images and records (--record) or compares (--compare) each template's sha256 and quality report.",
  options: { images: { type: "string" }, record: { type: "string" }, compare: { type: "string" } } });
if (!values.images || Boolean(values.record) === Boolean(values.compare)) {
  console.error("usage: npm run check:extraction-identity -- --images DIR (--record FILE | --compare FILE)");
  process.exit(2);
}

function jpegsUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return jpegsUnder(full);
      return /\.jpe?g$/i.test(entry.name) ? [full] : [];
    });
}

async function fingerprint(jpeg: Uint8Array): Promise<string> {
  const result = await extractNoseImage(jpeg);
  if (!result.ok) return `rejected ${JSON.stringify(result.rejection)}`;
  const template = result.template ? createHash("sha256").update(serializeTemplate(result.template)).digest("hex") : "no-template";
  return `${template} ${JSON.stringify(result.quality)}`;
}

async function main(): Promise<void> {
  const root = values.images!;
  const lines: string[] = [];
  for (const file of jpegsUnder(root)) {
    const name = path.relative(root, file);
    const jpeg = fs.readFileSync(file);
    lines.push(`${name} ${await fingerprint(jpeg)}`);
    const large = await sharp(jpeg).resize(640, 640, { fit: "inside" }).jpeg({ quality: 90 }).toBuffer();
    lines.push(`${name}@640 ${await fingerprint(large)}`);
  }
  if (values.record) {
    fs.writeFileSync(values.record, `${lines.join("\n")}\n`);
    console.log(`recorded ${lines.length} extractions to ${values.record}`);
    return;
  }
  const expected = fs.readFileSync(values.compare!, "utf8").trimEnd().split("\n");
  const differing = lines.filter((line, i) => line !== expected[i]);
  if (expected.length !== lines.length) console.error(`expected ${expected.length} extractions, got ${lines.length}`);
  for (const line of differing.slice(0, 10)) console.error(`differs: ${line.slice(0, 160)}`);
  if (differing.length > 0 || expected.length !== lines.length) {
    console.error(`${differing.length} of ${lines.length} extractions differ`);
    process.exit(1);
  }
  console.log(`all ${lines.length} extractions identical`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
