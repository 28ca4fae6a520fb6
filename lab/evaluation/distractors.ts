import type { SearchKey } from "@/lib/biometrics/search-key";

/**
 * Search keys of distractor pets for 1:N scale figures, where extracting real images for 100,000 pets
 * would take hours: each distractor image is a mix of keypoints (word, signature and angle kept together)
 * drawn at random from many real images' keys, so word frequencies, signature statistics and the
 * orientation distribution are those of real noses, but no distractor repeats a real image's layout.
 * Deterministic for a seed.
 */
export function* distractorKeys(pool: readonly SearchKey[], pets: number, imagesPerPet: number, seed: number): Generator<SearchKey[]> {
  if (pool.length === 0) throw new Error("distractors need real search keys to draw from");
  let state = seed >>> 0 || 1;
  const random = (n: number) => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) % n;
  };
  for (let p = 0; p < pets; p++) {
    const images: SearchKey[] = [];
    for (let i = 0; i < imagesPerPet; i++) {
      const count = pool[random(pool.length)].words.length;
      const words = new Uint16Array(count);
      const signatures = new Uint32Array(count * 2);
      const angles = new Uint8Array(count);
      for (let k = 0; k < count; k++) {
        const source = pool[random(pool.length)];
        const j = random(source.words.length);
        words[k] = source.words[j];
        signatures[k * 2] = source.signatures[j * 2];
        signatures[k * 2 + 1] = source.signatures[j * 2 + 1];
        angles[k] = source.angles[j];
      }
      images.push({ words, signatures, angles });
    }
    yield images;
  }
}
