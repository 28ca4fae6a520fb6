import { createHash } from "node:crypto";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { renderCapture } from "@/lab/synth/capture";
import { captureSeed, subjectSeed } from "@/lab/synth/dataset";
import { createNoseSubject } from "@/lab/synth/nose-surface";
import { extractNoseImage } from "./extract";
import { MATCHED_SETS } from "./parameters";
import { serializeSearchKey } from "./search-key";
import { descriptorSet, serializeTemplate, type NoseTemplate } from "./template";

const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");

/** What the matcher and the gallery read of the features: keypoints, the matched frames' descriptors and the search key. */
function matchedHash(t: NoseTemplate): string {
  const hash = createHash("sha256").update(new Uint8Array(t.keypoints.buffer, t.keypoints.byteOffset, t.keypoints.byteLength));
  for (let set = 0; set < MATCHED_SETS; set++) {
    const frame = descriptorSet(t, set);
    hash.update(new Uint8Array(frame.buffer, frame.byteOffset, frame.byteLength));
  }
  return hash.update(serializeSearchKey(t.searchKey)).digest("hex");
}

/**
 * Extraction output pinned bit for bit: the committed vocabulary and the score calibration were fitted
 * to these exact features, so a change meant only to make extraction faster must leave these hashes
 * as they are. The templates were recorded with template format 11 (format 9's descriptor network, frames and
 * vocabulary; format 10's contrast normalisation and quality gate; each scale level capped at MAX_LEVEL_SHARE of the
 * keypoints, the burstiness refill on, and the generic bank rebuilt with both). `matched` covers what the matcher and the gallery read (keypoints, the three matched frames, the search
 * key); `template` is a 1:N probe's (with the outer frames); every other image is extracted without them and must give
 * the same `matched`, `genericness` and quality. If the inputs' hashes differ, the synthesizer or sharp changed, not the
 * engine: re-record all hashes with the engine as it was before your change.
 */
const PINNED = [
  {
    name: "normal capture",
    input: "703a80d1c80105f02d847337977fbfa74e5e44d1728dc29813308ccb522efbf7",
    template: "a0a096a2daeb8ba4ac336369720a478b3c473c1c7cd391c8baf42b1c6d502326",
    genericness: "c91d781b83a752c32cee2d60e8cb6790e390c6822ca2be621138db6eeae663de",
    matched: "90f8afc2a56a404e1669abef0dafb62f9ba93821cfa0197a1a55d495e36c617f",
    quality: "db7f078a080d293c91275cf893efde4c22596367255fc5a1af2a22eb2f279c5e",
  },
  {
    name: "normal capture, 640 px",
    input: "86ad99c9c847d61de369d7599a913fe94c8858a68ef2f3a1b01a69394c2479fd",
    template: "ea74796e52f96458282391ff0035aab6153d015390f7dfc988757c6b5d8297a9",
    genericness: "579b03debb9e807186ef2873716785842e77a5609c09b161cbcf79ebb2383d87",
    matched: "fb8c01e62881b0ac82763ed0cf91cc7c846df279d7857ad6f925f6b507576633",
    quality: "fe507efda680b30fd16cc2e1c59dcb503825787ceaf36c71e7ee71f0d91c3cd2",
  },
  {
    name: "hard capture 1",
    input: "b8923a489722ce8cb5f21616efe61b2eb79e722778763f32f1b8e5d6b9ce857d",
    template: "a7bfba2b265360543feedfdd542022b7702e10833b2d048db85329390a253c5f",
    genericness: "01102e257baa25ecadf596a6eeed2a4fae73cd50f8be315620b259fc81dd0695",
    matched: "a05badbee7441649c91c28b35b9900b1df0b826ce796391e3e397a680bc6c42e",
    quality: "eaac92ccc87346db146f09ce59b861794792069cbf9181e86f4daf9c1d37a227",
  },
  {
    name: "hard capture 2",
    input: "2c5c8101fe49e0106c3b51647539743d61b1ea613f94d2acad2e061f8a79fa3b",
    template: "2b673bef8f10ee677e374d84366c68f9c6200f12c7b232fceb8599bcdd49c0e9",
    genericness: "f65521c47e3d79e93776f77f7ed5a60fecf3bf5e29e93128b749f5e218d08b85",
    matched: "d9b542551e056c14fca585557204c9bdcebe4b93cccd95773eca781d261d44b1",
    quality: "6424b65bfbdce176d7a5170ab90c6f958ba36c1144a064d7d1399ac4fbad291b",
  },
];

async function pinnedInputs(): Promise<Buffer[]> {
  const seed = subjectSeed(2718, 0);
  const subject = createNoseSubject(seed);
  const normal = (await renderCapture(subject, captureSeed(seed, 0), { difficulty: "normal" })).jpeg;
  const large = await sharp(normal).resize(640, 640, { fit: "inside" }).jpeg({ quality: 90 }).toBuffer();
  const hard = await Promise.all([1, 2].map(async (c) => (await renderCapture(subject, captureSeed(seed, c), { difficulty: "hard" })).jpeg));
  return [normal, large, ...hard];
}

describe("extraction output", () => {
  it("is bit-identical to the recorded templates and quality reports", async () => {
    const inputs = await pinnedInputs();
    const observed = [];
    for (const [i, jpeg] of inputs.entries()) {
      const result = await extractNoseImage(jpeg, { outerFrames: true });
      const withoutOuter = await extractNoseImage(jpeg);
      if (!result.ok || !result.template || !withoutOuter.ok || !withoutOuter.template) throw new Error(`${PINNED[i].name} was not extracted`);
      const { matched, genericness, quality } = PINNED[i];
      expect({
        matched: matchedHash(withoutOuter.template),
        genericness: sha256(withoutOuter.template.genericness),
        quality: sha256(JSON.stringify(withoutOuter.quality)),
      }).toEqual({ matched, genericness, quality });
      observed.push({
        name: PINNED[i].name,
        input: sha256(jpeg),
        template: sha256(serializeTemplate(result.template)),
        matched: matchedHash(result.template),
        genericness: sha256(result.template.genericness),
        quality: sha256(JSON.stringify(result.quality)),
      });
    }
    expect(observed.map(({ name, input }) => ({ name, input }))).toEqual(PINNED.map(({ name, input }) => ({ name, input })));
    expect(observed).toEqual(PINNED);
  }, 30_000);
});
