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

/** What the matcher reads of the features: keypoints and the matched frames' descriptors. */
function featuresHash(t: NoseTemplate): string {
  const hash = createHash("sha256").update(new Uint8Array(t.keypoints.buffer, t.keypoints.byteOffset, t.keypoints.byteLength));
  for (let set = 0; set < MATCHED_SETS; set++) {
    const frame = descriptorSet(t, set);
    hash.update(new Uint8Array(frame.buffer, frame.byteOffset, frame.byteLength));
  }
  return hash.digest("hex");
}

/**
 * Extraction output pinned bit for bit: the committed vocabulary and the score calibration were fitted
 * to these exact features, so a change meant only to make extraction faster must leave these hashes
 * as they are. The features were recorded with template format 12 (FEATURES_VERSION: format 12's descriptor network,
 * fine-tuned for soft captures, with the generic bank made again for it; format 9's frames; format 10's contrast
 * normalisation and quality gate; format 11's cap of each scale level at MAX_LEVEL_SHARE of the keypoints and the
 * burstiness refill), the search key and the whole template with format 13's vocabulary. `features` covers what the
 * matcher reads (keypoints, the three matched frames), `searchKey` what the gallery reads: a new vocabulary changes only
 * `searchKey` and `template`. `template` is a 1:N probe's (with the outer frames); every other image is extracted
 * without them and must give the same `features`, `genericness`, `searchKey` and quality. If the inputs' hashes differ,
 * the synthesizer or sharp changed, not the engine: re-record all hashes with the engine as it was before your change.
 */
const PINNED = [
  {
    name: "normal capture",
    input: "703a80d1c80105f02d847337977fbfa74e5e44d1728dc29813308ccb522efbf7",
    template: "44965ae5e426229750ef4d417095561f7bee09020b6b088a58b744e2c6f5f0b7",
    genericness: "394e85cf6ddade60056500cf862538207d6c9a7fb2fa84946ad8f8e2b3f9e47b",
    features: "ac699d5d6fe60e010b60fb9d031a88f9f234d848a66f5092bacf8579ec2e04e1",
    searchKey: "5a95e02ee90732170776b808dd6fd26aa0197532b34ec8e9d5fbd48989c2a8b4",
    quality: "7ce26c8009a173dadd60165269b080f9f290326cde6c0d6aa21e4bd8f9861cbf",
  },
  {
    name: "normal capture, 640 px",
    input: "86ad99c9c847d61de369d7599a913fe94c8858a68ef2f3a1b01a69394c2479fd",
    template: "62883ea0f5560fbfdfbb2b2f8fc7a0a43b7172fbb2b4772f1d00d648d903dea1",
    genericness: "be69446bf8790a1c696f33218e6d4cc84fa621ccb57fe5f6a6e9f63708060997",
    features: "235ce943a118dd003913f382ce81d6e0aab0147b0f144b0cc73815df8ed0366d",
    searchKey: "146f82009664e1981376b5e56efa1c05bcf3e40a1e74002344e74294a76c34b8",
    quality: "cc33059fc014af1a11bdfa29bb7a7faa4f302c169983afc41de401d7697f7df4",
  },
  {
    name: "hard capture 1",
    input: "b8923a489722ce8cb5f21616efe61b2eb79e722778763f32f1b8e5d6b9ce857d",
    template: "3631a6597b40aaaea66af2bf81c85a0438d1d17d503d0cf1d8c569f7c8450c16",
    genericness: "14c0ee179806bbfa27d010f3103e470fa6067d4c3bcf58577234821e85333343",
    features: "f84609c8ba232155798a90dcf47b2a07ca88c83d1cd62641b97af4387e6ac027",
    searchKey: "d08d3e88dd974d83cd1685cf528e9ee7b76d1872f2d8f2f599c9d3c3c5beebaf",
    quality: "eaac92ccc87346db146f09ce59b861794792069cbf9181e86f4daf9c1d37a227",
  },
  {
    name: "hard capture 2",
    input: "2c5c8101fe49e0106c3b51647539743d61b1ea613f94d2acad2e061f8a79fa3b",
    template: "d1ec765e3dc24b5b27f7c1b75dfff2ca56393659b715faefd4441b4dcbd5d007",
    genericness: "a7f1d0277bb27b17a4c6127206e26dbce90430fd6c26d0b4cb682cc1b111b691",
    features: "8068668fcad3da645aa8c09fceb20529dcc3d92ef60dfe2f2c080ed4cf0b3cd2",
    searchKey: "a7a31732d46e90eb1790e383e5c431591d51713ede260c68aa93c93cb9d2052f",
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
      const { features, genericness, searchKey, quality } = PINNED[i];
      expect({
        features: featuresHash(withoutOuter.template),
        genericness: sha256(withoutOuter.template.genericness),
        searchKey: sha256(serializeSearchKey(withoutOuter.template.searchKey)),
        quality: sha256(JSON.stringify(withoutOuter.quality)),
      }).toEqual({ features, genericness, searchKey, quality });
      observed.push({
        name: PINNED[i].name,
        input: sha256(jpeg),
        template: sha256(serializeTemplate(result.template)),
        features: featuresHash(result.template),
        genericness: sha256(result.template.genericness),
        searchKey: sha256(serializeSearchKey(result.template.searchKey)),
        quality: sha256(JSON.stringify(result.quality)),
      });
    }
    if (process.env.PRINT_PINNED) console.log(JSON.stringify(observed, null, 2));
    expect(observed.map(({ name, input }) => ({ name, input }))).toEqual(PINNED.map(({ name, input }) => ({ name, input })));
    expect(observed).toEqual(PINNED);
  }, 30_000);
});
