import { SEARCH_VECTOR_DIMS } from "./search-vector";
import { dotProducts } from "./simd/dot-kernel";

/**
 * An in-memory index of pets' search vectors for 1:N shortlisting: one contiguous int8 matrix scanned
 * exactly by the SIMD kernel (≈ SEARCH_VECTOR_DIMS bytes per pet). Removal swaps the last row in, so
 * add and remove are O(1) and the matrix never has holes.
 */
export class SearchIndex {
  private vectors = new Int8Array(0);
  private readonly petIds: string[] = [];
  private readonly rowOf = new Map<string, number>();

  get size(): number {
    return this.petIds.length;
  }

  has(petId: string): boolean {
    return this.rowOf.has(petId);
  }

  upsert(petId: string, vector: Int8Array): void {
    if (vector.length !== SEARCH_VECTOR_DIMS) throw new Error(`search vector must have ${SEARCH_VECTOR_DIMS} values`);
    let row = this.rowOf.get(petId);
    if (row === undefined) {
      row = this.petIds.length;
      this.petIds.push(petId);
      this.rowOf.set(petId, row);
      this.ensureCapacity(this.petIds.length);
    }
    this.vectors.set(vector, row * SEARCH_VECTOR_DIMS);
    this.touch();
  }

  remove(petId: string): void {
    const row = this.rowOf.get(petId);
    if (row === undefined) return;
    const last = this.petIds.length - 1;
    if (row !== last) {
      this.vectors.copyWithin(row * SEARCH_VECTOR_DIMS, last * SEARCH_VECTOR_DIMS, (last + 1) * SEARCH_VECTOR_DIMS);
      this.petIds[row] = this.petIds[last];
      this.rowOf.set(this.petIds[row], row);
    }
    this.petIds.pop();
    this.rowOf.delete(petId);
    this.touch();
  }

  /** The `limit` pets most similar to the probe vector, best first. */
  search(probe: Int8Array, limit: number): { petId: string; similarity: number }[] {
    const count = this.petIds.length;
    if (count === 0) return [];
    const similarities = dotProducts(probe, this.view, SEARCH_VECTOR_DIMS);
    const order = Array.from({ length: count }, (_, i) => i);
    const top = selectTop(order, similarities, Math.min(limit, count));
    return top.map((row) => ({ petId: this.petIds[row], similarity: similarities[row] }));
  }

  private view = new Int8Array(0);

  /** A fresh view object after any change, so the kernel knows to copy the matrix again. */
  private touch(): void {
    this.view = this.vectors.subarray(0, this.petIds.length * SEARCH_VECTOR_DIMS);
  }

  private ensureCapacity(rows: number): void {
    if (rows * SEARCH_VECTOR_DIMS <= this.vectors.length) return;
    const grown = new Int8Array(Math.max(rows, Math.ceil(this.vectors.length / SEARCH_VECTOR_DIMS) * 2, 16) * SEARCH_VECTOR_DIMS);
    grown.set(this.vectors);
    this.vectors = grown;
  }
}

/** Indices of the `limit` largest values, largest first (ties by index, for determinism). */
function selectTop(order: number[], values: Int32Array, limit: number): number[] {
  const byValue = (a: number, b: number) => values[b] - values[a] || a - b;
  if (order.length <= limit * 4) return order.sort(byValue).slice(0, limit);
  // Partial selection: keep a sorted buffer of the best `limit` rows seen so far.
  const best = order.slice(0, limit).sort(byValue);
  for (let i = limit; i < order.length; i++) {
    const row = order[i];
    if (byValue(row, best[limit - 1]) >= 0) continue;
    let position = limit - 1;
    while (position > 0 && byValue(row, best[position - 1]) < 0) position--;
    best.splice(position, 0, row);
    best.pop();
  }
  return best;
}
