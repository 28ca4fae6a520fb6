import { describe, expect, it } from "vitest";
import { analyseFrame, MIN_FRAME_SIDE, toGrey } from "./capture-guidance";

const W = 64;
function frame(pixel: (x: number, y: number) => number): Float32Array {
  const grey = new Float32Array(W * W);
  for (let y = 0; y < W; y++) for (let x = 0; x < W; x++) grey[y * W + x] = pixel(x, y);
  return grey;
}
// A nose-like texture: fine cells of dark and mid grey.
const textured = frame((x, y) => (((x >> 1) + (y >> 1)) % 2 === 0 ? 60 : 170));

describe("analyseFrame", () => {
  it("passes a sharp, evenly lit frame from a big enough camera", () => {
    const g = analyseFrame(textured, W, W, 720);
    expect(g).toMatchObject({ sharp: true, glare: false, dark: false, bigEnough: true, advice: null });
  });

  it("calls a flat frame out of focus", () => {
    const g = analyseFrame(frame(() => 120), W, W, 720);
    expect(g.sharp).toBe(false);
    expect(g.advice).toMatch(/Not sharp/);
  });

  it("sees glare before focus, darkness before glare, a small camera first", () => {
    const glare = frame((x, y) => (x < 20 && y < 20 ? 255 : textured[y * W + x]));
    expect(analyseFrame(glare, W, W, 720).advice).toMatch(/Glare/);
    expect(analyseFrame(frame((x, y) => textured[y * W + x] / 5), W, W, 720).advice).toMatch(/Too dark/);
    expect(analyseFrame(textured, W, W, MIN_FRAME_SIDE - 1).advice).toMatch(/too few pixels/);
  });

  it("turns RGBA into grey with the usual weights", () => {
    expect(Array.from(toGrey(new Uint8ClampedArray([255, 255, 255, 255, 0, 0, 0, 255])))).toEqual([expect.closeTo(255, 3), 0]);
  });
});
