import fs from "node:fs";
import path from "node:path";

/** One animal of a labelled set: its captures, as paths relative to the set's root, in name order. */
export interface LabelledSubject {
  id: string;
  images: string[];
}

const IMAGE_PATTERN = /\.jpe?g$/i;

/** Reads `root/<subject>/<capture>.jpg`; subjects and captures in name order, so runs are reproducible. */
export function readLabelledDataset(root: string): LabelledSubject[] {
  if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) throw new Error(`${root} is not a folder`);
  return fs
    .readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .map((id) => ({
      id,
      images: fs
        .readdirSync(path.join(root, id))
        .filter((name) => IMAGE_PATTERN.test(name))
        .sort()
        .map((name) => `${id}/${name}`),
    }))
    .filter((subject) => subject.images.length > 0);
}
