// Burstiness: how much a keypoint's descriptor repeats elsewhere in its own image. A periodic scene (a clinic's
// checked table, a plaid blanket) offers the same descriptor at every period, so a match on it says nothing about
// which nose is in front of it; two captures of different animals on one such backdrop otherwise align the pattern
// and score as a match (docs/decisions/0015-burstiness-weighted-inliers.md). After Jégou, Douze and Schmid, "On the
// burstiness of visual elements" (CVPR 2009).
import { BURSTINESS_EXCLUSION_SIGMAS, BURSTINESS_FULL, BURSTINESS_NONE, DESCRIPTOR_DIMS, DESCRIPTOR_QUANT } from "./parameters";
import { dotProductMatrix } from "./simd/dot-kernel";

const COSINE_SCALE = DESCRIPTOR_QUANT * DESCRIPTOR_QUANT;

/**
 * Each keypoint's self-similarity: the largest cosine between its upright descriptor (`upright`, count ×
 * DESCRIPTOR_DIMS int8) and that of another keypoint of the same image at least BURSTINESS_EXCLUSION_SIGMAS × the
 * larger σ away (nearer ones overlap it: the same blob at a neighbouring scale, not a repeat). `keypoints` holds x,
 * y, σ every `stride` floats. −1 when there is no such keypoint.
 */
export function selfSimilarity(upright: Int8Array, keypoints: Float32Array, stride: number): Float32Array {
  const count = upright.length / DESCRIPTOR_DIMS;
  const similarity = new Float32Array(count).fill(-1);
  if (count < 2) return similarity;
  const dots = dotProductMatrix(upright, upright, DESCRIPTOR_DIMS);
  for (let i = 0; i < count; i++) {
    const xi = keypoints[i * stride];
    const yi = keypoints[i * stride + 1];
    const si = keypoints[i * stride + 2];
    let best = -COSINE_SCALE;
    for (let j = 0; j < count; j++) {
      const dot = dots[i * count + j];
      if (j === i || dot <= best) continue;
      const dx = keypoints[j * stride] - xi;
      const dy = keypoints[j * stride + 1] - yi;
      const reach = BURSTINESS_EXCLUSION_SIGMAS * Math.max(si, keypoints[j * stride + 2]);
      if (dx * dx + dy * dy < reach * reach) continue;
      best = dot;
    }
    similarity[i] = best / COSINE_SCALE;
  }
  return similarity;
}

/**
 * How much evidence a keypoint of self-similarity s carries: 1 up to BURSTINESS_FULL, falling linearly to 0 at
 * BURSTINESS_NONE (a descriptor repeated that closely is the scene's pattern, not the nose's).
 */
export function burstinessFactor(similarity: number): number {
  if (similarity <= BURSTINESS_FULL) return 1;
  if (similarity >= BURSTINESS_NONE) return 0;
  return (BURSTINESS_NONE - similarity) / (BURSTINESS_NONE - BURSTINESS_FULL);
}
