import { MIN_ENROL_IMAGES, MIN_PROBE_IMAGES, MIN_USABLE_ENROL_IMAGES, MIN_USABLE_PROBE_IMAGES } from "@/lib/biometrics/parameters";
import type { LabelledSubject } from "./dataset";

/**
 * The evaluation protocol: each subject enrols with its first 5 captures and probes with the next 3.
 * A share of subjects is never enrolled: their probes measure how often a stranger matches nobody.
 */
export interface ProtocolOptions {
  /** Share of subjects kept out of the gallery (default 10 %). */
  unenrolledFraction: number;
  /** All impostor comparisons are made among the first N enrolled subjects (default: all). */
  impostorSubjects: number;
}

export interface EnrolledSubject {
  id: string;
  enrol: number[];
  probe: number[];
}

export interface ProtocolPlan {
  /** Every image of the plan, as paths relative to the data set root; the numbers elsewhere index this. */
  images: string[];
  enrolled: EnrolledSubject[];
  unenrolled: { id: string; probe: number[] }[];
  /** Subjects with fewer than 8 captures, left out. */
  skipped: string[];
  impostorSubjects: number;
}

export function planProtocol(subjects: LabelledSubject[], options: ProtocolOptions): ProtocolPlan {
  const perSubject = MIN_ENROL_IMAGES + MIN_PROBE_IMAGES;
  const eligible = subjects.filter((s) => s.images.length >= perSubject);
  const skipped = subjects.filter((s) => s.images.length < perSubject).map((s) => s.id);
  const unenrolledCount = eligible.length >= 2 ? Math.max(1, Math.round(eligible.length * options.unenrolledFraction)) : 0;
  const images: string[] = [];
  const add = (paths: string[]) => paths.map((p) => images.push(p) - 1);
  const enrolled = eligible.slice(0, eligible.length - unenrolledCount).map((s) => ({
    id: s.id,
    enrol: add(s.images.slice(0, MIN_ENROL_IMAGES)),
    probe: add(s.images.slice(MIN_ENROL_IMAGES, perSubject)),
  }));
  const unenrolled = eligible.slice(eligible.length - unenrolledCount).map((s) => ({
    id: s.id,
    probe: add(s.images.slice(MIN_ENROL_IMAGES, perSubject)),
  }));
  return { images, enrolled, unenrolled, skipped, impostorSubjects: Math.min(options.impostorSubjects, enrolled.length) };
}

/** The images of `indices` that yielded a template. */
export function usableImages(indices: number[], usable: readonly boolean[]): number[] {
  return indices.filter((i) => usable[i]);
}

export function canEnrol(subject: EnrolledSubject, usable: readonly boolean[]): boolean {
  return usableImages(subject.enrol, usable).length >= MIN_USABLE_ENROL_IMAGES;
}

export function canProbe(probe: number[], usable: readonly boolean[]): boolean {
  return usableImages(probe, usable).length >= MIN_USABLE_PROBE_IMAGES;
}
