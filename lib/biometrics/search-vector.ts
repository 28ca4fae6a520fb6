import { CODEBOOK_BASE64, CODEBOOK_SIZE } from "./codebook-data";
import { DESCRIPTOR_DIMS, DESCRIPTOR_QUANT, SEARCH_VECTOR_SCALE } from "./parameters";
import { dotProductMatrix } from "./simd/dot-kernel";

/**
 * The compact whole-image descriptor used to shortlist 1:N candidates: VLAD (residuals of local
 * descriptors to their nearest codebook centroid, per-centroid normalised, signed square root, unit L2),
 * stored as int8. A pet's vector is the normalised sum of its images' vectors.
 */
export const SEARCH_VECTOR_DIMS = CODEBOOK_SIZE * DESCRIPTOR_DIMS;

const quantisedCentroids: Int8Array = (() => {
  const raw = new Int8Array(Buffer.from(CODEBOOK_BASE64, "base64").buffer.slice(0));
  if (raw.length !== SEARCH_VECTOR_DIMS) throw new Error("codebook size does not match its declared shape");
  return raw;
})();
const centroids = Float32Array.from(quantisedCentroids, (v) => v / DESCRIPTOR_QUANT);

const centroidNormsSq: Float32Array = Float32Array.from({ length: CODEBOOK_SIZE }, (_, k) => {
  let sum = 0;
  for (let d = 0; d < DESCRIPTOR_DIMS; d++) sum += centroids[k * DESCRIPTOR_DIMS + d] ** 2;
  return sum;
});

/** Index of the nearest centroid of every descriptor, from one SIMD pass over all dot products. */
function nearestCentroids(descriptors: Int8Array): Int32Array {
  const count = descriptors.length / DESCRIPTOR_DIMS;
  const dots = dotProductMatrix(descriptors, quantisedCentroids, DESCRIPTOR_DIMS);
  const nearest = new Int32Array(count);
  const scale = 2 / (DESCRIPTOR_QUANT * DESCRIPTOR_QUANT);
  for (let i = 0; i < count; i++) {
    let bestDistance = Infinity;
    for (let k = 0; k < CODEBOOK_SIZE; k++) {
      // |x - c|^2 without the |x|^2 term, which is the same for every centroid.
      const distance = centroidNormsSq[k] - dots[i * CODEBOOK_SIZE + k] * scale;
      if (distance < bestDistance) {
        bestDistance = distance;
        nearest[i] = k;
      }
    }
  }
  return nearest;
}

function normalise(values: Float32Array, start = 0, end = values.length): void {
  let sum = 0;
  for (let i = start; i < end; i++) sum += values[i] * values[i];
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = start; i < end; i++) values[i] /= norm;
}

export function quantiseSearchVector(values: Float32Array): Int8Array {
  return Int8Array.from(values, (v) => Math.max(-127, Math.min(127, Math.round(v * SEARCH_VECTOR_SCALE))));
}

/** VLAD of one image's int8 descriptors (count x DESCRIPTOR_DIMS). */
export function computeSearchVector(descriptors: Int8Array): Int8Array {
  const vlad = new Float32Array(SEARCH_VECTOR_DIMS);
  const nearest = nearestCentroids(descriptors);
  for (let offset = 0, i = 0; offset < descriptors.length; offset += DESCRIPTOR_DIMS, i++) {
    const base = nearest[i] * DESCRIPTOR_DIMS;
    for (let d = 0; d < DESCRIPTOR_DIMS; d++) vlad[base + d] += descriptors[offset + d] / DESCRIPTOR_QUANT - centroids[base + d];
  }
  // Intra-normalisation stops the bead-texture words that every nose shares from dominating the vector.
  for (let k = 0; k < CODEBOOK_SIZE; k++) normalise(vlad, k * DESCRIPTOR_DIMS, (k + 1) * DESCRIPTOR_DIMS);
  for (let i = 0; i < vlad.length; i++) vlad[i] = Math.sign(vlad[i]) * Math.sqrt(Math.abs(vlad[i]));
  normalise(vlad);
  return quantiseSearchVector(vlad);
}

/** One vector for a set of images (a pet's enrolment or a probe session). */
export function combineSearchVectors(vectors: readonly Int8Array[]): Int8Array {
  const sum = new Float32Array(SEARCH_VECTOR_DIMS);
  for (const vector of vectors) for (let i = 0; i < sum.length; i++) sum[i] += vector[i];
  normalise(sum);
  return quantiseSearchVector(sum);
}
