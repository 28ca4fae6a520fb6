import { describe, expect, it } from "vitest";
import { symmetricEigen } from "./symmetric-eigen";

describe("symmetricEigen", () => {
  it("gives each eigenvalue with its unit eigenvector, largest first, and leaves the matrix as it was", () => {
    // A = Q diag(5, 2, -1) Q^T for an orthonormal Q.
    const q = [
      [2 / 3, -2 / 3, 1 / 3],
      [2 / 3, 1 / 3, -2 / 3],
      [1 / 3, 2 / 3, 2 / 3],
    ];
    const lambda = [5, 2, -1];
    const a = new Float64Array(9);
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) a[i * 3 + j] = [0, 1, 2].reduce((sum, k) => sum + q[i][k] * lambda[k] * q[j][k], 0);
    const before = Float64Array.from(a);
    const { values, vectors } = symmetricEigen(a, 3);
    expect(a).toEqual(before);
    values.forEach((value, k) => expect(value).toBeCloseTo(lambda[k], 10));
    for (let k = 0; k < 3; k++) {
      // Each column is ± the k-th column of Q.
      const sign = Math.sign(vectors[k] * q[0][k]);
      for (let i = 0; i < 3; i++) expect(vectors[i * 3 + k] * sign).toBeCloseTo(q[i][k], 10);
    }
  });
});
