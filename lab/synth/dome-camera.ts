// The "real" setting's camera: the nose is the front of an ellipsoid (a dome carrying the surface
// map), seen by a perspective pinhole camera from up to half of REAL.maxViewTurnDeg off its axis,
// in front of a backdrop plane. Each image point is ray-cast, so a turned view compresses the side
// of the dome turning away (a smooth, non-affine change between captures).
// Nose frame: x right, y down, z out of the nose toward a frontal camera; nose units (pad ≈ 2 wide).
import { REAL, SURFACE } from "./parameters";
import type { Rng } from "./prng";

type Vec3 = [number, number, number];

export interface DomeCamera {
  /** Ellipsoid half-axes and the y of its centre; the centre lies at (0, centerY, −depth). */
  radiusX: number;
  radiusY: number;
  depth: number;
  centerY: number;
  /** Camera centre and orthonormal basis (image right, image down, viewing direction) in the nose frame. */
  position: Vec3;
  right: Vec3;
  down: Vec3;
  forward: Vec3;
  /** Focal length in pixels. */
  focal: number;
  /** Angle between the viewing axis and the nose axis (radians), and its azimuth. */
  offAxis: number;
  offAxisAzimuth: number;
  /** Unit vector from the aim point toward the camera (nose frame). */
  viewDirection: Vec3;
  /** Backdrop plane z = −backdropDepth; its pattern turned by backdropAngle and shifted. */
  backdropDepth: number;
  backdropAngle: number;
  backdropShiftX: number;
  backdropShiftY: number;
}

/** Channels of the dome camera's inverse map: u, v, macro slope x, y, map coverage, dome coverage, backdrop x, y. */
export const DOME_MAP_CHANNELS = 8;

export interface DomeShape {
  radiusX: number;
  radiusY: number;
  depth: number;
  frontY: number;
}

export function drawDomeShape(anatomy: Rng): DomeShape {
  return {
    radiusX: anatomy.between(REAL.domeRadiusX),
    radiusY: anatomy.between(REAL.domeRadiusY),
    depth: anatomy.between(REAL.domeDepth),
    frontY: anatomy.between(REAL.domeFrontY),
  };
}

export interface DomeView {
  offAxis: number;
  azimuth: number;
  distance: number;
  aimX: number;
  aimY: number;
  pixelsPerUnit: number;
}

/** The view of one capture; burst frames share `shared` draws and add a little `frame` jitter. */
export function drawDomeView(shared: Rng, frame: Rng, jitter: number, pixelsPerUnit: number): DomeView {
  const deg = Math.PI / 180;
  const maxOffAxis = (REAL.maxViewTurnDeg / 2) * deg;
  // √uniform: viewpoints spread evenly over the cone's disc rather than crowding its axis.
  let ox = maxOffAxis * Math.sqrt(shared.next());
  const azimuth = shared.next() * 2 * Math.PI;
  let vx = ox * Math.cos(azimuth) + jitter * frame.symmetric(REAL.burstViewJitterDeg * deg);
  let vy = ox * Math.sin(azimuth) + jitter * frame.symmetric(REAL.burstViewJitterDeg * deg);
  ox = Math.hypot(vx, vy);
  if (ox > maxOffAxis) {
    vx *= maxOffAxis / ox;
    vy *= maxOffAxis / ox;
    ox = maxOffAxis;
  }
  return {
    offAxis: ox,
    azimuth: Math.atan2(vy, vx),
    distance: shared.between(REAL.cameraDistance),
    aimX: shared.symmetric(REAL.aimJitter),
    aimY: shared.symmetric(REAL.aimJitter),
    pixelsPerUnit,
  };
}

export function createDomeCamera(
  shape: DomeShape,
  view: DomeView,
  backdrop: { depth: number; angle: number; shiftX: number; shiftY: number },
): DomeCamera {
  const centerY = shape.frontY;
  const s = Math.sin(view.offAxis);
  const viewDirection: Vec3 = [s * Math.cos(view.azimuth), s * Math.sin(view.azimuth), Math.cos(view.offAxis)];
  const aim: Vec3 = [view.aimX, view.aimY, frontDepthAt(shape, view.aimX, view.aimY)];
  const position: Vec3 = [
    aim[0] + view.distance * viewDirection[0],
    aim[1] + view.distance * viewDirection[1],
    aim[2] + view.distance * viewDirection[2],
  ];
  const forward: Vec3 = [-viewDirection[0], -viewDirection[1], -viewDirection[2]];
  // Image "down" stays the nose's down (y), image roll is applied in pixel space.
  const right = normalise(cross(forward, [0, 1, 0]));
  const down = cross(right, forward);
  return {
    radiusX: shape.radiusX,
    radiusY: shape.radiusY,
    depth: shape.depth,
    centerY,
    position,
    right,
    down,
    forward,
    focal: view.pixelsPerUnit * view.distance,
    offAxis: view.offAxis,
    offAxisAzimuth: view.azimuth,
    viewDirection,
    backdropDepth: backdrop.depth,
    backdropAngle: backdrop.angle,
    backdropShiftX: backdrop.shiftX,
    backdropShiftY: backdrop.shiftY,
  };
}

/** z of the dome's front surface above (x, y), or the dome front when outside its outline. */
function frontDepthAt(shape: DomeShape, x: number, y: number): number {
  const a = x / shape.radiusX;
  const b = (y - shape.frontY) / shape.radiusY;
  return -shape.depth + shape.depth * Math.sqrt(Math.max(0, 1 - a * a - b * b));
}

/**
 * Casts the ray through camera-plane point (xr, yr) (pixels from the principal point, roll
 * removed) and writes [u, v, slopeX, slopeY, mapCoverage, domeCoverage, backdropX, backdropY].
 */
export function castDomeRay(camera: DomeCamera, xr: number, yr: number, out: Float32Array, o: number): void {
  const { right, down, forward, position: p } = camera;
  const fx = xr / camera.focal;
  const fy = yr / camera.focal;
  const dx = forward[0] + right[0] * fx + down[0] * fy;
  const dy = forward[1] + right[1] * fx + down[1] * fy;
  const dz = forward[2] + right[2] * fx + down[2] * fy;
  // In the ellipsoid's unit-sphere space.
  const ox = p[0] / camera.radiusX;
  const oy = (p[1] - camera.centerY) / camera.radiusY;
  const oz = (p[2] + camera.depth) / camera.depth;
  const ux = dx / camera.radiusX;
  const uy = dy / camera.radiusY;
  const uz = dz / camera.depth;
  const a = ux * ux + uy * uy + uz * uz;
  const b = ox * ux + oy * uy + oz * uz;
  const c = ox * ox + oy * oy + oz * oz - 1;
  const closest = -b / a;
  let sx = ox + closest * ux;
  let sy = oy + closest * uy;
  let sz = oz + closest * uz;
  const miss = Math.sqrt(sx * sx + sy * sy + sz * sz);
  const disc = b * b - a * c;
  if (disc >= 0) {
    const t = (-b - Math.sqrt(disc)) / a;
    sx = ox + t * ux;
    sy = oy + t * uy;
    sz = oz + t * uz;
  } else {
    // Past the silhouette: the silhouette point, so interpolation toward the backdrop stays smooth.
    sx /= miss;
    sy /= miss;
    sz /= miss;
  }
  const domeCoverage = Math.min(1, Math.max(0, (1 - miss) / REAL.silhouetteSoftness + 0.5));
  // Surface coordinates: angles about the dome's centre scaled to arc length at the front.
  const u = camera.radiusX * Math.atan2(sx, sz);
  const v = camera.centerY + camera.radiusY * Math.atan2(sy, sz);
  // Macro normal in the camera frame (z toward the camera) as slopes, like the affine camera's.
  let nx = sx / camera.radiusX;
  let ny = sy / camera.radiusY;
  let nz = sz / camera.depth;
  const cx = nx * right[0] + ny * right[1] + nz * right[2];
  const cy = nx * down[0] + ny * down[1] + nz * down[2];
  const cz = -(nx * forward[0] + ny * forward[1] + nz * forward[2]);
  const norm = Math.hypot(cx, cy, cz);
  nx = cx / norm;
  ny = cy / norm;
  nz = Math.max(REAL.grazingCos, cz / norm);
  const inside = SURFACE.mapExtent - Math.max(Math.abs(u), Math.abs(v));
  const mapCoverage = domeCoverage * Math.min(1, Math.max(0, inside / 0.3));
  // Backdrop plane z = −depth.
  const t = (-camera.backdropDepth - p[2]) / Math.min(-1e-6, dz);
  const bx = p[0] + t * dx;
  const by = p[1] + t * dy;
  const cos = Math.cos(camera.backdropAngle);
  const sin = Math.sin(camera.backdropAngle);
  out[o] = u;
  out[o + 1] = v;
  out[o + 2] = nx / nz;
  out[o + 3] = ny / nz;
  out[o + 4] = mapCoverage;
  out[o + 5] = domeCoverage;
  out[o + 6] = cos * bx - sin * by + camera.backdropShiftX;
  out[o + 7] = sin * bx + cos * by + camera.backdropShiftY;
}

/** Angle (radians) between the viewpoints of two cameras. */
export function viewTurn(a: DomeCamera, b: DomeCamera): number {
  const d = a.viewDirection[0] * b.viewDirection[0] + a.viewDirection[1] * b.viewDirection[1] + a.viewDirection[2] * b.viewDirection[2];
  return Math.acos(Math.min(1, Math.max(-1, d)));
}

function cross(a: Vec3, b: Vec3): Vec3 {
  return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
}

function normalise(v: Vec3): Vec3 {
  const n = Math.hypot(v[0], v[1], v[2]);
  return [v[0] / n, v[1] / n, v[2] / n];
}
